// tilec runtime: tile creation, and the lane <-> tile conversions.
#pragma once
#include "ctx.h"

namespace tl {

template <class TT> TL_HD void tile_fill_zero(Ctx&, TT& dst) {
    for (int e = 0; e < TT::size; ++e) dst.data[e] = typename TT::value_type(0);
}
template <class TT> TL_HD void tile_fill_one(Ctx&, TT& dst) {
    for (int e = 0; e < TT::size; ++e) dst.data[e] = typename TT::value_type(1);
}
template <class TT, class V> TL_HD void tile_full(Ctx&, TT& dst, V value) {
    for (int e = 0; e < TT::size; ++e) dst.data[e] = typename TT::value_type(value);
}
template <class TT> TL_HD void adj_tile_full(typename TT::value_type& adj_value, const TT& adj_dst) {
    compute_t<typename TT::value_type> s = 0;
    for (int e = 0; e < TT::size; ++e) s += adj_dst.data[e];
    adj_value += s;
}
template <class TT> TL_HD void tile_arange(Ctx&, TT& dst, double start, double step) {
    for (int e = 0; e < TT::size; ++e) dst.data[e] = typename TT::value_type(start + step * e);
}

// tile(x): lane l's x becomes element l. Every lane gets the whole tile.
template <class TT, class V> TL_HD void tile_from_lanes(Ctx& ctx, TT& dst, V x) {
    using T = typename TT::value_type;
    if (ctx.nlanes == 1) {
        for (int e = 0; e < TT::size; ++e) dst.data[e] = T(x);
        return;
    }
    T* slots = reinterpret_cast<T*>(ctx.scratch());
    slots[ctx.lane] = T(x);
    ctx.sync();
    // a missing lane of a partial block, or one that returned, gives nothing: its element is zero
    for (int e = 0; e < TT::size; ++e) dst.data[e] = e < ctx.nlanes && ctx.running(e) ? slots[e] : T(0);
    ctx.sync();
}
template <class TT> TL_HD void adj_tile_from_lanes(Ctx& ctx, typename TT::value_type& adj_x, const TT& adj_dst) {
    adj_x += adj_dst.data[ctx.nlanes == 1 ? 0 : ctx.lane];
}
template <class TT> TL_HD typename TT::value_type untile(Ctx& ctx, const TT& t) { return t.data[ctx.lane]; }

// tile_from_thread: every element is lane `from`'s x (with one lane, that lane's).
template <class TT, class V> TL_HD void tile_from_thread(Ctx& ctx, TT& dst, V x, int from) {
    using T = typename TT::value_type;
    T v = T(x);
    if (ctx.nlanes > 1) {
        T* slots = reinterpret_cast<T*>(ctx.scratch());
        slots[ctx.lane] = T(x);
        ctx.sync();
        v = from >= 0 && from < ctx.nlanes && ctx.running(from) ? slots[from] : T(0);
        ctx.sync();
    }
    for (int e = 0; e < TT::size; ++e) dst.data[e] = v;
}

}  // namespace tl
