// tilec runtime: the adjoint tape and the gradient helpers the adjoint kernels call.
// Each helper is the adjoint twin of a forward op in this folder.
#pragma once
#include "linalg.h"
#include "reduce.h"
#include "views.h"

namespace tl {

template <class T> TL_HD void tape_push(Ctx& ctx, const T& v) { ctx.tape->push(v); }
template <class T> TL_HD void tape_pop(Ctx& ctx, T& v) { ctx.tape->pop(v); }
template <class T> TL_HD T tape_pop_value(Ctx& ctx) {
    T v;
    ctx.tape->pop(v);
    return v;
}
template <class T> TL_HD T leader_only(Ctx& ctx, T v) { return ctx.leader() ? v : T(0); }

template <class A, class B> TL_HD A step_ge(A a, B b) { return a >= b ? A(1) : A(0); }
template <int N, class T> TL_HD vec<N, T> step_ge(const vec<N, T>& a, const vec<N, T>& b) {  // per component
    vec<N, T> r;
    for (int k = 0; k < N; ++k) r.c[k] = step_ge(a.c[k], b.c[k]);
    return r;
}

#if !defined(__CUDACC__)
// first_extreme over a contiguous row of float or double in one pass, in vectors of 32 bytes (GCC/Clang
// vector extensions, as gemm.h): C interleaved pairs of (best value, its index) per lane, each
// replaced only by a strictly better element (a NaN never is, as in the scan), merged at the end
// by value and then by the earlier index. Lanes start at the worst value (-inf for max), which no
// element beats: a row whose extreme is that value answers -1, and the caller scans it. A NaN first
// element is the scan's answer (nothing compares better than it). Two passes (the extreme, then
// the first element equal to it) cost 2.4x as long on softmax's rows of 256 floats.
template <bool Max, class T> int first_extreme_vector(const T* row, int n) {
    if (row[0] != row[0]) return 0;
    constexpr int L = 32 / int(sizeof(T));
    constexpr int C = 4;
    typedef T V __attribute__((vector_size(32)));
    typedef typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type I;
    typedef I VI __attribute__((vector_size(32)));
    const T worst = Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    V m[C];
    VI at[C], lane;
    for (int l = 0; l < L; ++l) lane[l] = I(l);
    for (int c = 0; c < C; ++c) {
        m[c] = V{} + worst;
        at[c] = VI{} - 1;
    }
    int k = 0;
    for (; k + C * L <= n; k += C * L)
        for (int c = 0; c < C; ++c) {
            V v;
            std::memcpy(&v, row + k + c * L, sizeof(V));
            auto better = Max ? (m[c] < v) : (v < m[c]);
            m[c] = better ? v : m[c];
            at[c] = better ? lane + I(k + c * L) : at[c];
        }
    for (; k + L <= n; k += L) {
        V v;
        std::memcpy(&v, row + k, sizeof(V));
        auto better = Max ? (m[0] < v) : (v < m[0]);
        m[0] = better ? v : m[0];
        at[0] = better ? lane + I(k) : at[0];
    }
    for (int c = 1; c < C; ++c) {  // lane by lane: the better value, on a tie the earlier index
        auto take = (Max ? (m[0] < m[c]) : (m[c] < m[0])) |
                    ((m[c] == m[0]) & (at[c] >= 0) & ((at[c] < at[0]) | (at[0] < 0)));
        m[0] = take ? m[c] : m[0];
        at[0] = take ? at[c] : at[0];
    }
    T best = worst;
    for (int l = 0; l < L; ++l) best = (Max ? best < m[0][l] : m[0][l] < best) ? m[0][l] : best;
    int where = -1;
    for (int l = 0; l < L; ++l)
        if (at[0][l] >= 0 && m[0][l] == best && (where < 0 || int(at[0][l]) < where)) where = int(at[0][l]);
    for (; k < n; ++k)  // the last elements, after every vector's
        if (Max ? best < row[k] : row[k] < best) {
            best = row[k];
            where = k;
        }
    return where;
}
#endif

// The first extreme element of row[0 .. n) in a sequential scan (an element replaces the best only
// when strictly better, so NaNs are never picked past row[0], and of equal elements, +0 and -0
// too, the first stays). A long contiguous row of float or double gets the same answer in vectors
// (first_extreme_vector); one whose extreme is -inf (max) or +inf (min) takes the scan itself.
template <bool Max, class T> TL_HD int first_extreme(const T* row, int n, int stride) {
    using C = compute_t<T>;
#if !defined(__CUDACC__)
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        if (stride == 1 && n >= 64 / int(sizeof(T))) {
            const int at = first_extreme_vector<Max>(row, n);
            if (at >= 0) return at;
        }
    }
#endif
    int best = 0;
    C b = C(row[0]);
    for (int k = 1; k < n; ++k) {
        const C v = C(row[k * stride]);
        if (Max ? (b < v) : (v < b)) {
            best = k;
            b = v;
        }
    }
    return best;
}

