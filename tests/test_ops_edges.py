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

@wp.kernel
def lanes(A: wp.array2d(dtype=float), K: wp.array1d(dtype=int), X: wp.array1d(dtype=float),
          KEYS: wp.array1d(dtype=float), VALS: wp.array1d(dtype=int), ARG: wp.array1d(dtype=int),
          ROWS: wp.array2d(dtype=float), C: wp.array2d(dtype=float), CI: wp.array2d(dtype=int),
          LF: wp.array2d(dtype=float), BITS: wp.array2d(dtype=int), SLOT: wp.array1d(dtype=int),
          POP: wp.array1d(dtype=int), CNT: wp.array1d(dtype=int), R: wp.array2d(dtype=float),
          R4: wp.array2d(dtype=float), RI: wp.array2d(dtype=int), RI4: wp.array2d(dtype=int)):
    _blk, i = wp.tid()
    a = wp.tile_load(A, shape=(4, 4), offset=(2, 4))
    keys = wp.tile_reshape(a, shape=(16,)) * 1.0
    vals = wp.tile_arange(16, dtype=int)
    wp.tile_sort(keys, vals)
    wp.tile_store(KEYS, keys, offset=(4,))
    wp.tile_store(VALS, vals, offset=(4,))
    wp.tile_store(ARG, wp.tile_argmax(a))
    wp.tile_store(ARG, wp.tile_argmin(a), offset=(1,))
    k = wp.tile_load(K, shape=(3,), offset=(1,))
    wp.tile_store(ROWS, a[k], offset=(1, 0))
    e = wp.tile_empty(shape=(4, 4), dtype=float)
    wp.tile_assign(e, a, offset=(0, 0))
    c = wp.tile_full(shape=(4, 4), value=2.5, dtype=float) + wp.tile_ones(shape=(4, 4), dtype=float) + e
    c = c + wp.tile_reshape(wp.tile_arange(0.0, 8.0, 0.5, dtype=float), shape=(4, 4))
    c = c - wp.tile_zeros(shape=(4, 4), dtype=float)
    c[0, 2] = wp.tile_extract(a, 1, 1) + a[3, 3]
    wp.tile_store(C, c, offset=(2, 4))
    wp.tile_store(CI, wp.tile_astype(a * 10.0, dtype=int), offset=(2, 4))

    x = X[i]
    lo = wp.tile_load(X, shape=(8,), offset=(3,))
    u = wp.tile(x * 2.0) + lo
    y = wp.untile(u)
    acc = wp.tile_zeros(shape=(4,), dtype=float)
    acc[i % 4] += y
    acc[(i + 1) % 4] -= x
    h = wp.tile_view(lo, offset=(4,), shape=(4,)) * 1.0
    wp.tile_scatter_add(h, i % 4, y, i < 6)
    msk = lo * 1.0
    wp.tile_scatter_masked(msk, 7 - i, y, i % 2 == 0)
    f = wp.tile_from_thread(shape=(4,), value=y, thread_idx=3)
    lf = wp.tile_zeros(shape=(4, 8), dtype=float)
    wp.tile_assign(lf, wp.tile_reshape(u, shape=(1, 8)), offset=(0, 0))
    wp.tile_assign(lf, wp.tile_reshape(msk, shape=(1, 8)), offset=(1, 0))
    wp.tile_assign(lf, wp.tile_reshape(acc, shape=(1, 4)), offset=(2, 0))
    wp.tile_assign(lf, wp.tile_reshape(f, shape=(1, 4)), offset=(2, 4))
    wp.tile_assign(lf, wp.tile_reshape(h, shape=(1, 4)), offset=(3, 0))
    wp.tile_store(LF, lf)

    bo = wp.tile_load(K, shape=(4,), offset=(1,))
    bo[i % 4] |= 1 << i
    bx = wp.tile_load(K, shape=(4,), offset=(1,))
    bx[i % 4] ^= i + 1
    ba = wp.tile_load(K, shape=(4,), offset=(1,))
    ba[i % 4] &= 255 - (1 << i)
    bits = wp.tile_zeros(shape=(4, 4), dtype=int)
    wp.tile_assign(bits, wp.tile_reshape(bo, shape=(1, 4)), offset=(0, 0))
    wp.tile_assign(bits, wp.tile_reshape(bx, shape=(1, 4)), offset=(1, 0))
    wp.tile_assign(bits, wp.tile_reshape(ba, shape=(1, 4)), offset=(2, 0))
    wp.tile_store(BITS, bits)

    s = wp.tile_stack(capacity=3, dtype=int)
    kv = wp.untile(wp.tile_load(K, shape=(8,), offset=(1,)))
    slot = wp.tile_stack_push(s, kv * 10 + i, i % 2 == 1)
    n1 = wp.tile_stack_count(s)
    v, sl = wp.tile_stack_pop(s)
    n2 = wp.tile_stack_count(s)
    wp.tile_stack_clear(s)
    n3 = wp.tile_stack_count(s)
    wp.tile_store(SLOT, wp.tile(slot), offset=(2,))
    wp.tile_store(POP, wp.tile(wp.where(sl >= 0, v * 100 + sl, -1)), offset=(2,))
    if i == 0:
        CNT[0] = n1
        CNT[1] = n2
        CNT[2] = n3

    rng = wp.rand_init(7)
    r = wp.tile_randf(shape=(4, 4), rng=rng)
    wp.tile_store(R, r, offset=(2, 4))
    wp.tile_store(R4, r)
    ri = wp.tile_randi(shape=(4, 4), rng=rng, min=-50, max=50)
    wp.tile_store(RI, ri, offset=(2, 4))
    wp.tile_store(RI4, ri)

