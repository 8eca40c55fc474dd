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

#if !defined(__CUDACC__)
// An M x K tile of a 2-d array at (r0, c0), read by the matmul without a tile copy: the CPU
// emitter passes `tl::array_tile<M, K>(A, r0, c0)` for a tile_load whose tile only feeds a matmul
// (codegen/operand_views.py), and gemm.h packs the operand's panels straight from the array.
template <class T, int M, int K> struct ArrayTile {
    using value_type = T;
    static constexpr int ndim = 2;
    Array<T, 2> array;
    int64_t r0, c0;
    static constexpr int dim(int k) { return k == 0 ? M : K; }
};
template <int M, int K, class T> ArrayTile<T, M, K> array_tile(const Array<T, 2>& a, int64_t r0, int64_t c0) {
    return ArrayTile<T, M, K>{a, r0, c0};
}
template <class X> struct is_array_tile : std::false_type {};
template <class T, int M, int K> struct is_array_tile<ArrayTile<T, M, K>> : std::true_type {};

// An operand as gemm.h's strided description (a tile: row-major, every element real).
template <class T, int M, int K> gemm::Strided<T> strided_of(const ArrayTile<T, M, K>& v) {
    const auto& a = v.array;
    return {a.data, v.r0, v.c0, a.strides[0] / int64_t(sizeof(T)), a.strides[1] / int64_t(sizeof(T)), a.shape[0],
            a.shape[1]};
}
template <class TT> gemm::Strided<typename TT::value_type> strided_of(const TT& t) {
    return {t.data, 0, 0, TT::dim(1), 1, TT::dim(0), TT::dim(1)};
}
template <class TT> gemm::Strided<typename TT::value_type> strided_of(const Transposed<TT>& t) {
    return strided_of(t.tile).transpose();
}
template <class X> bool whole_elements(const X&) { return true; }  // strides in whole elements
template <class T, int M, int K> bool whole_elements(const ArrayTile<T, M, K>& v) {
    return v.array.strides[0] % int64_t(sizeof(T)) == 0 && v.array.strides[1] % int64_t(sizeof(T)) == 0;
}
template <class TT> bool whole_elements(const Transposed<TT>& t) { return whole_elements(t.tile); }

template <class T, int M, int K> Tile<T, M, K> materialize(const ArrayTile<T, M, K>& v) {  // tile_load's copy
    Tile<T, M, K> out;
    const auto& a = v.array;
    if (v.r0 >= 0 && v.c0 >= 0 && v.r0 + M <= a.shape[0] && v.c0 + K <= a.shape[1] && a.contiguous_last()) {
        for (int i = 0; i < M; ++i) {
            if (i + TILEC_GEMM_PF_ROWS < M)  // rows pages apart: ask ahead (gemm.h pack_b)
                for (int q = 0; q < K * int(sizeof(T)); q += 64)
                    __builtin_prefetch(reinterpret_cast<const char*>(a.ptr(v.r0 + i + TILEC_GEMM_PF_ROWS, v.c0)) + q);
            std::memcpy(out.data + i * K, a.ptr(v.r0 + i, v.c0), K * sizeof(T));
        }
        return out;
    }
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            const int64_t r = v.r0 + i, c = v.c0 + k;
            const bool in = r >= 0 && r < v.array.shape[0] && c >= 0 && c < v.array.shape[1];
            out.data[i * K + k] = in ? v.array(r, c) : T(0);
        }
    return out;
}
template <class T, int M, int K> Tile<T, K, M> materialize(const Transposed<ArrayTile<T, M, K>>& v) {
    const Tile<T, M, K> t = materialize(v.tile);
    Tile<T, K, M> out;
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) out.data[k * M + i] = t.data[i * K + k];
    return out;
}

// An M x K window at (r0, c0) of a 2-d tile, read by the matmul in place (rows the parent's width
// apart) instead of copied by tile_view: the CPU emitter passes `tl::tile_window<M, K>(x, r0, c0)`
// for a tile_view whose tile only feeds the next statement's matmul as its A operand
// (codegen/operand_views.py window_operands). A window past the parent's edges is copied as
// tile_view copies it (zeros outside).
template <class TT, int M, int K> struct TileWindow {
    using value_type = typename TT::value_type;
    static constexpr int ndim = 2;
    const TT& tile;
    int64_t r0, c0;
    static constexpr int dim(int k) { return k == 0 ? M : K; }
    bool inside() const { return r0 >= 0 && c0 >= 0 && r0 + M <= TT::dim(0) && c0 + K <= TT::dim(1); }
};
template <int M, int K, class TT> TileWindow<TT, M, K> tile_window(const TT& t, int64_t r0, int64_t c0) {
    return TileWindow<TT, M, K>{t, r0, c0};
}
template <class X> struct is_tile_window : std::false_type {};
template <class TT, int M, int K> struct is_tile_window<TileWindow<TT, M, K>> : std::true_type {};

