"""Every differentiable op and construct: adjoint kernels against float64 finite differences.

Shapes do not divide the tile sizes, so partial tiles at array edges are
covered; several cases are those DESIGN.md section 6 lists as silently wrong in
Warp 1.19.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

F64 = "wp.float64"
SOURCE = '''
import warp as wp


@wp.func
def softplus(x: wp.float64):
    return wp.log(wp.float64(1.0) + wp.exp(x))


@wp.func
def scale_twice(t: wp.tile(dtype=wp.float64, shape=(6, 5)), s: wp.float64):
    u = t * s
    if s > wp.float64(0.0):
        return u * s
    return u


@wp.kernel
def unary(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(6, 5), offset=(i * 6, 0))
    b = wp.tile_load(B, shape=(6, 5), offset=(i * 6, 0))
    pos = wp.tile_map(wp.abs, b) + 0.5
    c = wp.tile_map(wp.exp, a) + wp.tile_map(wp.log, pos) + wp.tile_map(wp.sin, a) * wp.tile_map(wp.cos, b)
    c += wp.tile_map(wp.tanh, a) + wp.tile_map(wp.sqrt, pos) + wp.tile_map(wp.atan, a) + wp.tile_map(wp.sinh, a * 0.3)
    c += wp.tile_map(wp.max, a, b) - wp.tile_map(wp.min, a, b) + a / pos + wp.tile_map(wp.pow, pos, a * 0.5)
    c += wp.tile_map(softplus, a) * 2.0 + wp.tile_map(wp.atan2, a, pos) + wp.tile_map(wp.erf, b)
    c += wp.tile_map(wp.cosh, a * 0.2) + wp.tile_map(wp.log2, pos) + wp.tile_map(wp.exp2, b * 0.5)
    wp.tile_store(C, c, offset=(i * 6, 0))


@wp.kernel
def scalars_and_funcs(A: wp.array2d(dtype=wp.float64), S: wp.array1d(dtype=wp.float64),
                      C: wp.array2d(dtype=wp.float64)):
    s = S[0]
    a = wp.tile_load(A, shape=(6, 5))
    c = scale_twice(a, s) + wp.tile_full(shape=(6, 5), value=S[1] * S[1], dtype=wp.float64)
    wp.tile_store(C, c)


@wp.kernel
def reductions(A: wp.array2d(dtype=wp.float64), O: wp.array1d(dtype=wp.float64), R0: wp.array1d(dtype=wp.float64),
               R1: wp.array1d(dtype=wp.float64), M0: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(4, 7))
    wp.tile_store(O, wp.tile_max(a), offset=0)
    wp.tile_store(O, wp.tile_min(a), offset=1)
    wp.tile_store(O, wp.tile_sum(wp.tile_map(wp.exp, a - wp.tile_broadcast(wp.tile_max(a), shape=(4, 7)))), offset=2)
    wp.tile_store(O, wp.tile_reduce(wp.mul, a * 0.1 + 1.0), offset=3)
    wp.tile_store(O, wp.tile_reduce(wp.max, a), offset=4)
    wp.tile_store(R0, wp.tile_sum(a, axis=0))
    wp.tile_store(R1, wp.tile_reduce(wp.add, a * a, axis=1))
    wp.tile_store(M0, wp.tile_min(a, axis=0) + wp.tile_reduce(wp.min, a, axis=0))


@wp.kernel
def scans_sort(X: wp.array1d(dtype=wp.float64), K: wp.array1d(dtype=wp.float64), I: wp.array1d(dtype=wp.float64),
               E: wp.array1d(dtype=wp.float64), SK: wp.array1d(dtype=wp.float64), SV: wp.array1d(dtype=wp.float64)):
    x = wp.tile_load(X, shape=(9,))
    wp.tile_store(I, wp.tile_scan_inclusive(x * x))
    wp.tile_store(E, wp.tile_scan_exclusive(x))
    keys = wp.tile_load(K, shape=(9,))
    vals = x * 3.0
    wp.tile_sort(keys, vals)
    wp.tile_store(SK, keys * 1.0)
    wp.tile_store(SV, vals)


@wp.kernel
def linalg(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64),
           T: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(5, 7))
    b = wp.tile_load(B, shape=(7, 3))
    acc = wp.tile_load(C, shape=(5, 3))
    wp.tile_matmul(a, b, acc, alpha=0.5, beta=2.0)
    wp.tile_store(C, acc + wp.tile_matmul(a, b))
    wp.tile_store(T, wp.tile_transpose(a) * 2.0)


@wp.kernel
def solvers(S: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), D: wp.array1d(dtype=wp.float64),
            L: wp.array2d(dtype=wp.float64), X: wp.array2d(dtype=wp.float64), Z: wp.array2d(dtype=wp.float64),
            U: wp.array2d(dtype=wp.float64), E: wp.array2d(dtype=wp.float64)):
    s = wp.tile_load(S, shape=(4, 4))
    y = wp.tile_load(Y, shape=(4, 2))
    d = wp.tile_load(D, shape=(4,))
    sd = wp.tile_diag_add(s, d)
    l = wp.tile_cholesky(sd)
    wp.tile_store(L, l)
    wp.tile_store(X, wp.tile_cholesky_solve(l, y))
    wp.tile_store(Z, wp.tile_lower_solve(l, y))
    wp.tile_store(U, wp.tile_upper_solve(wp.tile_transpose(l), y))
    wp.tile_store(E, wp.tile_diag_add(s, 2.0))


@wp.kernel
def views(A: wp.array2d(dtype=wp.float64), R: wp.array1d(dtype=wp.float64), O: wp.array2d(dtype=wp.float64),
          V: wp.array2d(dtype=wp.float64), W: wp.array1d(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(4, 6))
    r = wp.tile_load(R, shape=(6,))
    o = wp.tile_broadcast(r, shape=(4, 6)) * a + wp.tile_broadcast(wp.tile_load(A, shape=(4, 1)), shape=(4, 6))
    wp.tile_store(O, o)
    wp.tile_store(V, wp.tile_view(a, offset=(1, 2), shape=(2, 3)) * 3.0)
    wp.tile_store(W, wp.tile_squeeze(wp.tile_view(a, offset=(2, 0), shape=(1, 6))) + wp.tile_view(a, offset=(3,)))
    b = wp.tile_reshape(a, shape=(6, 4))
    b[2, 3] = a[0, 0] * a[1, 1]
    b[0, 1] += a[3, 5]
    big = wp.tile_zeros(shape=(6, 4), dtype=wp.float64)
    wp.tile_assign(big, wp.tile_view(b, offset=(1, 1), shape=(2, 2)), offset=(4, 2))
    wp.tile_store(Q, b + big * 2.0)


@wp.kernel
def astype(A: wp.array1d(dtype=float), O: wp.array1d(dtype=wp.float64)):
    a = wp.tile_astype(wp.tile_load(A, shape=(5,)), dtype=wp.float64)
    wp.tile_store(O, wp.tile_astype(wp.tile_astype(a * a, dtype=float), dtype=wp.float64) + a)


@wp.kernel
def memory(A: wp.array2d(dtype=wp.float64), IDX: wp.array1d(dtype=int), G: wp.array2d(dtype=wp.float64),
           S: wp.array2d(dtype=wp.float64), ACC: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    idx = wp.tile_load(IDX, shape=(3,))
    g = wp.tile_load_indexed(A, idx, shape=(3, 4), axis=0)
    wp.tile_atomic_add(ACC, wp.tile_load(A, shape=(2, 4), offset=(i, 0)) * 3.0)
    if i == 0:
        wp.tile_store(G, g * g)
        wp.tile_store_indexed(S, wp.tile_load(IDX, shape=(3,), offset=3), g * 2.0, axis=0)
        wp.tile_atomic_add_indexed(S, idx, g, axis=0)


@wp.kernel
def control_flow(A: wp.array1d(dtype=wp.float64), N: wp.array1d(dtype=int), O: wp.array1d(dtype=wp.float64)):
    i = wp.tid()
    x = A[i]
    n = N[i]
    for k in range(n):
        x = wp.sin(x) * 1.5 + x * 0.25
    acc = wp.float64(0.0)
    for k in range(10):
        if k == n + 2:
            break
        if k % 3 == 1:
            continue
        acc = acc + x * wp.float64(k) + acc * 0.1
    y = x
    while y < wp.float64(5.0):
        y = y * 1.7 + 0.3
    O[i] = acc + y * y


@wp.kernel
def tile_loops(A: wp.array2d(dtype=wp.float64), N: wp.array1d(dtype=int), O: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(3, 4))
    t = a
    for k in range(N[0]):
        t = wp.tile_map(wp.tanh, t) + a * 0.5
        if k == N[1]:
            break
    wp.tile_store(O, t)


@wp.kernel
def own_element(A: wp.array2d(dtype=wp.float64), B: wp.array1d(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 8), offset=(i * 4, 0))
    s = wp.tile_sum(wp.tile_map(wp.sin, t))
    B[i] = s[0] * 2.0


@wp.kernel(block_dim=8)
def lanes(A: wp.array1d(dtype=wp.float64), S: wp.array1d(dtype=wp.float64), B: wp.array1d(dtype=wp.float64),
          T: wp.array1d(dtype=wp.float64)):
    i, lane = wp.tid()
    x = A[i * 8 + lane]
    t = wp.tile(x * x)
    s = wp.tile_sum(t * 2.0)
    B[i * 8 + lane] = wp.untile(wp.tile_scan_inclusive(t))
    T[i * 8 + lane] = wp.untile(wp.tile_broadcast(s, shape=(8,)))
    if lane == 0:
        S[i] = s[0]
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "gradients")


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_elementwise_math_and_maps(mod):
    A, B = rnd(13, 5, seed=1) * 0.8, rnd(13, 5, seed=2)
    check_gradients(mod.unary, 3, [A, B, np.zeros((13, 5))], outputs=[2], wrt=[0, 1], rtol=1e-5, atol=1e-7)


def test_scalar_operands_funcs_and_tile_full_value(mod):
    for s in (0.7, -0.4):  # both branches of the func
        A, S = rnd(6, 5, seed=3), np.array([s, 1.3])
        check_gradients(mod.scalars_and_funcs, 1, [A, S, np.zeros((6, 5))], outputs=[2], wrt=[0, 1])


def test_reductions_max_min_reduce_and_stable_softmax_sum(mod):
    A = rnd(3, 6, seed=4)  # a (4, 7) tile: the padding zeros take part, and so does their gradient path
    outs = [np.zeros(5), np.zeros(7), np.zeros(4), np.zeros(7)]
    check_gradients(mod.reductions, 1, [A] + outs, outputs=[1, 2, 3, 4], wrt=[0], rtol=1e-5, atol=1e-7)


def test_scans_and_sort_payload_is_unpermuted(mod):
    X, K = rnd(9, seed=5), rnd(9, seed=6)
    outs = [np.zeros(9) for _ in range(4)]
    check_gradients(mod.scans_sort, 1, [X, K] + outs, outputs=[2, 3, 4, 5], wrt=[0, 1])


def test_matmul_both_forms_and_transpose(mod):
    A, B, C = rnd(4, 6, seed=7), rnd(6, 3, seed=8), rnd(5, 3, seed=9)
    check_gradients(mod.linalg, 1, [A, B, C, np.zeros((7, 5))], outputs=[2, 3], wrt=[0, 1])


def test_cholesky_solves_and_diag_add(mod):
    M = rnd(4, 4, seed=10)
    S = M @ M.T + 4 * np.eye(4)
    Y, D = rnd(4, 2, seed=11), np.abs(rnd(4, seed=12))
    outs = [np.zeros((4, 4)), np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((4, 4))]
    check_gradients(mod.solvers, 1, [S, Y, D] + outs, outputs=[3, 4, 5, 6, 7], wrt=[0, 1, 2], rtol=1e-5,
                    atol=1e-7)


def test_views_broadcast_reshape_element_writes_assign(mod):
    A, R = rnd(4, 6, seed=13), rnd(6, seed=14)
    outs = [np.zeros((4, 6)), np.zeros((2, 3)), np.zeros(6), np.zeros((6, 4))]
    check_gradients(mod.views, 1, [A, R] + outs, outputs=[2, 3, 4, 5], wrt=[0, 1], rtol=1e-5, atol=1e-6)


def test_astype_between_float_widths(mod):
    A = np.linspace(-1, 1, 5).astype(np.float32)
    # float32 rounding limits finite differences: a large step on a smooth function
    check_gradients(mod.astype, 1, [A, np.zeros(5)], outputs=[1], wrt=[0], h=1e-2, rtol=1e-3, atol=1e-3)


def test_an_element_store_per_block_in_a_tile_kernel(mod):
    """The CPU's one-lane adjoint reads and zeroes the element's seed (the GPU's lanes take it)."""
    check_gradients(mod.own_element, 3, [rnd(12, 8), np.zeros(3)], outputs=[1], wrt=[0])


def test_indexed_and_atomic_memory_ops(mod):
    A = rnd(5, 4, seed=15)
    IDX = np.array([3, 0, 3, 4, 1, 2], np.int32)  # a gather with a repeated row, then a scatter to distinct rows
    outs = [np.zeros((3, 4)), np.zeros((5, 4)), np.zeros((3, 4))]
    check_gradients(mod.memory, 2, [A, IDX] + outs, outputs=[2, 3, 4], wrt=[0])


def test_loops_with_runtime_trip_counts_break_continue_while(mod):
    A = np.array([0.3, -0.2, 0.9, 1.4, 0.05])
    N = np.array([0, 1, 3, 5, 7], np.int32)
    check_gradients(mod.control_flow, 5, [A, N, np.zeros(5)], outputs=[2], wrt=[0], tiled=False, rtol=1e-5)


def test_tile_reassigned_in_a_loop_with_break(mod):
    A = rnd(3, 4, seed=16)
    for n in ([4, 9], [5, 2], [0, 0]):
        check_gradients(mod.tile_loops, 1, [A, np.array(n, np.int32), np.zeros((3, 4))], outputs=[2], wrt=[0])


def test_lanes_tile_untile_and_broadcast_untile(mod):
    A = rnd(16, seed=17)
    outs = [np.zeros(2), np.zeros(16), np.zeros(16)]
    check_gradients(mod.lanes, 2, [A] + outs, outputs=[1, 2, 3], wrt=[0])
