// tilec runtime: core types. Tiles are row-major value types; arrays are
// strided views of user memory; Ctx carries the block/lane a body runs as.
// Compiles as C++17 (CPU) and as CUDA (TL_HD marks host+device functions).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define TL_HD __host__ __device__ inline
#else
#define TL_HD inline
#endif

// TL_CPU_KERNEL marks a tile kernel body that applies exp, log or tanh (backend_cpu/emit.py). In a
// portable x86-64 build (AVX2 + FMA, no AVX-512F) by g++ on Linux it is compiled twice: as built,
// and for AVX-512F (target_clones: an ifunc resolver asks the CPU once, when the library loads).
// On a CPU with AVX-512 the vectoriser then runs those functions' long dependent chains 16 floats
// wide: on Zen 4 the fused map (tanh) 1.6x and exp 1.5x faster (bench/README.md). Results are the
// same either way: the same operations in the same order, more lanes at once
// (tests/test_kernel_clones.py). -DTILEC_KERNEL_CLONES=0 compiles the build's ISA only.
#if !defined(TILEC_KERNEL_CLONES)
#if !defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#define TILEC_KERNEL_CLONES 1
#else
#define TILEC_KERNEL_CLONES 0
#endif
#endif
#if TILEC_KERNEL_CLONES
#define TL_CPU_KERNEL __attribute__((target_clones("avx512f", "default")))
#else
#define TL_CPU_KERNEL
#endif