template <class TT, int M, int K> Tile<typename TT::value_type, M, K> materialize(const TileWindow<TT, M, K>& w) {
    Tile<typename TT::value_type, M, K> out;
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            const int64_t r = w.r0 + i, c = w.c0 + k;
            const bool in = r >= 0 && r < TT::dim(0) && c >= 0 && c < TT::dim(1);
            out.data[i * K + k] = in ? w.tile.data[r * TT::dim(1) + c] : typename TT::value_type(0);
        }
    return out;
}

// A window (inside its tile) times an array view: B's panels packed (and kept, as
// matmul_from_arrays keeps them) from the array, A's rows read in place from the parent tile.
template <class T, int M, int N, int K, class TT, class BT>
void matmul_window_by_view(const Ctx& ctx, const TileWindow<TT, M, K>& a, const BT& b, T* c, T alpha, T beta) {
    const gemm::BlockId block{launch_epoch.load(std::memory_order_relaxed), {ctx.tid[0], ctx.tid[1], ctx.tid[2], ctx.tid[3]}};
    const T* first = a.tile.data + a.r0 * TT::dim(1) + a.c0;
    gemm::matmul_packed<T, M, N, K>(gemm::InPlaceA<T, TT::dim(1), 1>{first}, strided_of(b), c, alpha, beta,
                                    ctx.group == nullptr ? &block : nullptr);
}

// op(A) @ op(B) where at least one operand is an array view: A copied from its array MR rows at a
// time (or read in place from its tile), B's panels packed from either.
// B's panels packed from an array view are kept for later blocks of the launch on this thread
// (gemm.h PanelCache); `block` is the block asking (one lane per block: fiber lanes repeat the
// matmul, so a block of several lanes packs its own).
template <class T, int M, int N, int K, class AT, class BT>
void matmul_from_arrays(const Ctx& ctx, const AT& a, const BT& b, T* c, T alpha, T beta) {
    const gemm::Strided<T> sb = strided_of(b);
    constexpr bool a_view = is_array_tile<typename std::decay<decltype(operand<AT>::stored(a))>::type>::value;
    constexpr bool b_view = is_array_tile<typename std::decay<decltype(operand<BT>::stored(b))>::type>::value;
    constexpr bool big_b = !b_view && K * N * sizeof(T) > 64 * 1024;  // its packed copy would not fit a stack
    const gemm::BlockId block{launch_epoch.load(std::memory_order_relaxed), {ctx.tid[0], ctx.tid[1], ctx.tid[2], ctx.tid[3]}};
    const gemm::BlockId* reuse = b_view && ctx.group == nullptr ? &block : nullptr;
    if constexpr (a_view && !operand<AT>::transposed && !big_b) {
        gemm::matmul_packed<T, M, N, K>(gemm::ViewA<T, M, K>{strided_of(a)}, sb, c, alpha, beta, reuse);
    } else if constexpr (a_view && b_view) {  // op(A) = X^T: copy X once (tile_load's copy)
        const Tile<T, K, M> x = materialize(a.tile);
        gemm::matmul_packed<T, M, N, K>(gemm::InPlaceA<T, 1, M>{x.data}, sb, c, alpha, beta, reuse);
    } else if constexpr (a_view && operand<AT>::transposed && !operand<BT>::transposed) {  // X^T @ a tile (an adjoint)
        const gemm::BlockId* keep = ctx.group == nullptr ? &block : nullptr;  // X's copy, for the launch
        gemm::matmul_transposed_view<T, M, N, K>(strided_of(a.tile), b.data, c, alpha, beta, keep);
    } else if constexpr (a_view && operand<AT>::transposed) {  // X^T @ a transposed tile: X copied once
        const Tile<T, K, M> x = materialize(a.tile);
        gemm::matmul<T, M, N, K, true, operand<BT>::transposed>(x.data, operand<BT>::stored(b).data, c, alpha, beta);
    } else if constexpr (a_view) {  // a view times a large tile: A copied once, then the tiles' GEMM
        const Tile<T, M, K> x = materialize(a);
        gemm::matmul<T, M, N, K, false, operand<BT>::transposed>(x.data, operand<BT>::stored(b).data, c, alpha, beta);
    } else {
        constexpr bool TA = operand<AT>::transposed;
        gemm::matmul_packed<T, M, N, K>(gemm::InPlaceA<T, TA ? 1 : K, TA ? M : 1>{operand<AT>::stored(a).data}, sb, c,
                                        alpha, beta, reuse);
    }
}

