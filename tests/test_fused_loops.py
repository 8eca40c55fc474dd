"""Consecutive element-wise assignments of one tile shape, emitted as one loop on the CPU
(codegen/fused_loops.py): which statements share a loop, which tiles become the loop's locals,
which runs end, and that forward and adjoint still compute what numpy does."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.backend_cpu.emit import emit_cpu
from tilec.backend_cuda.emit import emit_cuda
from tilec.codegen.sources import plan_kernels
from tilec.gradcheck import check_file
from tilec.passes.normalize import normalize_module

SOURCE = '''
import warp as wp


@wp.kernel
def chain(X: wp.array2d(dtype=float), R: wp.array2d(dtype=float), Y: wp.array2d(dtype=float),
          Z: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(2, 32), offset=(i * 2, 0))
    a = x * x
    b = a + wp.tile_broadcast(wp.tile_load(R, shape=(1, 32)), shape=(2, 32))
    c = a * b
    wp.tile_store(Y, b, offset=(i * 2, 0))
    wp.tile_store(Z, c, offset=(i * 2, 0))
'''


def _emitted(source: str, name: str) -> tuple[str, str]:
    module = normalize_module(compile_ir(source, name))
    plans = plan_kernels(module)
    return emit_cpu(module, plans).files[f"{name}.cpp"], emit_cuda(module, plans)[0]


def _body(cpp: str, kernel: str) -> str:
    start = cpp.index(f"void {kernel}(")
    return cpp[start:cpp.index("\n}\n", start)]


def test_three_assignments_share_one_loop_and_a_tile_only_the_loop_reads_is_not_stored():
    cpp, cu = _emitted(SOURCE, "fused")
    forward = _body(cpp, "k_chain_forward")
    assert forward.count("for (int _r = 0; _r < 2; ++_r) {") == 1  # one loop, split into rows (the broadcast row)
    loop = forward[forward.index("for (int _r"):]
    lines = [line.strip() for line in loop.splitlines()]
    at = {i: line for i, line in enumerate(lines) if line.startswith("// fused.py:")}
    assert [at[i] for i in sorted(at)][:3] == ["// fused.py:10", "// fused.py:11", "// fused.py:12"]
    assert forward.index("tl::tile_load(ctx, v1__tmp, v_R, true);") < forward.index("for (int _r")  # R's load: before
    assert "const float _el_v_a = (v_x.data[_e] * v_x.data[_e]);" in lines  # a: read only by b and c
    assert "v_b.data[_e] = (_el_v_a + v1__tmp.data[_c]);" in lines  # b: stored below, so kept
    assert "v_c.data[_e] = (_el_v_a * v_b.data[_e]);" in lines
    assert "tl::Tile<float, 2, 32> v_a" not in forward  # never declared
    assert "_el_" not in cu and "_el_" in _body(cpp, "k_chain_backward")  # the GPU model keeps its loops


@pytest.mark.parametrize("between, joined", [
    ("a = x * x\n    b = a + x", True),
    # a broadcast of another shape in between: the loop keeps its rows (element_loops.split_extent)
    ("a = x * x\n    b = wp.tile_map(f, a)", False),  # a user func: its calls keep their order
    # a reduction the loop does not make, reading a: it stays after a's loop, and b after it
    ("a = x * x\n    s = wp.tile_max(a)\n    b = a + wp.tile_broadcast(s, shape=(2, 32))", False),
])
def test_which_statements_join_a_run(between, joined):
    source = f'''
import warp as wp


@wp.func
def f(v: float):
    return v + 1.0


@wp.kernel
def k(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), Z: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(2, 32), offset=(i * 2, 0))
    {between}
    wp.tile_store(Y, a, offset=(i * 2, 0))
    wp.tile_store(Z, b, offset=(i * 2, 0))
'''
    forward = _body(_emitted(source, "runs")[0], "k_k_forward")
    assert (forward.count("for (int _e = 0; _e < 64; ++_e) {") == 1) is joined


def test_tiles_of_another_shape_end_the_run():
    source = '''
import warp as wp


@wp.kernel
def k(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), Z: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(2, 32), offset=(i * 2, 0))
    t = wp.tile_load(X, shape=(4, 16), offset=(i * 4, 0))
    a = x * x
    b = t * t
    wp.tile_store(Y, a, offset=(i * 2, 0))
    wp.tile_store(Z, b, offset=(i * 4, 0))
'''
    forward = _body(_emitted(source, "shapes")[0], "k_k_forward")
    assert "for (int _e = 0; _e < 64; ++_e) {" in forward and "_el_" not in forward
    assert forward.count("for (int _e = 0; _e < 64; ++_e) {") == 2  # a's loop, b's loop (both 64 elements)


@pytest.mark.build
@needs_cxx
def test_forward_and_adjoint_of_the_fused_loops_match_numpy():
    mod = build(SOURCE, "fused_num")
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 32)).astype(np.float32)
    R = rng.standard_normal((1, 32)).astype(np.float32)
    Y, Z = np.zeros_like(X), np.zeros_like(X)
    mod.chain.launch_tiled(dim=3, inputs=[X, R, Y, Z])
    a = X * X
    b = a + R
    np.testing.assert_allclose(Y, b, rtol=1e-6)
    np.testing.assert_allclose(Z, a * b, rtol=1e-6)
    GY, GZ = rng.standard_normal(X.shape).astype(np.float32), rng.standard_normal(X.shape).astype(np.float32)
    gx, gr = np.zeros_like(X), np.zeros_like(R)
    mod.chain.launch_tiled(dim=3, inputs=[X, R, Y, Z], adj_inputs=[gx, gr, GY.copy(), GZ.copy()], adjoint=True)
    x64, a64 = X.astype(np.float64), a.astype(np.float64)
    b64 = a64 + R
    np.testing.assert_allclose(gx, 2 * x64 * (GY + GZ * (a64 + b64)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gr, (GY + GZ * a64).sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)




ORDERED = '''
import warp as wp


@wp.kernel
def ordered(X: wp.array2d(dtype=float), C: wp.array2d(dtype=float), D: wp.array2d(dtype=float),
            Y: wp.array2d(dtype=float), Z: wp.array2d(dtype=float)):
    i = wp.tid()
    c = wp.tile_load(C, shape=(1, 32), offset=(i, 0))
    x = wp.tile_load(X, shape=(1, 32), offset=(i, 0))
    a = x * c
    wp.tile_store(X, c, offset=(i, 0))
    b = a * c
    c = wp.tile_load(D, shape=(1, 32), offset=(i, 0))
    e = b + c
    wp.tile_store(Y, a, offset=(i, 0))
    wp.tile_store(Z, e + b, offset=(i, 0))
'''


@pytest.mark.build
@needs_cxx
def test_statements_that_must_stay_between_two_element_loops_keep_them_apart():
    """a reads X's row in place, so the store into X stays between a and b; the second load writes
    c, which b reads, so b's loop ends before it: three loops, and the values of the source order."""
    forward = _body(_emitted(ORDERED, "ordered")[0], "k_ordered_forward")
    assert "_row_v_x[_e]" in forward  # a reads X's row in place
    assert forward.count("for (int _e = 0; _e < 32; ++_e) {") == 3
    mod = build(ORDERED, "ordered")
    rng = np.random.default_rng(2)
    X0, C, D = (rng.standard_normal((4, 32)).astype(np.float32) for _ in range(3))
    X, Y, Z = X0.copy(), np.zeros_like(X0), np.zeros_like(X0)
    mod.ordered.launch_tiled(dim=4, inputs=[X, C, D, Y, Z])
    a = X0 * C
    b = a * C
    np.testing.assert_array_equal(X, C)
    np.testing.assert_array_equal(Y, a)
    np.testing.assert_array_equal(Z, (b + D) + b)


