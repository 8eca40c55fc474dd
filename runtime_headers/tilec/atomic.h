// tilec runtime: atomics on array elements and bounds-checked scalar array access.
// Out-of-bounds reads give 0 and out-of-bounds writes are dropped, so a wrong
// index in a kernel never corrupts memory.
#pragma once
#include <atomic>
#include <type_traits>

#include "ctx.h"
#include "workers.h"

namespace tl {

// Atomics on the CPU lock the 512-byte span of memory they touch, from a striped table: element
// updates and whole-row tile adds (memory.h) then exclude each other consistently, and a row
// adds as plain vector code under one lock per span instead of a CAS per element. (A span, not a
// 64-byte line: each lock is a serialising instruction that waits for the stores before it, so
// a tile row of 64 floats takes one or two locks instead of four.)
#if !defined(__CUDA_ARCH__)
struct LineLock {
    static constexpr int SPAN_BYTES = 512, TABLE = 4096;
    static std::atomic<unsigned char>* table() {
        static std::atomic<unsigned char> locks[TABLE];
        return locks;
    }
    static uintptr_t line(const void* p) { return reinterpret_cast<uintptr_t>(p) / SPAN_BYTES; }
    std::atomic<unsigned char>* lock;
    explicit LineLock(uintptr_t line_index) : lock(table() + (line_index % TABLE)) {
        while (lock->exchange(1, std::memory_order_acquire)) {}
    }
    ~LineLock() { lock->store(0, std::memory_order_release); }
};

// The locks of every span a whole tile add touches, taken together before any of its adds and
// released after all of them. Taking one lock per row between the rows' adds made each lock
// wait for the previous row's stores (cache misses on a gradient array) to drain: the adds ran
// one miss at a time, and a 64 x 64 tile add of a GEMM adjoint cost as much as both of its
// products. Locks are taken in ascending table order (each at most once), so two tile adds
// cannot deadlock, and an element atomic holds a single lock.
struct SpanLocks {
    static constexpr int TABLE = LineLock::TABLE, WORDS = TABLE / 64;
    static_assert(WORDS <= 64, "one bit of `used` per word of `bits`");
    uint64_t used = 0;     // which words of `bits` hold locks (the others are never read: no clearing)
    uint64_t bits[WORDS];  // bit s % 64 of word s / 64: lock s of the table is needed
    void add(const void* p, size_t bytes) {
        const uintptr_t first = LineLock::line(p), last = LineLock::line(static_cast<const char*>(p) + bytes - 1);
        for (uintptr_t s = first; s <= last; ++s) {
            const int w = int(s % TABLE) / 64;
            if (!(used >> w & 1)) bits[w] = 0;
            used |= uint64_t(1) << w;
            bits[w] |= uint64_t(1) << (s % 64);
        }
    }
    template <class F> void each(F&& f) const {
        for (uint64_t u = used; u; u &= u - 1) {
            const int w = __builtin_ctzll(u);
            for (uint64_t b = bits[w]; b; b &= b - 1) f(LineLock::table()[w * 64 + __builtin_ctzll(b)]);
        }
    }
    void acquire() const {
        each([](std::atomic<unsigned char>& lock) {
            while (lock.exchange(1, std::memory_order_acquire)) {}
        });
    }
    void release() const {
        each([](std::atomic<unsigned char>& lock) { lock.store(0, std::memory_order_release); });
    }
};

// SoloAdd, a tile add's exclusion without locks for the only worker running: workers.h.
#endif

template <class T, class F> TL_HD T atomic_update(T* p, F f) {
#if defined(__CUDA_ARCH__)
    static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "GPU atomics on 2-, 4- and 8-byte types");
    if constexpr (sizeof(T) == 2) {  // float16: compare-and-swap the aligned 4-byte word holding it
        unsigned int* word = reinterpret_cast<unsigned int*>(reinterpret_cast<size_t>(p) & ~size_t(3));
        const int shift = (reinterpret_cast<size_t>(p) & 2) ? 16 : 0;
        unsigned int old_word = *word, assumed;
        unsigned short bits;
        T old;
        do {
            assumed = old_word;
            bits = (unsigned short)(assumed >> shift);
            memcpy(&old, &bits, 2);
            T nv = f(old);
            unsigned short new_bits;
            memcpy(&new_bits, &nv, 2);
            old_word = atomicCAS(word, assumed, (assumed & ~(0xFFFFu << shift)) | ((unsigned int)new_bits << shift));
        } while (old_word != assumed);
        bits = (unsigned short)(old_word >> shift);
        memcpy(&old, &bits, 2);
        return old;
    }
    using U = typename std::conditional<sizeof(T) == 4, unsigned int, unsigned long long>::type;
    U* q = reinterpret_cast<U*>(p);
    U old_bits = *q, assumed;
    T old;
    do {
        assumed = old_bits;
        memcpy(&old, &assumed, sizeof(T));
        T nv = f(old);
        U new_bits;
        memcpy(&new_bits, &nv, sizeof(T));
        old_bits = atomicCAS(q, assumed, new_bits);
    } while (old_bits != assumed);
    memcpy(&old, &old_bits, sizeof(T));
    return old;
#else
    LineLock guard(LineLock::line(p));
    T old = *p;
    *p = f(old);
    return old;
#endif
}