@wp.kernel
def lanegrads(A: wp.array2d(dtype=wp.float64), X: wp.array1d(dtype=wp.float64), K: wp.array1d(dtype=int),
              O: wp.array2d(dtype=wp.float64), G: wp.array2d(dtype=wp.float64)):
    _blk, i = wp.tid()
    a = wp.tile_load(A, shape=(4, 4), offset=(2, 4))
    lo = wp.tile_load(X, shape=(8,), offset=(3,))
    x = wp.untile(lo)
    u = wp.tile(x * x)
    acc = wp.tile_view(lo, offset=(0,), shape=(4,)) * 1.0
    acc[i % 4] += x * 2.0
    acc[(i + 1) % 4] -= wp.sin(x)
    h = wp.tile_view(lo, offset=(4,), shape=(4,)) * 1.0
    wp.tile_scatter_add(h, i % 4, x * x, i < 6, atomic=True)
    msk = lo * 3.0
    wp.tile_scatter_masked(msk, 7 - i, wp.cos(x), i % 2 == 0)
    f = wp.tile_from_thread(shape=(4,), value=x * 3.0, thread_idx=2)
    keys = wp.tile_reshape(a, shape=(16,)) * 1.0
    vals = wp.tile_reshape(a, shape=(16,)) * 2.0
    wp.tile_sort(keys, vals)
    out = wp.tile_zeros(shape=(6, 8), dtype=wp.float64)
    wp.tile_assign(out, wp.tile_reshape(u, shape=(1, 8)), offset=(0, 0))
    wp.tile_assign(out, wp.tile_reshape(msk, shape=(1, 8)), offset=(1, 0))
    wp.tile_assign(out, wp.tile_reshape(acc, shape=(1, 4)), offset=(2, 0))
    wp.tile_assign(out, wp.tile_reshape(f, shape=(1, 4)), offset=(2, 4))
    wp.tile_assign(out, wp.tile_reshape(h, shape=(1, 4)), offset=(3, 0))
    wp.tile_assign(out, wp.tile_reshape(wp.tile_view(keys, offset=(8,), shape=(8,)), shape=(1, 8)), offset=(4, 0))
    wp.tile_assign(out, wp.tile_reshape(wp.tile_view(vals, offset=(8,), shape=(8,)), shape=(1, 8)), offset=(5, 0))
    wp.tile_store(O, out)
    k = wp.tile_load(K, shape=(3,), offset=(1,))
    scale = wp.tile_full(shape=(3, 4), value=wp.tile_extract(a, 1, 1), dtype=wp.float64)
    wp.tile_store(G, a[k] * scale)


@wp.kernel
def spectra(Z: wp.array2d(dtype=wp.vec2d), F: wp.array2d(dtype=wp.vec2d)):
    z = wp.tile_load(Z, shape=(2, 8), offset=(1, 4))
    wp.tile_fft(z)
    w = wp.tile_load(Z, shape=(2, 8), offset=(1, 4))
    wp.tile_ifft(w)
    wp.tile_store(F, w, offset=(0, 0))
    wp.tile_store(F, z, offset=(1, 4))

@wp.kernel
def casts(A: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), Z: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(4, 4), offset=(2, 4))
    f = wp.tile_astype(a, dtype=float)
    wp.tile_store(Z, f * 2.0, offset=(2, 4))
    wp.tile_store(Y, wp.tile_astype(f, dtype=wp.float64) * wp.tile_map(wp.sin, a), offset=(2, 4))
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


def indexed_model(A, I, S0, ACC):
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
        want = indexed_model(A, I, S0, ACC)
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


