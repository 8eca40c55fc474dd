"""tile_map with scalar arguments and with a result dtype other than its inputs', float
tile_arange (float32 by default, counted at the output dtype as Warp counts it), the `aligned=`
hint of tile_load/tile_store, and Warp's mixed-precision tile_matmul (operands of any float widths,
accumulated in out's dtype): forward against numpy, adjoints against float64 finite differences,
on the CPU and the CUDA emulation, with tiles that overhang their arrays."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.func
def halve(x: int) -> float:
    return float(x) * 0.5


@wp.func
def affine(x: wp.float64, s: wp.float64, t: wp.float64) -> wp.float64:
    return x * s + t * x * x


@wp.kernel
def maps(I: wp.array1d(dtype=int), X: wp.array1d(dtype=float), H: wp.array1d(dtype=float),
         M: wp.array1d(dtype=float), s: float):
    i = wp.tile_load(I, shape=(8,))
    wp.tile_store(H, wp.tile_map(halve, i))
    x = wp.tile_load(X, shape=(8,), aligned=True)
    wp.tile_store(M, wp.tile_map(wp.mul, x, s) + wp.tile_map(wp.max, x, 0.25) + wp.tile_map(wp.add, 1.0, x),
                  aligned=True)


@wp.kernel
def aranges(R: wp.array1d(dtype=float), Q: wp.array1d(dtype=float), D: wp.array1d(dtype=wp.float64),
            K: wp.array1d(dtype=int)):
    wp.tile_store(R, wp.tile_arange(0.0, 2.0, 0.25))
    wp.tile_store(Q, wp.tile_arange(0.0, 0.3, 0.1, dtype=float))
    wp.tile_store(D, wp.tile_arange(1.5, -1.0, -0.5, dtype=wp.float64))
    wp.tile_store(K, wp.tile_arange(10, 0, -3, dtype=int))
    wp.tile_store(R, wp.tile_arange(3), offset=(8,))


@wp.kernel
def map_grads(X: wp.array1d(dtype=wp.float64), S: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64)):
    x = wp.tile_load(X, shape=(8,))
    wp.tile_store(Y, wp.tile_map(affine, x, S[0], S[1]) + wp.tile_map(wp.mul, S[1], x))


@wp.kernel
def mixed(A: wp.array2d(dtype=wp.float16), B: wp.array2d(dtype=float), C: wp.array2d(dtype=wp.float64),
          D: wp.array2d(dtype=wp.float16)):
    a = wp.tile_load(A, shape=(4, 8))
    b = wp.tile_load(B, shape=(8, 4))
    c = wp.tile_load(C, shape=(4, 4))
    wp.tile_matmul(a, b, c, alpha=0.5)
    wp.tile_store(C, c)
    wp.tile_store(D, wp.tile_matmul(a, b))


@wp.kernel
def mixed_grads(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=float), C: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(3, 5))
    b = wp.tile_load(B, shape=(5, 4))
    c = wp.tile_zeros(shape=(3, 4), dtype=wp.float64)
    wp.tile_matmul(a * a, b, c, alpha=2.0)
    wp.tile_store(C, c)


@wp.kernel
def view16(A: wp.array2d(dtype=wp.float16), B: wp.array1d(dtype=wp.float16)):
    a = wp.tile_load(A, shape=(4, 4))
    r = wp.tile_view(a, offset=(1, 0), shape=(4,))
    wp.tile_store(B, r * wp.float16(2.0) + wp.tile_view(a, offset=(2, 0), shape=(4,)))
'''

DEVICES = [("cpu", 256), ("cuda-emu", 32)]


@pytest.fixture(scope="module", params=DEVICES, ids=lambda d: f"{d[0]}-block{d[1]}")
def target(request):
    device, block_dim = request.param
    return build(SOURCE, "maps_precision" + ("_emu" if device != "cpu" else ""), block_dim=block_dim,
                 target=device), device


def test_map_with_scalars_and_a_new_result_dtype(target):
    mod, device = target
    rng = np.random.default_rng(21)
    I = rng.integers(-9, 9, 7).astype(np.int32)  # the (8,) tiles overhang by one
    X = rng.standard_normal(7).astype(np.float32)
    H, M = np.zeros(7, np.float32), np.zeros(7, np.float32)
    mod.maps.launch_tiled(dim=1, inputs=[I, X, H, M, np.float32(-1.75)], device=device)
    np.testing.assert_array_equal(H, I.astype(np.float32) * 0.5)
    np.testing.assert_allclose(M, X * -1.75 + np.maximum(X, 0.25) + (1 + X), rtol=1e-6)


def test_float_aranges_count_as_warp(target):
    mod, device = target
    R, Q = np.zeros(11, np.float32), np.zeros(3, np.float32)
    D, K = np.zeros(5), np.zeros(4, np.int32)
    mod.aranges.launch_tiled(dim=1, inputs=[R, Q, D, K], device=device)
    np.testing.assert_array_equal(R[:8], np.arange(8, dtype=np.float32) * 0.25)
    np.testing.assert_array_equal(R[8:], [0.0, 1.0, 2.0])  # float32 by default, as in Warp
    # (0, 0.3, 0.1): 3 elements (a float32 quotient of 3.0000001 would otherwise give 4)
    np.testing.assert_allclose(Q, [0.0, 0.1, 0.2], rtol=1e-6)
    np.testing.assert_array_equal(D, [1.5, 1.0, 0.5, 0.0, -0.5])
    np.testing.assert_array_equal(K, [10, 7, 4, 1])


def test_map_gradients_reach_scalar_arguments(target):
    mod, device = target
    kernel = mod.map_grads if device == "cpu" else OnEmulator(mod.map_grads)
    rng = np.random.default_rng(22)
    args = [rng.standard_normal(6), np.array([0.8, -0.6]), np.zeros(6)]
    check_gradients(kernel, 1, args, outputs=[2], wrt=[0, 1])


def test_mixed_precision_matmul(target):
    mod, device = target
    rng = np.random.default_rng(23)
    A = rng.standard_normal((3, 7)).astype(np.float16)  # tiles overhang: zeros join in
    B = rng.standard_normal((7, 4)).astype(np.float32)
    C = rng.standard_normal((3, 4))
    D = np.zeros((3, 4), np.float16)
    want = C + 0.5 * (A.astype(np.float64) @ B.astype(np.float64))
    mod.mixed.launch_tiled(dim=1, inputs=[A, B, C, D], device=device)
    np.testing.assert_allclose(C, want, rtol=1e-6, atol=1e-6)  # f16 and f32 operands, f64 accumulation
    np.testing.assert_allclose(D, (A.astype(np.float32) @ B).astype(np.float16), rtol=2e-3, atol=2e-3)


def test_mixed_precision_matmul_gradients(target):
    mod, device = target
    kernel = mod.mixed_grads if device == "cpu" else OnEmulator(mod.mixed_grads)
    rng = np.random.default_rng(24)
    A = rng.standard_normal((2, 5))
    B = rng.standard_normal((5, 3)).astype(np.float32)  # tiles overhang both arrays
    check_gradients(kernel, 1, [A, B, np.zeros((2, 3))], outputs=[2], wrt=[0])
    # B is float32: its adjoint against the analytic 2 * (a*a)^T @ w rather than finite differences
    W = rng.standard_normal((2, 3))
    adj = [np.zeros_like(A), np.zeros_like(B), W.copy()]
    kernel.launch_tiled(dim=1, inputs=[A, B, np.zeros((2, 3))], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[1], 2 * (A * A).T @ W, rtol=1e-5, atol=1e-6)


def test_float16_view_adjoint(target):
    """float16 tiles through tile_view's adjoint (the accumulation into a half tile used not to
    compile); float16 is too coarse for finite differences: against the exact adjoint instead."""
    mod, device = target
    rng = np.random.default_rng(25)
    A = rng.standard_normal((3, 4)).astype(np.float16)  # the (4, 4) tile overhangs by a row
    W = np.array([0.5, -1.0, 2.0], np.float16)  # B one short: the stored view overhangs too
    adj = [np.zeros_like(A), W.copy()]
    mod.view16.launch_tiled(dim=1, inputs=[A, np.zeros(3, np.float16)], adj_inputs=adj, adjoint=True, device=device)
    want = np.zeros((3, 4), np.float16)
    want[1, :3], want[2, :3] = 2 * W, W
    np.testing.assert_array_equal(adj[0], want)
