"""Warp's matrix decompositions `wp.svd3`, `wp.svd2`, `wp.qr3` and `wp.eig3` (ops/decompositions.py, runtime
decompositions.h): the conventions Warp documents, checked in float64 against numpy's LAPACK on random and
degenerate matrices (diagonal, repeated, zero, rank one); both spellings (results unpacked, output
arguments); every factor's adjoint against finite differences; the reference interpreter on what the
conventions fix; diagnostics. Warp's own outputs: tests/conformance (wb_decompositions, wb_svd3_rotations)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir, first_error
from tilec.interp import Interpreter

PROGRAM = '''
import warp as wp


@wp.kernel
def factor(a: wp.array(dtype=wp.mat33d), b: wp.array(dtype=wp.mat22d), u: wp.array(dtype=wp.mat33d),
           s: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.mat33d), q: wp.array(dtype=wp.mat33d),
           r: wp.array(dtype=wp.mat33d), e: wp.array(dtype=wp.mat33d), d: wp.array(dtype=wp.vec3d),
           u2: wp.array(dtype=wp.mat22d), s2: wp.array(dtype=wp.vec2d), v2: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    U, sigma, V = wp.svd3(a[i])
    u[i] = U
    s[i] = sigma
    v[i] = V
    Q = wp.mat33d()
    R = wp.mat33d()
    wp.qr3(a[i], Q, R)
    q[i] = Q
    r[i] = R
    E, w = wp.eig3(a[i])
    e[i] = E
    d[i] = w
    U2 = wp.mat22d()
    S2 = wp.vec2d()
    V2 = wp.mat22d()
    wp.svd2(A=b[i], U=U2, sigma=S2, V=V2)
    u2[i] = U2
    s2[i] = S2
    v2[i] = V2


@wp.kernel
def invariants(a: wp.array(dtype=wp.mat33d), sigma: wp.array(dtype=wp.vec3d), polar: wp.array(dtype=wp.mat33d),
               r: wp.array(dtype=wp.mat33d), lo_hi: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    U, s, V = wp.svd3(a[i])
    sigma[i] = s
    polar[i] = U * wp.transpose(V)
    Q, R = wp.qr3(a[i])
    r[i] = R
    E, w = wp.eig3(a[i])
    lo_hi[i] = wp.vec2d(wp.min(w), wp.max(w))
'''


def matrices(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 3, 3))
    a[1] = np.diag([1.0, 2.0, 3.0])
    a[2] = np.diag([2.0, 2.0, -1.0])  # repeated singular values, negative determinant
    a[3] = 0.0
    a[4] = np.outer([1.0, 2.0, 3.0], [3.0, 1.0, 2.0])  # rank one
    a[5] = a[6] + a[6].T  # symmetric
    b = rng.standard_normal((n, 2, 2))
    b[1] = 0.0
    b[2] = np.diag([1.0, 3.0])
    return a, b


def factors(m, a, b):
    n = len(a)
    outs = [np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3, 3)), np.zeros((n, 3, 3)),
            np.zeros((n, 3, 3)), np.zeros((n, 3)), np.zeros((n, 2, 2)), np.zeros((n, 2)), np.zeros((n, 2, 2))]
    m.factor.launch(dim=n, inputs=[a, b, *outs])
    return outs


def t(x):
    return np.swapaxes(x, -1, -2)


@needs_cxx
def test_the_factors_follow_warps_conventions():
    m = build(PROGRAM, "decompose", block_dim=32)
    a, b = matrices(32, 0)
    u, s, v, q, r, e, d, u2, s2, v2 = factors(m, a, b)
    eye3, tol = np.eye(3), 1e-13
    # svd3: A = U diag(sigma) V^T, U and V rotations, |sigma| decreasing, sigma[0], sigma[1] >= 0, sigma[2] ~ det(A)
    np.testing.assert_allclose(u @ (s[:, :, None] * t(v)), a, atol=tol)
    for x in (u, v):
        np.testing.assert_allclose(x @ t(x), np.broadcast_to(eye3, x.shape), atol=tol)
        np.testing.assert_allclose(np.linalg.det(x), 1.0, atol=tol)
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(a, compute_uv=False), atol=tol)
    assert (s[:, :2] >= 0).all()
    det = np.linalg.det(a)
    assert all(np.sign(s[k, 2]) == np.sign(det[k]) for k in range(32) if abs(det[k]) > 1e-9)
    # qr3: A = Q R, Q a rotation, R upper triangular with R[0, 0], R[1, 1] >= 0
    np.testing.assert_allclose(q @ r, a, atol=tol)
    np.testing.assert_allclose(np.linalg.det(q), 1.0, atol=tol)
    np.testing.assert_array_equal(np.tril(r, -1), 0.0)
    assert (r[:, 0, 0] >= 0).all() and (r[:, 1, 1] >= 0).all()
    # eig3: sym(A) = Q diag(d) Q^T, Q a rotation; the eigenvalues LAPACK's, in some order
    sym = (a + t(a)) / 2
    np.testing.assert_allclose(e @ (d[:, :, None] * t(e)), sym, atol=tol)
    np.testing.assert_allclose(np.linalg.det(e), 1.0, atol=tol)
    np.testing.assert_allclose(np.sort(d), np.linalg.eigvalsh(sym), atol=tol)
    # svd2: A = U diag(sigma) V^T, U and V orthogonal, sigma >= 0 decreasing
    np.testing.assert_allclose(u2 @ (s2[:, :, None] * t(v2)), b, atol=tol)
    np.testing.assert_allclose(u2 @ t(u2), np.broadcast_to(np.eye(2), u2.shape), atol=tol)
    np.testing.assert_allclose(s2, np.linalg.svd(b, compute_uv=False), atol=tol)


@needs_cxx
@pytest.mark.parametrize("outputs", [[2], [3], [4], [5], [6], [7], [8], [9], [10], [11]],
                         ids=["U", "sigma", "V", "Q", "R", "eigenvectors", "eigenvalues", "U2", "sigma2", "V2"])
def test_every_factor_has_the_gradient_of_finite_differences(outputs):
    m = build(PROGRAM, "decompose", block_dim=32)
    rng = np.random.default_rng(3)
    n = 6
    a, b = rng.standard_normal((n, 3, 3)), rng.standard_normal((n, 2, 2))
    args = [a, b, *factors(m, a, b)]
    check_gradients(m.factor, n, args, outputs=outputs, wrt=[0, 1], tiled=False, rtol=1e-6, atol=1e-8)


@needs_cxx
def test_the_interpreter_agrees_on_what_the_conventions_fix():
    a, _ = matrices(16, 1)
    a = a[6:]  # generic matrices: distinct singular values and eigenvalues
    outs = lambda: [np.zeros((10, 3)), np.zeros((10, 3, 3)), np.zeros((10, 3, 3)), np.zeros((10, 2))]  # noqa: E731
    compiled, interpreted = outs(), outs()
    build(PROGRAM, "decompose", block_dim=32).invariants.launch(dim=10, inputs=[a, *compiled])
    Interpreter(compile_ir(PROGRAM, "decompose_i", block_dim=32)).launch("invariants", 10, [a, *interpreted],
                                                                         tiled=False)
    for x, y in zip(compiled, interpreted):
        np.testing.assert_allclose(x, y, atol=1e-12)


IN_CONTEXT = '''import warp as wp


@wp.func
def polar(m: wp.mat33d):
    U, s, V = wp.svd3(m)
    return U * wp.transpose(V), s


@wp.kernel
def looped(a: wp.array(dtype=wp.mat33d), n: int, y: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    m = a[i]
    for k in range(n):
        R, s = polar(m)
        Q, d = wp.eig3(m)
        m = R * wp.diag(s) * wp.float64(0.5) + m * wp.float64(0.5) + Q * wp.diag(d) * wp.float64(0.1)
    y[i] = m


@wp.kernel
def tiled(a: wp.array(dtype=wp.mat33d), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    U, s, V = wp.svd3(a[i])
    t = wp.tile_load(x, shape=4, offset=i * 4)
    t2 = t * s[0] + wp.tile_ones(shape=4, dtype=wp.float64) * (U[0, 0] * V[0, 0])
    wp.tile_store(y, t2, offset=i * 4)'''


@needs_cxx
def test_factors_in_funcs_loops_and_tiled_kernels_have_their_gradients():
    """A decomposition in a func called in a run-time loop (the factors taped per iteration) and in a
    tiled kernel (each lane's value)."""
    m = build(IN_CONTEXT, "decompose_ctx", block_dim=32)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((8, 3, 3))
    check_gradients(m.looped, 8, [a, 3, np.zeros((8, 3, 3))], outputs=[2], wrt=[0], tiled=False, rtol=1e-6, atol=1e-8)
    check_gradients(m.tiled, 8, [a, rng.standard_normal(32), np.zeros(32)], outputs=[2], wrt=[0, 1], rtol=1e-6,
                    atol=1e-8)





@pytest.mark.parametrize("body, error", [
    ("x = wp.svd3(a[i])", "8:9: TC0303: `svd3` returns 3 factors; unpack them where it is called "
                          "(`U, sigma, V = wp.svd3(A)`)"),
    ("Q, R, S = wp.qr3(a[i])", "8:5: TC0303: cannot unpack the 2 factors `qr3` returns into 3 names"),
    ("U, s, V = wp.svd3(m[i])", "8:23: TC0201: svd3: takes a 3x3 matrix of floats, got a mat44f"),
    ("Q = wp.mat33()\n    wp.eig3(a[i], Q, a[i])", "9:22: TC0401: unsupported syntax: `eig3` stores into this "
                                                  "argument, and tilec takes a local variable there"),
])
def test_decomposition_diagnostics(body, error):
    kernel = ("\nimport warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=wp.mat33), m: wp.array(dtype=wp.mat44)):\n"
              "    i = wp.tid()\n    " + body + "\n")  # (not a module attribute: test_fd_coverage compiles those)
    assert first_error(kernel) == error