// The first extreme element of each group tile_max/min reduced (its index in a), with the group's
// index: put(element, group). In a partial block (lanes.h) only active elements compete, as in the
// forward, and a group with none puts nothing.
template <class TT, class Put> TL_HD void each_first_extreme(Ctx& ctx, const TT& a, int axis, bool is_max, Put put) {
    AxisSplit<TT> s(axis);
    for (int o = 0; o < s.outer; ++o)
        for (int i = 0; i < s.inner; ++i) {
            if (ctx.partial()) {  // only the active elements compete
                const int best = is_max ? first_live_extreme<true>(ctx, a, s, o, i) : first_live_extreme<false>(ctx, a, s, o, i);
                if (best >= 0) put(s.src(o, best, i), o * s.inner + i);
                continue;
            }
            const auto* group = a.data + s.src(o, 0, i);
            const int best = is_max ? first_extreme<true>(group, s.n, s.inner) : first_extreme<false>(group, s.n, s.inner);
            put(s.src(o, best, i), o * s.inner + i);
        }
}

// adjoint of tile_max/min: g at the first extreme element of each group, 0 elsewhere.
template <class DT, class TT, class GT> TL_HD void tile_extreme_grad(Ctx& ctx, DT& dst, const TT& a, const GT& g,
                                                                     int axis, bool is_max) {
    for (int e = 0; e < TT::size; ++e) dst.data[e] = 0;
    each_first_extreme(ctx, a, axis, is_max, [&](int e, int group) { dst.data[e] = g.data[group]; });
}

// dst + tile_extreme_grad(a, g) in place: g added at each group's first extreme element (the CPU
// emitter's form of `adj = u + tile_extreme_grad(a, g)`, extreme_adds.py: no zeroed tile and no
// second pass over it). Float and double tiles only.
template <class DT, class TT, class GT> TL_HD void tile_extreme_grad_add(Ctx& ctx, DT& dst, const TT& a, const GT& g,
                                                                         int axis, bool is_max) {
    each_first_extreme(ctx, a, axis, is_max, [&](int e, int group) { dst.data[e] += g.data[group]; });
}

// One step of a builtin fold, acc = f(x, y), and its adjoint. Tiles of vectors and matrices fold
// with + only (the adjoint rule refuses the others), so only + must compile for them.
template <class C> TL_HD C fold_step(char kind, const C& x, const C& y) {
    if constexpr (std::is_arithmetic<C>::value)
        return kind == '+' ? x + y : kind == '*' ? x * y : kind == 'M' ? (x < y ? y : x) : (y < x ? y : x);
    else
        return x + y;
}
template <class C> TL_HD void adj_fold_step(char kind, const C& x, const C& y, const C& ga, C& gx, C& gy) {
    if constexpr (std::is_arithmetic<C>::value) {
        if (kind == '+') { gx = ga; gy = ga; }
        else if (kind == '*') { gx = ga * y; gy = ga * x; }
        else if (kind == 'M') { bool first = !(x < y); gx = first ? ga : C(0); gy = first ? C(0) : ga; }
        else { bool first = !(y < x); gx = first ? ga : C(0); gy = first ? C(0) : ga; }
    } else {
        gx = ga;
        gy = ga;
    }
}

