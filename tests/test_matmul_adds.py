"""An adjoint's products added into per-thread sums, multiplied straight into them (codegen/
matmul_adds.py, runtime matmul_adds.h): which products the emitter hands to tl::tile_matmul_add,
and the gradients of its three paths against numpy and float64 finite differences: into a
thread's sums (two threads), into the array's rows on the launch's only worker (one thread, an
array too small for sums, the tile's rows back to back), and the product then the add as before
(one thread, the tile's rows apart in the array); a second launch adds onto the first's."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.backend_cpu.emit import emit_cpu
from tilec.codegen.sources import plan_kernels
from tilec.passes.normalize import normalize_module

SOURCE = '''
import warp as wp


@wp.kernel
def layer(X: wp.array2d(dtype=float), W: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i, k = wp.tid()
    x = wp.tile_load(X, shape=(16, 32), offset=(i * 16, 0))
    w = wp.tile_load(W, shape=(32, 16), offset=(0, k * 16))
    wp.tile_store(Y, wp.tile_matmul(x, w), offset=(i * 16, k * 16))


@wp.kernel
def layer64(X: wp.array2d(dtype=wp.float64), W: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(16, 8), offset=(i * 16, 0))
    y = wp.tile_matmul(x, wp.tile_load(W, shape=(8, 24)))
    wp.tile_store(Y, wp.tile_map(wp.tanh, y), offset=(i * 16, 0))
'''


def test_the_products_added_into_sums_are_multiplied_into_them():
    module = normalize_module(compile_ir(SOURCE, "matmul_adds"))
    cpp = emit_cpu(module, plan_kernels(module)).files["matmul_adds.cpp"]
    backward = cpp.split("k_layer_backward")[1].split("k_layer64_forward")[0]
    # W's gradient (summed: every block row re-adds it) takes x^T dY straight into its sums
    assert "tl::tile_matmul_add(ctx, adj_v_W, tl::transposed(" in backward
    assert "multiplied by the add below straight into its sums" in backward
    # X's gradient (re-added by every block of a row: summed too) takes dY w^T into its sums where
    # its add stands, after W's product and add
    assert "tl::tile_matmul_add(ctx, adj_v_X, v3__v, tl::transposed(v_w)" in backward
    assert backward.count("tl::tile_matmul(ctx,") == 0


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "matmul_adds")


@pytest.mark.build
@needs_cxx
# threads 2: the thread's sums; W 32 x 16 on one thread: W's rows (the array's width) back to back,
# into the array; W 32 x 48 on one thread: the tile's rows 48 apart, the product then the add
@pytest.mark.parametrize("threads,n", [(2, 48), (1, 16), (1, 48)])
def test_gradients_against_numpy(mod, threads, n):
    rng = np.random.default_rng(1)
    X, W = rng.standard_normal((80, 32)).astype(np.float32), rng.standard_normal((32, n)).astype(np.float32)
    Y = np.zeros((80, n), np.float32)
    dX0, dW0 = rng.standard_normal(X.shape).astype(np.float32), rng.standard_normal(W.shape).astype(np.float32)
    dX, dW = dX0.copy(), dW0.copy()
    dY = rng.standard_normal(Y.shape).astype(np.float32)
    for launch in range(2):  # the second launch adds onto the first's gradients (Warp's accumulation)
        mod.layer.launch_tiled(dim=(5, n // 16), inputs=[X, W, Y], adj_inputs=[dX, dW, dY.copy()], adjoint=True,
                               num_threads=threads)
        want_x = dX0 + (launch + 1) * (dY.astype(np.float64) @ W.T)
        want_w = dW0 + (launch + 1) * (X.T.astype(np.float64) @ dY)
        np.testing.assert_allclose(dX, want_x, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(dW, want_w, rtol=1e-5, atol=1e-4)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_float64_gradients_against_finite_differences(mod, threads, monkeypatch):
    monkeypatch.setenv("TILEC_NUM_THREADS", str(threads))
    rng = np.random.default_rng(3)
    X, W = rng.standard_normal((40, 8)) / 3, rng.standard_normal((8, 24)) / 3
    Y = np.zeros((40, 24))
    check_gradients(mod.layer64, 3, [X, W, Y], outputs=[2], wrt=[0, 1], h=1e-5, rtol=1e-6, atol=1e-8)


def test_a_product_whose_add_comes_a_few_statements_later_is_multiplied_in_there():
    """The GEMM adjoint's k loop computes adj_A's product, then adj_B's product and add, then adj_A's
    add: both products go into their sums (the first where its add stands, nothing in between
    writing what it reads)."""
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "programs" / "gemm64.py"
    module = normalize_module(compile_ir(path.read_text(), "gemm64"))
    cpp = emit_cpu(module, plan_kernels(module)).files["gemm64.cpp"]
    backward = cpp.split("k_gemm_backward")[1]
    assert "tl::tile_matmul_add(ctx, adj_v_A," in backward and "tl::tile_matmul_add(ctx, adj_v_B," in backward
    assert "tl::tile_matmul(ctx," not in backward.split("for (")[-1]  # no product tile left in the k loop
