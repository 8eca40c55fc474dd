// tilec runtime: tile loads, stores and atomic adds between arrays and tiles.
// Elements outside the array load as zero; writes outside it are dropped.
// Offsets come last, one per array dimension (none: all zero).
#pragma once
#include "atomic.h"

namespace tl {

template <int N, class... O> TL_HD void offsets_of(int64_t* off, O... o) {
    int64_t given[sizeof...(O) + 1] = {int64_t(o)..., 0};
    for (int k = 0; k < N; ++k) off[k] = k < int(sizeof...(O)) ? given[k] : 0;
}

// Visits tile elements first, first + step, ... with their array coordinates and whether they
// are in bounds (all of them by default; a lane's share with first = lane, step = lanes).
template <class TT, class T, int N, class F>
TL_HD void for_each_mapped(const Array<T, N>& a, const int64_t* off, F f, int first = 0, int step = 1) {
    static_assert(TT::ndim == N, "tile rank must equal array rank");
    if constexpr (N == 2) {
        if (first == 0 && step == 1) {
            for (int i = 0; i < TT::dim(0); ++i) {
                int64_t r = off[0] + i;
                bool row_ok = r >= 0 && r < a.shape[0];
                for (int j = 0; j < TT::dim(1); ++j) {
                    int64_t c = off[1] + j;
                    int64_t ids[2] = {r, c};
                    f(i * TT::dim(1) + j, ids, row_ok && c >= 0 && c < a.shape[1]);
                }
            }
            return;
        }
    }
    int idx[N];
    int64_t ids[N];
    for (int e = first; e < TT::size; e += step) {
        unravel<TT>(e, idx);
        bool ok = true;
        for (int k = 0; k < N; ++k) {
            ids[k] = off[k] + idx[k];
            ok = ok && ids[k] >= 0 && ids[k] < a.shape[k];
        }
        f(e, ids, ok);
    }
}

// True when the tile at `off` lies inside the array and its rows are contiguous.
template <class TT, class T, int N> TL_HD bool interior_rows(const Array<T, N>& a, const int64_t* off) {
    for (int k = 0; k < N; ++k)
        if (off[k] < 0 || off[k] + TT::dim(k) > a.shape[k]) return false;
    return a.strides[N - 1] == int64_t(sizeof(T));
}

// Calls row(linear index of the row's first element, pointer to it in the array) for each tile
// row of an interior tile.
template <class TT, class T, int N, class F> TL_HD void for_each_row(const Array<T, N>& a, const int64_t* off, F row) {
    constexpr int W = TT::dim(TT::ndim - 1);
    int idx[N];
    int64_t ids[N];
    for (int e = 0; e < TT::size; e += W) {
        unravel<TT>(e, idx);
        for (int k = 0; k < N; ++k) ids[k] = off[k] + idx[k];
        row(e, a.ptr_n(ids));
    }
}

// CPU: asks for every line of an interior tile's rows up front, so rows far apart in memory (a
// tile of a wide array: each row on its own page) arrive in parallel rather than one miss after
// another (and, for atomic adds, before the line locks serialise the loads).
template <class TT, class T, int N> TL_HD void prefetch_rows(const Array<T, N>& a, const int64_t* off, bool write) {
#if !defined(__CUDA_ARCH__)
    constexpr int W = TT::dim(TT::ndim - 1);
    for_each_row<TT>(a, off, [&](int, const T* row) {
        for (int q = 0; q < W * int(sizeof(T)); q += 64) {
            if (write)
                __builtin_prefetch(reinterpret_cast<const char*>(row) + q, 1);
            else
                __builtin_prefetch(reinterpret_cast<const char*>(row) + q, 0);
        }
    });
#endif
}

template <class TT, class T, int N, class... O>
TL_HD void tile_load(Ctx&, TT& dst, const Array<T, N>& a, bool, O... o) {
    // Always bounds checked: a wrong offset never reads outside the array.
    int64_t off[N];
    offsets_of<N>(off, o...);
    constexpr int W = TT::dim(TT::ndim - 1);
    if (interior_rows<TT>(a, off)) {
        prefetch_rows<TT>(a, off, false);
        for_each_row<TT>(a, off, [&](int e, const T* src) {
            for (int q = 0; q < W; ++q) dst.data[e + q] = src[q];
        });
        return;
    }
    for_each_mapped<TT>(a, off, [&](int e, const int64_t* ids, bool ok) { dst.data[e] = ok ? *a.ptr_n(ids) : T(0); });
}

// The elements a tile TT stored at offsets o would write into a, each value(e) for tile element e:
// the rows straight where they lie inside the array, else element by element, bounds checked; a
// partial block's inactive elements are not stored. The leader stores for the block.
template <class TT, class T, int N, class Value, class... O>
TL_HD void store_elements(Ctx& ctx, const Array<T, N>& a, Value value, O... o) {
    if (!ctx.leader()) return;
    int64_t off[N];
    offsets_of<N>(off, o...);
    constexpr int W = TT::dim(TT::ndim - 1);
    if (interior_rows<TT>(a, off) && !ctx.partial()) {
        for_each_row<TT>(a, off, [&](int e, T* dst) {
            for (int q = 0; q < W; ++q) dst[q] = value(e + q);
        });
        return;
    }
    for_each_mapped<TT>(a, off, [&](int e, const int64_t* ids, bool ok) {
        if (ok && ctx.live(e)) *a.ptr_n(ids) = value(e);
    });
}

template <class TT, class T, int N, class... O>
TL_HD void tile_store(Ctx& ctx, const Array<T, N>& a, const TT& t, bool, O... o) {
    store_elements<TT>(ctx, a, [&](int e) { return t.data[e]; }, o...);
}

// tile_store of a tile of zeros (the adjoint's zeroing of a stored tile's adjoint), without a
// zeroed tile to copy (codegen/zero_stores.py).
template <class TT, class T, int N, class... O>
TL_HD void tile_store_zeros(Ctx& ctx, const Array<T, N>& a, bool, O... o) {
    store_elements<TT>(ctx, a, [](int) { return T(0); }, o...);
}

// A one-row tile an element loop reads in place (codegen/row_views.py): the array's own elements
// when the row lies inside the array with contiguous elements, else the tile, loaded as tile_load
// loads it. Saves the copy through the tile: the loop's reads stream from memory.
template <class TT, class T, int N, class... O>
TL_HD const T* tile_load_row(Ctx& ctx, TT& dst, const Array<T, N>& a, bool check, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    if (interior_rows<TT>(a, off)) return a.ptr_n(off);
    tile_load(ctx, dst, a, check, o...);
    return dst.data;
}

// Whether n elements at `written` and n at `read` share no byte: an element loop that writes the one
// row while reading the other may then run twice (codegen/cxx.py element_loop_in_range; the arrays of
// a launch may be one through the C++ API).
template <class T, class U> TL_HD bool rows_apart(const T* written, const U* read, int n) {
    const uintptr_t w = reinterpret_cast<uintptr_t>(written), r = reinterpret_cast<uintptr_t>(read);
    return w + uintptr_t(n) * sizeof(T) <= r || r + uintptr_t(n) * sizeof(U) <= w;
}

// A one-row tile read in place (tile_load_row's pointer) as a reduction reads a tile: its shape,
// the row's elements (codegen/row_views.py: tile_sum, tile_max and tile_min take it).
template <class TT> struct RowRef {
    using value_type = typename TT::value_type;
    using extents = typename TT::extents;
    static constexpr int ndim = TT::ndim;
    static constexpr int size = TT::size;
    TL_HD static constexpr int dim(int k) { return TT::dim(k); }
    TL_HD static constexpr int stride(int k) { return TT::stride(k); }
    const value_type* data;
};

// Where an element loop writes a one-row tile that tile_store then stores (codegen/row_views.py):
// the array's row itself when the store would write it whole (inside the array, contiguous, this
// lane stores, not a partial block), else the tile, for tile_store as before.
template <class TT, class T, int N, class... O>
TL_HD T* tile_store_row(Ctx& ctx, const Array<T, N>& a, TT& t, bool, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    if (ctx.leader() && !ctx.partial() && interior_rows<TT>(a, off)) return a.ptr_n(off);
    return t.data;
}

// A one-row tile an adjoint loads and whose array row it then zeroes (tile_load, then
// tile_store_zeros of the same row), read by the next element loop (codegen/row_views.py
// `rows_taken`): the array's row itself when the zeroing store would write it whole (inside the
// array, contiguous, the block's leader, not a partial block), which the loop reads into the tile
// and zeroes element by element (one pass instead of three); else the tile, loaded and the array
// zeroed as the two calls do, which the loop then copies onto itself.
template <class TT, class T, int N, class... O>
TL_HD T* tile_take_row(Ctx& ctx, TT& dst, const Array<T, N>& a, bool check, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    if (ctx.leader() && !ctx.partial() && interior_rows<TT>(a, off)) return a.ptr_n(off);
    tile_load(ctx, dst, a, check, o...);
    tile_store_zeros<TT>(ctx, a, check, o...);
    return dst.data;
}

// The `old` argument of an atomic add whose old values nobody reads (generated code passes
// tl::DiscardOld{}): they are not stored.
struct DiscardOld {};
template <class T, class OT> TL_HD T* old_values(OT& old) {
    if constexpr (std::is_same<typename std::remove_cv<OT>::type, DiscardOld>::value)
        return nullptr;
    else
        return old.data;
}

template <class TT, class OT, class T, int N, class... O>
TL_HD void tile_atomic_add(Ctx& ctx, OT&& old, const Array<T, N>& a, const TT& t, bool, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    if (!ctx.leader()) return;
    constexpr int W = TT::dim(TT::ndim - 1);
    if (interior_rows<TT>(a, off) && !ctx.partial()) {
        prefetch_rows<TT>(a, off, true);
        T* old_out = old_values<T>(old);
#if defined(__CUDA_ARCH__)
        for_each_row<TT>(a, off, [&](int e, T* dst) { atomic_add_row(dst, t.data + e, old_out ? old_out + e : old_out, W); });
#else
        const SoloAdd solo(ctx.solo);  // the only worker running: no locks at all
        SpanLocks held;      // else every row's spans locked at once: the rows' adds then overlap their misses
        if (!solo.held) {
            for_each_row<TT>(a, off, [&](int, T* dst) { held.add(dst, sizeof(T) * W); });
            held.acquire();
        }
        for_each_row<TT>(a, off, [&](int e, T* dst) {
            if (old_out)
                for (int q = 0; q < W; ++q) old_out[e + q] = dst[q];
            for (int q = 0; q < W; ++q) dst[q] = T(compute_t<T>(dst[q]) + compute_t<T>(t.data[e + q]));
        });
        if (!solo.held) held.release();
#endif
        return;
    }
    T* old_out = old_values<T>(old);
    for_each_mapped<TT>(a, off, [&](int e, const int64_t* ids, bool ok) {
        const T prev = ok && ctx.live(e) ? atomic_add_ptr(a.ptr_n(ids), t.data[e]) : T(0);
        if (old_out) old_out[e] = prev;
    });
}

#if !defined(__CUDA_ARCH__)
// n values of -0: where a loop adds its tile's elements (x + -0 is x for every x, -0 included), the
// first add then leaves exactly the element, as a copy would (RowAdd, loop_add_row).
template <class T> inline T* cleared(T* p, int n) {
    for (int e = 0; e < n; ++e) p[e] = -T(0);
    return p;
}

// A one-row tile computed by an element loop and added into its array by the tile_atomic_add right
// after it (codegen/row_views.py `rows_added_in_place`): `row` is where the loop adds its values.
// The array's row itself when the add would go there whole (inside the array, contiguous, the
// block's leader, not a partial block), under tile_atomic_add's exclusion (the only worker running,
// else the row's span locks) until finish(): one pass over the row instead of the loop's and the
// add's. Else the tile, cleared to -0, which finish() adds as tile_atomic_add adds it. The loop
// between runs builtin element-wise arithmetic only.
template <class T> class RowAdd {
  public:
    T* row = nullptr;
    template <class TT, int N, class... O> RowAdd(Ctx& ctx, const Array<T, N>& a, TT& t, O... o) {
        int64_t off[N];
        offsets_of<N>(off, o...);
        if (ctx.leader() && !ctx.partial() && interior_rows<TT>(a, off)) {
            row = a.ptr_n(off);
            solo_.take(ctx.solo);
            if (!solo_.held) {
                locks_.add(row, sizeof(T) * TT::size);
                locks_.acquire();
                locked_ = true;
            }
            return;
        }
        row = cleared(t.data, TT::size);
    }
    RowAdd(const RowAdd&) = delete;
    RowAdd& operator=(const RowAdd&) = delete;
    ~RowAdd() { release(); }
    template <class TT, int N, class... O> void finish(Ctx& ctx, const Array<T, N>& a, const TT& t, bool check, O... o) {
        if (row == t.data) tile_atomic_add(ctx, DiscardOld{}, a, t, check, o...);
        release();
    }

  private:
    void release() {
        if (locked_) locks_.release();
        locked_ = false;
        solo_.drop();
    }
    SoloAdd solo_{nullptr};
    SpanLocks locks_;
    bool locked_ = false;
};
template <class TT, class T, int N, class... O>
inline RowAdd<T> row_add(Ctx& ctx, const Array<T, N>& a, TT& t, bool, O... o) {
    return RowAdd<T>(ctx, a, t, o...);  // (C++17: constructed in place, never moved)
}
template <class TT, class T, int N, class... O>
inline void row_add_finish(Ctx& ctx, RowAdd<T>& adds, const Array<T, N>& a, const TT& t, bool check, O... o) {
    adds.finish(ctx, a, t, check, o...);
}

// Where an element loop adds a tile it computes (or reads) into an array as it goes, for the
// tile_atomic_add right after the loop (codegen/loop_adds.py; tile_sums.h has the form for
// per-thread sums): the array's row itself while the launch's only worker holds the lock-free add
// (Ctx::solo) and the add would go there whole; else `t`, a tile of the add's own, cleared to -0,
// which the add after the loop then adds as before. No lock is held across the loop.
template <class TT, class T, int N, class... O> inline T* loop_add_row(Ctx& ctx, const Array<T, N>& a, TT& t, bool, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    const bool one_row = TT::size == TT::dim(TT::ndim - 1);
    if (ctx.solo && one_row && ctx.leader() && !ctx.partial() && interior_rows<TT>(a, off)) return a.ptr_n(off);
    return cleared(t.data, TT::size);
}
#endif

// Array coordinates of an indexed access: along `axis` the coordinate is indices[i].
template <class TT, class IT, int N>
TL_HD bool indexed_coords(const int* idx, const IT& indices, int axis, const int64_t* off, const int64_t* shape,
                          int64_t* ids) {
    bool ok = true;
    for (int k = 0; k < N; ++k) {
        ids[k] = off[k] + (k == axis ? int64_t(indices.data[idx[k]]) : int64_t(idx[k]));
        ok = ok && ids[k] >= 0 && ids[k] < shape[k];
    }
    return ok;
}

template <class TT, class T, int N, class IT, class... O>
TL_HD void tile_load_indexed(Ctx&, TT& dst, const Array<T, N>& a, const IT& indices, int axis, O... o) {
    int64_t off[N], ids[N];
    int idx[N];
    offsets_of<N>(off, o...);
    for (int e = 0; e < TT::size; ++e) {
        unravel<TT>(e, idx);
        dst.data[e] = indexed_coords<TT, IT, N>(idx, indices, axis, off, a.shape, ids) ? *a.ptr_n(ids) : T(0);
    }
}

template <class TT, class T, int N, class IT, class... O>
TL_HD void tile_store_indexed(Ctx& ctx, const Array<T, N>& a, const IT& indices, const TT& t, int axis, O... o) {
    if (!ctx.leader()) return;
    int64_t off[N], ids[N];
    int idx[N];
    offsets_of<N>(off, o...);
    for (int e = 0; e < TT::size; ++e) {
        unravel<TT>(e, idx);
        if (ctx.live(e) && indexed_coords<TT, IT, N>(idx, indices, axis, off, a.shape, ids)) *a.ptr_n(ids) = t.data[e];
    }
}

template <class TT, class T, int N, class IT, class... O>
TL_HD void tile_atomic_add_indexed(Ctx& ctx, TT& old, const Array<T, N>& a, const IT& indices, const TT& t, int axis,
                                   O... o) {
    if (!ctx.leader()) return;
    int64_t off[N], ids[N];
    int idx[N];
    offsets_of<N>(off, o...);
    for (int e = 0; e < TT::size; ++e) {
        unravel<TT>(e, idx);
        old.data[e] = ctx.live(e) && indexed_coords<TT, IT, N>(idx, indices, axis, off, a.shape, ids)
                          ? atomic_add_ptr(a.ptr_n(ids), t.data[e])
                          : T(0);
    }
}

}  // namespace tl