// adjoint of a left fold acc_k = f(acc_{k-1}, a_k) with a builtin f.
// In a partial block (lanes.h) the fold ran over the active elements only: so does its adjoint.
template <class DT, class TT, class GT> TL_HD void tile_reduce_grad(Ctx& ctx, DT& dst, const TT& a, const GT& g,
                                                                    int axis, const char* op) {
    using C = compute_t<typename TT::value_type>;
    AxisSplit<TT> s(axis);
    const char kind = op[0] == 'a' ? '+' : (op[0] == 'm' && op[1] == 'u' ? '*' : (op[1] == 'a' ? 'M' : 'm'));
    if (ctx.partial()) {
        for (int e = 0; e < TT::size; ++e) dst.data[e] = typename DT::value_type(0);
        for (int o = 0; o < s.outer; ++o)
            for (int i = 0; i < s.inner; ++i) {
                C acc[TT::size > 0 ? TT::size : 1];  // acc[k]: the fold up to active element k
                int last = -1;
                for (int k = 0; k < s.n; ++k) {
                    if (!ctx.live(s.src(o, k, i))) continue;
                    acc[k] = last < 0 ? C(a.data[s.src(o, k, i)]) : fold_step(kind, acc[last], C(a.data[s.src(o, k, i)]));
                    last = k;
                }
                if (last < 0) continue;
                C ga = C(g.data[o * s.inner + i]);
                for (int k = last;;) {
                    int prev = k - 1;
                    while (prev >= 0 && !ctx.live(s.src(o, prev, i))) --prev;
                    if (prev < 0) {
                        dst.data[s.src(o, k, i)] = ga;
                        break;
                    }
                    C gx, gy;
                    adj_fold_step(kind, acc[prev], C(a.data[s.src(o, k, i)]), ga, gx, gy);
                    dst.data[s.src(o, k, i)] = gy;
                    ga = gx;
                    k = prev;
                }
            }
        return;
    }
    for (int o = 0; o < s.outer; ++o)
        for (int i = 0; i < s.inner; ++i) {
            C acc[TT::size > 0 ? TT::size : 1];
            acc[0] = C(a.data[s.src(o, 0, i)]);
            for (int k = 1; k < s.n; ++k) acc[k] = fold_step(kind, acc[k - 1], C(a.data[s.src(o, k, i)]));
            C ga = C(g.data[o * s.inner + i]);
            for (int k = s.n - 1; k >= 1; --k) {
                C x = acc[k - 1], y = C(a.data[s.src(o, k, i)]);
                C gx, gy;
                adj_fold_step(kind, x, y, ga, gx, gy);
                dst.data[s.src(o, k, i)] = gy;
                ga = gx;
            }
            dst.data[s.src(o, 0, i)] = ga;
        }
}

template <class DT, class GT> TL_HD void tile_scan_grad(Ctx& ctx, DT& dst, const GT& g, bool exclusive) {
    compute_t<typename GT::value_type> acc = 0;
    for (int e = GT::size - 1; e >= 0; --e) {
        if (!ctx.live(e)) {  // a partial block's inactive element took no part in the scan
            dst.data[e] = 0;
        } else if (exclusive) {
            dst.data[e] = acc;
            acc += g.data[e];
        } else {
            acc += g.data[e];
            dst.data[e] = acc;
        }
    }
}

// adjoint of tile_scan_max/min_inclusive: g of each output at the first element that holds the
// running extreme there (the same comparisons as tile_scan_extreme).
template <class DT, class TT, class GT> TL_HD void tile_scan_extreme_grad(Ctx& ctx, DT& dst, const TT& a, const GT& g,
                                                                         bool is_max) {
    using C = compute_t<typename TT::value_type>;
    for (int e = 0; e < TT::size; ++e) dst.data[e] = 0;
    int best = -1;  // a partial block (lanes.h): among the active elements only
    for (int e = 0; e < TT::size; ++e) {
        if (!ctx.live(e)) continue;
        C v = C(a.data[e]);
        if (best < 0) {
            best = e;
        } else {
            C b = C(a.data[best]);
            if ((is_max ? b < v : v < b) || b != b) best = e;
        }
        dst.data[best] = typename DT::value_type(C(dst.data[best]) + C(g.data[e]));
    }
}

// The sort permutation of keys (stable, as tile_sort), applied backwards to g.
template <class DT, class KT, class GT> TL_HD void tile_unsort_grad(Ctx&, DT& dst, const KT& keys, const GT& g) {
    KT k = keys;
    GT dummy = g;
    int perm[KT::size];
    tile_sort_perm(k, dummy, perm);
    for (int e = 0; e < KT::size; ++e) dst.data[perm[e]] = g.data[e];
}