template <class T> TL_HD T atomic_add_ptr(T* p, T v) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, int>::value ||
                  std::is_same<T, unsigned>::value || std::is_same<T, unsigned long long>::value)
        return atomicAdd(p, v);  // the hardware's own add (no compare-and-swap loop)
#endif
    return atomic_update(p, [v](T o) { return T(compute_t<T>(o) + compute_t<T>(v)); });
}

// dst[q] += src[q] for q < n, atomically line by line; old values into old_out (unless it is null:
// an adjoint's accumulation reads none, and storing them would cost as much as the add).
template <class T> TL_HD void atomic_add_row(T* dst, const T* src, T* old_out, int n) {
#if defined(__CUDA_ARCH__)
    for (int q = 0; q < n; ++q) {
        const T old = atomic_add_ptr(dst + q, src[q]);
        if (old_out) old_out[q] = old;
    }
#else
    int q = 0;
    while (q < n) {  // the elements of dst + q's span: up to the next span boundary
        const uintptr_t at = reinterpret_cast<uintptr_t>(dst + q);
        const int in_line = int((LineLock::SPAN_BYTES - at % LineLock::SPAN_BYTES) / sizeof(T));
        const int end = q + (in_line > 0 ? in_line : 1) < n ? q + (in_line > 0 ? in_line : 1) : n;
        LineLock guard(LineLock::line(dst + q));
        if (old_out)
            for (int r = q; r < end; ++r) old_out[r] = dst[r];
        for (int r = q; r < end; ++r) dst[r] = T(compute_t<T>(dst[r]) + compute_t<T>(src[r]));
        q = end;
    }
#endif
}

template <class T, int N, class... I> TL_HD bool in_bounds(const Array<T, N>& a, I... idx) {
    int64_t ids[N] = {int64_t(idx)...};
    for (int k = 0; k < N; ++k)
        if (ids[k] < 0 || ids[k] >= a.shape[k]) return false;
    return true;
}

