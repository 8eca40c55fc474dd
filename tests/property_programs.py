"""Property-based tile programs over the op table (hypothesis strategies), each with its own
numpy model.

A program is one tiled kernel `p(X, Y, O, A, n)`: X and Y are read, O is stored to, A is
accumulated into with `tile_atomic_add`, n is a run-time trip count. The arrays' extents are the
tile's minus 0 or 1 per axis, so loads read zeros past the array's edge and stores drop what
overhangs it. A program draws a dtype (float32 or float64), a rank (1 to 4), the storage of its
loads (register or shared), then a chain of steps; each step is a template that writes Warp
source and the numpy statement computing the same value, written independently of tilec (no
op table, no interpreter). The forward is compared with the numpy model; the adjoint of every
float64 program with central finite differences (`tilec.gradcheck`).

`STEPS` names the op-table entries each template exercises; `COVERED` is their union, and the
test of this module checks every API tile op is either covered or listed in `NOT_GENERATED` with
the reason and the test that covers it instead.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod

from hypothesis import strategies as st


@dataclass
class Program:
    """A drawn program: its kernel source (without the module header) and numpy model."""

    dtype: str  # "float32" | "float64"
    tile: tuple  # the loads' tile shape
    array: tuple  # the arrays' shape (tile minus 0/1 per axis)
    storage: str
    warp: list = field(default_factory=list)  # kernel body lines
    model: list = field(default_factory=list)  # numpy statements over t, x, y, n, np, helpers
    ops: set = field(default_factory=set)  # op-table names the steps exercise
    shape: tuple = ()  # the current tile's shape while drawing
    atomic: bool = False
    warp_accepts: bool = True  # False: not compared with Warp (a tilec extension, or Warp's result differs)
    # t is, in Warp, laid out other than row-major: a transposed view, or a solve's result, which Warp 1.19
    # keeps in its right-hand side's layout (measured). Warp's tile_reshape requires a contiguous tile and
    # reads any other in memory order (its docs; measured: the transpose of numpy's reshape); tilec's
    # reshape is numpy's. Only the element-wise steps are known to make a row-major tile again.
    warp_strided: bool = False

    def full(self, value: str) -> str:
        """A tile of the current shape holding `value` (Warp has tile * scalar but no tile + scalar)."""
        return f"wp.tile_full(shape={_fmt(self.shape)}, value={value}, dtype=wp.{self.dtype})"

    def source(self, name: str) -> str:
        rank = len(self.tile)
        arr = f"wp.array{rank}d(dtype=wp.{self.dtype})"
        head = f"@wp.kernel\ndef {name}(X: {arr}, Y: {arr}, O: {arr}, A: {arr}, n: int):\n"
        return head + "".join(f"    {line}\n" for line in self.warp) + "\n\n"

    def run_model(self, X, Y, A, n):
        """The numpy model's (O, A) for inputs X, Y, A (float64 arithmetic)."""
        import numpy as np

        env = {"np": np, "n": n, "x": pad(X, self.tile), "y": pad(Y, self.tile)}
        exec("t = x * 1.0\n" + "\n".join(self.model), env)  # noqa: S102 - our own generated model
        t = env["t"]
        O = np.zeros(self.array)
        O[...] = t[tuple(slice(0, e) for e in self.array)]
        A = A + (t[tuple(slice(0, e) for e in self.array)] if self.atomic else 0.0)
        return O, A


def pad(a, shape):
    """`a` zero-padded to `shape`: what a tile load past the array's edge reads."""
    import numpy as np

    out = np.zeros(shape)
    out[tuple(slice(0, e) for e in a.shape)] = a
    return out


