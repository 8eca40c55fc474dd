// tilec runtime: matmul, transpose, Cholesky factorisation and triangular solves.
#pragma once
#include "ctx.h"
#if !defined(__CUDACC__)
#include "gemm.h"
#endif

namespace tl {

// C = alpha * A @ B + beta * C (beta == 0 ignores C's contents), row-major tiles.
// CUDA builds only: the CPU uses gemm.h's packed micro-kernel. The body is register-blocked: an MR x NR block of C stays in registers while K streams
// through (with compile-time extents the compiler unrolls and vectorises it into FMAs);
// rows and columns left over fall back to a plain loop.
template <class T, int M, int N, int K>
TL_HD void matmul_rowmajor(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta) {
    constexpr int MR = 4;
    constexpr int NR = sizeof(T) == 4 ? 16 : 8;
    constexpr int MB = M / MR * MR, NB = N / NR * NR;
    for (int i = 0; i < MB; i += MR) {
        for (int j = 0; j < NB; j += NR) {
            T acc[MR][NR] = {};
            for (int k = 0; k < K; ++k) {
                const T* brow = b + k * N + j;
                for (int r = 0; r < MR; ++r) {
                    const T av = a[(i + r) * K + k];
                    for (int q = 0; q < NR; ++q) acc[r][q] += av * brow[q];
                }
            }
            for (int r = 0; r < MR; ++r)
                for (int q = 0; q < NR; ++q) {
                    T* out = c + (i + r) * N + j + q;
                    *out = beta == T(0) ? alpha * acc[r][q] : alpha * acc[r][q] + beta * *out;
                }
        }
    }
    auto edge = [&](int i0, int i1, int j0, int j1) {
        for (int i = i0; i < i1; ++i)
            for (int j = j0; j < j1; ++j) {
                T s = 0;
                for (int k = 0; k < K; ++k) s += a[i * K + k] * b[k * N + j];
                T* out = c + i * N + j;
                *out = beta == T(0) ? alpha * s : alpha * s + beta * *out;
            }
    };
    if (NB < N) edge(0, MB, NB, N);
    if (MB < M) edge(MB, M, 0, N);
}

// A 2-d tile read as its transpose, without a copy: the CPU emitter passes `tl::transposed(x)` as
// a matmul operand where an adjoint would otherwise materialise x^T (gemm.h reads it by stride).
template <class TT> struct Transposed {
    using value_type = typename TT::value_type;
    static constexpr int ndim = 2;
    const TT& tile;
    TL_HD static constexpr int dim(int k) { return TT::dim(1 - k); }
};
template <class TT> TL_HD Transposed<TT> transposed(const TT& t) { return Transposed<TT>{t}; }

template <class X> struct operand {  // a matmul operand: its row-major storage, and whether it is transposed
    static constexpr bool transposed = false;
    TL_HD static const X& stored(const X& x) { return x; }
};
template <class TT> struct operand<Transposed<TT>> {
    static constexpr bool transposed = true;
    TL_HD static const TT& stored(const Transposed<TT>& x) { return x.tile; }
};

template <class AT> TL_HD Tile<typename AT::value_type, AT::dim(0), AT::dim(1)> materialize(const AT& a) {
    Tile<typename AT::value_type, AT::dim(0), AT::dim(1)> out;
    const auto& s = operand<AT>::stored(a);
    for (int i = 0; i < AT::dim(0); ++i)
        for (int j = 0; j < AT::dim(1); ++j)
            out.data[i * AT::dim(1) + j] = operand<AT>::transposed ? s.data[j * AT::dim(0) + i] : s.data[i * AT::dim(1) + j];
    return out;
}

template <class CT, class AT, class BT>
TL_HD void tile_matmul(Ctx& ctx, CT& c, const AT& a, const BT& b, double alpha, double beta) {
    using T = typename CT::value_type;
    using Acc = compute_t<T>;
    constexpr int M = AT::dim(0), K = AT::dim(1), N = BT::dim(1);
    constexpr bool views = operand<AT>::transposed || operand<BT>::transposed;
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
#if !defined(__CUDACC__)
        gemm::matmul<T, M, N, K, operand<AT>::transposed, operand<BT>::transposed>(
            operand<AT>::stored(a).data, operand<BT>::stored(b).data, c.data, T(alpha), T(beta));
#else
        if constexpr (views)
            tile_matmul(ctx, c, materialize(a), materialize(b), alpha, beta);
        else
            matmul_rowmajor<T, M, N, K>(a.data, b.data, c.data, T(alpha), T(beta));
#endif
    } else if constexpr (views) {
        tile_matmul(ctx, c, materialize(a), materialize(b), alpha, beta);
    } else {  // half: accumulate in float
        for (int i = 0; i < M; ++i) {
            Acc row[N];
            for (int j = 0; j < N; ++j) row[j] = Acc(0);
            for (int k = 0; k < K; ++k) {
                Acc aik = Acc(a.data[i * K + k]);
                for (int j = 0; j < N; ++j) row[j] += aik * Acc(b.data[k * N + j]);
            }
            for (int j = 0; j < N; ++j) {
                Acc v = Acc(alpha) * row[j];
                c.data[i * N + j] = T(beta == 0.0 ? v : v + Acc(beta) * Acc(c.data[i * N + j]));
            }
        }
    }
}