def _random_program(seed: int, kernels: int = 4, statements: int = 9) -> tuple[str, list[list[tuple[str, str, str, str]]]]:
    """A module of kernels, each a random run of element-wise statements over (2, 32) tiles, with
    loads and a store in between (what runs fuse, hoist and end on), and its statement lists
    (target, op, left, right) for the numpy model. Only +, - and * of values near 1: float32
    results that numpy reproduces exactly."""
    rng = np.random.default_rng(seed)
    lines = ["import warp as wp", ""]
    programs = []
    for k in range(kernels):
        lines += ["", "@wp.kernel",
                  f"def k{k}(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), R: wp.array2d(dtype=float),",
                  "       Y0: wp.array2d(dtype=float), Y1: wp.array2d(dtype=float), Y2: wp.array2d(dtype=float)):",
                  "    i = wp.tid()",
                  "    a = wp.tile_load(A, shape=(2, 32), offset=(i * 2, 0))",
                  "    r = wp.tile_broadcast(wp.tile_load(R, shape=(1, 32)), shape=(2, 32))"]
        names, steps, stored = ["a", "r"], [], False
        for _ in range(statements):
            target = f"v{rng.integers(0, 4)}"
            kind = rng.integers(0, 10)
            if kind == 0:  # a fresh load of another operand between element-wise statements
                steps.append((target, "load", "B", ""))
                lines.append(f"    {target} = wp.tile_load(B, shape=(2, 32), offset=(i * 2, 0))")
            elif kind == 1 and not stored and len(names) > 2:  # a store in between (its array never read)
                source = str(rng.choice(names[2:]))
                steps.append(("Y2", "store", source, ""))
                lines.append(f"    wp.tile_store(Y2, {source}, offset=(i * 2, 0))")
                stored = True
                continue
            else:
                op = str(rng.choice(["+", "-", "*"]))
                left, right = (str(x) for x in rng.choice(names, 2))
                steps.append((target, op, left, right))
                lines.append(f"    {target} = {left} {op} {right}")
            if target not in names:
                names.append(target)
        outs = names[2:] or ["a"]
        lines.append(f"    wp.tile_store(Y0, {outs[-1]}, offset=(i * 2, 0))")
        lines.append(f"    wp.tile_store(Y1, {outs[0]} * {outs[-1]}, offset=(i * 2, 0))")
        if not stored:
            lines.append("    wp.tile_store(Y2, a, offset=(i * 2, 0))")
            steps.append(("Y2", "store", "a", ""))
        steps += [("Y0", "store", outs[-1], ""), ("Y1", "store*", outs[0], outs[-1])]
        programs.append(steps)
    return "\n".join(lines) + "\n", programs


