// tilec runtime: the per-lane tile operations of the GPU model (tiles shared by the block).
// Used by .cu code, on the GPU and in the CUDA emulation. Every thread calls these.
#pragma once
#include "views.h"

namespace tl {

// tile(x): thread l's x becomes element l.
template <class TT, class V> TL_HD void shared_tile_from_lanes(Ctx& ctx, TT& dst, V x) {
    ctx.sync();
    if (ctx.lane < TT::size) dst.data[ctx.lane] = typename TT::value_type(x);
    ctx.sync();
}

// t[i, j] = value from every thread: where threads write one element, the leader's value lands.
template <class TT, class V, class... I> TL_HD void shared_setitem(Ctx& ctx, TT& t, V value, I... idx) {
    bool ok = tile_in_bounds<TT>(idx...);
    ctx.sync();
    if (ok && !ctx.leader()) t.at(idx...) = typename TT::value_type(value);
    ctx.sync();
    if (ok && ctx.leader()) t.at(idx...) = typename TT::value_type(value);
    ctx.sync();
}

// t[i, j] += value from every thread (once per lane), atomically in shared memory.
template <class TT, class V, class... I> TL_HD void shared_additem(Ctx& ctx, TT& t, V value, I... idx) {
    ctx.sync();
    if (tile_in_bounds<TT>(idx...)) shared_atomic_add(&t.at(idx...), typename TT::value_type(value));
    ctx.sync();
}
template <class TT, class V, class... I> TL_HD void shared_subitem(Ctx& ctx, TT& t, V value, I... idx) {
    shared_additem(ctx, t, -value, idx...);
}
// A per-lane adjoint contribution (no barrier: it may sit under a lane-dependent branch).
template <class TT, class V, class... I> TL_HD void shared_add_at(Ctx&, TT& t, V value, I... idx) {
    if (tile_in_bounds<TT>(idx...)) shared_atomic_add(&t.at(idx...), typename TT::value_type(value));
}

}  // namespace tl
