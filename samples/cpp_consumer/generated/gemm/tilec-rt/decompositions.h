// tilec runtime: Warp's matrix decompositions svd3, svd2, qr3 and eig3 and their analytic adjoints.
// Warp's documentation fixes their conventions, not their algorithm. Symmetric eigenproblems: cyclic
// Jacobi rotations until the off-diagonal is below rounding (at most 12 sweeps); the SVD: V from the
// eigenvectors of A^T A, U by Gram-Schmidt of A V (projected twice). All in the compute type (half in
// float). An adjoint recomputes the factors from A (the forward is deterministic: the same factors).
#pragma once
#include "vec.h"

namespace tl {
namespace decomp {

template <int N, class C> struct sq { C m[N][N]; };

template <int N, class T> TL_HD sq<N, compute_t<T>> load(const mat<N, N, T>& a) {
    sq<N, compute_t<T>> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) r.m[i][j] = cv(a(i, j));
    return r;
}

template <int N, class T, class C> TL_HD mat<N, N, T> store(const sq<N, C>& a) {
    mat<N, N, T> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) r(i, j) = T(a.m[i][j]);
    return r;
}

template <int N, class C> TL_HD sq<N, C> identity() {
    sq<N, C> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) r.m[i][j] = C(i == j);
    return r;
}

// x^T y (tx) or x y (plain) of two N x N matrices
template <int N, class C> TL_HD sq<N, C> product(const sq<N, C>& x, const sq<N, C>& y, bool tx) {
    sq<N, C> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s = C(0);
            for (int k = 0; k < N; ++k) s += (tx ? x.m[k][i] : x.m[i][k]) * y.m[k][j];
            r.m[i][j] = s;
        }
    return r;
}

template <int N, class C> TL_HD sq<N, C> times_transpose(const sq<N, C>& x, const sq<N, C>& y) {  // x y^T
    sq<N, C> r;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s = C(0);
            for (int k = 0; k < N; ++k) s += x.m[i][k] * y.m[j][k];
            r.m[i][j] = s;
        }
    return r;
}

// S <- J^T S J and Q <- Q J for the plane rotation J of axes p < q that zeros S[p][q]: tan(phi) = t,
// |phi| <= pi/4 (cyclic Jacobi converges with it)
template <int N, class C> TL_HD void jacobi_rotate(sq<N, C>& S, sq<N, C>& Q, int p, int q) {
    const C d = S.m[q][q] - S.m[p][p], b = S.m[p][q];
    const C den = std::fabs(d) + std::sqrt(d * d + C(4) * b * b);
    if (!(den > C(0))) return;  // b == 0 and d == 0 (or NaN): nothing to zero
    const C t = C(2) * b * std::copysign(C(1), d) / den;
    const C c = C(1) / std::sqrt(C(1) + t * t), s = t * c;
    for (int k = 0; k < N; ++k) {
        const C sp = S.m[k][p], sq_ = S.m[k][q];
        S.m[k][p] = c * sp - s * sq_;
        S.m[k][q] = s * sp + c * sq_;
    }
    for (int k = 0; k < N; ++k) {
        const C sp = S.m[p][k], sq_ = S.m[q][k];
        S.m[p][k] = c * sp - s * sq_;
        S.m[q][k] = s * sp + c * sq_;
    }
    S.m[p][q] = S.m[q][p] = C(0);
    for (int k = 0; k < N; ++k) {
        const C qp = Q.m[k][p], qq = Q.m[k][q];
        Q.m[k][p] = c * qp - s * qq;
        Q.m[k][q] = s * qp + c * qq;
    }
}

// Q (det +1) with Q^T S Q diagonal, left in S, for a symmetric S
template <int N, class C> TL_HD sq<N, C> jacobi_eigen(sq<N, C>& S) {
    sq<N, C> Q = identity<N, C>();
    const C tiny = C(sizeof(C) == 8 ? 1e-36 : 1e-16);  // (off-diagonal / diagonal)^2 below rounding
    for (int sweep = 0; sweep < 12; ++sweep) {
        C off = C(0), diag = C(0);
        for (int i = 0; i < N; ++i) {
            diag += S.m[i][i] * S.m[i][i];
            for (int j = i + 1; j < N; ++j) off += S.m[i][j] * S.m[i][j];
        }
        if (!(off > tiny * diag)) break;
        for (int p = 0; p < N; ++p)
            for (int q = p + 1; q < N; ++q) jacobi_rotate(S, Q, p, q);
    }
    return Q;
}