// Adjoint of L = chol(A) w.r.t. the lower triangle of A (the forward reads only that).
// With P = Phi(L^T Lbar) and S = L^-T P L^-1: dA_ij = S_ij + S_ji below the diagonal, S_ii on it.
template <class DT, class LT, class GT> TL_HD void tile_cholesky_grad(Ctx& ctx, DT& dst, const LT& L, const GT& g) {
    using C = compute_t<typename LT::value_type>;
    constexpr int N = LT::dim(0);
    LT P;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s = 0;
            for (int k = 0; k < N; ++k) s += C(L.data[k * N + i]) * C(g.data[k * N + j]);
            P.data[i * N + j] = i > j ? s : (i == j ? s * C(0.5) : C(0));
        }
    // S = L^-T P L^-1: solve L^T X = P, then S^T = L^-T X^T.
    tri_solve(L, P, false, true);
    LT Pt;
    tile_transpose(ctx, Pt, P);
    tri_solve(L, Pt, false, true);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s_ij = C(Pt.data[j * N + i]), s_ji = C(Pt.data[i * N + j]);
            dst.data[i * N + j] = i > j ? s_ij + s_ji : (i == j ? s_ij : C(0));
        }
}

// Adjoint of L in x = (L L^T)^-1 y: tril(-(ybar x^T + x ybar^T) L).
template <class DT, class LT, class XT> TL_HD void tile_cholesky_solve_grad(Ctx&, DT& dst, const LT& L, const XT& x,
                                                                            const XT& ybar) {
    using C = compute_t<typename LT::value_type>;
    constexpr int N = LT::dim(0);
    constexpr int R = XT::ndim == 1 ? 1 : XT::dim(1);
    C M[N * N];
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s = 0;
            for (int r = 0; r < R; ++r) s += C(ybar.data[i * R + r]) * C(x.data[j * R + r]) + C(x.data[i * R + r]) * C(ybar.data[j * R + r]);
            M[i * N + j] = -s;
        }
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            C s = 0;
            if (j <= i)
                for (int k = 0; k < N; ++k) s += M[i * N + k] * C(L.data[k * N + j]);
            dst.data[i * N + j] = s;
        }
}

// -tril(u v^T) or -triu(u v^T), summed over columns of u and v.
template <class DT, class UT, class VT> TL_HD void tile_tri_outer_grad(Ctx&, DT& dst, const UT& u, const VT& v, bool lower) {
    using C = compute_t<typename DT::value_type>;
    constexpr int N = DT::dim(0);
    constexpr int R = UT::ndim == 1 ? 1 : UT::dim(1);
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) {
            bool keep = lower ? j <= i : j >= i;
            C s = 0;
            if (keep)
                for (int r = 0; r < R; ++r) s += C(u.data[i * R + r]) * C(v.data[j * R + r]);
            dst.data[i * N + j] = -s;
        }
}

// g summed over the axes a broadcast repeated, back to dst's shape.
// A sum to one element takes tile_sum's 8 partial sums; a sum over leading rows adds whole rows.
template <class DT, class GT> TL_HD void tile_unbroadcast(Ctx& ctx, DT& dst, const GT& g) {
    constexpr int shift = GT::ndim - DT::ndim;
    constexpr int last = GT::dim(GT::ndim - 1);
    if constexpr (DT::size == 1 && GT::size > 1) {
        tile_sum(ctx, dst, g, -1);
        return;
    } else if constexpr (DT::size == last && DT::dim(DT::ndim - 1) == last && GT::size > last) {
        // every axis of dst but its last is 1: g's rows add onto dst, row after row (the order below)
        for (int e = 0; e < last; ++e) dst.data[e] = typename DT::value_type(g.data[e]);
        for (int r = 1; r < GT::size / last; ++r)
            for (int e = 0; e < last; ++e) dst.data[e] += g.data[r * last + e];
        return;
    }
    for (int e = 0; e < DT::size; ++e) dst.data[e] = typename DT::value_type(0);
    int idx[GT::ndim];
    for (int e = 0; e < GT::size; ++e) {
        unravel<GT>(e, idx);
        int d = 0;
        for (int k = 0; k < DT::ndim; ++k) d = d * DT::dim(k) + (DT::dim(k) == 1 ? 0 : idx[k + shift]);
        dst.data[d] += g.data[e];
    }
}