// The products of a loop `for ...: acc = tile_matmul(a, b, acc)` whose body is that matmul alone,
// a and b tiles loaded only for it (the CPU emitter, codegen/operand_views.py matmul_sums, emits
// `MatmulSum<Tile, K> sum(ctx, acc);`, `sum.add(a, b)` in the loop and `sum.finish()` after it):
// nothing reads acc or writes an array until the loop ends, so the products of array views are
// gathered and summed by one gemm.h matmul_sum (acc read and written once, the accumulators in
// registers across the steps). Any other operand pair is multiplied at once.
// When acc starts as tile_zeros (`MatmulSum<Tile, K> sum(ctx, acc, true)`), the sum writes acc
// instead of adding to zeros (no memset); when acc is then only stored after the loop (`if
// (!sum.finish_into(C, row, col)) tile_store(...)`), the sum goes straight into C's rows where the
// tile lies inside C (no acc, no copy), elsewhere into acc, which is stored as written.
template <class CT, int K> class MatmulSum {
    using T = typename CT::value_type;
    static constexpr int M = CT::dim(0), N = CT::dim(1);
    static constexpr bool FLOATS = std::is_same<T, float>::value || std::is_same<T, double>::value;

  public:
    MatmulSum(Ctx& ctx, CT& c, bool starts_at_zero = false) : ctx_(ctx), c_(c), unset_(starts_at_zero) {}
    MatmulSum(const MatmulSum&) = delete;
    MatmulSum& operator=(const MatmulSum&) = delete;

    template <class AT, class BT> void add(const AT& a, const BT& b) {
        if constexpr (FLOATS && std::is_same<AT, ArrayTile<T, M, K>>::value && std::is_same<BT, ArrayTile<T, K, N>>::value) {
            if (ctx_.group == nullptr && whole_elements(a) && whole_elements(b)) {  // one lane per block
                if (steps_ == gemm::SUM_STEPS) finish();
                as_[steps_] = strided_of(a);
                bs_[steps_] = strided_of(b);
                ++steps_;
                return;
            }
        }
        set();
        tile_matmul(ctx_, c_, a, b, 1.0, 1.0);
    }

    // A window of a tile (read in place, rows the parent's width apart) times an array view: its
    // rows are described as a strided array over the parent tile. Summed only where gemm.h reads
    // them in place (inside the parent, whose width is not K): a tile's copy must not go to the
    // PanelCache (a tile's memory is reused by the next block).
    template <class TT, class BT> void add(const TileWindow<TT, M, K>& a, const BT& b) {
        constexpr bool SAME = std::is_same<typename TT::value_type, T>::value;
        if constexpr (FLOATS && SAME && std::is_same<BT, ArrayTile<T, K, N>>::value && TT::dim(1) != K) {
            if (ctx_.group == nullptr && a.inside() && whole_elements(b)) {
                if (steps_ == gemm::SUM_STEPS) finish();
                as_[steps_] = gemm::Strided<T>{a.tile.data, a.r0, a.c0, TT::dim(1), 1, TT::dim(0), TT::dim(1)};
                bs_[steps_] = strided_of(b);
                ++steps_;
                return;
            }
        }
        set();
        tile_matmul(ctx_, c_, a, b, 1.0, 1.0);
    }

    void finish() {
        if constexpr (FLOATS) {
            if (steps_ > 0) {  // acc still unset (its zeros): the sum overwrites it, else adds to it
                gemm::matmul_sum<T, M, N, K>(as_, bs_, steps_, c_.data, N, unset_ ? T(0) : T(1), reuse(&block_));
                steps_ = 0;
                unset_ = false;
                return;
            }
        }
        set();
    }

    // The sum into C's M x N tile at (r0, c0) when it lies inside C with contiguous rows and every
    // product is still to be summed (true: acc untouched, C written); else finish() (false: store acc).
    bool finish_into(const Array<T, 2>& c, int64_t r0, int64_t c0) {
        if constexpr (FLOATS) {
            if (unset_ && steps_ > 0 && r0 >= 0 && c0 >= 0 && r0 + M <= c.shape[0] && c0 + N <= c.shape[1] &&
                c.contiguous_last() && c.strides[0] % int64_t(sizeof(T)) == 0 && !ctx_.partial() && ctx_.leader() &&
                c.strides[0] / int64_t(sizeof(T)) <= INT32_MAX) {
                gemm::matmul_sum<T, M, N, K>(as_, bs_, steps_, c.ptr(r0, c0), int(c.strides[0] / int64_t(sizeof(T))),
                                             T(0), reuse(&block_));
                steps_ = 0;
                return true;
            }
        }
        finish();
        return false;
    }

  private:
    void set() {  // acc's value is needed: its zeros first
        if (unset_) tile_fill_zero(ctx_, c_);
        unset_ = false;
    }
    const gemm::BlockId* reuse(gemm::BlockId* block) const {
        *block = gemm::BlockId{launch_epoch.load(std::memory_order_relaxed), {ctx_.tid[0], ctx_.tid[1], ctx_.tid[2], ctx_.tid[3]}};
        return ctx_.group == nullptr ? block : nullptr;
    }
    Ctx& ctx_;
    CT& c_;
    bool unset_;  // acc starts at zero and has not been written yet
    int steps_ = 0;
    gemm::BlockId block_{};
    gemm::Strided<T> as_[gemm::SUM_STEPS], bs_[gemm::SUM_STEPS];
};
#endif