namespace tl {

// ---------------------------------------------------------------- half
// A storage-only IEEE binary16; arithmetic happens in float.
struct half {
    uint16_t bits = 0;
    half() = default;
    TL_HD half(float f) : bits(from_float(f)) {}
    TL_HD operator float() const { return to_float(bits); }
    // Accumulation (adjoints add into half tiles): in float, rounded once.
    TL_HD half& operator+=(float v) { return *this = half(to_float(bits) + v); }
    TL_HD half& operator-=(float v) { return *this = half(to_float(bits) - v); }
    TL_HD static uint16_t from_float(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u;
        int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
        uint32_t mant = x & 0x7fffffu;
        if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));
        if (exp >= 31) return uint16_t(sign | 0x7c00u);
        if (exp <= 0) {
            if (exp < -10) return uint16_t(sign);
            mant |= 0x800000u;
            uint32_t shift = uint32_t(14 - exp);
            uint32_t h = mant >> shift;
            uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
            if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
            return uint16_t(sign | h);
        }
        uint32_t h = sign | (uint32_t(exp) << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
        return uint16_t(h);
    }
    TL_HD static float to_float(uint16_t h) {
        uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
        if (exp == 0) {
            if (mant == 0) {
                x = sign;
            } else {
                exp = 127 - 15 + 1;
                while (!(mant & 0x400u)) { mant <<= 1; --exp; }
                x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
            }
        } else if (exp == 31) {
            x = sign | 0x7f800000u | (mant << 13);
        } else {
            x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
        }
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
};

// ---------------------------------------------------------------- bfloat16
// A storage-only bfloat16 (the top half of a float32, rounded to nearest even); arithmetic
// happens in float, as in Warp.
struct bfloat16 {
    uint16_t bits = 0;
    bfloat16() = default;
    TL_HD bfloat16(float f) : bits(from_float(f)) {}
    TL_HD operator float() const { return to_float(bits); }
    TL_HD static uint16_t from_float(float f) {
        uint32_t x;
        memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // NaN stays NaN
        x += 0x7fffu + ((x >> 16) & 1u);
        return uint16_t(x >> 16);
    }
    TL_HD static float to_float(uint16_t h) {
        uint32_t x = uint32_t(h) << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
};

// Arithmetic type of a storage type: half and bfloat16 compute in float.
template <class T> struct compute { using type = T; };
template <> struct compute<half> { using type = float; };
template <> struct compute<bfloat16> { using type = float; };
template <class T> struct is_storage_float : std::false_type {};
template <> struct is_storage_float<half> : std::true_type {};
template <> struct is_storage_float<bfloat16> : std::true_type {};
template <class T> using compute_t = typename compute<T>::type;

// ---------------------------------------------------------------- tiles
template <int... D> struct Extents {
    static constexpr int ndim = sizeof...(D);
    static constexpr int size = (D * ... * 1);
    static constexpr int dims[ndim] = {D...};
};

template <class T, int... D> struct Tile {
    using value_type = T;
    using extents = Extents<D...>;
    static constexpr int ndim = sizeof...(D);
    static constexpr int size = (D * ... * 1);
    static constexpr int dims[ndim] = {D...};
    T data[size];

    // An extent by index, usable in device code (the static array above is host-only there).
    TL_HD static constexpr int dim(int k) {
        constexpr int d[sizeof...(D)] = {D...};
        return d[k];
    }
    // Row-major stride of axis k, in elements.
    TL_HD static constexpr int stride(int k) {
        int s = 1;
        for (int a = ndim - 1; a > k; --a) s *= dim(a);
        return s;
    }
    template <class... I> TL_HD static int linear(I... idx) {
        static_assert(sizeof...(I) == ndim, "index count must equal the tile rank");
        int ids[ndim] = {int(idx)...};
        int l = 0;
        for (int k = 0; k < ndim; ++k) l = l * dim(k) + ids[k];
        return l;
    }
    template <class... I> TL_HD T& at(I... idx) { return data[linear(idx...)]; }
    template <class... I> TL_HD const T& at(I... idx) const { return data[linear(idx...)]; }
};

// Multi-index of a row-major linear index.
template <class TileT> TL_HD void unravel(int linear, int* idx) {
    for (int k = TileT::ndim - 1; k >= 0; --k) {
        idx[k] = linear % TileT::dim(k);
        linear /= TileT::dim(k);
    }
}

// ---------------------------------------------------------------- arrays
// The C ABI view of an array (see the generated header): byte strides.
struct ArrayDesc {
    void* data;
    int64_t shape[4];
    int64_t strides[4];
};

template <class T, int N> struct Array {
    T* data = nullptr;
    int64_t shape[N] = {};
    int64_t strides[N] = {};  // in bytes
    Array() = default;
    // T(0) of an array descriptor (a tile of an array field of structs): no data, no extent, what
    // tile_zeros makes and an out-of-bounds load reads, as Warp zero-initialises its array_t.
    TL_HD explicit Array(int) {}
    TL_HD explicit Array(const ArrayDesc& d) : data(static_cast<T*>(d.data)) {
        for (int k = 0; k < N; ++k) { shape[k] = d.shape[k]; strides[k] = d.strides[k]; }
    }
    template <class... I> TL_HD T* ptr(I... idx) const {
        static_assert(sizeof...(I) == N, "index count must equal the array rank");
        int64_t ids[N] = {int64_t(idx)...};
        int64_t off = 0;
        for (int k = 0; k < N; ++k) off += ids[k] * strides[k];
        return reinterpret_cast<T*>(reinterpret_cast<char*>(data) + off);
    }
    TL_HD T* ptr_n(const int64_t* ids) const {
        int64_t off = 0;
        for (int k = 0; k < N; ++k) off += ids[k] * strides[k];
        return reinterpret_cast<T*>(reinterpret_cast<char*>(data) + off);
    }
    template <class... I> TL_HD T& operator()(I... idx) const { return *ptr(idx...); }
    TL_HD bool contiguous_last() const { return strides[N - 1] == int64_t(sizeof(T)); }
};

// A thread's fixed-size array (Warp's `wp.zeros(shape=..., dtype=T)` in a kernel): its elements,
// declared by the generated code, zero-filled and seen as an N-d array with contiguous rows.
template <class T, int N, class... D> TL_HD Array<T, N> local_array(T* elements, D... dims) {
    static_assert(sizeof...(D) == N, "one extent per dimension");
    const int64_t extents[N] = {int64_t(dims)...};
    Array<T, N> a;
    int64_t count = 1;
    for (int k = N - 1; k >= 0; --k) {
        a.shape[k] = extents[k];
        a.strides[k] = count * int64_t(sizeof(T));
        count *= extents[k];
    }
    for (int64_t e = 0; e < count; ++e) elements[e] = T();
    a.data = elements;
    return a;
}

// Whether a launch's partial last block (lane_tid 3, threads not a multiple of block_dim) has a
// defined result: every tile that an op reads at other positions has at most `limit` elements
// (codegen/analysis.partial_block_limit), so all of them are active. The loader checks the same.
// Desc: the LaunchDesc of lanes.h (CPU, emulation) or ctx_cuda.h (GPU).
template <class Desc> inline bool partial_block_defined(const Desc& L, int64_t limit) {
    if (L.lane_tid != 3 || L.block_dim <= 1) return true;
    int64_t threads = 1;
    for (int k = 0; k < L.ndim; ++k) threads *= L.dim[k];
    const int64_t rest = threads % L.block_dim;
    return rest == 0 || rest >= limit;
}

}  // namespace tl