def _model(steps: list[tuple[str, str, str, str]], A: np.ndarray, B: np.ndarray, R: np.ndarray) -> dict[str, np.ndarray]:
    env: dict[str, np.ndarray] = {"a": A, "r": np.broadcast_to(R, A.shape)}
    outs: dict[str, np.ndarray] = {}
    for target, op, left, right in steps:
        if op == "load":
            env[target] = B
        elif op == "store":
            outs[target] = env[left]
        elif op == "store*":
            outs[target] = env[left] * env[right]
        else:
            x, y = env[left], env[right]
            env[target] = x + y if op == "+" else (x - y if op == "-" else x * y)
    return outs


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_random_runs_match_numpy_and_their_gradients_finite_differences(seed, tmp_path):
    source, programs = _random_program(seed)
    assert "const float _el_" in _emitted(source, f"runs{seed}")[0]  # runs fused, tiles kept as locals
    mod = build(source, f"runs{seed}")
    rng = np.random.default_rng(seed)
    A, B = (rng.uniform(-1.5, 1.5, (6, 32)).astype(np.float32) for _ in range(2))
    R = rng.uniform(-1.5, 1.5, (1, 32)).astype(np.float32)
    for k, steps in enumerate(programs):
        Y = [np.zeros_like(A) for _ in range(3)]
        getattr(mod, f"k{k}").launch_tiled(dim=3, inputs=[A, B, R, *Y])
        want = _model(steps, A, B, R)
        for n in range(3):
            np.testing.assert_array_equal(Y[n], want[f"Y{n}"], err_msg=f"k{k} Y{n}")
    path = tmp_path / f"runs{seed}.py"
    path.write_text(source)
    lines: list[str] = []
    shapes = {"A": (6, 32), "B": (6, 32), "R": (1, 32), "Y0": (6, 32), "Y1": (6, 32), "Y2": (6, 32)}
    assert check_file(str(path), dim=(3,), shapes=shapes, echo=lines.append), "\n".join(lines)
    assert not any("refused" in line for line in lines), "\n".join(lines)
