// tilec runtime: the per-lane tile operations of the GPU model (tiles shared by the block).
// Used by .cu code, on the GPU and in the CUDA emulation. Every thread calls these.
#pragma once
#include "reduce.h"
#include "vec.h"
#include "views.h"

namespace tl {

// tile(x): thread l's x becomes element l. A partial block's stand-in thread (ctx_cuda.h) gives
// nothing: its element is inactive, held as zero (as on the CPU, creation.h).
template <class TT, class V> TL_HD void shared_tile_from_lanes(Ctx& ctx, TT& dst, V x) {
    ctx.sync();
    if (ctx.lane < TT::size) dst.data[ctx.lane] = ctx.standin() ? typename TT::value_type(0) : typename TT::value_type(x);
    ctx.sync();
}

// t[i, j] = value from every thread: where threads write one element, the leader's value lands.
// Here and in the per-lane writes below a partial block's stand-in thread writes nothing.
template <class TT, class V, class... I> TL_HD void shared_setitem(Ctx& ctx, TT& t, V value, I... idx) {
    bool ok = !ctx.standin() && tile_in_bounds<TT>(idx...);
    ctx.sync();
    if (ok && !ctx.leader()) t.at(idx...) = typename TT::value_type(value);
    ctx.sync();
    if (ok && ctx.leader()) t.at(idx...) = typename TT::value_type(value);
    ctx.sync();
}

// Vectors and matrices add atomically component by component (as Warp's vector atomics do).
template <int N, class T> TL_HD void shared_atomic_add(vec<N, T>* p, vec<N, T> v) {
    for (int k = 0; k < N; ++k) shared_atomic_add(&p->c[k], v.c[k]);
}
template <int M, int N, class T> TL_HD void shared_atomic_add(mat<M, N, T>* p, mat<M, N, T> v) {
    for (int k = 0; k < M * N; ++k) shared_atomic_add(&p->c[k], v.c[k]);
}

// t[i, j] += value from every thread (once per lane), atomically in shared memory.
template <class TT, class V, class... I> TL_HD void shared_additem(Ctx& ctx, TT& t, V value, I... idx) {
    ctx.sync();
    if (!ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_add(&t.at(idx...), typename TT::value_type(value));
    ctx.sync();
}
template <class TT, class V, class... I> TL_HD void shared_subitem(Ctx& ctx, TT& t, V value, I... idx) {
    shared_additem(ctx, t, -value, idx...);
}
// The per-lane scatters: each thread whose has_value holds writes (or adds) its value.
template <class TT, class V, class... I>
TL_HD void shared_scatter_add(Ctx& ctx, TT& t, V value, bool has_value, I... idx) {
    ctx.sync();
    if (has_value && !ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_add(&t.at(idx...), typename TT::value_type(value));
    ctx.sync();
}
template <class TT, class V, class... I>
TL_HD void shared_scatter_masked(Ctx& ctx, TT& t, V value, bool has_value, I... idx) {
    ctx.sync();
    if (has_value && !ctx.standin() && tile_in_bounds<TT>(idx...)) t.at(idx...) = typename TT::value_type(value);
    ctx.sync();
}
// t[i, j] &= |= ^= value from every thread (once per lane), atomically in shared memory.
template <class TT, class V, class... I> TL_HD void shared_bit_and_item(Ctx& ctx, TT& t, V value, I... idx) {
    ctx.sync();
    if (!ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_bit(&t.at(idx...), typename TT::value_type(value), '&');
    ctx.sync();
}
template <class TT, class V, class... I> TL_HD void shared_bit_or_item(Ctx& ctx, TT& t, V value, I... idx) {
    ctx.sync();
    if (!ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_bit(&t.at(idx...), typename TT::value_type(value), '|');
    ctx.sync();
}
template <class TT, class V, class... I> TL_HD void shared_bit_xor_item(Ctx& ctx, TT& t, V value, I... idx) {
    ctx.sync();
    if (!ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_bit(&t.at(idx...), typename TT::value_type(value), '^');
    ctx.sync();
}
// tile_from_thread: thread `from` publishes its value, every thread fills its share.
template <class TT, class V> TL_HD void shared_tile_from_thread(Ctx& ctx, TT& dst, V x, int from) {
    ctx.sync();
    if (ctx.lane == from) dst.data[0] = typename TT::value_type(ctx.standin() ? V(0) : x);  // the CPU's 0
    ctx.sync();
    const typename TT::value_type v = dst.data[0];
    ctx.sync();
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) dst.data[e] = v;
    ctx.sync();
}

// A per-lane adjoint contribution (no barrier: it may sit under a lane-dependent branch).
template <class TT, class V, class... I> TL_HD void shared_add_at(Ctx& ctx, TT& t, V value, I... idx) {
    if (!ctx.standin() && tile_in_bounds<TT>(idx...)) shared_atomic_add(&t.at(idx...), typename TT::value_type(value));
}

}  // namespace tl

namespace tl {

// ---------------------------------------------------------------- cooperative tile operations
// Every thread of the block calls these; thread l handles elements l, l + nlanes, ... so that
// neighbouring threads touch neighbouring elements (coalesced global accesses). The caller
// synchronises before and after.

// C = alpha * A @ B + beta * C: each thread computes its share of C's elements.
template <class CT, class AT, class BT>
TL_HD void coop_tile_matmul(Ctx& ctx, CT& c, const AT& a, const BT& b, double alpha, double beta) {
    using T = typename CT::value_type;
    using Acc = compute_t<T>;
    constexpr int K = AT::dim(1), N = BT::dim(1);
    for (int e = ctx.lane; e < CT::size; e += ctx.nlanes) {
        int i = e / N, j = e % N;
        Acc s = 0;
        for (int k = 0; k < K; ++k) s += Acc(a.data[i * K + k]) * Acc(b.data[k * N + j]);
        Acc v = Acc(alpha) * s;
        c.data[e] = T(beta == 0.0 ? v : v + Acc(beta) * Acc(c.data[e]));
    }
}

// dst = a^T. Thread l writes dst's elements l, l + nlanes, ... except where both sides' widths
// are multiples of 32 and the block of whole warps: there each warp moves 32x32 squares along
// diagonals (lane q of step t takes row q, column (q + t) % 32 of the square), so that a warp's 32
// reads fall in 32 different shared-memory banks and so do its writes; read down a column as in
// the plain order, all 32 would hit one bank.
template <class DT, class AT> TL_HD void coop_tile_transpose(Ctx& ctx, DT& dst, const AT& a) {
    constexpr int M = AT::dim(0), N = AT::dim(1);
    if constexpr (M % 32 == 0 && N % 32 == 0) {
        if (ctx.nlanes % 32 == 0) {
            const int q = ctx.lane % 32;
            for (int step = ctx.lane / 32; step < M * N / 32; step += ctx.nlanes / 32) {
                const int square = step / 32, t = step % 32;
                const int i = (square / (N / 32)) * 32 + q, j = (square % (N / 32)) * 32 + (q + t) % 32;
                dst.data[j * M + i] = a.data[i * N + j];
            }
            return;
        }
    }
    for (int e = ctx.lane; e < DT::size; e += ctx.nlanes) {
        int j = e / M, i = e % M;
        dst.data[e] = a.data[i * N + j];
    }
}

template <class TT> TL_HD void coop_tile_fill_zero(Ctx& ctx, TT& dst) {
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) dst.data[e] = typename TT::value_type(0);
}
template <class TT> TL_HD void coop_tile_fill_one(Ctx& ctx, TT& dst) {
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) dst.data[e] = typename TT::value_type(1);
}
template <class TT, class V> TL_HD void coop_tile_full(Ctx& ctx, TT& dst, V value) {
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) dst.data[e] = typename TT::value_type(value);
}
template <class DT, class AT> TL_HD void coop_tile_reshape(Ctx& ctx, DT& dst, const AT& a) {
    for (int e = ctx.lane; e < DT::size; e += ctx.nlanes) dst.data[e] = a.data[e];
}
template <class DT, class AT> TL_HD void coop_tile_astype(Ctx& ctx, DT& dst, const AT& a) {
    for (int e = ctx.lane; e < DT::size; e += ctx.nlanes) dst.data[e] = cast<typename DT::value_type>(a.data[e]);
}

// Reductions: each thread folds some output groups, left to right.
template <class DT, class TT, class F> TL_HD void coop_fold(Ctx& ctx, DT& dst, const TT& a, int axis, F f) {
    using C = compute_t<typename TT::value_type>;
    AxisSplit<TT> s(axis);
    for (int g = ctx.lane; g < s.outer * s.inner; g += ctx.nlanes) {
        int o = g / s.inner, i = g % s.inner;
        C acc = C(a.data[s.src(o, 0, i)]);
        for (int k = 1; k < s.n; ++k) acc = f(acc, C(a.data[s.src(o, k, i)]));
        dst.data[g] = typename DT::value_type(acc);
    }
}
// In a partial block (ctx_cuda.h) the leader folds the active elements alone (reduce.h's tile_sum ...
// skip the inactive ones, an empty group gets the identity), as the CPU does.
template <class DT, class TT> TL_HD void coop_tile_sum(Ctx& ctx, DT& dst, const TT& a, int axis) {
    if (ctx.partial()) {
        if (ctx.leader()) tile_sum(ctx, dst, a, axis);
        return;
    }
    coop_fold(ctx, dst, a, axis, [](auto x, auto y) { return x + y; });
}
template <class DT, class TT> TL_HD void coop_tile_max(Ctx& ctx, DT& dst, const TT& a, int axis) {
    if (ctx.partial()) {
        if (ctx.leader()) tile_max(ctx, dst, a, axis);
        return;
    }
    coop_fold(ctx, dst, a, axis, [](auto x, auto y) { return x < y ? y : x; });
}
template <class DT, class TT> TL_HD void coop_tile_min(Ctx& ctx, DT& dst, const TT& a, int axis) {
    if (ctx.partial()) {
        if (ctx.leader()) tile_min(ctx, dst, a, axis);
        return;
    }
    coop_fold(ctx, dst, a, axis, [](auto x, auto y) { return y < x ? y : x; });
}

}  // namespace tl