template <class C> TL_HD C dot3(const C* a, const C* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

template <class C> TL_HD void cross3(const C* a, const C* b, C* r) {
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

// a unit vector perpendicular to the unit vector u: its cross product with the axis least along u
template <class C> TL_HD void unit_normal_to(const C* u, C* r) {
    const C ax = std::fabs(u[0]), ay = std::fabs(u[1]), az = std::fabs(u[2]);
    const int k = (ay < ax && ay <= az) ? 1 : (az < ax && az < ay) ? 2 : 0;
    C axis[3] = {C(0), C(0), C(0)};
    axis[k] = C(1);
    cross3(u, axis, r);
    const C n = std::sqrt(dot3(r, r));
    for (int i = 0; i < 3; ++i) r[i] /= n;
}

// Gram-Schmidt of b0, b1 (b1 projected twice, so that u1 is perpendicular to u0 to rounding): r00, r11 >= 0;
// a zero column becomes a unit vector perpendicular to the others
template <class C> TL_HD void orthonormal_pair(const C* b0, const C* b1, C* u0, C& r00, C* u1, C& r01, C& r11) {
    r00 = std::sqrt(dot3(b0, b0));
    for (int i = 0; i < 3; ++i) u0[i] = r00 > C(0) ? b0[i] / r00 : C(i == 0);
    C w[3];
    r01 = dot3(u0, b1);
    for (int i = 0; i < 3; ++i) w[i] = b1[i] - r01 * u0[i];
    const C again = dot3(u0, w);
    for (int i = 0; i < 3; ++i) w[i] -= again * u0[i];
    r01 += again;
    r11 = std::sqrt(dot3(w, w));
    if (r11 > C(0)) {
        for (int i = 0; i < 3; ++i) u1[i] = w[i] / r11;
    } else {
        unit_normal_to(u0, u1);
    }
}

template <int N, class C> TL_HD void column(const sq<N, C>& a, int j, C* r) {
    for (int i = 0; i < N; ++i) r[i] = a.m[i][j];
}

template <int N, class C> TL_HD void set_column(sq<N, C>& a, int j, const C* v) {
    for (int i = 0; i < N; ++i) a.m[i][j] = v[i];
}

// columns i and j of V (and their eigenvalues) exchanged, one of them negated: det(V) is kept
template <int N, class C> TL_HD void swap_columns(sq<N, C>& V, C* l, int i, int j) {
    for (int k = 0; k < N; ++k) {
        const C t = V.m[k][i];
        V.m[k][i] = V.m[k][j];
        V.m[k][j] = -t;
    }
    const C t = l[i];
    l[i] = l[j];
    l[j] = t;
}

template <int N, class C> struct svd_factors { sq<N, C> U, V; C s[N]; };

template <class C> TL_HD svd_factors<3, C> svd(const sq<3, C>& a) {
    svd_factors<3, C> f;
    sq<3, C> S = product(a, a, true);
    f.V = jacobi_eigen(S);
    C l[3] = {S.m[0][0], S.m[1][1], S.m[2][2]};
    if (l[0] < l[1]) swap_columns(f.V, l, 0, 1);
    if (l[0] < l[2]) swap_columns(f.V, l, 0, 2);
    if (l[1] < l[2]) swap_columns(f.V, l, 1, 2);
    const sq<3, C> B = product(a, f.V, false);
    C b0[3], b1[3], b2[3], u0[3], u1[3], u2[3], r01;
    column(B, 0, b0);
    column(B, 1, b1);
    column(B, 2, b2);
    orthonormal_pair(b0, b1, u0, f.s[0], u1, r01, f.s[1]);
    cross3(u0, u1, u2);
    f.s[2] = dot3(u2, b2);
    set_column(f.U, 0, u0);
    set_column(f.U, 1, u1);
    set_column(f.U, 2, u2);
    return f;
}

template <class C> TL_HD svd_factors<2, C> svd(const sq<2, C>& a) {
    svd_factors<2, C> f;
    sq<2, C> S = product(a, a, true);
    f.V = identity<2, C>();
    jacobi_rotate(S, f.V, 0, 1);
    C l[2] = {S.m[0][0], S.m[1][1]};
    if (l[0] < l[1]) swap_columns(f.V, l, 0, 1);
    const sq<2, C> B = product(a, f.V, false);
    const C s0 = std::sqrt(B.m[0][0] * B.m[0][0] + B.m[1][0] * B.m[1][0]);
    const C u0[2] = {s0 > C(0) ? B.m[0][0] / s0 : C(1), s0 > C(0) ? B.m[1][0] / s0 : C(0)};
    const C along = u0[0] * B.m[0][1] + u0[1] * B.m[1][1];
    const C w[2] = {B.m[0][1] - along * u0[0], B.m[1][1] - along * u0[1]};
    const C s1 = std::sqrt(w[0] * w[0] + w[1] * w[1]);
    f.U.m[0][0] = u0[0];
    f.U.m[1][0] = u0[1];
    f.U.m[0][1] = s1 > C(0) ? w[0] / s1 : -u0[1];
    f.U.m[1][1] = s1 > C(0) ? w[1] / s1 : u0[0];
    f.s[0] = s0;
    f.s[1] = s1;
    return f;
}

template <class C> struct qr3_factors { sq<3, C> Q, R; };

template <class C> TL_HD qr3_factors<C> qr3(const sq<3, C>& a) {
    qr3_factors<C> f;
    C a0[3], a1[3], a2[3], q0[3], q1[3], q2[3];
    column(a, 0, a0);
    column(a, 1, a1);
    column(a, 2, a2);
    f.R = sq<3, C>{};
    orthonormal_pair(a0, a1, q0, f.R.m[0][0], q1, f.R.m[0][1], f.R.m[1][1]);
    cross3(q0, q1, q2);
    f.R.m[0][2] = dot3(q0, a2);
    f.R.m[1][2] = dot3(q1, a2);
    f.R.m[2][2] = dot3(q2, a2);
    set_column(f.Q, 0, q0);
    set_column(f.Q, 1, q1);
    set_column(f.Q, 2, q2);
    return f;
}

template <class C> TL_HD sq<3, C> symmetric_part(const sq<3, C>& a) {
    sq<3, C> s;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s.m[i][j] = (a.m[i][j] + a.m[j][i]) * C(0.5);
    return s;
}

// 1 / x, 0 where x is 0: the adjoints' coupling of two equal singular values or eigenvalues is dropped
template <class C> TL_HD C reciprocal_or_zero(C x) { return x != C(0) ? C(1) / x : C(0); }

// A's adjoint for A = U diag(s) V^T (U, V orthogonal): U [(F o (U^T gU - gU^T U)) diag(s) + diag(gs) +
// diag(s) (F o (V^T gV - gV^T V))] V^T, F[i][j] = 1 / (s[j]^2 - s[i]^2) off the diagonal
template <int N, class C> TL_HD sq<N, C> svd_adjoint(const sq<N, C>& U, const C* s, const sq<N, C>& V,
                                                     const sq<N, C>& gU, const C* gs, const sq<N, C>& gV) {
    const sq<N, C> ug = product(U, gU, true), vg = product(V, gV, true);
    sq<N, C> inner;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            const C f = reciprocal_or_zero(s[j] * s[j] - s[i] * s[i]);
            inner.m[i][j] = i == j ? gs[i] : f * (ug.m[i][j] - ug.m[j][i]) * s[j] + s[i] * f * (vg.m[i][j] - vg.m[j][i]);
        }
    return times_transpose(product(U, inner, false), V);
}

}  // namespace decomp

