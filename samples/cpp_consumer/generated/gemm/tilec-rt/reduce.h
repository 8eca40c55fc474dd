// tilec runtime: reductions (full and per axis), arg-reductions, scans and sort.
// A reduction over `axis` of a tile (d0..dn) visits it as (outer, n, inner);
// axis < 0 means every element (outer = inner = 1).
#pragma once
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "ctx.h"

namespace tl {

template <class TT> struct AxisSplit {
    int outer = 1, n = 1, inner = 1;
    TL_HD explicit AxisSplit(int axis) {
        if (axis < 0) {
            n = TT::size;
            return;
        }
        for (int k = 0; k < axis; ++k) outer *= TT::dim(k);
        n = TT::dim(axis);
        for (int k = axis + 1; k < TT::ndim; ++k) inner *= TT::dim(k);
    }
    TL_HD int src(int o, int k, int i) const { return (o * n + k) * inner + i; }
};

// dst[o, i] = fold over k of a[o, k, i], left to right (tile_reduce's order, for any f).
// The k loop is outside the i loop, so the per-element folds vectorise across i.
template <class DT, class TT, class F> TL_HD void tile_fold(DT& dst, const TT& a, int axis, F f) {
    using C = compute_t<typename TT::value_type>;
    AxisSplit<TT> s(axis);
    C acc[TT::size];
    for (int o = 0; o < s.outer; ++o) {
        for (int i = 0; i < s.inner; ++i) acc[i] = C(a.data[s.src(o, 0, i)]);
        for (int k = 1; k < s.n; ++k)
            for (int i = 0; i < s.inner; ++i) acc[i] = f(acc[i], C(a.data[s.src(o, k, i)]));
        for (int i = 0; i < s.inner; ++i) dst.data[o * s.inner + i] = typename DT::value_type(acc[i]);
    }
}

// For sum, max and min: a contiguous fold (inner == 1) runs P partial folds over interleaved
// elements (element k goes to partial k % P), then combines them pairwise (partial p with p + P/2,
// halving); max and min are exact either way, sums round in this fixed order. P = 32 where the row
// holds 64 or more: the folds form four independent 8-wide chains, so the fold runs at the adder's
// throughput instead of one chain's latency (a 256-element row: ~4x less time); shorter rows take P = 8.
template <class C, class V> TL_HD void fold_load(C& part, const V* at) { part = C(*at); }
// GNU vectors with ?: (g++; clang++ since 10): TILEC_FOLD_VECTORS
#if defined(__GNUC__) && (!defined(__clang__) || __clang_major__ >= 10) && !defined(__CUDACC__) && defined(__AVX__)
#define TILEC_FOLD_VECTORS 1
typedef float Float8 __attribute__((vector_size(32)));
// An unaligned vector load: memcpy would let g++ merge the first loads into one block copy
// through the stack, whose 16-byte stores stall the fold's 32-byte loads.
typedef float Float8Unaligned __attribute__((vector_size(32), aligned(4), may_alias));
inline void fold_load(Float8& part, const float* at) { part = *reinterpret_cast<const Float8Unaligned*>(at); }
#endif
// Part holds W consecutive partials: one (Part = C), or W as a GNU vector (g++ does not turn 8
// scalar selects of max and min into vmaxps / vminps, ~2x the time). Either way the same folds
// in the same order.
template <int P, class Part, class C, class V, class F> TL_HD C fold_interleaved(const V* row, int n, F f) {
    constexpr int W = int(sizeof(Part) / sizeof(C));
    constexpr int G = P / W;
    Part part[G], next;
    for (int g = 0; g < G; ++g) fold_load(part[g], row + W * g);
    int k = P;
    for (; k + P <= n; k += P)
        for (int g = 0; g < G; ++g) {
            fold_load(next, row + k + W * g);
            part[g] = f(part[g], next);
        }
    for (int half = G / 2; half >= 1; half /= 2)
        for (int g = 0; g < half; ++g) part[g] = f(part[g], part[g + half]);
    // The lanes come from a copy: taking part's own address would keep the whole array in memory,
    // where its 16-byte stores then stall the 32-byte loads of the fold (store forwarding fails).
    const Part folded = part[0];
    C lanes[W];
    memcpy(lanes, &folded, sizeof lanes);
    for (int half = W / 2; half >= 1; half /= 2)
        for (int p = 0; p < half; ++p) lanes[p] = f(lanes[p], lanes[p + half]);
    C acc = lanes[0];
    for (; k < n; ++k) acc = f(acc, C(row[k]));
    return acc;
}
template <class DT, class TT, class F> TL_HD void tile_fold_wide(DT& dst, const TT& a, int axis, F f) {
    using C = compute_t<typename TT::value_type>;
    using V = typename TT::value_type;
    AxisSplit<TT> s(axis);
    if (s.inner != 1 || s.n < 16) {
        tile_fold(dst, a, axis, f);
        return;
    }
    for (int o = 0; o < s.outer; ++o) {
        const V* row = a.data + o * s.n;
        C acc;
#if defined(TILEC_FOLD_VECTORS)
        if constexpr (std::is_same<V, float>::value)
            acc = s.n >= 64 ? fold_interleaved<32, Float8, C>(row, s.n, f) : fold_interleaved<8, Float8, C>(row, s.n, f);
        else
#endif
            acc = s.n >= 64 ? fold_interleaved<32, C, C>(row, s.n, f) : fold_interleaved<8, C, C>(row, s.n, f);
        dst.data[o] = typename DT::value_type(acc);
    }
}

// A fold or arg-reduction over a group without an active element (a partial block, lanes.h) and
// without an identity: Warp fails the launch there, and so does tilec (the entry returns 5; on a
// GPU the kernel traps, as a failed assert does: the launch fails, never a made-up value).
TL_HD void no_active_element() {
#if defined(__CUDA_ARCH__)
    printf("tilec: a reduction over a partial block's inactive elements only\n");
    __trap();
#else
    throw std::domain_error("a reduction over a partial block's inactive elements only");
#endif
}

// The fold of a partial block (lanes.h): over each group's active elements, left to right; a
// group without one gets empty() (the operation's identity).
template <class DT, class TT, class F, class E>
TL_HD void tile_fold_live(const Ctx& ctx, DT& dst, const TT& a, int axis, F f, E empty) {
    using C = compute_t<typename TT::value_type>;
    AxisSplit<TT> s(axis);
    for (int o = 0; o < s.outer; ++o)
        for (int i = 0; i < s.inner; ++i) {
            bool got = false;
            C acc = C(0);
            for (int k = 0; k < s.n; ++k) {
                const int e = s.src(o, k, i);
                if (!ctx.live(e)) continue;
                acc = got ? C(f(acc, C(a.data[e]))) : C(a.data[e]);
                got = true;
            }
            dst.data[o * s.inner + i] = typename DT::value_type(got ? acc : C(empty()));
        }
}

template <class C> TL_HD C lowest_or_minus_inf() {
    return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
}
template <class C> TL_HD C highest_or_inf() {
    return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
}

template <class DT, class TT> TL_HD void tile_sum(Ctx& ctx, DT& dst, const TT& a, int axis) {
    using C = compute_t<typename TT::value_type>;
    if (ctx.partial()) return tile_fold_live(ctx, dst, a, axis, [](auto x, auto y) { return x + y; }, []() { return C(0); });
    tile_fold_wide(dst, a, axis, [](auto x, auto y) { return x + y; });
}
template <class DT, class TT> TL_HD void tile_max(Ctx& ctx, DT& dst, const TT& a, int axis) {
    using C = compute_t<typename TT::value_type>;
    if (ctx.partial())
        return tile_fold_live(ctx, dst, a, axis, [](auto x, auto y) { return x < y ? y : x; }, []() { return lowest_or_minus_inf<C>(); });
    tile_fold_wide(dst, a, axis, [](auto x, auto y) { return x < y ? y : x; });
}
template <class DT, class TT> TL_HD void tile_min(Ctx& ctx, DT& dst, const TT& a, int axis) {
    using C = compute_t<typename TT::value_type>;
    if (ctx.partial())
        return tile_fold_live(ctx, dst, a, axis, [](auto x, auto y) { return y < x ? y : x; }, []() { return highest_or_inf<C>(); });
    tile_fold_wide(dst, a, axis, [](auto x, auto y) { return y < x ? y : x; });
}
// The identity of a tile_reduce operator for a partial block's group without an active element:
// Warp declares one for wp.add, wp.mul, wp.min and wp.max only (identity: FOLD_* from the
// emitter, which knows the operator); any other operator fails the launch, as in Warp.
enum FoldIdentity { FOLD_NONE = 0, FOLD_ZERO = 1, FOLD_ONE = 2, FOLD_LOWEST = 3, FOLD_HIGHEST = 4 };
template <class C> TL_HD C fold_identity(int identity) {
    if constexpr (std::is_arithmetic<C>::value) {
        switch (identity) {
            case FOLD_ZERO: return C(0);
            case FOLD_ONE: return C(1);
            case FOLD_LOWEST: return lowest_or_minus_inf<C>();
            case FOLD_HIGHEST: return highest_or_inf<C>();
            default: break;
        }
    }
    no_active_element();
    return C(0);
}

template <class DT, class TT, class F>
TL_HD void tile_reduce(Ctx& ctx, DT& dst, const TT& a, F f, int axis, int identity = FOLD_NONE) {
    using C = compute_t<typename TT::value_type>;
    if (ctx.partial()) return tile_fold_live(ctx, dst, a, axis, f, [&]() { return fold_identity<C>(identity); });
    tile_fold(dst, a, axis, f);
}

// Index along the axis of group (o, i)'s first extreme active element (every element is active
// outside a partial block), -1 when it has none. Shared by argmax/argmin and tile_max/min's adjoint.
template <bool Max, class TT>
TL_HD int first_live_extreme(const Ctx& ctx, const TT& a, const AxisSplit<TT>& s, int o, int i) {
    int best = -1;
    for (int k = 0; k < s.n; ++k) {
        if (!ctx.live(s.src(o, k, i))) continue;
        auto v = a.data[s.src(o, k, i)];
        if (best < 0 || (Max ? (a.data[s.src(o, best, i)] < v) : (v < a.data[s.src(o, best, i)]))) best = k;
    }
    return best;
}

// Index along the axis of the first extreme element (of the first active one in a partial block).
template <class DT, class TT, bool Max> TL_HD void tile_arg_extreme(const Ctx& ctx, DT& dst, const TT& a, int axis) {
    AxisSplit<TT> s(axis);
    for (int o = 0; o < s.outer; ++o)
        for (int i = 0; i < s.inner; ++i) {
            const int best = first_live_extreme<Max>(ctx, a, s, o, i);
            if (best < 0) no_active_element();
            dst.data[o * s.inner + i] = typename DT::value_type(best < 0 ? 0 : best);
        }
}
template <class DT, class TT> TL_HD void tile_argmax(Ctx& ctx, DT& dst, const TT& a, int axis) {
    tile_arg_extreme<DT, TT, true>(ctx, dst, a, axis);
}
template <class DT, class TT> TL_HD void tile_argmin(Ctx& ctx, DT& dst, const TT& a, int axis) {
    tile_arg_extreme<DT, TT, false>(ctx, dst, a, axis);
}

// Scans run over the active elements only in a partial block (an inactive element holds the
// running value, never stored).
template <class TT> TL_HD void tile_scan_inclusive(Ctx& ctx, TT& dst, const TT& a) {
    compute_t<typename TT::value_type> acc = 0;
    for (int e = 0; e < TT::size; ++e) {
        if (ctx.live(e)) acc += a.data[e];
        dst.data[e] = typename TT::value_type(acc);
    }
}
template <class TT> TL_HD void tile_scan_exclusive(Ctx& ctx, TT& dst, const TT& a) {
    compute_t<typename TT::value_type> acc = 0;
    for (int e = 0; e < TT::size; ++e) {
        auto v = a.data[e];
        dst.data[e] = typename TT::value_type(acc);
        if (ctx.live(e)) acc += v;
    }
}

// Running maximum/minimum over the flattened row-major tile. C fmax/fmin semantics: a NaN
// loses to a number (acc != acc only for a NaN accumulator); ties keep the earlier element.
template <class TT, bool Max> TL_HD void tile_scan_extreme(const Ctx& ctx, TT& dst, const TT& a) {
    using C = compute_t<typename TT::value_type>;
    C acc = C(a.data[0]);
    bool got = ctx.live(0);
    dst.data[0] = a.data[0];
    for (int e = 1; e < TT::size; ++e) {
        C v = C(a.data[e]);
        if (ctx.live(e)) {
            if (!got || (Max ? acc < v : v < acc) || acc != acc) acc = v;
            got = true;
        }
        dst.data[e] = typename TT::value_type(acc);
    }
}
template <class TT> TL_HD void tile_scan_max_inclusive(Ctx& ctx, TT& dst, const TT& a) {
    tile_scan_extreme<TT, true>(ctx, dst, a);
}
template <class TT> TL_HD void tile_scan_min_inclusive(Ctx& ctx, TT& dst, const TT& a) {
    tile_scan_extreme<TT, false>(ctx, dst, a);
}

// One term of tile_dot: a * b. Vectors and matrices overload it (value_tiles.h: wp.dot, wp.ddot).
template <class T> TL_HD T dot_term(const T& a, const T& b) { return a * b; }

// Sum of dot_term(a, b) over every element (a (1,) tile), accumulated in order in the compute type.
template <class DT, class AT, class BT> TL_HD void tile_dot(Ctx&, DT& dst, const AT& a, const BT& b) {
    using E = compute_t<typename AT::value_type>;
    using C = decltype(dot_term(E(), E()));
    C acc = C(0);
    for (int e = 0; e < AT::size; ++e) acc += dot_term(E(a.data[e]), E(b.data[e]));
    dst.data[0] = typename DT::value_type(acc);
}

// dest += alpha * src, in place (alpha a scalar, also for tiles of vectors and matrices).
template <class DT, class A, class ST> TL_HD void tile_axpy(Ctx&, DT& dest, const A& alpha, const ST& src) {
    using C = compute_t<typename DT::value_type>;
    const compute_t<A> k = compute_t<A>(alpha);
    for (int e = 0; e < DT::size; ++e) dest.data[e] = typename DT::value_type(C(dest.data[e]) + k * C(src.data[e]));
}

// Stable ascending sort of keys, applying the same permutation to values.
// perm (optional) receives, for each output position, the source position.
template <class KT, class VT> TL_HD void tile_sort_perm(KT& keys, VT& values, int* perm) {
    for (int e = 0; e < KT::size; ++e) perm[e] = e;
    for (int e = 1; e < KT::size; ++e) {
        auto k = keys.data[e];
        auto v = values.data[e];
        int p = perm[e];
        int j = e - 1;
        while (j >= 0 && k < keys.data[j]) {
            keys.data[j + 1] = keys.data[j];
            values.data[j + 1] = values.data[j];
            perm[j + 1] = perm[j];
            --j;
        }
        keys.data[j + 1] = k;
        values.data[j + 1] = v;
        perm[j + 1] = p;
    }
}
template <class KT, class VT> TL_HD void tile_sort(Ctx&, KT& keys, VT& values) {
    int perm[KT::size];
    tile_sort_perm(keys, values, perm);
}

}  // namespace tl