def lanes_model(A, K, X):
    """Per-lane ops in thread order (lane 0 first), as tilec defines them on both targets."""
    a = corner(A)
    out = {}
    order = np.argsort(a.ravel(), kind="stable")
    out["KEYS"] = np.full(12, SENTINEL, np.float32)
    out["KEYS"][4:] = a.ravel()[order][:8]
    out["VALS"] = np.full(12, -7, np.int32)
    out["VALS"][4:] = order[:8]
    out["ARG"] = np.array([np.argmax(a), np.argmin(a)], np.int32)
    k = np.array([K[1], K[2], 0])
    out["ROWS"] = np.full((3, 3), SENTINEL, np.float32)
    out["ROWS"][1:] = a[k][:2, :3]
    c = 2.5 + 1 + a + np.arange(0, 8, 0.5).reshape(4, 4)
    c[0, 2] = a[1, 1]
    out["C"] = stored((5, 7), c, dtype=np.float32)
    out["CI"] = stored((5, 7), (a * np.float32(10)).astype(np.int32), fill=-7, dtype=np.int32)

    lanes = np.arange(BLOCK)
    lo = np.zeros(8, np.float32)
    lo[:5] = X[3:8]
    u = X * 2 + lo
    acc = np.zeros(4, np.float32)
    np.add.at(acc, lanes % 4, u)
    np.subtract.at(acc, (lanes + 1) % 4, X)
    h = lo[4:].copy()
    np.add.at(h, lanes[:6] % 4, u[:6])
    msk = lo.copy()
    even = lanes[lanes % 2 == 0]
    msk[7 - even] = u[even]
    lf = np.zeros((4, 8), np.float32)
    lf[0], lf[1], lf[2, :4], lf[2, 4:], lf[3, :4] = u, msk, acc, u[3], h
    out["LF"] = lf[:, :7]

    base = np.array([K[1], K[2], 0, 0], np.int32)
    bo, bx, ba = base.copy(), base.copy(), base.copy()
    for i in lanes:
        bo[i % 4] |= 1 << i
        bx[i % 4] ^= i + 1
        ba[i % 4] &= 255 - (1 << i)
    out["BITS"] = np.stack([bo, bx, ba])

    kv = np.zeros(8, np.int32)
    kv[:2] = K[1:3]
    slot, popped, stack = np.full(8, -1, np.int32), np.full(8, -1, np.int32), []
    for i in lanes:
        if i % 2 == 1 and len(stack) < 3:
            slot[i] = len(stack)
            stack.append(kv[i] * 10 + i)
    n1 = len(stack)
    for i in lanes:
        if stack:
            popped[i] = stack[-1] * 100 + len(stack) - 1
            stack.pop()
    out["SLOT"] = np.concatenate([[-7, -7], slot[:4]]).astype(np.int32)
    out["POP"] = np.concatenate([[-7, -7], popped[:4]]).astype(np.int32)
    out["CNT"] = np.array([n1, len(stack), 0], np.int32)
    return out


LANE_OUTPUTS = [("KEYS", (12,), np.float32), ("VALS", (12,), np.int32), ("ARG", (2,), np.int32),
                ("ROWS", (3, 3), np.float32), ("C", (5, 7), np.float32), ("CI", (5, 7), np.int32),
                ("LF", (4, 7), np.float32), ("BITS", (3, 4), np.int32), ("SLOT", (6,), np.int32),
                ("POP", (6,), np.int32), ("CNT", (3,), np.int32), ("R", (5, 7), np.float32),
                ("R4", (4, 4), np.float32), ("RI", (5, 7), np.int32), ("RI4", (4, 4), np.int32)]


def test_constructors_sorts_lanes_stacks_and_random_at_the_edges(mod):
    rng = np.random.default_rng(16)
    A = rng.standard_normal((5, 7)).astype(np.float32)
    A[2, 4], A[3, 5] = 5.0, -5.0  # a unique maximum and minimum inside the array
    K = np.array([9, 2, 1], np.int32)
    X = rng.standard_normal(8).astype(np.float32)
    bufs = {}
    for name, shape, dtype in LANE_OUTPUTS:
        bufs[name] = view(shape, dtype, fill=SENTINEL if dtype == np.float32 else -7)
    mod.lanes.launch_tiled(dim=1, inputs=[A, K, X] + [bufs[name][1] for name, _, _ in LANE_OUTPUTS])
    got = {name: arr for name, (_, arr) in bufs.items()}
    for name, expected in lanes_model(A, K, X).items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-6, atol=1e-6, err_msg=name)
    # Random tiles: the part inside the array is the same draw as a whole-tile store; in [lo, hi).
    np.testing.assert_array_equal(got["R"][2:5, 4:7], got["R4"][:3, :3])
    np.testing.assert_array_equal(got["RI"][2:5, 4:7], got["RI4"][:3, :3])
    assert np.all((got["R4"] >= 0) & (got["R4"] < 1)) and np.all((got["RI4"] >= -50) & (got["RI4"] < 50))
    assert len(np.unique(got["R4"])) == 16
    for name, (buf, arr) in bufs.items():
        margin = np.ones(buf.shape, bool)
        margin[tuple(slice(0, e) for e in arr.shape)] = False
        assert np.all(buf[margin] == buf[margin][0]), f"{name}: a store wrote past the array's end"
        if name in ("R", "RI"):  # outside the stored corner the array is untouched
            inside = np.zeros(arr.shape, bool)
            inside[2:5, 4:7] = True
            assert np.all(arr[~inside] == buf[margin][0])