// svd3 / svd2: the factors of an N x N matrix (decomp::svd by size), and A's adjoint from theirs
template <int N, class T> TL_HD void svd_of(const mat<N, N, T>& A, mat<N, N, T>& U, vec<N, T>& sigma, mat<N, N, T>& V) {
    const auto f = decomp::svd(decomp::load(A));
    U = decomp::store<N, T>(f.U);
    V = decomp::store<N, T>(f.V);
    for (int i = 0; i < N; ++i) sigma.c[i] = T(f.s[i]);
}

template <int N, class T> TL_HD mat<N, N, T> svd_grad_of(const mat<N, N, T>& A, const mat<N, N, T>& gU,
                                                         const vec<N, T>& gs, const mat<N, N, T>& gV) {
    using C = compute_t<T>;
    const auto f = decomp::svd(decomp::load(A));
    C g[N];
    for (int i = 0; i < N; ++i) g[i] = cv(gs.c[i]);
    return decomp::store<N, T>(decomp::svd_adjoint<N, C>(f.U, f.s, f.V, decomp::load(gU), g, decomp::load(gV)));
}

template <class T> TL_HD void svd3(const mat<3, 3, T>& A, mat<3, 3, T>& U, vec<3, T>& sigma, mat<3, 3, T>& V) {
    svd_of(A, U, sigma, V);
}
template <class T> TL_HD void svd2(const mat<2, 2, T>& A, mat<2, 2, T>& U, vec<2, T>& sigma, mat<2, 2, T>& V) {
    svd_of(A, U, sigma, V);
}
template <class T> TL_HD mat<3, 3, T> svd3_grad(const mat<3, 3, T>& A, const mat<3, 3, T>& gU, const vec<3, T>& gs,
                                                const mat<3, 3, T>& gV) {
    return svd_grad_of(A, gU, gs, gV);
}
template <class T> TL_HD mat<2, 2, T> svd2_grad(const mat<2, 2, T>& A, const mat<2, 2, T>& gU, const vec<2, T>& gs,
                                                const mat<2, 2, T>& gV) {
    return svd_grad_of(A, gU, gs, gV);
}

