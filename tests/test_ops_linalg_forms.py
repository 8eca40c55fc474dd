"""fill_mode="upper" for tile_cholesky and tile_cholesky_solve (U^T U = A, only A's upper triangle
read), and the in-place forms tile_cholesky_inplace, tile_cholesky_solve_inplace,
tile_lower_solve_inplace and tile_upper_solve_inplace: forward against numpy and adjoints, right
through the overwrite (Warp documents its in-place forms as not differentiable), against float64
finite differences, on the CPU and the CUDA emulation. Right-hand sides overhang their arrays."""
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
def forms(S: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), U: wp.array2d(dtype=wp.float64),
          X: wp.array2d(dtype=wp.float64), F: wp.array2d(dtype=wp.float64), Z: wp.array2d(dtype=wp.float64),
          W: wp.array2d(dtype=wp.float64)):
    s = wp.tile_load(S, shape=(5, 5))
    y = wp.tile_load(Y, shape=(5, 2))
    u = wp.tile_cholesky(s, fill_mode="upper")
    wp.tile_store(U, u)
    wp.tile_store(X, wp.tile_cholesky_solve(u, y, fill_mode="upper"))
    f = s * 1.0
    wp.tile_cholesky_inplace(f)
    wp.tile_store(F, f)
    z = y * 1.0
    wp.tile_lower_solve_inplace(f, z)
    wp.tile_store(Z, z)
    w = y * 1.0
    wp.tile_cholesky_inplace(s, fill_mode="upper")
    wp.tile_upper_solve_inplace(s, w)
    wp.tile_cholesky_solve_inplace(s, w, fill_mode="upper")
    wp.tile_cholesky_solve_inplace(f, w)
    wp.tile_store(W, w)


@wp.kernel
def grads(S: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), U: wp.array2d(dtype=wp.float64),
          X: wp.array2d(dtype=wp.float64), W: wp.array2d(dtype=wp.float64)):
    s = wp.tile_load(S, shape=(4, 4))
    y = wp.tile_load(Y, shape=(4, 2))
    u = wp.tile_cholesky(s, fill_mode="upper")
    wp.tile_store(U, u)
    wp.tile_store(X, wp.tile_cholesky_solve(u, y, fill_mode="upper"))
    w = y * 2.0
    wp.tile_cholesky_inplace(s)
    wp.tile_lower_solve_inplace(s, w)
    wp.tile_cholesky_solve_inplace(s, w)
    wp.tile_cholesky_inplace(s, fill_mode="upper")
    wp.tile_upper_solve_inplace(s, w)
    wp.tile_cholesky_solve_inplace(s, w, fill_mode="upper")
    wp.tile_store(W, w)
'''

DEVICES = [("cpu", 256), ("cuda-emu", 32)]


@pytest.fixture(scope="module", params=DEVICES, ids=lambda d: f"{d[0]}-block{d[1]}")
def target(request):
    device, block_dim = request.param
    return build(SOURCE, "linalg_forms" + ("_emu" if device != "cpu" else ""), block_dim=block_dim,
                 target=device), device


def spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def test_upper_and_in_place_forms_against_numpy(target):
    mod, device = target
    rng = np.random.default_rng(31)
    A = spd(rng, 5)
    L = np.linalg.cholesky(A)
    Y = rng.standard_normal((5, 1))  # the (5, 2) right-hand side overhangs: its second column is zeros

    def run(matrix):
        outs = [np.zeros((5, 5)), np.zeros((5, 1)), np.zeros((5, 5)), np.zeros((5, 1)), np.zeros((5, 1))]
        with np.errstate(all="ignore"):
            mod.forms.launch_tiled(dim=1, inputs=[matrix, Y, *outs], device=device)
        return outs

    U, X, F, Z, W = run(A)
    np.testing.assert_allclose(U, L.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(X, np.linalg.solve(A, Y), rtol=1e-10)
    np.testing.assert_allclose(F, L, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Z, np.linalg.solve(L, Y), rtol=1e-10)
    w = np.linalg.solve(A, np.linalg.solve(A, np.linalg.solve(L.T, Y)))  # U = L^T, then two solves with A
    np.testing.assert_allclose(W, w, rtol=1e-9)
    # fill_mode="upper" reads only the upper triangle, the default only the lower one
    below, above = A.copy(), A.copy()
    below[np.tril_indices(5, -1)] = 1e3
    above[np.triu_indices(5, 1)] = -7.0
    U, X, *_ = run(below)
    np.testing.assert_allclose(U, L.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(X, np.linalg.solve(A, Y), rtol=1e-10)
    _, _, F, Z, _ = run(above)
    np.testing.assert_allclose(F, L, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Z, np.linalg.solve(L, Y), rtol=1e-10)


def test_gradients_through_the_overwrites(target):
    mod, device = target
    kernel = mod.grads if device == "cpu" else OnEmulator(mod.grads)
    rng = np.random.default_rng(32)
    S = spd(rng, 4)
    Y = rng.standard_normal((4, 1))  # overhanging right-hand side
    args = [S, Y, np.zeros((4, 4)), np.zeros((4, 1)), np.zeros((4, 1))]
    check_gradients(kernel, 1, args, outputs=[2, 3, 4], wrt=[0, 1], rtol=1e-5, atol=1e-7)
