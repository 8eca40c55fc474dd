"""Reductions, scans, sort and linear algebra: forward against numpy, on the CPU and the CUDA emulation."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import OnEmulatorModule, build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.func
def mul(a: float, b: float):
    return a * b


@wp.kernel
def reductions(A: wp.array2d(dtype=float), S: wp.array1d(dtype=float), I: wp.array1d(dtype=int),
               C0: wp.array1d(dtype=float), C1: wp.array1d(dtype=float), M1: wp.array1d(dtype=float),
               J0: wp.array1d(dtype=int), P: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 16))
    wp.tile_store(S, wp.tile_sum(a), offset=0)
    wp.tile_store(S, wp.tile_max(a), offset=1)
    wp.tile_store(S, wp.tile_min(a), offset=2)
    wp.tile_store(I, wp.tile_argmax(a), offset=0)
    wp.tile_store(I, wp.tile_argmin(a), offset=1)
    wp.tile_store(C0, wp.tile_sum(a, axis=0))
    wp.tile_store(C1, wp.tile_sum(a, axis=1))
    wp.tile_store(M1, wp.tile_max(a, axis=1))
    wp.tile_store(J0, wp.tile_argmin(a, axis=0))
    wp.tile_store(P, wp.tile_reduce(mul, a * 0.1 + 1.0, axis=1))
    wp.tile_store(S, wp.tile_reduce(wp.max, a), offset=3)


@wp.kernel
def scans_sort(X: wp.array1d(dtype=float), K: wp.array1d(dtype=float), V: wp.array1d(dtype=int),
               INC: wp.array1d(dtype=float), EXC: wp.array1d(dtype=float)):
    x = wp.tile_load(X, shape=(32,))
    wp.tile_store(INC, wp.tile_scan_inclusive(x))
    wp.tile_store(EXC, wp.tile_scan_exclusive(x))
    keys = wp.tile_load(K, shape=(32,))
    vals = wp.tile_load(V, shape=(32,))
    wp.tile_sort(keys, vals)
    wp.tile_store(K, keys)
    wp.tile_store(V, vals)


@wp.kernel
def linalg(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
           T: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(12, 20))
    b = wp.tile_load(B, shape=(20, 6))
    c = wp.tile_matmul(a, b)
    acc = wp.tile_ones(shape=(12, 6), dtype=float)
    wp.tile_matmul(a, b, acc, alpha=0.5, beta=2.0)
    wp.tile_store(C, c + acc)
    wp.tile_store(T, wp.tile_transpose(a))


@wp.kernel
def solves(S: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), L: wp.array2d(dtype=wp.float64),
           X: wp.array2d(dtype=wp.float64), Z: wp.array2d(dtype=wp.float64), U: wp.array2d(dtype=wp.float64),
           D: wp.array1d(dtype=wp.float64), E: wp.array2d(dtype=wp.float64)):
    s = wp.tile_load(S, shape=(6, 6))
    y = wp.tile_load(Y, shape=(6, 3))
    l = wp.tile_cholesky(s)
    wp.tile_store(L, l)
    wp.tile_store(X, wp.tile_cholesky_solve(l, y))
    wp.tile_store(Z, wp.tile_lower_solve(l, y))
    wp.tile_store(U, wp.tile_upper_solve(wp.tile_transpose(l), y))
    d = wp.tile_load(D, shape=(6,))
    wp.tile_store(E, wp.tile_diag_add(s, d))
'''


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def mod(request):
    """The module built for the CPU, or for the CUDA emulation with every launch sent there."""
    if request.param == "cpu":
        return build(SOURCE, "reduce_linalg")
    return OnEmulatorModule(build(SOURCE, "reduce_linalg_emu", target="cuda-emu"))


def test_reductions(mod):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((5, 13)).astype(np.float32)  # the (8, 16) tile overhangs: zeros join in
    padded = np.zeros((8, 16), np.float32)
    padded[:5, :13] = A
    S, I = np.zeros(4, np.float32), np.zeros(2, np.int32)
    C0, C1, M1 = np.zeros(16, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
    J0, P = np.zeros(16, np.int32), np.zeros(8, np.float32)
    mod.reductions.launch_tiled(dim=1, inputs=[A, S, I, C0, C1, M1, J0, P])
    np.testing.assert_allclose(S[:3], [padded.sum(), padded.max(), padded.min()], rtol=1e-5)
    assert S[3] == padded.max()
    assert list(I) == [padded.argmax(), padded.argmin()]
    np.testing.assert_allclose(C0, padded.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(C1, padded.sum(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(M1, padded.max(1))
    np.testing.assert_array_equal(J0, padded.argmin(0))
    np.testing.assert_allclose(P, np.prod(padded * 0.1 + 1, axis=1), rtol=1e-5)


def test_argmax_ties_go_to_first_index(mod):
    A = np.zeros((8, 16), np.float32)
    A[2, 3] = A[5, 1] = 7.0
    A[0, 0] = A[7, 15] = -1.0
    out = [np.zeros(4, np.float32), np.zeros(2, np.int32), np.zeros(16, np.float32), np.zeros(8, np.float32),
           np.zeros(8, np.float32), np.zeros(16, np.int32), np.zeros(8, np.float32)]
    mod.reductions.launch_tiled(dim=1, inputs=[A] + out)
    assert list(out[1]) == [2 * 16 + 3, 0]


def test_scans_and_stable_sort(mod):
    rng = np.random.default_rng(5)
    X = rng.standard_normal(30).astype(np.float32)
    K = rng.integers(0, 6, 32).astype(np.float32)
    V = np.arange(32, dtype=np.int32)
    INC, EXC = np.zeros(30, np.float32), np.zeros(30, np.float32)
    keys0 = K.copy()
    mod.scans_sort.launch_tiled(dim=1, inputs=[X, K, V, INC, EXC])
    np.testing.assert_allclose(INC, np.cumsum(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(EXC, np.concatenate([[0], np.cumsum(X)[:-1]]), rtol=1e-5, atol=1e-5)
    order = np.argsort(keys0, kind="stable")
    np.testing.assert_array_equal(K, keys0[order])
    np.testing.assert_array_equal(V, order)


def test_matmul_forms_and_transpose(mod):
    rng = np.random.default_rng(6)
    A = rng.standard_normal((10, 17)).astype(np.float32)
    B = rng.standard_normal((17, 5)).astype(np.float32)
    C = np.zeros((12, 6), np.float32)
    T = np.zeros((20, 12), np.float32)
    mod.linalg.launch_tiled(dim=1, inputs=[A, B, C, T])
    Ap = np.zeros((12, 20), np.float32)
    Ap[:10, :17] = A
    Bp = np.zeros((20, 6), np.float32)
    Bp[:17, :5] = B
    want = Ap @ Bp + (0.5 * Ap @ Bp + 2.0)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(T, Ap.T)


def test_cholesky_and_solves(mod):
    rng = np.random.default_rng(7)
    M = rng.standard_normal((6, 6))
    S = M @ M.T + 6 * np.eye(6)
    Y = rng.standard_normal((6, 3))
    L, X, Z, U, E = (np.zeros((6, 6)), np.zeros((6, 3)), np.zeros((6, 3)), np.zeros((6, 3)), np.zeros((6, 6)))
    D = rng.standard_normal(6)
    mod.solves.launch_tiled(dim=1, inputs=[S, Y, L, X, Z, U, D, E])
    np.testing.assert_allclose(L, np.linalg.cholesky(S), rtol=1e-12)
    np.testing.assert_allclose(X, np.linalg.solve(S, Y), rtol=1e-10)
    np.testing.assert_allclose(Z, np.linalg.solve(np.linalg.cholesky(S), Y), rtol=1e-10)
    np.testing.assert_allclose(U, np.linalg.solve(np.linalg.cholesky(S).T, Y), rtol=1e-10)
    np.testing.assert_allclose(E, S + np.diag(D))
