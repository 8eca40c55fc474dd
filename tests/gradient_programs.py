"""Random well-typed kernels for gradient fuzzing (hypothesis strategies).

Every kernel takes the same arguments, so many fit one module (one C++ compile):
X, W (read only), A, B (read, overwritten, read back), S (accumulated into), C (int counters),
all length 8 except S (4) and C (2), and a run-time trip count n. Statements mix loads,
stores, overwrites, load-modify-store, read-back, atomics (add, sub, max, old value used),
loops with run-time bounds, branches and tile ops. Scalar kernels run as 8 threads (`launch`),
tile kernels as one block (`launch_tiled`). No statement writes an element another thread
writes, except the patterns the compiler must refuse.
"""
from __future__ import annotations

from hypothesis import strategies as st

PARAMS = ("X: wp.array(dtype=wp.float64), W: wp.array(dtype=wp.float64), A: wp.array(dtype=wp.float64), "
          "B: wp.array(dtype=wp.float64), S: wp.array(dtype=wp.float64), C: wp.array(dtype=int), n: int")
SIZES = {"X": 8, "W": 8, "A": 8, "B": 8, "S": 4, "C": 2}
THREADS = 8
TRIPS = 3

SCALAR = [
    "v = v * W[i] + X[(i + {k}) % 8]",
    "v = wp.sin(v) + {c}",
    "A[i] = v * {c}",
    "A[i] = A[i] + v",
    "A[i] = A[i] * v",
    "B[i] = A[i] * {c}",
    "B[i] = wp.exp(A[i] * 0.1)",
    "v = v + A[i]",
    "v = v * B[i]",
    "S[{k4}] += v * v",
    "S[{k4}] -= v * {c}",
    "wp.atomic_add(S, {k4}, v)",
    "old = wp.atomic_add(S, {k4}, v)\nB[i] = old * 0.5",
    "wp.atomic_max(S, {k4}, v)",
    "wp.atomic_min(S, {k4}, v)",
    "slot = wp.atomic_add(C, 0, 1)\nB[slot % 8] = v",
    "for k in range(n):\n    v = v * 0.9 + W[(i + k) % 8]",
    "for k in range(n):\n    A[i] = A[i] + v * {c}",
    "for k in range(n):\n    if k == 1:\n        break\n    v = v * X[i]",
    "if X[i] > 1.0:\n    A[i] = v * 2.0\nelse:\n    B[i] = v * 3.0",
    "if A[i] > 1.0:\n    B[i] = v",
    "if v > 1.0:\n    v = v * v",
    "A[(i + 1) % 8] = v",
    "B[i] = v",
    "j = int(0)\nwhile j < n:\n    v = v * 0.8 + X[j % 8]\n    j = j + 1",
    "wp.atomic_sub(S, {k4}, v * X[i])",
    "v = v + wp.mod(v, 1000.0) * {c}",
    "v = wp.erfc(wp.tanh(v)) + wp.erfinv(wp.tanh(v) * 0.5) * {c}",
    "v = v + wp.norm_l1(wp.vec3d(v, X[i], 0.5)) * {c} + wp.norm_l2(wp.vec2d(v, W[i]))",
]

TILE = [
    "t = t * wp.tile_load(W, shape=(8,)) + x",
    "t = wp.tile_map(wp.sin, t) + {c}",
    "wp.tile_store(A, t)",
    "wp.tile_store(A, wp.tile_load(A, shape=(8,)) + t)",
    "wp.tile_store(A, wp.tile_load(A, shape=(8,)) * t)",
    "wp.tile_store(B, wp.tile_load(A, shape=(8,)) * {c})",
    "t = t + wp.tile_load(A, shape=(8,))",
    "wp.tile_store(A, t * {c}, offset={k4})",
    "wp.tile_atomic_add(S, wp.tile_load(X, shape=(4,)) * t[{k4}])",
    "m = wp.tile_matmul(wp.tile_reshape(t, shape=(2, 4)), wp.tile_reshape(x, shape=(4, 2)))\n"
    "wp.tile_store(S, wp.tile_reshape(m, shape=(4,)))",
    "u = wp.tile_reshape(t, shape=(2, 4))\n"
    "wp.tile_matmul(wp.tile_reshape(wp.tile_view(x, offset=(0,), shape=(4,)), shape=(2, 2)), u, u)\n"
    "t = wp.tile_reshape(u, shape=(8,))",
    "s = wp.tile_sum(t * t)\nwp.tile_store(B, x * s[0])",
    "t = t - wp.tile_broadcast(wp.tile_max(t), shape=(8,))",
    "for k in range(n):\n    t = t * 0.5 + x",
    "if n > 2:\n    wp.tile_store(B, t * t)",
    "wp.tile_store(B, t)",
    "a = wp.tile_load(A, shape=(8,))\nwp.tile_store(A, a + x * x)\nwp.tile_store(B, a * {c})",
    # C holds zeros in tile kernels: a scatter whose two indices repeat
    "wp.tile_store_indexed(B, wp.tile_load(C, shape=(2,)), wp.tile_view(t, offset=({k4},), shape=(2,)) * {c},"
    " axis=0)",
    "wp.tile_atomic_add_indexed(S, wp.tile_load(C, shape=(2,)), wp.tile_view(t, offset=({k4},), shape=(2,)),"
    " axis=0)",
]


