// tilec runtime: register tiles of the GPU model (.cu code, on the GPU and in the emulation).
// A register tile is spread over the block's BD threads: element e lives in thread (e / 4) % BD,
// slot (e / (4 * BD)) * 4 + e % 4. So each thread holds runs of four neighbouring elements (one
// 16-byte access for float32) and neighbouring runs sit in neighbouring threads (coalesced).
// Every operation here touches only the calling thread's own slots: no barrier, no shared
// memory, except the whole-tile reductions, which combine the threads' partials.
#pragma once
#include "shared_tiles.h"

#if defined(__CUDACC__) || defined(__clang__)
#define TL_UNROLL _Pragma("unroll")
#define TL_UNROLL_4 _Pragma("unroll 4")
#define TL_LOOP _Pragma("unroll 1")
#else
#define TL_UNROLL
#define TL_UNROLL_4
#define TL_LOOP
#endif

namespace tl {

template <int Size, int BD> struct RegLayout {
    static constexpr int run = 4;
    static constexpr int threads = BD;
    static constexpr int runs = (Size + run * BD - 1) / (run * BD);
    static constexpr int slots = runs * run;
    static constexpr bool full = Size % (run * BD) == 0;
    TL_HD static constexpr int element(int slot, int lane) { return ((slot / run) * BD + lane) * run + slot % run; }
    TL_HD static constexpr bool valid(int e) { return full || e < Size; }
};

template <class TT, int BD> struct Reg {
    using tile_type = TT;
    using value_type = typename TT::value_type;
    using layout = RegLayout<TT::size, BD>;
    static constexpr int size = TT::size;
    static constexpr int slots = layout::slots;
    alignas(16) value_type v[slots];
};

// One run of four elements between memory and registers (or shared memory) in vector accesses:
// the memory side is aligned to min(Bytes, 16) (checked by the caller), the other side is a
// 16-byte aligned tile slot.
template <int Bytes> TL_HD void load_run(void* dst, const void* memory) {
#if defined(__CUDA_ARCH__)
    if constexpr (Bytes % 16 == 0) {
        for (int q = 0; q < Bytes / 16; ++q) {
            const uint4 t = reinterpret_cast<const uint4*>(memory)[q];
            memcpy(static_cast<char*>(dst) + 16 * q, &t, 16);
        }
    } else if constexpr (Bytes == 8) {
        const uint2 t = *reinterpret_cast<const uint2*>(memory);
        memcpy(dst, &t, 8);
    } else {
        memcpy(dst, memory, Bytes);
    }
#else
    memcpy(dst, memory, Bytes);
#endif
}
template <int Bytes> TL_HD void store_run(void* memory, const void* src) {
#if defined(__CUDA_ARCH__)
    if constexpr (Bytes % 16 == 0) {
        for (int q = 0; q < Bytes / 16; ++q) {
            uint4 t;
            memcpy(&t, static_cast<const char*>(src) + 16 * q, 16);
            reinterpret_cast<uint4*>(memory)[q] = t;
        }
    } else if constexpr (Bytes == 8) {
        uint2 t;
        memcpy(&t, src, 8);
        *reinterpret_cast<uint2*>(memory) = t;
    } else {
        memcpy(memory, src, Bytes);
    }
#else
    memcpy(memory, src, Bytes);
#endif
}

// Visits this thread's runs of a tile laid out as L, placed at `off` in an array:
// run(first slot, first element, pointer to it) when the whole run lies in one array row, inside the
// array, contiguous and aligned for a vector access; otherwise element(slot, element, coordinates,
// in bounds) for each of its elements. `InRegisters`: the tile side is a register tile, whose
// slots must be compile-time indices (so the checked runs are unrolled too); a shared tile's
// checked runs stay a loop, since unrolled, the compiler would hoist every run's loads ahead
// and spend most registers of the kernel on them (255 for a 64x64 float tile at 128 threads,
// 56 as a loop).
template <class TT, class L, bool InRegisters, class T, int N, class Run, class Elem>
TL_HD void for_each_run(Ctx& ctx, const Array<T, N>& a, const int64_t* off, Run run, Elem elem) {
    static_assert(TT::ndim == N, "tile rank must equal array rank");
    constexpr int W = TT::dim(TT::ndim - 1);
    constexpr int bytes = L::run * int(sizeof(T));
    const bool rows_contiguous = a.strides[N - 1] == int64_t(sizeof(T));
    if constexpr (W % L::run == 0) {
        // the whole tile inside the array, rows contiguous and every run aligned: no per-run checks
        bool whole = rows_contiguous;
        for (int k = 0; k < N; ++k) whole = whole && off[k] >= 0 && off[k] + TT::dim(k) <= a.shape[k];
        int64_t ids0[N];
        for (int k = 0; k < N; ++k) ids0[k] = off[k];
        T* base = a.ptr_n(ids0);
        bool aligned = reinterpret_cast<uintptr_t>(base) % (bytes < 16 ? bytes : 16) == 0;
        for (int k = 0; k + 1 < N; ++k) aligned = aligned && a.strides[k] % (bytes < 16 ? bytes : 16) == 0;
        if (whole && aligned) {
            TL_UNROLL
            for (int r = 0; r < L::runs; ++r) {
                const int e0 = L::element(r * L::run, ctx.lane);
                if (!L::valid(e0)) continue;
                int idx[N];
                unravel<TT>(e0, idx);
                int64_t byte = 0;
                for (int k = 0; k < N; ++k) byte += int64_t(idx[k]) * a.strides[k];
                run(r * L::run, e0, reinterpret_cast<T*>(reinterpret_cast<char*>(base) + byte));
            }
            return;
        }
    }
    const auto checked_run = [&](int r) {
        const int e0 = L::element(r * L::run, ctx.lane);
        if (!L::valid(e0)) return;
        int idx[N];
        int64_t ids[N];
        unravel<TT>(e0, idx);
        bool inside = true;
        for (int k = 0; k < N; ++k) {
            ids[k] = off[k] + idx[k];
            inside = inside && ids[k] >= 0 && ids[k] + (k == N - 1 ? L::run : 1) <= a.shape[k];
        }
        if (W % L::run == 0 && inside && rows_contiguous) {
            T* p = a.ptr_n(ids);
            if (reinterpret_cast<uintptr_t>(p) % (bytes < 16 ? bytes : 16) == 0) {
                run(r * L::run, e0, p);
                return;
            }
        }
        for (int q = 0; q < L::run; ++q) {
            const int e = e0 + q;
            if (!L::valid(e)) break;
            unravel<TT>(e, idx);
            bool ok = true;
            for (int k = 0; k < N; ++k) {
                ids[k] = off[k] + idx[k];
                ok = ok && ids[k] >= 0 && ids[k] < a.shape[k];
            }
            elem(r * L::run + q, e, ids, ok);
        }
    };
    if constexpr (InRegisters) {
        TL_UNROLL
        for (int r = 0; r < L::runs; ++r) checked_run(r);
    } else {
        TL_LOOP
        for (int r = 0; r < L::runs; ++r) checked_run(r);
    }
}

// A tile's storage for one run: a register tile by slot, a shared tile by element.
template <class X> struct tile_of {
    using type = X;
    static constexpr bool in_registers = false;
};
template <class TT, int BD> struct tile_of<Reg<TT, BD>> {
    using type = TT;
    static constexpr bool in_registers = true;
};
template <class TT, int BD> TL_HD typename TT::value_type* at_run(Reg<TT, BD>& r, int s, int) { return r.v + s; }
template <class TT, int BD> TL_HD const typename TT::value_type* at_run(const Reg<TT, BD>& r, int s, int) {
    return r.v + s;
}
template <class T, int... D> TL_HD T* at_run(Tile<T, D...>& t, int, int e) { return t.data + e; }
template <class T, int... D> TL_HD const T* at_run(const Tile<T, D...>& t, int, int e) { return t.data + e; }

// Loads, stores and atomic adds between an array and a tile (register or shared) laid out as L.
template <class L, class X, class T, int N, class... O>
TL_HD void load_runs(Ctx& ctx, X& dst, const Array<T, N>& a, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    for_each_run<typename tile_of<X>::type, L, tile_of<X>::in_registers>(
        ctx, a, off, [&](int s, int e, const T* p) { load_run<L::run * sizeof(T)>(at_run(dst, s, e), p); },
        [&](int s, int e, const int64_t* ids, bool ok) { *at_run(dst, s, e) = ok ? *a.ptr_n(ids) : T(0); });
}
// In a partial block (ctx_cuda.h) stores and atomic adds skip the inactive elements (ctx.live).
template <class L, class X, class T, int N, class... O>
TL_HD void store_runs(Ctx& ctx, const Array<T, N>& a, const X& src, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    const bool partial = ctx.partial();
    for_each_run<typename tile_of<X>::type, L, tile_of<X>::in_registers>(
        ctx, a, off,
        [&](int s, int e, T* p) {
            if (!partial) return store_run<L::run * sizeof(T)>(p, at_run(src, s, e));
            const T* v = at_run(src, s, e);
            for (int q = 0; q < L::run; ++q)
                if (ctx.live(e + q)) p[q] = v[q];
        },
        [&](int s, int e, const int64_t* ids, bool ok) {
            if (ok && (!partial || ctx.live(e))) *a.ptr_n(ids) = *at_run(src, s, e);
        });
}
// a[off + tile] += src, element by element (the old values are not kept).
template <class L, class X, class T, int N, class... O>
TL_HD void atomic_add_runs(Ctx& ctx, const Array<T, N>& a, const X& src, O... o) {
    int64_t off[N];
    offsets_of<N>(off, o...);
    for_each_run<typename tile_of<X>::type, L, tile_of<X>::in_registers>(
        ctx, a, off, [&](int s, int e, T* p) {
            const T* v = at_run(src, s, e);
            for (int q = 0; q < L::run; ++q)
                if (ctx.live(e + q)) atomic_add_ptr(p + q, v[q]);
        },
        [&](int s, int e, const int64_t* ids, bool ok) {
            if (ok && ctx.live(e)) atomic_add_ptr(a.ptr_n(ids), *at_run(src, s, e));
        });
}

template <class RT, class T, int N, class... O>
TL_HD void reg_tile_load(Ctx& ctx, RT& dst, const Array<T, N>& a, bool, O... o) {
    load_runs<typename RT::layout>(ctx, dst, a, o...);
}
template <class RT, class T, int N, class... O>
TL_HD void reg_tile_store(Ctx& ctx, const Array<T, N>& a, const RT& src, bool, O... o) {
    store_runs<typename RT::layout>(ctx, a, src, o...);
}
template <class RT, class T, int N, class... O>
TL_HD void reg_tile_atomic_add(Ctx& ctx, const Array<T, N>& a, const RT& src, bool, O... o) {
    atomic_add_runs<typename RT::layout>(ctx, a, src, o...);
}

// Shared tiles, loaded, stored and atomically added by the block's BD threads in runs laid out
// as register tiles are (coalesced, vector accesses where aligned). The caller synchronises.
template <int BD, class TT, class T, int N, class... O>
TL_HD void coop_tile_load(Ctx& ctx, TT& dst, const Array<T, N>& a, bool, O... o) {
    load_runs<RegLayout<TT::size, BD>>(ctx, dst, a, o...);
}
template <int BD, class TT, class T, int N, class... O>
TL_HD void coop_tile_store(Ctx& ctx, const Array<T, N>& a, const TT& t, bool, O... o) {
    store_runs<RegLayout<TT::size, BD>>(ctx, a, t, o...);
}
template <int BD, class TT, class T, int N, class... O>
TL_HD void coop_tile_atomic_add(Ctx& ctx, const Array<T, N>& a, const TT& t, bool, O... o) {
    atomic_add_runs<RegLayout<TT::size, BD>>(ctx, a, t, o...);
}

template <class RT, class V> TL_HD void reg_fill(Ctx&, RT& dst, V value) {
    TL_UNROLL
    for (int s = 0; s < RT::slots; ++s) dst.v[s] = typename RT::value_type(value);
}

// C = alpha * A @ B + beta * C with C in registers, A and B in shared memory: each thread computes
// its own runs, which share a row of A when B's width is a multiple of the run. When every run of
// a thread lies in the same four columns (4 * BD a multiple of B's width), the thread's runs form
// a register block: each step of k reads those four elements of B once for all its runs (one
// 16-byte shared load for float) and one element of A per run, instead of both per run. Each
// element's sum runs over k in the same order either way.
template <class RT, class AT, class BT>
TL_HD void reg_tile_matmul(Ctx& ctx, RT& c, const AT& a, const BT& b, double alpha, double beta) {
    using T = typename RT::value_type;
    using Acc = compute_t<T>;
    using L = typename RT::layout;
    constexpr int K = AT::dim(1), N = BT::dim(1);
    constexpr int R = N % L::run == 0 ? L::run : 1;  // elements per row step
    if constexpr (R == L::run && (L::run * L::threads) % N == 0 && L::runs > 1) {
        constexpr int RUNS = L::runs, ROWS_APART = L::run * L::threads / N;
        const int first = L::run * ctx.lane;  // element of the first run
        const int j = first % N, i0 = first / N;
        // only the last run can fall past the tile's end; it then computes row 0, never stored
        const bool last_valid = L::valid(L::element((RUNS - 1) * R, ctx.lane));
        int rows[RUNS];
        TL_UNROLL
        for (int r = 0; r < RUNS; ++r) rows[r] = (r + 1 < RUNS || last_valid) ? (i0 + r * ROWS_APART) * K : 0;
        Acc acc[RUNS][R] = {};
        // four k steps per pass: A's four elements of a row in one 16-byte shared load (in the
        // PTX of a 64x64 float GEMM, one shared load per 7-11 FMAs, against one per 4-5 without)
        TL_UNROLL_4
        for (int k = 0; k < K; ++k) {
            Acc bv[R];
            TL_UNROLL
            for (int q = 0; q < R; ++q) bv[q] = Acc(b.data[k * N + j + q]);
            TL_UNROLL
            for (int r = 0; r < RUNS; ++r) {
                const Acc av = Acc(a.data[rows[r] + k]);
                TL_UNROLL
                for (int q = 0; q < R; ++q) acc[r][q] += av * bv[q];
            }
        }
        TL_UNROLL
        for (int r = 0; r < RUNS; ++r) {
            if (r + 1 == RUNS && !last_valid) continue;
            TL_UNROLL
            for (int q = 0; q < R; ++q) {
                const Acc v = Acc(alpha) * acc[r][q];
                c.v[r * R + q] = T(beta == 0.0 ? v : v + Acc(beta) * Acc(c.v[r * R + q]));
            }
        }
        return;
    }
    TL_UNROLL
    for (int s0 = 0; s0 < L::slots; s0 += R) {
        const int e0 = L::element(s0, ctx.lane);
        if (!L::valid(e0)) continue;
        const int i = e0 / N, j = e0 % N;
        Acc acc[R] = {};
        for (int k = 0; k < K; ++k) {
            const Acc av = Acc(a.data[i * K + k]);
            TL_UNROLL
            for (int q = 0; q < R; ++q) acc[q] += av * Acc(b.data[k * N + j + q]);
        }
        TL_UNROLL
        for (int q = 0; q < R; ++q) {
            const Acc v = Acc(alpha) * acc[q];
            c.v[s0 + q] = T(beta == 0.0 ? v : v + Acc(beta) * Acc(c.v[s0 + q]));
        }
    }
}

// Whether thread `lane` holds an element of a register tile laid out as L that is active (ctx.live).
template <class L> TL_HD bool holds_live(const Ctx& ctx, int lane) {
    for (int s = 0; s < L::slots; ++s) {
        const int e = L::element(s, lane);
        if (L::valid(e) && ctx.live(e)) return true;
    }
    return false;
}

// A whole-tile reduction of a register tile into element 0 of a shared tile: each thread folds
// its slots, then the leader folds the threads' partials (in `scratch`, BD compute values). In a
// partial block (ctx_cuda.h) only active elements count, and only threads holding one give a
// partial (element 0 is always active, so the leader's fold has one).
template <class DT, class RT, class F>
TL_HD void reg_fold(Ctx& ctx, DT& dst, const RT& src, unsigned char* scratch, F f) {
    using C = compute_t<typename RT::value_type>;
    using L = typename RT::layout;
    const bool partial = ctx.partial();
    C acc = C(src.v[0]);
    bool got = !partial || ctx.live(L::element(0, ctx.lane));
    TL_UNROLL
    for (int s = 1; s < L::slots; ++s) {
        const int e = L::element(s, ctx.lane);
        if (!L::valid(e) || (partial && !ctx.live(e))) continue;
        acc = got ? f(acc, C(src.v[s])) : C(src.v[s]);
        got = true;
    }
    C* partials = reinterpret_cast<C*>(scratch);
    const int holders = (RT::size + L::run - 1) / L::run < ctx.nlanes ? (RT::size + L::run - 1) / L::run : ctx.nlanes;
    ctx.sync();
    if (ctx.lane < holders) partials[ctx.lane] = acc;
    ctx.sync();
    if (ctx.leader()) {
        C total = partials[0];
        for (int l = 1; l < holders; ++l)
            if (!partial || holds_live<L>(ctx, l)) total = f(total, partials[l]);
        dst.data[0] = typename DT::value_type(total);
    }
    ctx.sync();
}
template <class DT, class RT> TL_HD void reg_tile_sum(Ctx& ctx, DT& dst, const RT& src, unsigned char* scratch) {
    reg_fold(ctx, dst, src, scratch, [](auto x, auto y) { return x + y; });
}
template <class DT, class RT> TL_HD void reg_tile_max(Ctx& ctx, DT& dst, const RT& src, unsigned char* scratch) {
    reg_fold(ctx, dst, src, scratch, [](auto x, auto y) { return x < y ? y : x; });
}
template <class DT, class RT> TL_HD void reg_tile_min(Ctx& ctx, DT& dst, const RT& src, unsigned char* scratch) {
    reg_fold(ctx, dst, src, scratch, [](auto x, auto y) { return y < x ? y : x; });
}

}  // namespace tl