def _fmt(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# ---------------------------------------------------------------- steps
# A step is fn(draw, prog) -> bool: appends Warp lines and numpy lines, updates prog.shape and
# prog.ops, or returns False when it does not apply to the current shape.

UNARY = {"sin": "np.sin", "cos": "np.cos", "tanh": "np.tanh", "abs": "np.abs"}
CONST = st.sampled_from(["0.5", "-0.75", "1.25"])


def step_unary_map(draw, p: Program) -> bool:
    f = draw(st.sampled_from(sorted(UNARY)))
    p.warp.append(f"t = wp.tile_map(wp.{f}, t)")
    p.model.append(f"t = {UNARY[f]}(t)")
    p.ops |= {"tile_map", f}
    p.warp_strided = False
    return True


def step_operator(draw, p: Program) -> bool:
    other = "y" if p.shape == p.tile else None
    if other is None:
        c = draw(CONST)
        if draw(st.booleans()):
            p.warp.append(f"t = t + {p.full(c)}")
            p.ops |= {"add", "tile_full"}
        else:
            p.warp.append(f"t = t * {c}")
            p.ops |= {"mul"}
        p.model.append(f"t = t {'+' if '+' in p.warp[-1] else '*'} {c}")
        p.warp_strided = False
        return True
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    if op == "/":
        p.warp.append(f"t = t / (y * y + {p.full('1.0')})")
        p.model.append("t = t / (y * y + 1.0)")
        p.ops |= {"div", "mul", "add", "tile_full"}
    else:
        p.warp.append(f"t = t {op} y")
        p.model.append(f"t = t {op} y")
        p.ops |= {{"+": "add", "-": "sub", "*": "mul"}[op]}
    p.warp_strided = False
    return True


def step_negate(draw, p: Program) -> bool:
    p.warp.append("t = -t")
    p.model.append("t = -t")
    p.ops |= {"neg"}
    p.warp_strided = False
    return True


def step_binary_map(draw, p: Program) -> bool:
    if p.shape != p.tile:
        return False
    f = draw(st.sampled_from(["max", "min"]))
    p.warp.append(f"t = wp.tile_map(wp.{f}, t, y)")
    p.model.append(f"t = np.{f}imum(t, y)")
    p.ops |= {"tile_map", f}
    p.warp_strided = False
    return True


def step_whole_reduction(draw, p: Program) -> bool:
    kind = draw(st.sampled_from(["tile_sum", "tile_max", "tile_min", "reduce_add", "reduce_max"]))
    shape = _fmt(p.shape)
    if kind.startswith("reduce_"):
        f = kind.split("_")[1]
        call, model = f"wp.tile_reduce(wp.{f}, t)", f"t.{'sum' if f == 'add' else 'max'}()"
        p.ops |= {"tile_reduce"}
    else:
        call, model = f"wp.{kind}(t)", f"t.{kind[5:]}()"
        p.ops |= {kind}
    p.warp.append(f"t = t - wp.tile_broadcast({call}, shape={shape}) * 0.25")
    p.model.append(f"t = t - {model} * 0.25")
    p.ops |= {"tile_broadcast", "sub", "mul"}
    return True


def step_axis_reduction(draw, p: Program) -> bool:
    if len(p.shape) < 2:
        return False
    axis = draw(st.integers(0, len(p.shape) - 1))
    kind = draw(st.sampled_from(["sum", "max", "min"]))  # Warp's tile_max/min have no axis form
    call = f"wp.tile_sum(t, axis={axis})" if kind == "sum" else f"wp.tile_reduce(wp.{kind}, t, axis={axis})"
    keep = tuple(1 if d == axis else e for d, e in enumerate(p.shape))
    p.warp.append(f"r = wp.tile_reshape({call}, shape={_fmt(keep)})")
    p.warp.append(f"t = t + wp.tile_broadcast(r, shape={_fmt(p.shape)}) * 0.5")
    p.model.append(f"t = t + t.{kind}(axis={axis}, keepdims=True) * 0.5")
    p.ops |= {"tile_sum" if kind == "sum" else "tile_reduce", "tile_reshape", "tile_broadcast"}
    return True


def step_scan(draw, p: Program) -> bool:
    kind = draw(st.sampled_from(["tile_scan_inclusive", "tile_scan_exclusive", "tile_scan_max_inclusive",
                                 "tile_scan_min_inclusive"]))
    flat = "t.reshape(-1)"
    model = {"tile_scan_inclusive": f"np.cumsum({flat})",
             "tile_scan_exclusive": f"np.cumsum({flat}) - {flat}",
             "tile_scan_max_inclusive": f"np.maximum.accumulate({flat})",
             "tile_scan_min_inclusive": f"np.minimum.accumulate({flat})"}[kind]
    p.warp.append(f"t = wp.{kind}(t) * 0.5")
    p.model.append(f"t = ({model}).reshape(t.shape) * 0.5")
    p.ops |= {kind}
    p.warp_accepts &= p.dtype == "float32"  # Warp scans float32/int32/uint32 tiles only
    return True


def step_transpose(draw, p: Program) -> bool:
    if len(p.shape) != 2:
        return False
    p.warp.append("t = wp.tile_transpose(t)")
    p.model.append("t = t.T.copy()")
    p.warp_strided = True
    p.shape = p.shape[::-1]
    p.ops |= {"tile_transpose"}
    return True


def step_reshape(draw, p: Program) -> bool:
    size = prod(p.shape)
    choices = {(size,), tuple(reversed(p.shape))}
    if size % 2 == 0 and size > 2:
        choices.add((2, size // 2))
    new = draw(st.sampled_from(sorted(choices)))
    p.warp.append(f"t = wp.tile_reshape(t, shape={_fmt(new)})")
    p.model.append(f"t = t.reshape({_fmt(new)})")
    p.warp_accepts &= not p.warp_strided  # Warp reads a strided tile in memory order (see Program)
    p.shape = new
    p.ops |= {"tile_reshape"}
    return True


def step_matmul(draw, p: Program) -> bool:
    if len(p.shape) != 2:
        return False
    m, k = p.shape
    form = draw(st.sampled_from(["aat", "ata", "accumulate"]))
    if form == "aat":
        p.warp.append("t = wp.tile_matmul(t, wp.tile_transpose(t)) * 0.25")
        p.model.append("t = t @ t.T * 0.25")
        p.shape = (m, m)
    elif form == "ata":
        p.warp.append("t = wp.tile_matmul(wp.tile_transpose(t), t) * 0.25")
        p.model.append("t = t.T @ t * 0.25")
        p.shape = (k, k)
    else:  # the accumulator form: out += a @ b
        p.warp.append(f"u = wp.tile_full(shape=({m}, {m}), value=0.5, dtype=wp.{p.dtype})")
        p.warp.append("wp.tile_matmul(t, wp.tile_transpose(t), u)")
        p.warp.append("t = u")
        p.model.append("t = 0.5 + t @ t.T")
        p.shape = (m, m)
        p.ops |= {"tile_full"}
    p.ops |= {"tile_matmul", "tile_transpose"}
    return True


def step_slice(draw, p: Program) -> bool:
    if p.shape[0] < 2:
        return False
    lo = draw(st.integers(0, p.shape[0] - 2))
    hi = draw(st.integers(lo + 1, p.shape[0]))
    p.warp.append(f"t = t[{lo}:{hi}] * 1.0")
    p.model.append(f"t = t[{lo}:{hi}] * 1.0")
    p.shape = (hi - lo, *p.shape[1:])
    p.ops |= {"tile_view"}
    return True


def step_squeeze(draw, p: Program) -> bool:
    if 1 not in p.shape or prod(p.shape) == 1:
        return False
    p.warp.append("t = wp.tile_squeeze(t)")
    p.model.append("t = np.squeeze(t)")
    p.shape = tuple(e for e in p.shape if e != 1)
    p.ops |= {"tile_squeeze"}
    return True


def step_assign(draw, p: Program) -> bool:
    """Part of t written into a fresh tile at an offset along the first axis."""
    if p.shape[0] < 2:
        return False
    lo = draw(st.integers(0, p.shape[0] - 1))
    hi = draw(st.integers(lo + 1, p.shape[0]))
    offset = _fmt((lo,) + (0,) * (len(p.shape) - 1))
    p.warp += [f"u = wp.tile_full(shape={_fmt(p.shape)}, value=0.25, dtype=wp.{p.dtype})",
               f"wp.tile_assign(u, t[{lo}:{hi}] * 1.0, offset={offset})", "t = u"]
    p.model += ["u = np.full(t.shape, 0.25)", f"u[{lo}:{hi}] = t[{lo}:{hi}]", "t = u"]
    p.ops |= {"tile_full", "tile_assign", "tile_view"}
    return True


def step_extract_setitem(draw, p: Program) -> bool:
    index = tuple(draw(st.integers(0, e - 1)) for e in p.shape)
    other = tuple(draw(st.integers(0, e - 1)) for e in p.shape)
    if other == index and prod(p.shape) > 1:  # Warp runs `t[i] = f(t[i])` once per lane: keep it idempotent
        axis = next(d for d, e in enumerate(p.shape) if e > 1)
        other = other[:axis] + ((other[axis] + 1) % p.shape[axis],) + other[axis + 1:]
    at, src = ", ".join(map(str, index)), ", ".join(map(str, other))
    if draw(st.booleans()) or other == index:
        p.warp.append(f"s = t[{src}]")
        p.warp.append("t = t * s")
        p.model.append(f"t = t * t[{src}]")
        p.ops |= {"tile_extract"}
    else:
        p.warp.append(f"t[{at}] = t[{src}] * 0.5")
        p.model.append(f"t[{at}] = t[{src}] * 0.5")
        p.ops |= {"tile_extract", "tile_setitem"}
    return True


def step_loop(draw, p: Program) -> bool:
    if p.shape == p.tile:
        p.warp += ["for k in range(n):", "    t = wp.tile_map(wp.sin, t) + x * 0.5"]
        p.model += ["for k in range(n):", "    t = np.sin(t) + x * 0.5"]
    else:
        p.warp += ["for k in range(n):", "    t = wp.tile_map(wp.cos, t) * 0.75"]
        p.model += ["for k in range(n):", "    t = np.cos(t) * 0.75"]
    p.ops |= {"tile_map"}
    return True


def step_while(draw, p: Program) -> bool:
    p.warp += ["k = int(0)", "while k < n:", f"    t = t * 0.75 + {p.full('0.125')}", "    k = k + 1"]
    p.model += ["for k in range(n):", "    t = t * 0.75 + 0.125"]
    return True


def step_branch(draw, p: Program) -> bool:
    bound = draw(st.integers(0, 3))
    c = draw(CONST)
    p.warp += [f"if n > {bound}:", f"    t = t * {c}", "else:", f"    t = t + {p.full(c)}"]
    p.model += [f"if n > {bound}:", f"    t = t * {c}", "else:", f"    t = t + {c}"]
    return True


def step_dot_axpy(draw, p: Program) -> bool:
    if p.shape != p.tile:
        return False
    if draw(st.booleans()):
        p.warp.append(f"t = t + wp.tile_broadcast(wp.tile_dot(t, y), shape={_fmt(p.shape)}) * 0.125")
        p.model.append("t = t + np.sum(t * y) * 0.125")
        p.ops |= {"tile_dot", "tile_broadcast"}
    else:
        c = draw(CONST)
        p.warp.append(f"wp.tile_axpy({c}, y, t)")
        p.model.append(f"t = t + {c} * y")
        p.ops |= {"tile_axpy"}
    return True


def step_constants(draw, p: Program) -> bool:
    kind = draw(st.sampled_from(["tile_ones", "tile_zeros", "tile_full", "tile_arange"]))
    shape, dt = _fmt(p.shape), f"wp.{p.dtype}"
    if kind == "tile_arange":
        if len(p.shape) != 1:
            return False
        p.warp.append(f"t = t + wp.tile_arange({p.shape[0]}, dtype={dt}) * 0.125")
        p.model.append(f"t = t + np.arange({p.shape[0]}) * 0.125")
    elif kind == "tile_full":
        p.warp.append(f"t = t * wp.tile_full(shape={shape}, value=0.5, dtype={dt})")
        p.model.append("t = t * 0.5")
    else:
        p.warp.append(f"t = t + wp.{kind}(shape={shape}, dtype={dt})")
        p.model.append(f"t = t + {1.0 if kind == 'tile_ones' else 0.0}")
    p.ops |= {kind}
    return True


def step_solve(draw, p: Program) -> bool:
    """An SPD system from t (m x k): (t t^T + (m + 1) I) z = t, by Cholesky or a triangular solve."""
    if len(p.shape) != 2:
        return False
    m = p.shape[0]
    kind = draw(st.sampled_from(["tile_cholesky_solve", "tile_lower_solve", "tile_upper_solve"]))
    p.warp += ["g = wp.tile_matmul(t, wp.tile_transpose(t))",
               f"g = wp.tile_diag_add(g, wp.tile_full(shape=({m},), value={m + 1}.0, dtype=wp.{p.dtype}))",
               "L = wp.tile_cholesky(g)"]
    p.model += ["g = t @ t.T + (t.shape[0] + 1.0) * np.eye(t.shape[0])", "L = np.linalg.cholesky(g)"]
    if kind == "tile_cholesky_solve":
        p.warp.append("t = wp.tile_cholesky_solve(L, t)")
        p.model.append("t = np.linalg.solve(g, t)")
    elif kind == "tile_lower_solve":
        p.warp.append("t = wp.tile_lower_solve(L, t)")
        p.model.append("t = np.linalg.solve(L, t)")
    else:
        p.warp.append("t = wp.tile_upper_solve(wp.tile_transpose(L), t)")
        p.model.append("t = np.linalg.solve(L.T, t)")
    p.ops |= {"tile_matmul", "tile_transpose", "tile_diag_add", "tile_full", "tile_cholesky", kind}
    return True


def step_astype_round_trip(draw, p: Program) -> bool:
    if p.dtype != "float32":
        return False  # a float32 detour would cost a float64 program its finite-difference precision
    p.warp.append("t = wp.tile_astype(wp.tile_astype(t, dtype=wp.float64), dtype=wp.float32)")
    p.model.append("t = t * 1.0")
    p.ops |= {"tile_astype"}
    return True


STEPS = {
    "unary_map": step_unary_map, "operator": step_operator, "negate": step_negate,
    "binary_map": step_binary_map, "whole_reduction": step_whole_reduction,
    "axis_reduction": step_axis_reduction, "scan": step_scan, "transpose": step_transpose,
    "reshape": step_reshape, "matmul": step_matmul, "slice": step_slice,
    "extract_setitem": step_extract_setitem, "loop": step_loop, "while": step_while,
    "branch": step_branch, "dot_axpy": step_dot_axpy, "constants": step_constants,
    "solve": step_solve, "astype": step_astype_round_trip, "squeeze": step_squeeze, "assign": step_assign,
}

# Op-table names every template above can exercise (kept in step with them by the coverage test).
COVERED = frozenset({
    "tile_map", "sin", "cos", "tanh", "abs", "add", "sub", "mul", "div", "neg", "max", "min",
    "tile_sum", "tile_max", "tile_min", "tile_reduce", "tile_broadcast", "tile_reshape",
    "tile_scan_inclusive", "tile_scan_exclusive", "tile_scan_max_inclusive", "tile_scan_min_inclusive",
    "tile_transpose", "tile_matmul", "tile_full", "tile_view", "tile_extract", "tile_setitem",
    "tile_dot", "tile_axpy", "tile_ones", "tile_zeros", "tile_arange", "tile_diag_add", "tile_cholesky",
    "tile_cholesky_solve", "tile_lower_solve", "tile_upper_solve", "tile_astype", "tile_squeeze", "tile_assign", "tile_load", "tile_store", "tile_atomic_add",
})


SHAPES = {1: st.tuples(st.integers(1, 12)),
          2: st.tuples(st.integers(2, 6), st.integers(2, 6)),
          3: st.tuples(st.integers(1, 4), st.integers(2, 4), st.integers(1, 4)),
          4: st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(2, 3), st.integers(1, 3))}


@st.composite
def program(draw, dtype=None) -> Program:
    dtype = dtype or draw(st.sampled_from(["float32", "float64"]))
    rank = draw(st.sampled_from([1, 2, 2, 3, 4]))  # rank 2 twice: matmuls, transposes and solves need it
    tile = draw(SHAPES[rank])
    array = tuple(max(1, e - draw(st.integers(0, 1))) for e in tile)
    storage = draw(st.sampled_from(["register", "shared"]))
    p = Program(dtype, tile, array, storage, shape=tile)
    shape = _fmt(tile)
    p.warp += [f"x = wp.tile_load(X, shape={shape}, storage=\"{storage}\")",
               f"y = wp.tile_load(Y, shape={shape})", "t = x * 1.0"]
    p.ops |= {"tile_load", "mul"}
    for j, name in enumerate(draw(st.lists(st.sampled_from(sorted(STEPS)), min_size=2, max_size=6))):
        start, before = len(p.warp), p.shape
        STEPS[name](draw, p)
        # a step's temporaries are its own: a later step may give `u` another shape
        p.warp[start:] = [re.sub(r"\b(u|r|g|L|s)\b", rf"\g<1>{j}", line) for line in p.warp[start:]]
        if p.shape != before:
            p.warp[-1] = REBIND + p.warp[-1]
    if p.shape != tile:  # back to the arrays' rank and extents, through a whole reduction
        p.warp.append(f"{REBIND}t = y + wp.tile_broadcast(wp.tile_sum(t), shape={shape}) * 0.125")
        p.model.append("t = y + t.sum() * 0.125")
        p.ops |= {"tile_sum", "tile_broadcast"}
        p.shape = tile
    p.warp.append("wp.tile_store(O, t)")
    p.ops |= {"tile_store"}
    if draw(st.booleans()):
        p.warp.append("wp.tile_atomic_add(A, t)")
        p.atomic = True
        p.ops |= {"tile_atomic_add"}
    p.warp = _versioned(p.warp)
    if dtype == "float64":  # Warp types a bare float literal float32, and a float64 tile refuses it
        p.warp = [re.sub(r"(?<![\w.=])(-?\d+\.\d+)(?!\w)", r"wp.float64(\1)", line) for line in p.warp]
    return p


REBIND = "@"  # marks the line where `t` takes a new shape


def _versioned(lines: list) -> list:
    """`t` renamed t0, t1, ... at each change of shape: a tile variable keeps one type, in Warp as
    in tilec."""
    out, version = [], 0
    for line in lines:
        if line.startswith(REBIND):
            target, value = line[len(REBIND):].split(" = ", 1)
            value = re.sub(r"\bt\b", f"t{version}", value)
            version += 1
            out.append(f"{target.replace('t', f't{version}')} = {value}")
        else:
            out.append(re.sub(r"\bt\b", f"t{version}", line))
    return out


def collect(count: int, seed: int | None = 0, dtype=None) -> list:
    """`count` distinct programs drawn by hypothesis (a fixed seed: reproducible; None: fresh)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    found: dict = {}

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(program(dtype))
    def gather(p):
        found.setdefault("\n".join(p.warp), p)

    rounds = 0
    while len(found) < count and rounds < 20:
        run = gather if seed is None else fixed_seed(seed + rounds)(gather)
        run()
        rounds += 1
    return list(found.values())[:count]


def module_source(programs: list) -> str:
    return "import warp as wp\n\n\n" + "".join(p.source(f"p{i}") for i, p in enumerate(programs))