// a with g added where tile_view(a, offset) reads from (the view's adjoint).
// Row by row: the in-bounds columns of each of g's rows are one contiguous run of a's elements,
// added in a loop that vectorises (an MLP adjoint adds each product's 16x32 chunk into its 16x256
// gradient this way; element by element with the bounds check it was ~2 % of that adjoint).
template <class AT, class GT, class... O> TL_HD void tile_view_add(Ctx&, AT& a, const GT& g, O... o) {
    constexpr int lead = AT::ndim - GT::ndim, last = AT::ndim - 1, cols = GT::dim(GT::ndim - 1);
    static_assert(lead >= 0 && GT::ndim >= 1, "a view keeps the last axis of the tile it views");
    int64_t off[AT::ndim];
    offsets_of<AT::ndim>(off, o...);
    const int64_t lo = off[last] < 0 ? -off[last] : 0;  // g's columns [lo, hi) land inside a
    const int64_t hi = AT::dim(last) - off[last] < cols ? AT::dim(last) - off[last] : cols;
    if (lo >= hi) return;
    int idx[GT::ndim];
    for (int r = 0; r < GT::size / cols; ++r) {
        unravel<GT>(r * cols, idx);
        int64_t dst = 0;
        bool ok = true;
        for (int k = 0; k < last; ++k) {
            int64_t c = off[k] + (k >= lead ? idx[k - lead] : 0);
            ok = ok && c >= 0 && c < AT::dim(k);
            dst = dst * AT::dim(k) + c;
        }
        if (!ok) continue;
        const int64_t out = dst * AT::dim(last) + off[last], in = int64_t(r) * cols;
        for (int64_t c = lo; c < hi; ++c) a.data[out + c] += g.data[in + c];
    }
}

template <class DT, class GT> TL_HD void tile_diag(Ctx&, DT& dst, const GT& g) {
    constexpr int N = GT::dim(0);
    for (int i = 0; i < N; ++i) dst.data[i] = g.data[i * N + i];
}

}  // namespace tl

namespace tl {

// Partial adjoints of a lane-mode kernel: the tile's adjoint is the sum of every lane's copy.
template <class TT> TL_HD void lane_sum(Ctx& ctx, TT& dst, const TT& a) {
    if (ctx.nlanes == 1) {
        dst = a;
        return;
    }
    TT* slots = ctx.shared_slots<TT>();
    slots[ctx.lane] = a;
    ctx.sync();
    for (int e = 0; e < TT::size; ++e) {
        compute_t<typename TT::value_type> s = compute_t<typename TT::value_type>(0);  // vec3 tiles: vec3(0)
        for (int l = 0; l < ctx.nlanes; ++l)
            if (l < ctx.active && ctx.running(l)) s += slots[l].data[e];  // not stand-ins' or returned lanes'
        dst.data[e] = typename TT::value_type(s);
    }
    ctx.sync();
}

template <class TT> TL_HD void leader_only(Ctx& ctx, TT& dst, const TT& a) {
    if (ctx.leader()) dst = a;
    else tile_fill_zero(ctx, dst);
}

// a[i, j] += value in this lane's copy only (no barrier: safe under lane-dependent branches).
template <class TT, class V, class... I> TL_HD void tile_add_at(Ctx&, TT& t, V value, I... idx) {
    if (tile_in_bounds<TT>(idx...)) {
        auto& x = t.at(idx...);
        x = typename TT::value_type(compute_t<typename TT::value_type>(x) + value);
    }
}

// a with g added where tile_slice(a, keep, spec) reads from (the slice's adjoint).
template <class AT, class GT, class... S> TL_HD void tile_slice_add(Ctx&, AT& a, const GT& g, int keep, S... s) {
    const int64_t spec[] = {int64_t(s)...};
    for (int e = 0; e < GT::size; ++e) {
        int64_t src;
        if (tile_slice_source<AT, GT>(keep, spec, e, src)) a.data[src] += g.data[e];
    }
}

// a with g added where tile_gather(a, idx, axis) read (the gather's adjoint; repeats accumulate).
template <class AT, class GT, class IT> TL_HD void tile_gather_add(Ctx&, AT& a, const GT& g, const IT& idx, int axis) {
    for (int e = 0; e < GT::size; ++e) {
        const int64_t src = tile_gather_source<GT, AT, IT>(idx, axis, e);
        if (src >= 0) a.data[src] += g.data[e];
    }
}

}  // namespace tl