template <class T> TL_HD void qr3(const mat<3, 3, T>& A, mat<3, 3, T>& Q, mat<3, 3, T>& R) {
    const auto f = decomp::qr3(decomp::load(A));
    Q = decomp::store<3, T>(f.Q);
    R = decomp::store<3, T>(f.R);
}

// A's adjoint for A = Q R: (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q, copyltu(M) the symmetric
// matrix of M's lower triangle
template <class T> TL_HD mat<3, 3, T> qr3_grad(const mat<3, 3, T>& A, const mat<3, 3, T>& gQ, const mat<3, 3, T>& gR) {
    using C = compute_t<T>;
    const auto f = decomp::qr3(decomp::load(A));
    const decomp::sq<3, C> q_bar = decomp::load(gQ), r_bar = decomp::load(gR);
    const decomp::sq<3, C> rr = decomp::times_transpose(f.R, r_bar), qq = decomp::product(q_bar, f.Q, true);
    decomp::sq<3, C> m;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const int r = i > j ? i : j, c = i > j ? j : i;
            m.m[i][j] = rr.m[r][c] - qq.m[r][c];
        }
    decomp::sq<3, C> x = decomp::product(f.Q, m, false);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) x.m[i][j] += q_bar.m[i][j];
    decomp::sq<3, C> g;  // g R^T = x, row by row: R g_row^T = x_row^T (R upper triangular)
    for (int i = 0; i < 3; ++i)
        for (int j = 2; j >= 0; --j) {
            C s = x.m[i][j];
            for (int k = j + 1; k < 3; ++k) s -= f.R.m[j][k] * g.m[i][k];
            g.m[i][j] = s / f.R.m[j][j];
        }
    return decomp::store<3, T>(g);
}

template <class T> TL_HD void eig3(const mat<3, 3, T>& A, mat<3, 3, T>& Q, vec<3, T>& d) {
    decomp::sq<3, compute_t<T>> S = decomp::symmetric_part(decomp::load(A));
    Q = decomp::store<3, T>(decomp::jacobi_eigen(S));
    for (int i = 0; i < 3; ++i) d.c[i] = T(S.m[i][i]);
}

// A's adjoint for sym(A) = Q diag(d) Q^T: the symmetric part of Q (diag(gd) + F o (Q^T gQ)) Q^T,
// F[i][j] = 1 / (d[j] - d[i]) off the diagonal
template <class T> TL_HD mat<3, 3, T> eig3_grad(const mat<3, 3, T>& A, const mat<3, 3, T>& gQ, const vec<3, T>& gd) {
    using C = compute_t<T>;
    decomp::sq<3, C> S = decomp::symmetric_part(decomp::load(A));
    const decomp::sq<3, C> Q = decomp::jacobi_eigen(S);
    const decomp::sq<3, C> qg = decomp::product(Q, decomp::load(gQ), true);
    decomp::sq<3, C> inner;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            inner.m[i][j] = i == j ? C(cv(gd.c[i])) : decomp::reciprocal_or_zero(S.m[j][j] - S.m[i][i]) * qg.m[i][j];
    return decomp::store<3, T>(decomp::symmetric_part(decomp::times_transpose(decomp::product(Q, inner, false), Q)));
}

}  // namespace tl