template <class X> struct reads_array : std::false_type {};  // an operand read straight from an array
#if !defined(__CUDACC__)
template <class T, int M, int K> struct reads_array<ArrayTile<T, M, K>> : std::true_type {};
template <class T, int M, int K> struct reads_array<Transposed<ArrayTile<T, M, K>>> : std::true_type {};
#endif

template <class CT, class AT, class BT>
TL_HD void tile_matmul(Ctx& ctx, CT& c, const AT& a, const BT& b, double alpha, double beta) {
    using T = typename CT::value_type;
    using Acc = compute_t<T>;
    constexpr int M = AT::dim(0), K = AT::dim(1), N = BT::dim(1);
    constexpr bool from_array = reads_array<AT>::value || reads_array<BT>::value;
    constexpr bool views = operand<AT>::transposed || operand<BT>::transposed || from_array;
    constexpr bool same = std::is_same<typename AT::value_type, T>::value && std::is_same<typename BT::value_type, T>::value;
    if constexpr (same && (std::is_same<T, float>::value || std::is_same<T, double>::value)) {
#if !defined(__CUDACC__)
        if constexpr (from_array) {
            if (whole_elements(a) && whole_elements(b))
                matmul_from_arrays<T, M, N, K>(ctx, a, b, c.data, T(alpha), T(beta));
            else  // byte strides that split elements: copy as tile_load would
                tile_matmul(ctx, c, materialize(a), materialize(b), alpha, beta);
        } else {
            gemm::matmul<T, M, N, K, operand<AT>::transposed, operand<BT>::transposed>(
                operand<AT>::stored(a).data, operand<BT>::stored(b).data, c.data, T(alpha), T(beta));
        }
#else
        if constexpr (views)
            tile_matmul(ctx, c, materialize(a), materialize(b), alpha, beta);
        else
            matmul_rowmajor<T, M, N, K>(a.data, b.data, c.data, T(alpha), T(beta));
#endif
    } else if constexpr (views) {
        tile_matmul(ctx, c, materialize(a), materialize(b), alpha, beta);
    } else {  // half, bfloat16, integers, mixed widths (Warp's mixed precision): accumulate in C's compute type
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

#if !defined(__CUDACC__)
// A tile_view read in place (TileWindow) as the A operand.
template <class CT, class TT, int M, int K, class BT>
void tile_matmul(Ctx& ctx, CT& c, const TileWindow<TT, M, K>& a, const BT& b, double alpha, double beta) {
    using T = typename CT::value_type;
    constexpr int N = BT::dim(1);
    constexpr bool floats = std::is_same<T, float>::value || std::is_same<T, double>::value;
    constexpr bool same = std::is_same<typename TT::value_type, T>::value && std::is_same<typename BT::value_type, T>::value;
    if constexpr (same && floats && is_array_tile<BT>::value) {
        if (a.inside() && whole_elements(b)) return matmul_window_by_view<T, M, N, K>(ctx, a, b, c.data, T(alpha), T(beta));
    }
    tile_matmul(ctx, c, materialize(a), b, alpha, beta);
}

// A window read in place, transposed (an adjoint's window^T @ dC), times a row-major tile.
template <class CT, class TT, int M, int K, class BT>
void tile_matmul(Ctx& ctx, CT& c, const Transposed<TileWindow<TT, M, K>>& a, const BT& b, double alpha, double beta) {
    using T = typename CT::value_type;
    constexpr int N = BT::dim(1);
    constexpr bool floats = std::is_same<T, float>::value || std::is_same<T, double>::value;
    constexpr bool same = std::is_same<typename TT::value_type, T>::value && std::is_same<typename BT::value_type, T>::value;
    if constexpr (same && floats && std::is_same<BT, Tile<T, M, N>>::value && N % gemm::nr_of<gemm::IsaBuild, T> == 0) {
        if (a.tile.inside()) {  // op(A)(i, k) = window(k, i): rows of op(A) 1 apart, columns the parent's width
            const T* first = a.tile.tile.data + a.tile.r0 * TT::dim(1) + a.tile.c0;
            return gemm::matmul_strided_a<T, K, N, M, 1, TT::dim(1)>(first, b.data, c.data, T(alpha), T(beta));
        }
    }
    const Tile<typename TT::value_type, M, K> copy = materialize(a.tile);
    tile_matmul(ctx, c, transposed(copy), b, alpha, beta);
}
#endif

template <class DT, class AT> TL_HD void tile_transpose(Ctx&, DT& dst, const AT& a) {
    constexpr int M = AT::dim(0), N = AT::dim(1);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) dst.data[j * M + i] = a.data[i * N + j];
}

// fill_mode "lower": lower L with A = L L^T, reading A's lower triangle; "upper": upper U with
// U^T U = A, reading A's upper triangle (U = L^T of A^T). The opposite triangle is zero.
TL_HD bool fill_upper(const char* fill_mode) { return fill_mode[0] == 'u'; }

template <class LT, class AT> TL_HD void tile_cholesky(Ctx&, LT& L, const AT& A, const char* fill_mode = "lower") {
    using C = compute_t<typename AT::value_type>;
    constexpr int N = AT::dim(0);
    const bool upper = fill_upper(fill_mode);
    auto a = [&](int i, int j) { return C(upper ? A.data[j * N + i] : A.data[i * N + j]); };
    C l[N * N];
    for (int e = 0; e < N * N; ++e) l[e] = 0;
    for (int j = 0; j < N; ++j) {
        C d = a(j, j);
        for (int k = 0; k < j; ++k) d -= l[j * N + k] * l[j * N + k];
        C ljj = std::sqrt(d);
        l[j * N + j] = ljj;
        for (int i = j + 1; i < N; ++i) {
            C s = a(i, j);
            for (int k = 0; k < j; ++k) s -= l[i * N + k] * l[j * N + k];
            l[i * N + j] = s / ljj;
        }
    }
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) L.data[i * N + j] = typename LT::value_type(upper ? l[j * N + i] : l[i * N + j]);
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
// x with A x = y: A = L L^T ("lower", L's lower triangle read) or A = U^T U ("upper", upper read).
template <class XT, class MT, class YT>
TL_HD void tile_cholesky_solve(Ctx&, XT& x, const MT& L, const YT& y, const char* fill_mode = "lower") {
    const bool upper = fill_upper(fill_mode);
    x = y;
    tri_solve(L, x, true, upper);
    tri_solve(L, x, false, !upper);
}

// The in-place forms: the solution or factor overwrites the tile argument.
template <class AT> TL_HD void tile_cholesky_inplace(Ctx& ctx, AT& A, const char* fill_mode) {
    AT factor;
    tile_cholesky(ctx, factor, A, fill_mode);
    A = factor;
}
template <class YT, class MT> TL_HD void tile_cholesky_solve_inplace(Ctx& ctx, YT& y, const MT& L, const char* fill_mode) {
    const bool upper = fill_upper(fill_mode);
    tri_solve(L, y, true, upper);
    tri_solve(L, y, false, !upper);
}
template <class YT, class MT> TL_HD void tile_lower_solve_inplace(Ctx&, YT& y, const MT& L) { tri_solve(L, y, true, false); }
template <class YT, class MT> TL_HD void tile_upper_solve_inplace(Ctx&, YT& y, const MT& U) { tri_solve(U, y, false, false); }

template <class DT, class AT, class D> TL_HD void tile_diag_add(Ctx&, DT& dst, const AT& a, const D& d) {
    constexpr int N = AT::dim(0);
    dst = a;
    for (int i = 0; i < N; ++i) {
        if constexpr (std::is_arithmetic<D>::value || is_storage_float<D>::value)
            dst.data[i * N + i] += d;
        else
            dst.data[i * N + i] += d.data[i];
    }
}

}  // namespace tl
