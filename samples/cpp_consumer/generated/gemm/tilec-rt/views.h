// tilec runtime: broadcast, view, reshape, astype, element access and sub-tile assignment.
// Views are materialised as copies: reading through them is all the language allows.
#pragma once
#include "memory.h"
#include "vec.h"

namespace tl {

// The source element a broadcast reads for destination element e (numpy rules, right-aligned).
template <class ST, class DT> TL_HD constexpr int broadcast_index(int e) {
    constexpr int shift = DT::ndim - ST::ndim;
    int src = 0, stride = 1;
    for (int k = DT::ndim - 1; k >= 0; --k) {
        int coord = e % DT::dim(k);
        e /= DT::dim(k);
        if (k >= shift) {
            int sk = k - shift;
            if (ST::dim(sk) != 1) src += coord * stride;
            stride *= ST::dim(sk);
        }
    }
    return src;
}

// numpy broadcasting, right-aligned: extents of 1 repeat.
template <class DT, class AT> TL_HD void tile_broadcast(Ctx&, DT& dst, const AT& a) {
    constexpr int shift = DT::ndim - AT::ndim;
    int idx[DT::ndim];
    for (int e = 0; e < DT::size; ++e) {
        unravel<DT>(e, idx);
        int src = 0;
        for (int k = 0; k < AT::ndim; ++k) src = src * AT::dim(k) + (AT::dim(k) == 1 ? 0 : idx[k + shift]);
        dst.data[e] = a.data[src];
    }
}

// The view covers the parent's last DT::ndim axes from the offset; leading axes are fixed
// at their offset coordinate. Coordinates outside the parent read as zero.
template <class DT, class AT, class... O> TL_HD void tile_view(Ctx&, DT& dst, const AT& a, O... o) {
    constexpr int lead = AT::ndim - DT::ndim;
    int64_t off[AT::ndim];
    offsets_of<AT::ndim>(off, o...);
    int idx[DT::ndim];
    for (int e = 0; e < DT::size; ++e) {
        unravel<DT>(e, idx);
        int64_t src = 0;
        bool ok = true;
        for (int k = 0; k < AT::ndim; ++k) {
            int64_t c = off[k] + (k >= lead ? idx[k - lead] : 0);
            ok = ok && c >= 0 && c < AT::dim(k);
            src = src * AT::dim(k) + c;
        }
        dst.data[e] = ok ? a.data[src] : typename DT::value_type(0);
    }
}

template <class DT, class AT> TL_HD void tile_reshape(Ctx&, DT& dst, const AT& a) {
    static_assert(DT::size == AT::size, "reshape keeps the element count");
    for (int e = 0; e < DT::size; ++e) dst.data[e] = a.data[e];
}

template <class DT, class AT> TL_HD void tile_astype(Ctx&, DT& dst, const AT& a) {
    for (int e = 0; e < DT::size; ++e) dst.data[e] = cast<typename DT::value_type>(a.data[e]);
}

template <class TT, class... I> TL_HD bool tile_in_bounds(I... idx) {
    int ids[TT::ndim] = {int(idx)...};
    for (int k = 0; k < TT::ndim; ++k)
        if (ids[k] < 0 || ids[k] >= TT::dim(k)) return false;
    return true;
}

template <class TT, class... I> TL_HD typename TT::value_type tile_extract(const TT& t, I... idx) {
    return tile_in_bounds<TT>(idx...) ? t.at(idx...) : typename TT::value_type(0);
}

// Element writes run in every lane. With several lanes each lane's copy receives every
// lane's write, so all copies stay equal (mode 0: set, 1: add, 2: subtract). Sets are applied
// from the last lane to the first: where lanes write one element, the leader's value lands (the
// lowest lane still running: a lane that returned wrote no slot this time, its old one is skipped).
// `active` false: this lane writes nothing (tile_scatter_*'s has_value).
// The integer (or integer vector / matrix) operand of a bitwise element update, from what the lanes exchange.
template <class T> struct is_int_value : std::false_type {};
template <int N, class T> struct is_int_value<vec<N, T>> : std::is_integral<T> {};
template <int M, int N, class T> struct is_int_value<mat<M, N, T>> : std::is_integral<T> {};
template <class T, class S> TL_HD T int_bits(S v) {
    if constexpr (std::is_integral<T>::value) return T(int64_t(v));
    else return v;
}

template <class TT, class V, class... I>
TL_HD void tile_write_item_if(Ctx& ctx, TT& t, int mode, bool active, V value, I... idx) {
    using T = typename TT::value_type;
    // What the lanes exchange: a double for scalars, the element itself for vectors and matrices.
    using S = typename std::conditional<std::is_class<T>::value && !is_storage_float<T>::value, T, double>::type;
    int lin = active && tile_in_bounds<TT>(idx...) ? TT::linear(idx...) : -1;
    auto apply = [&](int l, S v) {
        if (l < 0) return;
        if (mode == 0) t.data[l] = T(v);
        else if (mode == 1) t.data[l] = T(compute_t<T>(t.data[l]) + compute_t<T>(v));
        else if (mode == 2) t.data[l] = T(compute_t<T>(t.data[l]) - compute_t<T>(v));
        else if constexpr (std::is_integral<T>::value || is_int_value<T>::value) {  // 3, 4, 5: &, |, ^ (integer tiles)
            const T b = int_bits<T>(v);
            t.data[l] = mode == 3 ? T(t.data[l] & b) : mode == 4 ? T(t.data[l] | b) : T(t.data[l] ^ b);
        }
    };
    if (ctx.nlanes == 1) {
        apply(lin, S(value));
        return;
    }
    struct Slot { int index; S value; };
    Slot* slots = reinterpret_cast<Slot*>(ctx.scratch());
    slots[ctx.lane] = Slot{lin, S(value)};
    ctx.sync();
    for (int k = 0; k < ctx.nlanes; ++k) {
        int l = mode == 0 ? ctx.nlanes - 1 - k : k;
        if (ctx.running(l)) apply(slots[l].index, slots[l].value);
    }
    ctx.sync();
}
template <class TT, class V, class... I> TL_HD void tile_write_item(Ctx& ctx, TT& t, int mode, V value, I... idx) {
    tile_write_item_if(ctx, t, mode, true, value, idx...);
}
// Per-lane scatters (every lane calls them): each lane whose has_value holds writes its value.
template <class TT, class V, class... I>
TL_HD void tile_scatter_add(Ctx& ctx, TT& t, V value, bool has_value, I... idx) {
    tile_write_item_if(ctx, t, 1, has_value, value, idx...);
}
template <class TT, class V, class... I>
TL_HD void tile_scatter_masked(Ctx& ctx, TT& t, V value, bool has_value, I... idx) {
    tile_write_item_if(ctx, t, 0, has_value, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_bit_and_item(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 3, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_bit_or_item(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 4, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_bit_xor_item(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 5, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_setitem(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 0, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_additem(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 1, value, idx...);
}
template <class TT, class V, class... I> TL_HD void tile_subitem(Ctx& ctx, TT& t, V value, I... idx) {
    tile_write_item(ctx, t, 2, value, idx...);
}

// dst[offset + i] = src[i]; parts outside dst are dropped.
template <class DT, class ST, class... O> TL_HD void tile_assign(Ctx&, DT& dst, const ST& src, O... o) {
    int64_t off[DT::ndim];
    offsets_of<DT::ndim>(off, o...);
    int idx[ST::ndim];
    for (int e = 0; e < ST::size; ++e) {
        unravel<ST>(e, idx);
        int64_t l = 0;
        bool ok = true;
        for (int k = 0; k < DT::ndim; ++k) {
            int64_t c = off[k] + idx[k];
            ok = ok && c >= 0 && c < DT::dim(k);
            l = l * DT::dim(k) + c;
        }
        if (ok) dst.data[l] = src.data[e];
    }
}

// Warp's tile subscripts t[i], t[a:b:s], t[-1, ::-1]: per parent axis k a start and a step; the
// axes whose bit is set in `keep` become the result's axes in order (coordinate start + i * step),
// the others stay at their start, a negative one (a run-time index) counted from the end as in
// numpy and Warp. Coordinates outside the parent read as zero.
template <class AT, class DT, class S> TL_HD bool tile_slice_source(int keep, const S* spec, int e, int64_t& src) {
    int idx[DT::ndim];
    unravel<DT>(e, idx);
    src = 0;
    bool ok = true;
    for (int k = 0, j = 0; k < AT::ndim; ++k) {
        const int64_t start = int64_t(spec[2 * k]);
        int64_t c = (keep >> k) & 1 ? start + int64_t(idx[j++]) * int64_t(spec[2 * k + 1])
                                    : (start < 0 ? start + AT::dim(k) : start);
        ok = ok && c >= 0 && c < AT::dim(k);
        src = src * AT::dim(k) + c;
    }
    return ok;
}
template <class DT, class AT, class... S> TL_HD void tile_slice(Ctx&, DT& dst, const AT& a, int keep, S... s) {
    const int64_t spec[] = {int64_t(s)...};
    for (int e = 0; e < DT::size; ++e) {
        int64_t src;
        dst.data[e] = tile_slice_source<AT, DT>(keep, spec, e, src) ? a.data[src] : typename DT::value_type(0);
    }
}

// The source element of dst element e in a gather along axis (t[idx, :], t[:, idx]): -1 outside.
// Negative indices count from the end of the axis, as Warp's tile_slice_indexed.
template <class DT, class AT, class IT> TL_HD int64_t tile_gather_source(const IT& idx, int axis, int e) {
    const int inner = AT::stride(axis);                 // elements per step along axis (same in a and dst)
    const int64_t outer = e / (inner * DT::dim(axis));  // index over the axes before axis
    int64_t r = idx.data[(e / inner) % DT::dim(axis)];
    if (r < 0) r += AT::dim(axis);
    if (r < 0 || r >= AT::dim(axis)) return -1;
    return (outer * AT::dim(axis) + r) * inner + e % inner;
}
// t[idx] / t[idx, :] / t[:, idx]: slices of a along axis picked by an int tile; outside reads zero.
template <class DT, class AT, class IT> TL_HD void tile_gather(Ctx&, DT& dst, const AT& a, const IT& idx, int axis) {
    for (int e = 0; e < DT::size; ++e) {
        const int64_t src = tile_gather_source<DT, AT, IT>(idx, axis, e);
        dst.data[e] = src >= 0 ? a.data[src] : typename DT::value_type(0);
    }
}

}  // namespace tl