template <class DT, class AT> TL_HD void tile_transpose(Ctx&, DT& dst, const AT& a) {
    constexpr int M = AT::dim(0), N = AT::dim(1);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) dst.data[j * M + i] = a.data[i * N + j];
}

// Lower L with A = L L^T; the strict upper triangle of L is zero.
template <class LT, class AT> TL_HD void tile_cholesky(Ctx&, LT& L, const AT& A) {
    using C = compute_t<typename AT::value_type>;
    constexpr int N = AT::dim(0);
    for (int e = 0; e < N * N; ++e) L.data[e] = 0;
    for (int j = 0; j < N; ++j) {
        C d = C(A.data[j * N + j]);
        for (int k = 0; k < j; ++k) d -= C(L.data[j * N + k]) * C(L.data[j * N + k]);
        C ljj = std::sqrt(d);
        L.data[j * N + j] = ljj;
        for (int i = j + 1; i < N; ++i) {
            C s = C(A.data[i * N + j]);
            for (int k = 0; k < j; ++k) s -= C(L.data[i * N + k]) * C(L.data[j * N + k]);
            L.data[i * N + j] = s / ljj;
        }
    }
}

// Columns of y (N,) or (N, R) solved in place: lower (forward) or upper (backward) substitution.
// Transposed uses the transpose of the matrix (U = L^T for the Cholesky solve).
template <class MT, class YT> TL_HD void tri_solve(const MT& m, YT& x, bool lower, bool transposed) {
    using C = compute_t<typename YT::value_type>;
    constexpr int N = MT::dim(0);
    constexpr int R = YT::ndim == 1 ? 1 : YT::dim(YT::ndim - 1);
    auto at = [&](int i, int j) { return C(transposed ? m.data[j * N + i] : m.data[i * N + j]); };
    for (int r = 0; r < R; ++r) {
        for (int s = 0; s < N; ++s) {
            int i = lower ? s : N - 1 - s;
            C v = C(x.data[i * R + r]);
            if (lower)
                for (int k = 0; k < i; ++k) v -= at(i, k) * C(x.data[k * R + r]);
            else
                for (int k = i + 1; k < N; ++k) v -= at(i, k) * C(x.data[k * R + r]);
            x.data[i * R + r] = v / at(i, i);
        }
    }
}
template <class XT, class MT, class YT> TL_HD void tile_lower_solve(Ctx&, XT& x, const MT& L, const YT& y) {
    x = y;
    tri_solve(L, x, true, false);
}
template <class XT, class MT, class YT> TL_HD void tile_upper_solve(Ctx&, XT& x, const MT& U, const YT& y) {
    x = y;
    tri_solve(U, x, false, false);
}
template <class XT, class MT, class YT> TL_HD void tile_cholesky_solve(Ctx&, XT& x, const MT& L, const YT& y) {
    x = y;
    tri_solve(L, x, true, false);
    tri_solve(L, x, false, true);
}

template <class DT, class AT, class D> TL_HD void tile_diag_add(Ctx&, DT& dst, const AT& a, const D& d) {
    constexpr int N = AT::dim(0);
    dst = a;
    for (int i = 0; i < N; ++i) {
        if constexpr (std::is_arithmetic<D>::value || std::is_same<D, half>::value)
            dst.data[i * N + i] += d;
        else
            dst.data[i * N + i] += d.data[i];
    }
}

}  // namespace tl
