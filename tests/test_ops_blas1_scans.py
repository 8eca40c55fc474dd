"""tile_dot, tile_axpy, the running max/min scans and scans of 2-d tiles (flattened row-major, as
Warp): forward against numpy and adjoints against float64 finite differences, on the CPU and the
CUDA emulation, with tiles that overhang their arrays (the zeros outside take part)."""
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
def forward(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), I: wp.array2d(dtype=int),
            D: wp.array1d(dtype=float), SMAX: wp.array2d(dtype=float), SMIN: wp.array2d(dtype=float),
            SUM: wp.array2d(dtype=float), EXC: wp.array2d(dtype=float), IMAX: wp.array2d(dtype=int),
            Y: wp.array2d(dtype=float), alpha: float):
    a = wp.tile_load(A, shape=(5, 7))
    b = wp.tile_load(B, shape=(5, 7))
    wp.tile_store(D, wp.tile_dot(a, b))
    wp.tile_store(D, wp.tile_dot(wp.tile_view(a, offset=(2, 0), shape=(7,)), wp.tile_view(b, offset=(1, 0), shape=(7,))),
                  offset=1)
    wp.tile_store(SMAX, wp.tile_scan_max_inclusive(a))
    wp.tile_store(SMIN, wp.tile_scan_min_inclusive(b))
    wp.tile_store(SUM, wp.tile_scan_inclusive(a))
    wp.tile_store(EXC, wp.tile_scan_exclusive(b))
    wp.tile_store(IMAX, wp.tile_scan_max_inclusive(wp.tile_load(I, shape=(5, 7))))
    y = wp.tile_load(Y, shape=(5, 7))
    wp.tile_axpy(alpha, a, y)
    wp.tile_axpy(0.5, b, y)
    wp.tile_store(Y, y)


@wp.kernel
def grads(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), S: wp.array1d(dtype=wp.float64), D: wp.array1d(dtype=wp.float64),
          M: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(4, 6))
    b = wp.tile_load(B, shape=(4, 6))
    wp.tile_store(D, wp.tile_dot(a * a, b))
    wp.tile_store(M, wp.tile_scan_max_inclusive(a) * 2.0 + wp.tile_scan_min_inclusive(b) + wp.tile_scan_inclusive(a * b))
    y = b * 3.0
    wp.tile_axpy(S[0] * S[1], a, y)
    wp.tile_store(Y, y)


@wp.kernel
def literals64(Y: wp.array1d(dtype=wp.float64)):
    y = wp.tile_full(shape=(3,), value=0.1, dtype=wp.float64)
    wp.tile_axpy(0.3, y, y)
    wp.tile_store(Y, y)
'''

DEVICES = [("cpu", 256), ("cuda-emu", 32)]


@pytest.fixture(scope="module", params=DEVICES, ids=lambda d: f"{d[0]}-block{d[1]}")
def target(request):
    device, block_dim = request.param
    return build(SOURCE, "blas1_scans" + ("_emu" if device != "cpu" else ""), block_dim=block_dim,
                 target=device), device


def padded(x, shape):
    out = np.zeros(shape, x.dtype)
    out[: x.shape[0], : x.shape[1]] = x
    return out


def test_forward_against_numpy(target):
    mod, device = target
    rng = np.random.default_rng(14)
    A = rng.standard_normal((4, 6)).astype(np.float32)  # the (5, 7) tiles overhang: zeros join in
    B = rng.standard_normal((4, 6)).astype(np.float32)
    I = rng.integers(-50, 50, (4, 6)).astype(np.int32)
    Y = rng.standard_normal((4, 6)).astype(np.float32)
    outs = [np.zeros((4, 6), np.float32) for _ in range(4)]
    IMAX = np.zeros((4, 6), np.int32)
    D = np.zeros(2, np.float32)
    Y0 = Y.copy()
    mod.forward.launch_tiled(dim=1, inputs=[A, B, I, D, *outs, IMAX, Y, np.float32(1.5)], device=device)
    a, b, i = padded(A, (5, 7)), padded(B, (5, 7)), padded(I, (5, 7))
    np.testing.assert_allclose(D, [np.sum(a * b), a[2] @ b[1]], rtol=1e-5)
    flat = lambda x: x.reshape(-1)  # noqa: E731 - scans run over the row-major sequence
    np.testing.assert_array_equal(outs[0], np.maximum.accumulate(flat(a)).reshape(5, 7)[:4, :6])
    np.testing.assert_array_equal(outs[1], np.minimum.accumulate(flat(b)).reshape(5, 7)[:4, :6])
    np.testing.assert_allclose(outs[2], np.cumsum(flat(a)).reshape(5, 7)[:4, :6], rtol=1e-5, atol=1e-5)
    exc = np.concatenate([[0], np.cumsum(flat(b))[:-1]]).reshape(5, 7)
    np.testing.assert_allclose(outs[3], exc[:4, :6], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(IMAX, np.maximum.accumulate(flat(i)).reshape(5, 7)[:4, :6])
    np.testing.assert_allclose(Y, Y0 + 1.5 * A + 0.5 * B, rtol=1e-6)


def test_scan_max_lets_a_number_beat_nan_as_c_fmax(target):
    mod, device = target
    A = np.full((4, 6), -3.0, np.float32)
    A[0, 0], A[1, 2] = np.nan, 7.0
    B = np.zeros((4, 6), np.float32)
    B[0, 1] = np.nan
    outs = [np.zeros((4, 6), np.float32) for _ in range(4)]
    mod.forward.launch_tiled(dim=1, inputs=[A, B, np.zeros((4, 6), np.int32), np.zeros(2, np.float32), *outs,
                                            np.zeros((4, 6), np.int32), np.zeros((4, 6), np.float32),
                                            np.float32(1)], device=device)
    want = np.fmax.accumulate(padded(A, (5, 7)).reshape(-1)).reshape(5, 7)[:4, :6]
    np.testing.assert_array_equal(outs[0], want)
    assert outs[0][0, 0] != outs[0][0, 0] and outs[0][0, 1] == -3.0 and outs[0][3, 5] == 7.0
    np.testing.assert_array_equal(outs[1], np.fmin.accumulate(padded(B, (5, 7)).reshape(-1)).reshape(5, 7)[:4, :6])


def test_gradients_against_finite_differences(target):
    mod, device = target
    kernel = mod.grads if device == "cpu" else OnEmulator(mod.grads)
    rng = np.random.default_rng(15)
    A = rng.standard_normal((3, 5))  # (4, 6) tiles overhang the arrays
    B = rng.standard_normal((3, 5))
    S = np.array([0.7, -1.3])
    args = [A, B, S, np.zeros(1), np.zeros((3, 5)), np.zeros((3, 5))]
    check_gradients(kernel, 1, args, outputs=[3, 4, 5], wrt=[0, 1, 2])


def test_float_literals_take_the_tiles_float64(target):
    """0.1 and 0.3 are doubles for float64 tiles, not floats widened (which would miss by 1e-9)."""
    mod, device = target
    Y = np.zeros(3)
    mod.literals64.launch_tiled(dim=1, inputs=[Y], device=device)
    np.testing.assert_allclose(Y, np.full(3, 0.1 + 0.3 * 0.1), rtol=1e-15)
