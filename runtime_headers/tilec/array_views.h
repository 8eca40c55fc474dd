// Array views: A[i] of an n-d array is an (n-1)-d array; slices A[a:b:s] keep the axis with a new
// start, extent and stride (Python's slice rules: negative bounds count from the end, bounds clamp).
// A view shares the parent's memory, so its adjoint is the same view of the parent's adjoint.
#pragma once
#include "core.h"

namespace tl {

// The first index and the length of a[start:stop:step] on an axis of extent n (Python's rules). A step
// known only at run time may be zero: an empty view (Python raises, Warp asserts; never a trap here).
TL_HD void slice_bounds(int64_t n, bool has_start, int64_t start, bool has_stop, int64_t stop,
                               int64_t step, int64_t& first, int64_t& len) {
    if (step == 0) {
        first = len = 0;
        return;
    }
    const int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
    auto clamp = [&](int64_t v) {
        if (v < 0) v += n;
        return v < lower ? lower : (v > upper ? upper : v);
    };
    first = has_start ? clamp(start) : (step > 0 ? lower : upper);
    const int64_t last = has_stop ? clamp(stop) : (step > 0 ? upper : lower);
    if (step > 0) len = last > first ? (last - first + step - 1) / step : 0;
    else len = first > last ? (first - last - step - 1) / (-step) : 0;
}

// Builds a view axis by axis: at(i) drops an axis, slice(...) keeps it; array_view_done<M> keeps the rest.
template <class T, int N> struct ArrayViewBuilder {
    char* base;
    int64_t shape[N];
    int64_t strides[N];
    int in = 0;  // next axis of the parent
    int out = 0;  // axes of the view so far
    TL_HD explicit ArrayViewBuilder(const Array<T, N>& a) : base(reinterpret_cast<char*>(a.data)) {
        for (int k = 0; k < N; ++k) { shape[k] = a.shape[k]; strides[k] = a.strides[k]; }
    }
    TL_HD ArrayViewBuilder& at(int64_t i) {
        base += i * strides[in];
        ++in;
        return *this;
    }
    TL_HD ArrayViewBuilder& slice(bool has_start, int64_t start, bool has_stop, int64_t stop, int64_t step) {
        int64_t first = 0, len = 0;
        slice_bounds(shape[in], has_start, start, has_stop, stop, step, first, len);
        base += first * strides[in];
        shape[out] = len;
        strides[out] = strides[in] * step;
        ++in;
        ++out;
        return *this;
    }
};

template <class T, int N> TL_HD ArrayViewBuilder<T, N> array_view(const Array<T, N>& a) {
    return ArrayViewBuilder<T, N>(a);
}

template <int M, class T, int N> TL_HD Array<T, M> array_view_done(const ArrayViewBuilder<T, N>& b) {
    Array<T, M> v;
    v.data = reinterpret_cast<T*>(b.base);
    int k = 0;
    for (; k < b.out; ++k) { v.shape[k] = b.shape[k]; v.strides[k] = b.strides[k]; }
    for (int j = b.in; j < N && k < M; ++j, ++k) { v.shape[k] = b.shape[j]; v.strides[k] = b.strides[j]; }
    return v;
}

}  // namespace tl
