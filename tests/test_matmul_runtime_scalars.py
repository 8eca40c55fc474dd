"""`wp.tile_matmul(a, b[, out], alpha=x, beta=y)` with run-time alpha/beta (Warp's doc: any float scalar,
out = alpha * a @ b + beta * out, out not read when beta is 0): forward against numpy, adjoint against
float64 finite differences, on the CPU and the CUDA emulation."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def scaled(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64),
           D: wp.array2d(dtype=wp.float64), E: wp.array2d(dtype=wp.float64), alpha: float, beta: wp.float64):
    a = wp.tile_load(A, shape=(4, 8))
    b = wp.tile_load(B, shape=(8, 4))
    c = wp.tile_load(C, shape=(4, 4))
    wp.tile_matmul(a, b, c, alpha=alpha, beta=beta)
    wp.tile_store(D, c)
    wp.tile_store(E, wp.tile_matmul(a, b, alpha=alpha))


@wp.kernel
def beta_only(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
              D: wp.array2d(dtype=float), beta: float):
    a = wp.tile_load(A, shape=(4, 8))
    b = wp.tile_load(B, shape=(8, 4))
    c = wp.tile_load(C, shape=(4, 4))
    wp.tile_matmul(a, b, c, beta=beta)
    wp.tile_store(D, c)
'''


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def target(request):
    mod = build(SOURCE, "matmul_scalars" if request.param == "cpu" else "matmul_scalars_emu",
                block_dim=32, target=request.param)
    return mod, request.param


def _inputs(seed=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((4, 8)), rng.standard_normal((8, 4)), rng.standard_normal((4, 4))


def test_forward_matches_numpy(target):
    mod, device = target
    A, B, C = _inputs()
    for alpha, beta in ((0.5, -1.3), (2.0, 0.0), (1.0, 1.0)):
        D, E = np.zeros((4, 4)), np.zeros((4, 4))
        mod.scaled.launch_tiled(dim=1, inputs=[A, B, C, D, E, alpha, beta], device=device)
        np.testing.assert_allclose(D, alpha * A @ B + beta * C, rtol=1e-6, atol=1e-6)  # alpha is a float32 arg
        np.testing.assert_allclose(E, alpha * A @ B, rtol=1e-6, atol=1e-6)


def test_beta_zero_ignores_non_finite_out(target):
    mod, device = target
    A, B, _ = (x.astype(np.float32) for x in _inputs(4))
    C = np.full((4, 4), np.nan, np.float32)
    C[0, 0] = np.inf
    D = np.zeros((4, 4), np.float32)
    mod.beta_only.launch_tiled(dim=1, inputs=[A, B, C, D, 0.0], device=device)
    np.testing.assert_allclose(D, A @ B, rtol=1e-5, atol=1e-5)
    C = np.ones((4, 4), np.float32)
    mod.beta_only.launch_tiled(dim=1, inputs=[A, B, C, D, 0.25], device=device)
    np.testing.assert_allclose(D, A @ B + 0.25, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("alpha, beta", [(0.5, -1.3), (2.0, 0.0)])
def test_adjoint_matches_finite_differences(target, alpha, beta):
    mod, device = target
    A, B, C = _inputs(5)
    kernel = mod.scaled if device == "cpu" else OnEmulator(mod.scaled)
    args = [A, B, C, np.zeros((4, 4)), np.zeros((4, 4)), alpha, beta]
    check_gradients(kernel, 1, args, outputs=[3, 4], wrt=[0, 1, 2])
