// tilec runtime: atomics on array elements and bounds-checked scalar array access.
// Out-of-bounds reads give 0 and out-of-bounds writes are dropped, so a wrong
// index in a kernel never corrupts memory.
#pragma once
#include "lanes.h"

namespace tl {

template <class T, class F> TL_HD T atomic_update(T* p, F f) {
    if constexpr (std::is_integral<T>::value && sizeof(T) >= 4) {
        T old = __atomic_load_n(p, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(p, &old, f(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
        return old;
    } else if constexpr (sizeof(T) == 8) {
        uint64_t* q = reinterpret_cast<uint64_t*>(p);
        uint64_t old_bits = __atomic_load_n(q, __ATOMIC_RELAXED), new_bits;
        T old;
        do {
            std::memcpy(&old, &old_bits, 8);
            T nv = f(old);
            std::memcpy(&new_bits, &nv, 8);
        } while (!__atomic_compare_exchange_n(q, &old_bits, new_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    } else if constexpr (sizeof(T) == 4) {
        uint32_t* q = reinterpret_cast<uint32_t*>(p);
        uint32_t old_bits = __atomic_load_n(q, __ATOMIC_RELAXED), new_bits;
        T old;
        do {
            std::memcpy(&old, &old_bits, 4);
            T nv = f(old);
            std::memcpy(&new_bits, &nv, 4);
        } while (!__atomic_compare_exchange_n(q, &old_bits, new_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    } else if constexpr (sizeof(T) == 2) {
        uint16_t* q = reinterpret_cast<uint16_t*>(p);
        uint16_t old_bits = __atomic_load_n(q, __ATOMIC_RELAXED), new_bits;
        T old;
        do {
            std::memcpy(&old, &old_bits, 2);
            T nv = f(old);
            std::memcpy(&new_bits, &nv, 2);
        } while (!__atomic_compare_exchange_n(q, &old_bits, new_bits, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return old;
    } else {
        T old = *p;  // 1-byte types: no lock-free CAS needed beyond this in practice
        *p = f(old);
        return old;
    }
}

template <class T> TL_HD T atomic_add_ptr(T* p, T v) {
    return atomic_update(p, [v](T o) { return T(compute_t<T>(o) + compute_t<T>(v)); });
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
template <class T, int N, class V, class... I> TL_HD void array_store(Ctx&, const Array<T, N>& a, V v, I... idx) {
    if (in_bounds(a, idx...)) a(idx...) = T(v);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_add(Ctx&, const Array<T, N>& a, V v, I... idx) {
    return in_bounds(a, idx...) ? atomic_add_ptr(a.ptr(idx...), T(v)) : T(0);
}
template <class T, int N, class V, class... I> TL_HD T array_atomic_sub(Ctx&, const Array<T, N>& a, V v, I... idx) {
    return in_bounds(a, idx...) ? atomic_add_ptr(a.ptr(idx...), T(-compute_t<T>(v))) : T(0);
}

// wp.atomic_add(a, i, j, value): the value comes last.
template <class T, int N, class... R> TL_HD T atomic_rmw(int kind, const Array<T, N>& a, R... rest) {
    constexpr int n = sizeof...(R);
    static_assert(n == N + 1, "indices then a value");
    double vals[n] = {double(rest)...};
    int64_t ids[N];
    for (int k = 0; k < N; ++k) ids[k] = int64_t(vals[k]);
    for (int k = 0; k < N; ++k)
        if (ids[k] < 0 || ids[k] >= a.shape[k]) return T(0);
    T v = T(vals[N]);
    T* p = a.ptr_n(ids);
    if (kind == 0) return atomic_add_ptr(p, v);
    if (kind == 1) return atomic_update(p, [v](T o) { return v < o ? v : o; });
    return atomic_update(p, [v](T o) { return o < v ? v : o; });
}
template <class T, int N, class... R> TL_HD T atomic_add(Ctx&, const Array<T, N>& a, R... rest) { return atomic_rmw(0, a, rest...); }
template <class T, int N, class... R> TL_HD T atomic_min(Ctx&, const Array<T, N>& a, R... rest) { return atomic_rmw(1, a, rest...); }
template <class T, int N, class... R> TL_HD T atomic_max(Ctx&, const Array<T, N>& a, R... rest) { return atomic_rmw(2, a, rest...); }

}  // namespace tl
