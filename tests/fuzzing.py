"""Program generators for fuzzing: random well-typed tile kernels and token-level mutations."""
from __future__ import annotations

import io
import random
import tokenize

UNARY = ["wp.tanh({})", "wp.sin({})", "wp.cos({})", "wp.abs({})", "wp.sqrt(wp.abs({}) + 1.0)", "-({})",
         "wp.exp(wp.tanh({}))", "wp.log(wp.abs({}) + 2.0)"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (wp.abs({}) + 1.0))", "wp.max({}, {})", "wp.min({}, {})"]


def expression(rng: random.Random, leaves: list, depth: int) -> str:
    """A random scalar expression over the leaf names (mapped over tiles with tile_map)."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(leaves + ["0.5", "x0"] if "x0" in leaves else leaves + ["0.5"])
    if rng.random() < 0.4:
        return rng.choice(UNARY).format(expression(rng, leaves, depth - 1))
    pattern = rng.choice(BINARY)
    a, b = expression(rng, leaves, depth - 1), expression(rng, leaves, depth - 1)
    return pattern.format(a, b, b) if pattern.count("{}") == 3 else pattern.format(a, b)


def random_kernel(rng: random.Random, index: int) -> tuple:
    """(source of a func + kernel, spec) for a kernel reading A, B and writing O, all (R, C) float64."""
    tr, tc = rng.randint(2, 6), rng.randint(2, 6)
    square = rng.random() < 0.5
    if square:
        tc = tr
    name = f"k{index}"
    # `+ x1 * 0.0` anchors the dtype: a func returning a pure constant returns float32, as in Warp
    body = f"{expression(rng, ['x0', 'x1'], 3)} + x1 * 0.0"
    lines = ["@wp.func", f"def f{index}(x0: wp.float64, x1: wp.float64):", f"    return {body}",
             "", "", "@wp.kernel", f"def {name}(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), "
             "O: wp.array2d(dtype=wp.float64)):", "    i, j = wp.tid()",
             f"    a = wp.tile_load(A, shape=({tr}, {tc}), offset=(i * {tr}, j * {tc}))",
             f"    b = wp.tile_load(B, shape=({tr}, {tc}), offset=(i * {tr}, j * {tc}))",
             f"    t = wp.tile_map(f{index}, a, b)"]
    steps = ["t = t * b + a", "t = wp.tile_map(wp.tanh, t) * 2.0",
             f"t = t + wp.tile_broadcast(wp.tile_reshape(wp.tile_sum(t, axis=1), shape=({tr}, 1)), shape=({tr}, {tc}))",
             f"t = t - wp.tile_broadcast(wp.tile_max(t), shape=({tr}, {tc}))",
             f"t = t + wp.tile_broadcast(wp.tile_reshape(wp.tile_min(a, axis=0), shape=(1, {tc})), shape=({tr}, {tc}))",
             "t[0, 0] = t[1, 1] * a[0, 1]"]
    if square:
        steps += ["t = wp.tile_matmul(t, wp.tile_transpose(b)) * 0.25", "t = wp.tile_transpose(t) + a"]
    for step in rng.sample(steps, rng.randint(1, min(4, len(steps)))):
        lines.append("    " + step)
    if rng.random() < 0.5:
        lines += ["    for k in range(i + 1):", "        t = wp.tile_map(wp.sin, t) + a * 0.5",
                  "        if k == 1:", "            break"]
    lines.append(f"    wp.tile_store(O, t, offset=(i * {tr}, j * {tc}))")
    return "\n".join(lines) + "\n\n\n", (name, tr, tc)


def random_module(seed: int, kernels: int) -> tuple:
    rng = random.Random(seed)
    source = "import warp as wp\n\n\n"
    specs = []
    for n in range(kernels):
        text, spec = random_kernel(rng, n)
        source += text
        specs.append(spec)
    return source, specs


def mutate(source: str, rng: random.Random) -> str:
    """One token-level mutation: delete, duplicate, swap two names, or change a number."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    body = [k for k, t in enumerate(tokens) if t.type in (tokenize.NAME, tokenize.OP, tokenize.NUMBER)]
    names = [k for k in body if tokens[k].type == tokenize.NAME]
    numbers = [k for k in body if tokens[k].type == tokenize.NUMBER]
    kind = rng.choice(["delete", "duplicate", "swap", "number"])
    lines = source.splitlines(keepends=True)

    def replace(tok, text):
        (row, col), (_, ecol) = tok.start, tok.end  # tokens replaced here sit on one line
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[ecol:]

    if kind == "number" and numbers:
        tok = tokens[rng.choice(numbers)]
        replace(tok, rng.choice(["0", "1", "-1", "3", "7", "100", "2.5", "0.0", "4096"]))
    elif kind == "swap" and len(names) > 1:
        a, b = sorted(rng.sample(names, 2), key=lambda k: tokens[k].start, reverse=True)
        ta, tb = tokens[a], tokens[b]
        if ta.start[0] == tb.start[0]:  # same line: replace the later one first
            replace(ta, tb.string)
            replace(tb, ta.string)
        else:
            replace(ta, tb.string)
            replace(tb, ta.string)
    else:
        tok = tokens[rng.choice(body)]
        replace(tok, "" if kind == "delete" else tok.string + " " + tok.string)
    return "".join(lines)