def _indent(text: str, pad: str = "    ") -> list:
    return [pad + line for line in text.split("\n")]


@st.composite
def statement(draw, pool):
    template = draw(st.sampled_from(pool))
    return template.format(k=draw(st.integers(1, 7)), k4=draw(st.integers(0, 3)),
                           c=draw(st.sampled_from(["0.5", "2.0", "-1.5"])))


@st.composite
def kernel_body(draw):
    """(the body of one kernel, tiled?): what `collect` gathers and `module_source` names."""
    tiled = draw(st.booleans())
    body = draw(st.lists(statement(TILE if tiled else SCALAR), min_size=2, max_size=7))
    lines = ["    x = wp.tile_load(X, shape=(8,))", "    t = x * 1.0"] if tiled else [
        "    i = wp.tid()", "    v = X[i] * 0.5 + W[i]"]
    for text in body:
        lines += _indent(text)
    return "\n".join(lines) + "\n", tiled


def collect(count: int, seed: int | None = 0) -> list:
    """`count` distinct kernel bodies drawn by hypothesis; seed None: a fresh random campaign,
    else a fixed, reproducible one."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    found: dict = {}

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(kernel_body())
    def gather(k):
        found.setdefault(k[0], k)

    rounds = 0
    while len(found) < count and rounds < 20:  # hypothesis draws some kernels more than once
        run = gather if seed is None else fixed_seed(seed + rounds)(gather)
        run()
        rounds += 1
    return list(found.values())[:count]


def module_source(bodies: list) -> tuple:
    """(source of one module holding the bodies as kernels g0, g1, ..., [(name, tiled, body)])."""
    source = "import warp as wp\n\n\n"
    kernels = []
    for index, (body, tiled) in enumerate(bodies):
        source += f"@wp.kernel\ndef g{index}({PARAMS}):\n{body}\n\n"
        kernels.append((f"g{index}", tiled, body))
    return source, kernels


def inputs(rng) -> list:
    values = [rng.uniform(0.5, 1.5, SIZES[name]) for name in ("X", "W", "A", "B", "S")]
    return values + [__import__("numpy").zeros(SIZES["C"], "int32"), TRIPS]


def build_fast(source: str, name: str, folder):
    """Generate a module into folder/name and compile it without optimisation (-O0, no debug
    info): fuzzing compiles far more code than it runs."""
    import subprocess
    from pathlib import Path

    from harness import compile_ir
    from tilec.api import load
    from tilec.backend_cpu import emit as cpu_emit
    from tilec.backend_cpu.compiler import find_cxx
    from tilec.codegen import sources

    out = Path(folder) / name
    module = compile_ir(source, name)
    plans = sources.plan_kernels(module)  # the CPU's files only: no .cu to emit
    files = dict(cpu_emit.emit_cpu(module, plans).files)
    files.update(sources.runtime_files())
    files.update(sources.loader_files(name, f"{name}.py"))
    flags = {"block_dim": 256, "target": "cpu"}
    files["manifest.json"] = sources.manifest(module, plans, files, flags, "", "")
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    subprocess.run([find_cxx(), "-std=c++17", "-O0", "-fPIC", "-shared", "-pthread", "-I.", "-o",
                    f"lib{name}_cpu.so", f"{name}.cpp"], cwd=out, check=True)
    return load(out)


def check_batch(bodies: list, name: str, folder, rng, device: str = "cpu") -> dict:
    """Build the bodies as one module and gradcheck each kernel: counts of "exact" and "refused"
    kernels, and the sources and reports of "wrong" ones. device "cuda-emu": the module's CUDA
    code on the CUDA emulation (harness.build: blocks of 256 threads, cached like every test build)."""
    from tilec.gradcheck import gradcheck

    source, kernels = module_source(bodies)
    if device == "cpu":
        generated = build_fast(source, name, folder)
    else:
        from harness import build

        generated = build(source, name, block_dim=256, target=device)
    result = {"exact": 0, "refused": 0, "wrong": []}
    for kernel_name, tiled, body in kernels:
        report = gradcheck(getattr(generated, kernel_name), 1 if tiled else THREADS, inputs(rng), device=device)
        if report.refused is not None:
            result["refused"] += 1
        elif report.ok:
            result["exact"] += 1
        else:
            result["wrong"].append(f"{body}\n{report}")
    return result
