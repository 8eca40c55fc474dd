"""Every supported tile op at array edges: tiles that overhang their arrays, on the CPU and the CUDA
emulation.

Loads read a (4, 4) tile at offset (2, 4) of a (5, 7) array (a 3x3 corner is inside, the rest reads
zeros); the ops that take tiles only are chained on such loads; stores and atomics write at the
same offset into arrays that are views of larger buffers, so a write past the array's end would land
in the buffer's margin, which must stay untouched. Forward against numpy models; the adjoints of the
float64 kernels against float64 central finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulatorModule, build

pytestmark = [pytest.mark.build, needs_cxx]

BLOCK = 8
SENTINEL = -77.0
SOURCE = '''
import warp as wp


@wp.kernel
def shapes(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), O: wp.array2d(dtype=wp.float64),
           P: wp.array1d(dtype=wp.float64), S: wp.array1d(dtype=wp.float64), ACC: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(4, 4), offset=(2, 4))
    b = wp.tile_load(B, shape=(4, 4), offset=(2, 4))
    c = wp.tile_map(wp.sin, a) * b + wp.tile_transpose(a)
    m = wp.tile_matmul(c, b)
    r = wp.tile_reshape(m, shape=(2, 8))
    v = wp.tile_view(r, offset=(1, 0), shape=(1, 8))
    wp.tile_store(P, wp.tile_squeeze(v), offset=(3,))
    big = wp.tile_zeros(shape=(6, 6), dtype=wp.float64)
    wp.tile_assign(big, m, offset=(1, 1))
    g = wp.tile_diag_add(wp.tile_view(big, offset=(2, 2), shape=(4, 4)), wp.tile_sum(a, axis=0))
    col = wp.tile_reshape(wp.tile_max(a, axis=1), shape=(4, 1))
    row = wp.tile_reshape(wp.tile_min(b, axis=0), shape=(1, 4))
    e = g + wp.tile_broadcast(col, shape=(4, 4)) + wp.tile_broadcast(row, shape=(4, 4))
    red = wp.tile_reduce(wp.mul, a + wp.tile_ones(shape=(4, 4), dtype=wp.float64))
    dt = wp.tile_dot(a, b)
    e = e * wp.tile_extract(dt, 0) + a * wp.tile_extract(red, 0)
    wp.tile_axpy(wp.float64(0.5), b, e)
    e = e + wp.tile_scan_inclusive(a) + wp.tile_scan_exclusive(b) * 0.5
    e = e + wp.tile_scan_max_inclusive(a) + wp.tile_scan_min_inclusive(b)
    wp.tile_store(S, wp.tile_sum(a * b), offset=(4,))
    wp.tile_store(O, e, offset=(2, 4))
    wp.tile_atomic_add(ACC, e * 2.0, offset=(2, 4))


@wp.kernel
def linalg(A: wp.array2d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64), X: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(4, 4), offset=(2, 4))
    y = wp.tile_load(Y, shape=(4,), offset=(2,))
    spd = wp.tile_diag_add(wp.tile_matmul(a, wp.tile_transpose(a)), wp.tile_ones(shape=(4,), dtype=wp.float64))
    L = wp.tile_cholesky(spd)
    U = wp.tile_transpose(L)
    M = spd * 1.0
    wp.tile_cholesky_inplace(M)
    w = y * 1.0
    wp.tile_cholesky_solve_inplace(M, w)
    v = y * 2.0
    wp.tile_lower_solve_inplace(L, v)
    wp.tile_upper_solve_inplace(U, v)
    out = wp.tile_zeros(shape=(4, 4), dtype=wp.float64)
    wp.tile_assign(out, wp.tile_reshape(wp.tile_cholesky_solve(L, y), shape=(1, 4)), offset=(0, 0))
    wp.tile_assign(out, wp.tile_reshape(wp.tile_lower_solve(L, y), shape=(1, 4)), offset=(1, 0))
    wp.tile_assign(out, wp.tile_reshape(wp.tile_upper_solve(U, y), shape=(1, 4)), offset=(2, 0))
    wp.tile_assign(out, wp.tile_reshape(w + v, shape=(1, 4)), offset=(3, 0))
    wp.tile_store(X, out, offset=(2, 4))


@wp.kernel
def indexed(A: wp.array2d(dtype=wp.float64), I: wp.array1d(dtype=int), G: wp.array2d(dtype=wp.float64),
            S: wp.array2d(dtype=wp.float64), ACC: wp.array2d(dtype=wp.float64)):
    idx = wp.tile_load(I, shape=(4,), offset=(1,))
    g = wp.tile_load_indexed(A, idx, shape=(4, 4), offset=(0, 4), axis=0)
    wp.tile_store(G, g, offset=(2, 4))
    wp.tile_store_indexed(S, idx, g * 2.0, offset=(0, 4), axis=0)
    wp.tile_atomic_add_indexed(ACC, idx, g * g, offset=(0, 4), axis=0)
'''

DOUBLE_KERNELS = ("shapes", "linalg", "indexed")


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def mod(request):
    """The module built for the CPU, or for the CUDA emulation with every launch sent there."""
    if request.param == "cpu":
        return build(SOURCE, "edges", block_dim=BLOCK)
    return OnEmulatorModule(build(SOURCE, "edges_emu", block_dim=BLOCK, target="cuda-emu"))


def view(shape, dtype=np.float64, fill=SENTINEL):
    """An array of `shape` that is a view of a buffer one larger on every axis (the margin holds `fill`)."""
    buf = np.full(tuple(e + 1 for e in shape), fill, dtype)
    return buf, buf[tuple(slice(0, e) for e in shape)]


def corner(A, offset=(2, 4), shape=(4, 4)):
    """What a tile load of `shape` at `offset` reads: the part inside A, zeros past its edges."""
    out = np.zeros(shape, A.dtype)
    part = A[offset[0]:offset[0] + shape[0], offset[1]:offset[1] + shape[1]]
    out[:part.shape[0], :part.shape[1]] = part
    return out


def stored(shape, t, offset=(2, 4), fill=SENTINEL, dtype=np.float64):
    """An array of `shape` (pre-filled with `fill`) after storing tile t at offset: overhang dropped."""
    out = np.full(shape, fill, dtype)
    part = out[offset[0]:offset[0] + t.shape[0], offset[1]:offset[1] + t.shape[1]]
    part[...] = t[:part.shape[0], :part.shape[1]]
    return out


def shapes_model(A, B, ACC):
    a, b = corner(A), corner(B)
    c = np.sin(a) * b + a.T
    m = c @ b
    P = np.full(6, SENTINEL)
    P[3:] = m.reshape(2, 8)[1, :3]
    big = np.zeros((6, 6))
    big[1:5, 1:5] = m
    g = big[2:6, 2:6] + np.diag(a.sum(axis=0))
    e = g + a.max(axis=1)[:, None] + b.min(axis=0)[None, :]
    e = e * np.sum(a * b) + a * np.prod(a + 1)
    e = e + 0.5 * b
    e = e + np.cumsum(a).reshape(4, 4) + (np.cumsum(b) - b.ravel()).reshape(4, 4) * 0.5
    e = e + np.maximum.accumulate(a.ravel()).reshape(4, 4) + np.minimum.accumulate(b.ravel()).reshape(4, 4)
    S = np.full(5, SENTINEL)
    S[4] = np.sum(a * b)
    acc = ACC.copy()
    acc[2:5, 4:7] += 2 * e[:3, :3]
    return stored((5, 7), e), P, S, acc


def linalg_model(A, Y):
    a = corner(A)
    y = np.zeros(4)
    y[:3] = Y[2:5]
    spd = a @ a.T + np.eye(4)
    L = np.linalg.cholesky(spd)
    x = np.linalg.solve(spd, y)
    out = np.stack([x, np.linalg.solve(L, y), np.linalg.solve(L.T, y), x + 2 * x])
    return stored((5, 7), out)


def indexed_model(A, I, G0, S0, ACC):
    idx = np.zeros(4, np.int64)
    idx[:3] = I[1:4]
    g = np.zeros((4, 4))
    g[:, :3] = A[idx, 4:7]
    S, acc = S0.copy(), ACC.copy()
    S[idx, 4:7] = 2 * g[:, :3]
    acc[idx, 4:7] += g[:, :3] ** 2
    return stored((5, 7), g), S, acc


def launch_double(mod, name, rng):
    A = rng.standard_normal((5, 7))
    if name == "shapes":
        B = rng.standard_normal((5, 7))
        ACC = rng.standard_normal((5, 7))
        bufs = [view(s) for s in ((5, 7), (6,), (5,))] + [view((5, 7), fill=0.0)]
        bufs[3][1][...] = ACC
        args = [A, B] + [v for _, v in bufs]
        mod.shapes.launch_tiled(dim=1, inputs=args)
        want = shapes_model(A, B, ACC)
    elif name == "linalg":
        Y = rng.standard_normal(5)
        bufs = [view((5, 7))]
        args = [A, Y, bufs[0][1]]
        mod.linalg.launch_tiled(dim=1, inputs=args)
        want = (linalg_model(A, Y),)
    else:
        I = np.array([0, 4, 2, 1], np.int32)  # the (4,) load at offset 1 reads 4, 2, 1 and a zero
        S0, ACC = rng.standard_normal((5, 7)), rng.standard_normal((5, 7))
        bufs = [view((5, 7)), view((5, 7)), view((5, 7))]
        bufs[1][1][...] = S0
        bufs[2][1][...] = ACC
        args = [A, I] + [v for _, v in bufs]
        mod.indexed.launch_tiled(dim=1, inputs=args)
        want = indexed_model(A, I, None, S0, ACC)
    return bufs, want, args


@pytest.mark.parametrize("name", DOUBLE_KERNELS)
def test_forward_at_the_edges(mod, name):
    bufs, want, _ = launch_double(mod, name, np.random.default_rng(14))
    for (buf, arr), expected in zip(bufs, want):
        np.testing.assert_allclose(arr, expected, rtol=1e-10, atol=1e-10)
        margin = np.ones(buf.shape, bool)
        margin[tuple(slice(0, e) for e in arr.shape)] = False
        assert np.all(buf[margin] == buf[margin][0]), "a store wrote past the array's end"


GRADIENTS = {"shapes": ([2, 3, 4, 5], [0, 1]), "linalg": ([2], [0, 1]), "indexed": ([2, 3, 4], [0])}


@pytest.mark.parametrize("name", DOUBLE_KERNELS)
def test_adjoint_at_the_edges(mod, name):
    _, _, args = launch_double(mod, name, np.random.default_rng(15))
    outputs, wrt = GRADIENTS[name]
    check_gradients(getattr(mod, name), 1, args, outputs=outputs, wrt=wrt, rtol=1e-5, atol=1e-7)