def lanegrads_model(A, X, K):
    a, lanes = corner(A), np.arange(BLOCK)
    lo = np.zeros(8)
    lo[:5] = X[3:8]
    out = np.zeros((6, 8))
    out[0] = lo * lo
    acc, h, msk = lo[:4].copy(), lo[4:].copy(), lo * 3
    np.add.at(acc, lanes % 4, 2 * lo)
    np.subtract.at(acc, (lanes + 1) % 4, np.sin(lo))
    np.add.at(h, lanes[:6] % 4, lo[:6] ** 2)
    even = lanes[lanes % 2 == 0]
    msk[7 - even] = np.cos(lo[even])
    order = np.argsort(a.ravel(), kind="stable")
    out[1], out[2, :4], out[2, 4:], out[3, :4] = msk, acc, 3 * lo[2], h
    out[4], out[5] = a.ravel()[order][8:], 2 * a.ravel()[order][8:]
    k = np.array([K[1], K[2], 0])
    return out[:5, :7], (a[k] * a[1, 1])[:2, :3]


def test_per_lane_ops_forward_and_adjoint_at_the_edges(mod):
    rng = np.random.default_rng(17)
    A, X, K = rng.standard_normal((5, 7)), rng.standard_normal(8), np.array([9, 2, 1], np.int32)
    (obuf, O), (gbuf, G) = view((5, 7)), view((2, 3))
    mod.lanegrads.launch_tiled(dim=1, inputs=[A, X, K, O, G])
    want_o, want_g = lanegrads_model(A, X, K)
    np.testing.assert_allclose(O, want_o, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(G, want_g, rtol=1e-12, atol=1e-12)
    assert np.all(obuf[5] == SENTINEL) and np.all(obuf[:, 7] == SENTINEL) and np.all(gbuf[2] == SENTINEL)
    check_gradients(mod.lanegrads, 1, [A, X, K, O, G], outputs=[3, 4], wrt=[0, 1], rtol=1e-5, atol=1e-7)


def test_fft_of_an_overhanging_tile(mod):
    rng = np.random.default_rng(18)
    Z = rng.standard_normal((2, 10, 2))
    fbuf, F = view((2, 10, 2))
    fbuf[:, :, :] = SENTINEL
    mod.spectra.launch_tiled(dim=1, inputs=[Z, F])
    z = np.zeros((2, 8), complex)
    z[0, :6] = Z[1, 4:, 0] + 1j * Z[1, 4:, 1]
    spec = np.fft.fft(z, axis=-1)
    want = np.full((2, 10), SENTINEL * (1 + 1j))
    want[0:2, 0:8] = 8 * np.fft.ifft(z, axis=-1)
    want[1, 4:10] = spec[0, :6]
    np.testing.assert_allclose(F[..., 0] + 1j * F[..., 1], want, rtol=1e-12, atol=1e-12)
    assert np.all(fbuf[2] == SENTINEL) and np.all(fbuf[:, 10] == SENTINEL)
    check_gradients(mod.spectra, 1, [Z, F], outputs=[1], wrt=[0], rtol=1e-5, atol=1e-7)


def test_astype_of_an_overhanging_tile(mod):
    A = np.random.default_rng(19).standard_normal((5, 7))
    (ybuf, Y), (zbuf, Z) = view((5, 7)), view((5, 7), np.float32)
    mod.casts.launch_tiled(dim=1, inputs=[A, Y, Z])
    a = corner(A)
    f = a.astype(np.float32)
    np.testing.assert_allclose(Y, stored((5, 7), f.astype(np.float64) * np.sin(a)), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(Z, stored((5, 7), f * 2, dtype=np.float32))
    assert np.all(ybuf[5] == SENTINEL) and np.all(ybuf[:, 7] == SENTINEL) and np.all(zbuf[:, 7] == SENTINEL)
    # float32 in the middle: a step of 1e-3 keeps the rounding out of the difference quotient
    check_gradients(mod.casts, 1, [A, Y, Z], outputs=[1], wrt=[0], h=1e-3, rtol=1e-3, atol=1e-4)
