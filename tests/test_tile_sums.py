"""Per-thread tile sums of a CPU adjoint (codegen/tile_sums.py decides, runtime tile_sums.h adds):
which arrays qualify, and the gradients they give against numpy and float64 finite differences on
1 and 2 threads, with tiles overhanging the arrays, launches that accumulate into gradients already
there, adds off the sums' tile grid (the runtime adds those directly), and kernels whose arrays do
not qualify (the direct adds, as before)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.codegen.sources import plan_kernels
from tilec.codegen.tile_sums import summed_arrays
from tilec.backend_cpu.emit import emit_cpu
from tilec.passes.normalize import normalize_module

SOURCE = '''
import warp as wp

T = 16


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range((A.shape[1] + T - 1) // T):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * T, j * T))


@wp.kernel
def gemm64(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=wp.float64)
    for k in range((A.shape[1] + T - 1) // T):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * T, j * T))


@wp.kernel
def halves(W: wp.array2d(dtype=float), X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    # W's tiles start every 8 rows: half of them are off the (16, 16) grid of the sums
    i, k = wp.tid()
    w = wp.tile_load(W, shape=(T, T), offset=(k * 8, 0))
    x = wp.tile_load(X, shape=(T, T), offset=(i * T, 0))
    wp.tile_store(Y, wp.tile_matmul(x, w), offset=(i * T, k * T))


@wp.kernel
def two_shapes(W: wp.array2d(dtype=float), X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float),
               Z: wp.array2d(dtype=float)):
    # W is read as a (16, 16) and an (8, 16) tile: its adds have two shapes, so no sums
    i = wp.tid()
    w = wp.tile_load(W, shape=(T, T))
    v = wp.tile_load(W, shape=(8, T))
    x = wp.tile_load(X, shape=(T, T), offset=(i * T, 0))
    wp.tile_store(Y, wp.tile_matmul(x, w), offset=(i * T, 0))
    wp.tile_store(Z, wp.tile_matmul(wp.tile_load(X, shape=(8, 8), offset=(i * T, 0)), v), offset=(i * 8, 0))
'''


RANKS = '''
import warp as wp


@wp.kernel
def scale3(W: wp.array3d(dtype=float), X: wp.array3d(dtype=float), Y: wp.array3d(dtype=float)):
    # every block reads the same (2, 8, 8) tiles of W at k: blocks along i re-add into them
    i, k = wp.tid()
    w = wp.tile_load(W, shape=(2, 8, 8), offset=(k * 2, 0, 0))
    x = wp.tile_load(X, shape=(2, 8, 8), offset=(i * 2, 0, 0))
    wp.tile_store(Y, w * x, offset=(i * 2, k * 8, 0))


@wp.kernel
def scale1(g: wp.array(dtype=float), X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 24), offset=(i, 0))
    gg = wp.tile_reshape(wp.tile_load(g, shape=(24,)), shape=(1, 24))
    wp.tile_store(Y, x * gg, offset=(i, 0))
'''


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_sums_of_three_and_one_dimensional_arrays(threads):
    rank = build(RANKS, "tile_sums_ranks")
    rng = np.random.default_rng(7)
    W, X = rng.standard_normal((5, 8, 8)).astype(np.float32), rng.standard_normal((6, 8, 8)).astype(np.float32)
    Y = np.zeros((6, 24, 8), np.float32)  # k = 0..2: W's tiles at rows 0, 2, 4 (the last overhangs W)
    dY = rng.standard_normal(Y.shape).astype(np.float32)
    dW, dX = np.zeros_like(W), np.zeros_like(X)
    rank.scale3.launch_tiled(dim=(3, 3), inputs=[W, X, Y], adj_inputs=[dW, dX, dY.copy()], adjoint=True,
                             num_threads=threads)
    want_w, want_x = np.zeros(W.shape), np.zeros(X.shape)
    Wp = np.concatenate([W, np.zeros((1, 8, 8), np.float32)])  # the overhanging tile reads zeros
    for i in range(3):
        for k in range(3):
            g = dY[i * 2:i * 2 + 2, k * 8:k * 8 + 8].astype(np.float64)
            want_w[k * 2:k * 2 + 2] += (g * X[i * 2:i * 2 + 2])[:min(2, 5 - k * 2)]
            want_x[i * 2:i * 2 + 2] += g * Wp[k * 2:k * 2 + 2]
    np.testing.assert_allclose(dW, want_w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dX, want_x, rtol=1e-5, atol=1e-5)

    g1, X1 = rng.standard_normal(24).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)
    Y1 = np.zeros_like(X1)
    dY1 = rng.standard_normal(Y1.shape).astype(np.float32)
    dg, dX1 = np.zeros_like(g1), np.zeros_like(X1)
    rank.scale1.launch_tiled(dim=40, inputs=[g1, X1, Y1], adj_inputs=[dg, dX1, dY1.copy()], adjoint=True,
                             num_threads=threads)
    np.testing.assert_allclose(dg, (dY1.astype(np.float64) * X1).sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dX1, dY1 * g1, rtol=1e-6, atol=1e-6)


def cpu_adjoint(name):
    module = compile_ir(SOURCE, "tile_sums")
    plan = next(p for p in plan_kernels(normalize_module(module)) if p.forward.name == name)
    assert plan.adjoint is not None
    return plan.adjoint


def summed(name):
    return {p.name: tile.shape for p, tile in summed_arrays(cpu_adjoint(name)).items()}


def test_gemm_sums_both_operand_gradients_on_its_tile():
    # A's tiles repeat along j, B's along i: blocks re-add into them. C's adjoint is read, not summed
    assert summed("gemm") == {"adj:A": (16, 16), "adj:B": (16, 16)}


def test_an_array_each_block_adds_its_own_tiles_into_keeps_its_adds():
    # halves: W's tile follows k, X's follows i: blocks (i, k) re-add both along the other coordinate
    assert summed("halves") == {"adj:W": (16, 16), "adj:X": (16, 16)}
    mlp = '''
import warp as wp


@wp.kernel
def layer(X: wp.array2d(dtype=float), W: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(16, 32), offset=(i * 16, 0))
    wp.tile_store(Y, wp.tile_matmul(x, wp.tile_load(W, shape=(32, 32))), offset=(i * 16, 0))
'''
    module = compile_ir(mlp, "layer")
    adjoint = plan_kernels(normalize_module(module))[0].adjoint
    assert adjoint is not None
    # W's one tile: every block adds into it; X's tile i: block i alone
    assert {p.name: t.shape for p, t in summed_arrays(adjoint).items()} == {"adj:W": (32, 32)}


def test_adds_of_two_shapes_keep_the_direct_adds():
    assert "adj:W" not in summed("two_shapes")


def test_the_entry_point_passes_the_sums_and_adds_them_after_the_blocks():
    module = normalize_module(compile_ir(SOURCE, "tile_sums"))
    cpp = emit_cpu(module, plan_kernels(module)).files["tile_sums.cpp"]
    assert "tl::TileSums<float, 2, 16, 16>::Part& adj_v_A" in cpp
    assert "tl::TileSums<double, 2, 16, 16>::Part& adj_v_B" in cpp
    assert "_sums_adj_v_B.flush(" in cpp
    assert "tl::TileSums<float, 2, 16, 16> _sums_adj_v_W(" not in cpp.split("tile_sums_two_shapes_cpu_backward")[1]


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "tile_sums")


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
# (M, K, N), tiles overhanging every edge: the sums run on one thread from 1 MiB arrays on (tile_sums.h)
@pytest.mark.parametrize("shape", [(37, 53, 29), (520, 530, 515)])
def test_gemm_gradients_against_numpy(mod, threads, shape):
    m, kk, n = shape
    rng = np.random.default_rng(1)
    A, B = rng.standard_normal((m, kk)).astype(np.float32), rng.standard_normal((kk, n)).astype(np.float32)
    C = np.zeros((m, n), np.float32)
    dA0, dB0 = rng.standard_normal(A.shape).astype(np.float32), rng.standard_normal(B.shape).astype(np.float32)
    dA, dB = dA0.copy(), dB0.copy()
    dC = rng.standard_normal(C.shape).astype(np.float32)
    grid = ((m + 15) // 16, (n + 15) // 16)
    for launch in range(2):  # the second launch adds onto the first's gradients (Warp's accumulation)
        g = dC.copy()
        mod.gemm.launch_tiled(dim=grid, inputs=[A, B, C], adj_inputs=[dA, dB, g], adjoint=True, num_threads=threads)
        np.testing.assert_array_equal(g, 0)  # C's adjoint consumed
        want_a = dA0 + (launch + 1) * (dC.astype(np.float64) @ B.T)
        want_b = dB0 + (launch + 1) * (A.T.astype(np.float64) @ dC)
        np.testing.assert_allclose(dA, want_a, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(dB, want_b, rtol=1e-5, atol=1e-4)


@pytest.mark.build
@needs_cxx
def test_one_thread_sums_from_zero_equal_the_direct_adds_bit_for_bit(mod):
    # from a zero gradient one thread adds the same partial products in the same order: (((0 + p0)
    # + p1) + ...) in the array before, (p0 + p1 + ...) then 0 + that now
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((528, 512)).astype(np.float32), rng.standard_normal((512, 528)).astype(np.float32)
    C = np.zeros((528, 528), np.float32)
    dC = rng.standard_normal(C.shape).astype(np.float32)
    dA, dB = np.zeros_like(A), np.zeros_like(B)
    mod.gemm.launch_tiled(dim=(33, 33), inputs=[A, B, C], adj_inputs=[dA, dB, dC.copy()], adjoint=True,
                          num_threads=1)
    # the same launch with the gradients interleaved in one buffer (no element shared, their bytes
    # overlapping): the runtime adds them straight into the arrays, as without sums
    both = np.zeros((528, 1056), np.float32)
    dA2, dB2 = both[:, 0::2][:, :512], both[:512, 1::2]
    mod.gemm.launch_tiled(dim=(33, 33), inputs=[A, B, C], adj_inputs=[dA2, dB2, dC.copy()], adjoint=True,
                          num_threads=1)
    np.testing.assert_array_equal(dA, dA2)
    np.testing.assert_array_equal(dB, dB2)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_float64_gemm_gradients_against_finite_differences(mod, threads, monkeypatch):
    monkeypatch.setenv("TILEC_NUM_THREADS", str(threads))
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((21, 35)), rng.standard_normal((35, 18))
    C = np.zeros((21, 18))
    check_gradients(mod.gemm64, (2, 2), [A, B, C], outputs=[2], wrt=[0, 1], h=1e-4, rtol=1e-6, atol=1e-8)  # linear: no truncation error


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_adds_off_the_grid_go_straight_into_the_array(mod, threads):
    rng = np.random.default_rng(4)
    W, X = rng.standard_normal((40, 16)).astype(np.float32), rng.standard_normal((48, 16)).astype(np.float32)
    blocks = (3, 4)  # k = 0..3: W rows 0, 8, 16, 24 (the odd k off the 16-row grid)
    Y = np.zeros((48, 64), np.float32)
    dY = rng.standard_normal(Y.shape).astype(np.float32)
    dW, dX = np.zeros_like(W), np.zeros_like(X)
    mod.halves.launch_tiled(dim=blocks, inputs=[W, X, Y], adj_inputs=[dW, dX, dY.copy()], adjoint=True,
                            num_threads=threads)
    want_w, want_x = np.zeros(W.shape), np.zeros(X.shape)
    for k in range(4):
        g = dY[:, k * 16:(k + 1) * 16].astype(np.float64)
        want_w[k * 8:k * 8 + 16] += X.T.astype(np.float64) @ g
        want_x += g @ W[k * 8:k * 8 + 16].T
    np.testing.assert_allclose(dW, want_w, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(dX, want_x, rtol=1e-5, atol=1e-4)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_an_array_without_sums_gets_its_gradient_as_before(mod, threads):
    rng = np.random.default_rng(5)
    W, X = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((48, 16)).astype(np.float32)
    Y, Z = np.zeros((48, 16), np.float32), np.zeros((24, 16), np.float32)
    dY, dZ = rng.standard_normal(Y.shape).astype(np.float32), rng.standard_normal(Z.shape).astype(np.float32)
    dW, dX = np.zeros_like(W), np.zeros_like(X)
    mod.two_shapes.launch_tiled(dim=3, inputs=[W, X, Y, Z], adj_inputs=[dW, dX, dY.copy(), dZ.copy()], adjoint=True,
                                num_threads=threads)
    want_w, want_x = np.zeros(W.shape), np.zeros(X.shape)
    for i in range(3):
        rows, few = slice(i * 16, i * 16 + 16), slice(i * 16, i * 16 + 8)
        g, h = dY[rows].astype(np.float64), dZ[i * 8:i * 8 + 8].astype(np.float64)
        want_w += X[rows].T @ g
        want_w[:8] += X[few, :8].T @ h
        want_x[rows] += g @ W.T
        want_x[few, :8] += h @ W[:8].T
    np.testing.assert_allclose(dW, want_w, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(dX, want_x, rtol=1e-5, atol=1e-4)


@pytest.mark.build
@needs_cxx
def test_one_thread_launches_at_once_flush_into_one_gradient(mod):
    # each launch's one-thread flush registers as a worker, so no flush takes the lone worker's
    # lock-free add while another launch adds into the same array
    import threading

    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((512, 512)).astype(np.float32), rng.standard_normal((512, 512)).astype(np.float32)
    dC = rng.standard_normal((512, 512)).astype(np.float32)
    dA, dB = np.zeros_like(A), np.zeros_like(B)
    callers, launches = 3, 2

    def caller():
        C = np.zeros((512, 512), np.float32)
        for _ in range(launches):
            mod.gemm.launch_tiled(dim=(32, 32), inputs=[A, B, C], adj_inputs=[dA, dB, dC.copy()], adjoint=True,
                                  num_threads=1)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n = callers * launches
    np.testing.assert_allclose(dA, n * (dC.astype(np.float64) @ B.T), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dB, n * (A.T.astype(np.float64) @ dC), rtol=1e-4, atol=1e-3)


@pytest.mark.build
@needs_cxx
def test_threads_past_the_parts_add_directly(mod):
    # 300 worker threads: the first 256 to ask make sums, the others share the part that adds directly
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((320, 64)).astype(np.float32), rng.standard_normal((64, 320)).astype(np.float32)
    C = np.zeros((320, 320), np.float32)
    dC = rng.standard_normal(C.shape).astype(np.float32)
    dA, dB = np.zeros_like(A), np.zeros_like(B)
    mod.gemm.launch_tiled(dim=(20, 20), inputs=[A, B, C], adj_inputs=[dA, dB, dC.copy()], adjoint=True,
                          num_threads=300)
    np.testing.assert_allclose(dA, dC.astype(np.float64) @ B.T, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(dB, A.T.astype(np.float64) @ dC, rtol=1e-5, atol=1e-4)
