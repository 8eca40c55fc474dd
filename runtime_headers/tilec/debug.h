// tilec runtime: print, the expect_* checks and assert (ops/debug.py).
// print formats scalars as Warp does (%g for floats, True/False for bools), one line per call.
// assert_check is compiled in only with TILEC_DEBUG (tilec build --debug): on the CPU and in the
// CUDA emulation a failure prints its message to stderr and the launch returns
// TILEC_ASSERT_FAILED, which the loader raises as AssertionError; on a GPU it prints and traps.
#pragma once
#include <atomic>
#include <cstdio>

#include "core.h"
#include "ctx.h"
#include "vec.h"

#define TILEC_ASSERT_FAILED 3

namespace tl {

TL_HD void print_line(float v) { printf("%g\n", double(v)); }
TL_HD void print_line(double v) { printf("%g\n", v); }
TL_HD void print_line(half v) { printf("%g\n", double(float(v))); }
TL_HD void print_line(bfloat16 v) { printf("%g\n", double(float(v))); }
TL_HD void print_line(bool v) { printf(v ? "True\n" : "False\n"); }
TL_HD void print_line(int8_t v) { printf("%d\n", int(v)); }
TL_HD void print_line(int16_t v) { printf("%d\n", int(v)); }
TL_HD void print_line(int32_t v) { printf("%d\n", int(v)); }
TL_HD void print_line(int64_t v) { printf("%lld\n", (long long)v); }
TL_HD void print_line(uint8_t v) { printf("%u\n", unsigned(v)); }
TL_HD void print_line(uint16_t v) { printf("%u\n", unsigned(v)); }
TL_HD void print_line(uint32_t v) { printf("%u\n", unsigned(v)); }
TL_HD void print_line(uint64_t v) { printf("%llu\n", (unsigned long long)v); }

// A stand-in thread of a partial block (ctx_cuda.h) prints and checks nothing.
// print(t) of a tile, as Warp 1.19 prints it: the leader prints the whole tile once per block,
// rows in brackets, values one space apart, a 2-d level's rows on new lines indented by ndim - 1,
// higher levels a blank line apart, then ` = tile(shape=(d0,d1), storage=<Warp's storage>)`.
TL_HD void print_bare(float v) { printf("%g", double(v)); }
TL_HD void print_bare(double v) { printf("%g", v); }
TL_HD void print_bare(half v) { printf("%g", double(float(v))); }
TL_HD void print_bare(bfloat16 v) { printf("%g", double(float(v))); }
TL_HD void print_bare(bool v) { printf(v ? "True" : "False"); }
TL_HD void print_bare(int8_t v) { printf("%d", int(v)); }
TL_HD void print_bare(int16_t v) { printf("%d", int(v)); }
TL_HD void print_bare(int32_t v) { printf("%d", int(v)); }
TL_HD void print_bare(int64_t v) { printf("%lld", (long long)v); }
TL_HD void print_bare(uint8_t v) { printf("%u", unsigned(v)); }
TL_HD void print_bare(uint16_t v) { printf("%u", unsigned(v)); }
TL_HD void print_bare(uint32_t v) { printf("%u", unsigned(v)); }
TL_HD void print_bare(uint64_t v) { printf("%llu", (unsigned long long)v); }

template <class TT> TL_HD void print_tile_level(const TT& t, int level, int index) {
    constexpr int N = TT::ndim;
    int stride = 1;
    for (int k = level + 1; k < N; ++k) stride *= TT::dim(k);
    printf("[");
    for (int i = 0; i < TT::dim(level); ++i) {
        if (level == N - 1) print_bare(t.data[index + i]);
        else print_tile_level(t, level + 1, index + i * stride);
        if (i + 1 == TT::dim(level)) continue;
        if (level == N - 1) printf(" ");
        else printf(level == N - 2 ? "\n" : "\n\n");
        for (int k = 0; level < N - 1 && k < (level == N - 2 ? N - 1 : level + 1); ++k) printf(" ");
    }
    printf("]");
}
template <class TT> TL_HD void print_tile(Ctx& ctx, const TT& t, const char* storage) {
    if (!ctx.leader() || ctx.standin()) return;
    print_tile_level(t, 0, 0);
    printf(" = tile(shape=(");
    for (int k = 0; k < TT::ndim; ++k) printf(k + 1 < TT::ndim ? "%d," : "%d", TT::dim(k));
    printf("), storage=%s)\n", storage);
}

template <class T> TL_HD void print_value(Ctx& ctx, T v) {
    if (!ctx.standin()) print_line(v);
}

// print_format: a format frontend/printing.py checked against its arguments (integers as %lld,
// floats as double); the trailing 0 keeps a format without arguments from being a bare string.
template <class T> TL_HD long long print_arg(T v, std::true_type) { return (long long)v; }
template <class T> TL_HD double print_arg(T v, std::false_type) { return double(compute_t<T>(v)); }
template <class T> TL_HD auto print_arg(T v) { return print_arg(v, std::is_integral<T>{}); }
template <class... A> TL_HD void print_format(Ctx& ctx, const char* format, A... values) {
    if (!ctx.standin()) printf(format, print_arg(values)..., 0);
}

template <class A, class B> TL_HD void expect_eq(Ctx& ctx, A actual, B expected_in) {
    if (ctx.standin()) return;
    const A expected = A(expected_in);
    if (!(compute_t<A>(actual) == compute_t<A>(expected))) {
        printf("Error, expect_eq() failed:\n\t Expected: ");
        print_line(expected);
        printf("\t Actual: ");
        print_line(actual);
    }
}

template <class A, class B> TL_HD void expect_neq(Ctx& ctx, A actual, B expected_in) {
    if (ctx.standin()) return;
    const A expected = A(expected_in);
    if (compute_t<A>(actual) == compute_t<A>(expected)) {
        printf("Error, expect_neq() failed:\n\t Expected: ");
        print_line(expected);
        printf("\t Actual: ");
        print_line(actual);
    }
}

template <class A, class B, class C> TL_HD void expect_near(Ctx& ctx, A actual, B expected_in, C tolerance_in) {
    if (ctx.standin()) return;
    using T = compute_t<A>;
    const T a = T(actual), e = T(compute_t<B>(expected_in)), tol = T(compute_t<C>(tolerance_in));
    const T diff = a > e ? a - e : e - a;
    if (diff > tol) {
        printf("Error, expect_near() failed with tolerance ");
        print_line(tol);
        printf("    Expected: ");
        print_line(e);
        printf("    Actual: ");
        print_line(a);
        printf("    Absolute difference: ");
        print_line(diff);
    }
}

// The expect_* checks of vectors and matrices, reported as Warp prints them: each component and a
// space, a matrix row per line; expect_near's difference is the largest over the components.
template <int N, class T> TL_HD void print_line(const vec<N, T>& v) {
    for (int i = 0; i < N; ++i) {
        print_bare(v.c[i]);
        printf(" ");
    }
    printf("\n");
}
template <int M, int N, class T> TL_HD void print_line(const mat<M, N, T>& m) {
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            print_bare(m.c[i * N + j]);
            printf(" ");
        }
        printf("\n");
    }
}
template <class V> TL_HD bool components_equal(const V& a, const V& b) {
    for (int i = 0; i < int(sizeof(a.c) / sizeof(a.c[0])); ++i)
        if (!(compute_t<decltype(+a.c[0])>(a.c[i]) == compute_t<decltype(+a.c[0])>(b.c[i]))) return false;
    return true;
}
template <class V> TL_HD void expect_values(Ctx& ctx, const V& actual, const V& expected, bool want_equal) {
    if (ctx.standin() || components_equal(actual, expected) == want_equal) return;
    printf(want_equal ? "Error, expect_eq() failed:\n\t Expected: " : "Error, expect_neq() failed:\n\t Expected: ");
    print_line(expected);
    printf("\t Actual: ");
    print_line(actual);
}
template <int N, class T> TL_HD void expect_eq(Ctx& ctx, const vec<N, T>& a, const vec<N, T>& e) { expect_values(ctx, a, e, true); }
template <int M, int N, class T> TL_HD void expect_eq(Ctx& ctx, const mat<M, N, T>& a, const mat<M, N, T>& e) {
    expect_values(ctx, a, e, true);
}
template <int N, class T> TL_HD void expect_neq(Ctx& ctx, const vec<N, T>& a, const vec<N, T>& e) { expect_values(ctx, a, e, false); }
template <int M, int N, class T> TL_HD void expect_neq(Ctx& ctx, const mat<M, N, T>& a, const mat<M, N, T>& e) {
    expect_values(ctx, a, e, false);
}
template <class V, class C> TL_HD void expect_values_near(Ctx& ctx, const V& actual, const V& expected, C tolerance_in) {
    if (ctx.standin()) return;
    using T = compute_t<decltype(+actual.c[0])>;
    const T tol = T(compute_t<C>(tolerance_in));
    T largest = T(0);
    for (int i = 0; i < int(sizeof(actual.c) / sizeof(actual.c[0])); ++i) {
        const T a = T(actual.c[i]), e = T(expected.c[i]);
        const T diff = a > e ? a - e : e - a;
        largest = diff > largest ? diff : largest;
    }
    if (largest > tol) {
        printf("Error, expect_near() failed with tolerance ");
        print_line(tol);
        printf("    Expected: ");
        print_line(expected);
        printf("    Actual: ");
        print_line(actual);
        printf("    Max absolute difference: ");
        print_line(largest);
    }
}
template <int N, class T, class C> TL_HD void expect_near(Ctx& ctx, const vec<N, T>& a, const vec<N, T>& e, C tol) {
    expect_values_near(ctx, a, e, tol);
}
template <int M, int N, class T, class C> TL_HD void expect_near(Ctx& ctx, const mat<M, N, T>& a, const mat<M, N, T>& e, C tol) {
    expect_values_near(ctx, a, e, tol);
}