template <class T, int N, class... I> TL_HD T array_load(const Array<T, N>& a, I... idx) {
    return in_bounds(a, idx...) ? a(idx...) : T(0);
}
// An array held in an array of structs (`ps[i].data`, an array of descriptors): out of bounds (or
// an adjoint the launch was not given) an empty array, so every access through it is out of bounds.
template <class T, int M, int N, class... I> TL_HD Array<T, M> array_load(const Array<Array<T, M>, N>& a, I... idx) {
    return in_bounds(a, idx...) ? a(idx...) : Array<T, M>();
}
// wp.lower_bound(a, value) / (a, begin, end, value) of a sorted array: Warp's search, which gives
// the last index of the range (not its end) when every element is below value.
template <class T, class V> TL_HD int32_t lower_bound(const Array<T, 1>& a, int64_t begin, int64_t end, V value) {
    const T v = T(value);
    int64_t lower = begin, upper = end - 1;
    while (lower < upper) {
        const int64_t mid = lower + (upper - lower) / 2;
        if (array_load(a, mid) < v) lower = mid + 1;
        else upper = mid;
    }
    return int32_t(lower);
}
template <class T, class V> TL_HD int32_t lower_bound(const Array<T, 1>& a, V value) {
    return lower_bound(a, 0, a.shape[0], value);
}
// A stand-in thread of a partial block (ctx_cuda.h) writes nothing: each write below checks it.
template <class T, int N, class V, class... I> TL_HD void array_store(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    if (!ctx.standin() && in_bounds(a, idx...)) a(idx...) = T(v);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_add(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_add_ptr(a.ptr(idx...), T(v)) : T(0);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_sub(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_add_ptr(a.ptr(idx...), T(-compute_t<T>(v))) : T(0);
}

// a[i] &= v, |= v, ^= v on integer arrays (arrays of integer vectors and matrices component by
// component: vec.h's overloads, as Warp's).
template <class T> TL_HD T atomic_bit_ptr(T* p, T w, char op) {
    return atomic_update(p, [w, op](T o) { return T(op == '&' ? (o & w) : op == '|' ? (o | w) : (o ^ w)); });
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_and(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_bit_ptr(a.ptr(idx...), T(v), '&') : T(0);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_or(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_bit_ptr(a.ptr(idx...), T(v), '|') : T(0);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_xor(Ctx& ctx, const Array<T, N>& a, V v, I... idx) {
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_bit_ptr(a.ptr(idx...), T(v), '^') : T(0);
}

// wp.atomic_add(a, i, j, value): the value comes last (split_last puts the indices into ids).
template <class T> TL_HD void split_last(int64_t*, T& value, const T& v) { value = v; }
template <class T, class V> TL_HD void split_last(int64_t*, T& value, const V& v) { value = T(v); }
template <class T, class F, class S, class... R> TL_HD void split_last(int64_t* ids, T& value, const F& first, const S& second, const R&... rest) {
    ids[0] = int64_t(first);
    split_last(ids + 1, value, second, rest...);
}
// min / max of one scalar element, atomically (vec.h: a vector's or matrix's component by component)
template <class T> TL_HD T atomic_extreme_ptr(T* p, T v, int kind) {
    if (kind == 1) return atomic_update(p, [v](T o) { return v < o ? v : o; });
    return atomic_update(p, [v](T o) { return o < v ? v : o; });
}
template <class T, int N, class... R> TL_HD T atomic_rmw(int kind, const Array<T, N>& a, R... rest) {
    static_assert(sizeof...(R) == N + 1, "indices then a value");
    int64_t ids[N];
    T v{};
    split_last(ids, v, rest...);
    for (int k = 0; k < N; ++k)
        if (ids[k] < 0 || ids[k] >= a.shape[k]) return T(0);
    T* p = a.ptr_n(ids);
    return kind == 0 ? atomic_add_ptr(p, v) : atomic_extreme_ptr(p, v, kind);
}
template <class T, int N, class... R> TL_HD T atomic_add(Ctx& ctx, const Array<T, N>& a, R... rest) {
    return ctx.standin() ? T(0) : atomic_rmw(0, a, rest...);
}
template <class T, int N, class... R> TL_HD T atomic_min(Ctx& ctx, const Array<T, N>& a, R... rest) {
    return ctx.standin() ? T(0) : atomic_rmw(1, a, rest...);
}
template <class T, int N, class... R> TL_HD T atomic_max(Ctx& ctx, const Array<T, N>& a, R... rest) {
    return ctx.standin() ? T(0) : atomic_rmw(2, a, rest...);
}

// wp.atomic_cas(a, i, j, compare, value) / wp.atomic_exch(a, i, j, value), emitted with the values
// before the indices. The comparison is C++'s ==, as Warp's CPU build compares.
template <class T, int N, class C, class V, class... I>
TL_HD T atomic_cas(Ctx& ctx, const Array<T, N>& a, C compare, V value, I... idx) {
    const T c = T(compare), v = T(value);
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_update(a.ptr(idx...), [c, v](T o) { return o == c ? v : o; }) : T(0);
}
template <class T, int N, class V, class... I> TL_HD T atomic_exch(Ctx& ctx, const Array<T, N>& a, V value, I... idx) {
    const T v = T(value);
    return !ctx.standin() && in_bounds(a, idx...) ? atomic_update(a.ptr(idx...), [v](T) { return v; }) : T(0);
}

// The adjoint of a store to an element that several threads, or a block's lanes, may store alike:
// the first to arrive takes the element's adjoint and leaves zero (an atomic exchange), so the
// seed is counted once however the threads interleave (a plain read then zero is not, on a GPU).
// A vector's or matrix's components (its `c` array): a GPU takes them one at a time, its atomics being of 2, 4 or
// 8 bytes (each component's adjoint is still taken once).
template <class T, class = void> struct has_components : std::false_type {};
template <class T> struct has_components<T, decltype(void(std::declval<T&>().c[0]))> : std::true_type {};

template <class T> TL_HD T atomic_take(T* p) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) > 8 && has_components<T>::value) {
        T out;
        constexpr int n = int(sizeof(p->c) / sizeof(p->c[0]));
        for (int k = 0; k < n; ++k) out.c[k] = atomic_take(&p->c[k]);
        return out;
    } else {
        return atomic_update(p, [](T) { return T(0); });
    }
#else
    return atomic_update(p, [](T) { return T(0); });
#endif
}

template <class T, int N, class... I> TL_HD T array_take(Ctx& ctx, const Array<T, N>& adj, I... idx) {
    return !ctx.standin() && adj.data && in_bounds(adj, idx...) ? atomic_take(adj.ptr(idx...)) : T(0);
}

// The adjoint of atomic_min/atomic_max(a, indices..., value): `final` holds every element as the
// launch left it. A thread whose value equals its element's final value won; the first winner to
// arrive takes the element's adjoint and leaves zero (an atomic exchange), so tied winners share
// one gradient and the value the element held before (which lost) gets none. Returns what it took.
template <class T> TL_HD T extreme_take_ptr(const T* final_value, T* adj, T v) {
    if (!(compute_t<T>(v) == compute_t<T>(*final_value))) return T(0);
    return atomic_update(adj, [](T) { return T(0); });
}
template <class T, int N, class... R>
TL_HD T extreme_take(Ctx& ctx, const Array<T, N>& final_values, const Array<T, N>& adj, R... rest) {
    static_assert(sizeof...(R) == N + 1, "indices then a value");
    if (ctx.standin()) return T(0);
    int64_t ids[N];
    T v{};
    split_last(ids, v, rest...);
    for (int k = 0; k < N; ++k)
        if (ids[k] < 0 || ids[k] >= final_values.shape[k] || ids[k] >= adj.shape[k]) return T(0);
    if (!adj.data) return T(0);
    return extreme_take_ptr(final_values.ptr_n(ids), adj.ptr_n(ids), v);  // vec.h: component by component
}

}  // namespace tl