#if !defined(__CUDA_ARCH__)
// Failed asserts since the last launch_status(); one counter per generated library.
inline std::atomic<int>& assert_failures() {
    static std::atomic<int> count{0};
    return count;
}
#endif

// A launch's return code: TILEC_ASSERT_FAILED when an assert failed in it, else 0. What the
// launch printed is flushed, so it precedes whatever the host program prints next.
inline int launch_status() {
#if !defined(__CUDA_ARCH__)
    fflush(stdout);
    return assert_failures().exchange(0) ? TILEC_ASSERT_FAILED : 0;
#else
    return 0;
#endif
}

TL_HD void assert_fail(const char* where, const char* why) {
#if defined(__CUDA_ARCH__)
    printf("%s: %s\n", where, why);
    __trap();
#else
    fprintf(stderr, "%s: %s\n", where, why);
    assert_failures().fetch_add(1);
#endif
}

// tile_load/tile_store(..., aligned=True) of a 2-d or larger shared tile promise Warp's 16-byte
// vector path: the tile's first element 16-byte aligned, the whole tile inside the array, the
// array dense and row-major with rows a multiple of 16 bytes, the tile's rows a multiple of 16
// bytes. --debug builds check each (one report per launch of a block's leader; status 3, as a
// failed assert); release builds, like Warp's, take the promise.
template <class TT, class T, int N, class... O> TL_HD void check_aligned(Ctx& ctx, const Array<T, N>& a, const char* where,
                                                                         O... o) {
#if defined(TILEC_DEBUG)
    if (!ctx.leader()) return;
    int64_t offs[N] = {};
    const int64_t given[sizeof...(O) > 0 ? sizeof...(O) : 1] = {int64_t(o)...};
    for (int k = 0; k < int(sizeof...(O)) && k < N; ++k) offs[k] = given[k];
    if (TT::dim(TT::ndim - 1) * int64_t(sizeof(T)) % 16 != 0)
        return assert_fail(where, "aligned=True but the tile's last extent is not a multiple of 16 bytes");
    for (int k = 0; k < N; ++k)
        if (offs[k] < 0 || offs[k] + TT::dim(k) > a.shape[k])
            return assert_fail(where, "aligned=True but the tile extends past the array's bounds");
    int64_t dense = int64_t(sizeof(T));
    for (int k = N - 1; k >= 0; --k) {
        if (a.strides[k] != dense) return assert_fail(where, "aligned=True but the array is not contiguous");
        if (k < N - 1 && a.strides[k] % 16 != 0)
            return assert_fail(where, "aligned=True but the array's rows are not a multiple of 16 bytes");
        dense *= a.shape[k];
    }
    if (reinterpret_cast<uintptr_t>(a.ptr_n(offs)) % 16 != 0)
        return assert_fail(where, "aligned=True but the tile's first element is not 16-byte aligned");
#else
    (void)ctx;
    (void)a;
    (void)where;
    ((void)o, ...);
#endif
}

TL_HD void assert_check(Ctx& ctx, bool ok, const char* message) {
#if defined(TILEC_DEBUG)
    if (!ok && !ctx.standin()) {
#if defined(__CUDA_ARCH__)
        printf("%s\n", message);
        __trap();
#else
        fprintf(stderr, "%s\n", message);
        assert_failures().fetch_add(1);
#endif
    }
#else
    (void)ctx;
    (void)ok;
    (void)message;
#endif
}

}  // namespace tl
