// tilec runtime: the CPU GEMM behind tile_matmul for float and double tiles.
//
//   C (M x N, row-major) = alpha * op(A) @ op(B) + beta * C      (beta == 0 ignores C's contents)
//
// op(X) is X or X^T read through strides, so an adjoint's transposed operand is never copied.
// The structure is the classic one of Goto and van de Geijn (BLIS):
//   * B is read in column panels of NR = NV * W values (W = lanes of one vector register). A
//     row-major B whose N is a multiple of NR already holds its panels (K rows, N apart) and is
//     read in place; otherwise each panel is packed into K contiguous rows of NR, zero-padded
//     past N, and the packing absorbs B's transpose.
//   * A is read in place, one broadcast per element: element (i, k) is a[i * RSA + k * CSA]
//     (a row-major tile has RSA = K, CSA = 1; a transposed one RSA = 1, CSA = M), so a panel of
//     MR rows is MR short streams that stay in L1 across the panels of B.
//   * The micro-kernel keeps an MR x NR block of C in MR * NV vector registers while k runs over
//     K: per k, NV vector loads of packed B, MR broadcasts of A and MR * NV fused multiply-adds.
//     C is read and written once per block, its rows prefetched while k runs.
//   * With B in place the loop runs over A's micro-panels outside and B's panels inside (the MR
//     rows of A stay in L1 across the panels); a packed B panel is reused by every micro-panel.
//   * An operand the generated code hands over as an array view (a tile_load feeding only the
//     matmul: Strided, matmul_packed below) is never copied into a tile: B's panels are packed
//     straight from the array, rows prefetched ahead, and A's MR-row micro-panels are copied into
//     a small buffer just before their micro-kernels, with tile_load's zero fill at the edges.
//   * Cache blocking across blocks (PanelCache): the packed B panels and A rows of an array view
//     are kept by the thread for the rest of the launch, and the later blocks it runs that read
//     the same view (every block of a block row reads the same A tiles, of a block column the
//     same B tiles) skip the packing.
//   * A loop of accumulating matmuls of such operands (the tiled GEMM's k loop; linalg.h MatmulSum)
//     is summed at once (matmul_sum): each MR x NR block of C keeps its accumulators in registers
//     across all the steps (Micro::run_sum), A's rows read in place from the array (copied once
//     for all steps where they lie a multiple of 4 KiB apart: L1 set conflicts), B's panels of
//     every step in one copy (each panel's steps one after the other), and the result goes
//     straight into C when the accumulator was only zeros to be stored.
//
// Register blocking, chosen at compile time from the compiler's ISA macros (TILEC_GEMM_ISA names it;
// defining TILEC_GEMM_SCALAR forces the scalar form), and on x86-64 at run time too (below):
//   AVX-512 (32 zmm)      MR = 8, NV = 2: 16 accumulators, NR = 32 floats / 16 doubles
//   AVX2 + FMA (16 ymm)   MR = 6, NV = 2: 12 accumulators + 2 B + 1 broadcast, NR = 16 floats
//   NEON (32 q)           MR = 8, NV = 3: 24 accumulators, NR = 12 floats
//   SSE (16 xmm)          MR = 4, NV = 3: 12 accumulators, NR = 12 floats
//   none (scalar)         MR = 4, NV = 4, W = 1
// Run-time dispatch: the portable x86-64 build (x86-64-v3: AVX2 + FMA, no __AVX512F__) carries a
// second micro-kernel, the AVX-512 8x32 one, compiled for that ISA alone (target attribute on
// Micro<IsaAvx512>, gemm_micro.h; the rest of the source keeps the baseline) and chosen once per process by a
// CPU check (use_avx512: __builtin_cpu_supports, which also asks the OS for the zmm state) for
// every GEMM whose N is a multiple of its NR; everything else, and every other CPU, runs AVX2.
// Only the micro-kernel needs the wider ISA: packing and the panel sweeps are the same templates
// instantiated with the other MR and NR. TILEC_GEMM_NO_DISPATCH builds the baseline kernel only.
// Rows past the last multiple of MR go through the same micro-kernel instantiated for fewer rows
// (for_micro_panels). A block of 4-5 rows keeps 8-10 accumulators, enough to cover the FMA latency:
// AVX2 at tile 64 runs ten 6x16 blocks and a 4x16 one, whose tail takes about its 6.25 % share of
// the FLOPs in time (bench/gemm_replica.cpp `cached-60`: 3.6-13 % in nine runs under load, median
// 6.5 %; splitting the last ten rows 5 + 5 measured no faster). Blocks of 1-3 rows do not (a 2x16
// block: ~60 % of the 6x16 rate), so a remainder of at most MR / 2 rows joins the last full block
// and the two split evenly: 32 rows are 6 * 4 + 4 + 4, 8 rows 4 + 4 (+10 % at 8x64x64).
// Vectors are GCC/Clang vector extensions (no <immintrin.h>, which alone costs ~0.4 s of compile
// time); the multiply-adds are contracted into FMA instructions inside the micro-kernel only, so
// the rest of a generated source keeps ISO C++'s separate rounding.
//
// Compile time: these templates, instantiated per tile shape (twice where the AVX-512 kernel is
// dispatched), were about half of the compile of a module with products. With TILEC_GEMM_EXTERN
// defined, the five entry points linalg.h calls (matmul, matmul_packed, matmul_sum,
// matmul_transposed_view, matmul_strided_a) are only declared: `tilec build` compiles the module
// that way, reads the instances its object needs (nm), and links an object of explicit
// instantiations of exactly those, compiled once per (compiler, flags, headers, instance list) and
// cached (backend_cpu/gemm_instances.py). The code is the same; only where it is compiled changes.
// Without the macro (the output folder's CMakeLists.txt, nvcc) everything is instantiated inline.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(TILEC_GEMM_SCALAR)  // forced (tests of the fallback)
#define TILEC_GEMM_ISA "scalar"
#define TILEC_GEMM_VECTOR_BYTES 0
#define TILEC_GEMM_MR 4
#define TILEC_GEMM_NV 4
#elif defined(__AVX512F__)
#define TILEC_GEMM_ISA "avx512"
#define TILEC_GEMM_VECTOR_BYTES 64
#define TILEC_GEMM_MR 8
#define TILEC_GEMM_NV 2
#elif defined(__AVX2__) && defined(__FMA__)
#define TILEC_GEMM_ISA "avx2-fma"
#define TILEC_GEMM_VECTOR_BYTES 32
#define TILEC_GEMM_MR 6
#define TILEC_GEMM_NV 2
#elif defined(__ARM_NEON) || defined(__ARM_NEON__)
#define TILEC_GEMM_ISA "neon"
#define TILEC_GEMM_VECTOR_BYTES 16
#define TILEC_GEMM_MR 8
#define TILEC_GEMM_NV 3
#elif defined(__SSE2__)
#define TILEC_GEMM_ISA "sse2"
#define TILEC_GEMM_VECTOR_BYTES 16
#define TILEC_GEMM_MR 4
#define TILEC_GEMM_NV 3
#else
#define TILEC_GEMM_ISA "scalar"
#define TILEC_GEMM_VECTOR_BYTES 0
#define TILEC_GEMM_MR 4
#define TILEC_GEMM_NV 4
#endif

// Multiply-adds in the micro-kernel become FMAs (modules are compiled with -ffp-contract=off).
#if defined(__clang__)
#define TILEC_GEMM_CONTRACT _Pragma("clang fp contract(fast)")
#define TILEC_GEMM_FN
#elif defined(__GNUC__)
#define TILEC_GEMM_CONTRACT
#define TILEC_GEMM_FN __attribute__((optimize("fp-contract=fast")))
#else
#define TILEC_GEMM_CONTRACT
#define TILEC_GEMM_FN
#endif

#if !defined(TILEC_GEMM_PF_ROWS)
#define TILEC_GEMM_PF_ROWS 8
#endif

// The AVX-512 kernel beside the build's AVX2 one (see the top): x86-64 builds for AVX2 + FMA
// without AVX-512, by g++ or clang++ (target attributes, __builtin_cpu_supports), not nvcc.
#if !defined(TILEC_GEMM_NO_DISPATCH) && !defined(TILEC_GEMM_SCALAR) && !defined(__CUDACC__) &&              \
    defined(__GNUC__) && defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#define TILEC_GEMM_DISPATCH 1
#else
#define TILEC_GEMM_DISPATCH 0
#endif

namespace tl {
namespace gemm {

// One vector register of T: W lanes (W = 1 and V = T without SIMD).
template <class T, int Bytes = TILEC_GEMM_VECTOR_BYTES> struct Simd {
    typedef T V __attribute__((vector_size(Bytes)));
    static constexpr int W = Bytes / int(sizeof(T));
};
template <class T> struct Simd<T, 0> {
    typedef T V;
    static constexpr int W = 1;
};

// A register blocking: BYTES per vector register, MR x NV registers of C in the micro-kernel.
struct IsaBuild {  // the compiler's ISA (the macros above)
    static constexpr int BYTES = TILEC_GEMM_VECTOR_BYTES, MR = TILEC_GEMM_MR, NV = TILEC_GEMM_NV;
    static constexpr const char* NAME = TILEC_GEMM_ISA;
};
struct IsaAvx512 {  // chosen at run time in an AVX2 build (TILEC_GEMM_DISPATCH)
    static constexpr int BYTES = 64, MR = 8, NV = 2;
    static constexpr const char* NAME = "avx512";
};
template <class I, class T> constexpr int nr_of = I::NV * Simd<T, I::BYTES>::W;  // columns of a B panel

constexpr int MR = IsaBuild::MR;  // the build's (bench/gemm_replica.cpp)
constexpr int NV = IsaBuild::NV;

// How M rows split into micro-panels: MR rows at a time, and a short remainder (M % MR <= MR / 2,
// e.g. 2 rows of a 32-row tile under AVX2) joins the last full micro-panel, the two split evenly
// (6 + 2 -> 4 + 4): a block of 1-3 rows has too few accumulators to cover the FMA latency.
// f(std::integral_constant<int, ROWS>{}, i) runs once per micro-panel, rows i .. i + ROWS - 1.
template <int M, int MR, class F> inline void for_micro_panels(F&& f) {
    constexpr int REM = M % MR, TAIL = M > MR && REM != 0 && REM <= MR / 2 ? MR + REM : REM;
    constexpr int HEAD = M - TAIL;  // a multiple of MR
    for (int i = 0; i < HEAD; i += MR) f(std::integral_constant<int, MR>{}, i);
    if constexpr (TAIL > MR) {
        f(std::integral_constant<int, (TAIL + 1) / 2>{}, HEAD);
        f(std::integral_constant<int, TAIL / 2>{}, HEAD + (TAIL + 1) / 2);
    } else if constexpr (TAIL > 0) {
        f(std::integral_constant<int, TAIL>{}, HEAD);
    }
}

// The micro-kernel of register blocking I (gemm_micro.h), compiled for I's ISA: Micro<I>::run<T, MR_,
// K, RSA, CSA, LDB>(a, bp, c, ldc, cols, alpha, beta). gemm_micro.h is included once per ISA with
// the target attribute of its functions: the whole kernel, helpers included, must be compiled for
// that ISA from the start (a body without the attribute inlined into an AVX-512 function had its
// 64-byte vectors already split into AVX2 halves and lane inserts: half the speed).
template <class I> struct Micro;
#define TILEC_GEMM_MICRO_ISA IsaBuild
#define TILEC_GEMM_MICRO_TARGET
#include "gemm_micro.h"
#undef TILEC_GEMM_MICRO_ISA
#undef TILEC_GEMM_MICRO_TARGET
#if TILEC_GEMM_DISPATCH
#define TILEC_GEMM_MICRO_ISA IsaAvx512
#define TILEC_GEMM_MICRO_TARGET __attribute__((target("avx512f")))
#include "gemm_micro.h"
#undef TILEC_GEMM_MICRO_ISA
#undef TILEC_GEMM_MICRO_TARGET
#endif

#if TILEC_GEMM_DISPATCH
// Whether this CPU (and its OS) runs AVX-512F; asked once.
inline bool use_avx512() {
    static const bool yes = [] {
        __builtin_cpu_init();  // may run before libgcc's own constructor has
        return __builtin_cpu_supports("avx512f") != 0;
    }();
    return yes;
}
#endif

// The ISA of the micro-kernel that runs a GEMM of whole AVX-512 panels in this process (tests, bench).
inline const char* kernel_isa() {
#if TILEC_GEMM_DISPATCH
    if (use_avx512()) return IsaAvx512::NAME;
#endif
    return IsaBuild::NAME;
}

// The build's micro-kernel (bench/gemm_replica.cpp).
template <class T, int MR_, int K, int RSA, int CSA, int LDB>
inline void micro_kernel(const T* __restrict a, const T* __restrict bp, T* __restrict c, int ldc, int cols, T alpha,
                         T beta) {
    Micro<IsaBuild>::run<T, MR_, K, RSA, CSA, LDB>(a, bp, c, ldc, cols, alpha, beta);
}

// C = alpha * op(A) @ op(B) + beta * C with op(A) M x K, op(B) K x N; TA / TB: the operand is stored
// transposed (A as K x M, B as N x K), both row-major. Register blocking I (matmul below chooses).
// C (M x N, row-major) = alpha * op(A) @ B + beta * C with op(A)'s element (i, k) at a[i * RSA + k * CSA]
// and B a row-major K x N tile whose rows hold whole panels (N a multiple of NR), read in place:
// MR rows of A (one micro-panel) stay hot across B's panels.
template <class I, class T, int M, int N, int K, int RSA, int CSA>
inline void matmul_b_in_place(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta) {
    constexpr int NR = nr_of<I, T>;
    static_assert(N % NR == 0, "B's rows hold whole panels");
    for_micro_panels<M, I::MR>([&](auto rows, int i) {
        constexpr int R = decltype(rows)::value;
        for (int j0 = 0; j0 < N; j0 += NR)
            Micro<I>::template run<T, R, K, RSA, CSA, N>(a + i * RSA, b + j0, c + i * N + j0, N, NR, alpha, beta);
    });
}

template <class I, class T, int M, int N, int K, bool TA, bool TB>
inline void matmul_with(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta) {
    constexpr int NR = nr_of<I, T>;
    constexpr int RSA = TA ? 1 : K, CSA = TA ? M : 1;  // A(i, k) = a[i * RSA + k * CSA]
    constexpr bool PACK = TB || N % NR != 0;  // else B's rows already hold whole panels
    if constexpr (!PACK) {
        matmul_b_in_place<I, T, M, N, K, RSA, CSA>(a, b, c, alpha, beta);
    } else {  // each panel of B packed once, then swept by every micro-panel of A
        alignas(64) T panel[K * NR];
        for (int j0 = 0; j0 < N; j0 += NR) {
            const int cols = N - j0 < NR ? N - j0 : NR;
            if constexpr (TB) {  // B's columns are b's rows: read each contiguously
                for (int q = 0; q < NR; ++q)
                    for (int k = 0; k < K; ++k) panel[k * NR + q] = q < cols ? b[(j0 + q) * K + k] : T(0);
            } else {
                for (int k = 0; k < K; ++k)
                    for (int q = 0; q < NR; ++q) panel[k * NR + q] = q < cols ? b[k * N + j0 + q] : T(0);
            }
            for_micro_panels<M, I::MR>([&](auto rows, int i) {
                constexpr int R = decltype(rows)::value;
                Micro<I>::template run<T, R, K, RSA, CSA, NR>(a + i * RSA, panel, c + i * N + j0, N, cols, alpha, beta);
            });
        }
    }
}

// Whether the AVX-512 kernel runs a GEMM of N columns: only for whole panels of its NR (32 floats,
// 16 doubles); a narrower N would multiply zero padding.
template <class T, int N> constexpr bool avx512_fits = TILEC_GEMM_DISPATCH && N % nr_of<IsaAvx512, T> == 0;

template <class T, int M, int N, int K, bool TA, bool TB>
void matmul(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta);

// ---------------------------------------------------------------- operands read from arrays
// A tile_load whose tile only feeds a matmul (codegen/operand_views.py) reaches the matmul as an
// array view instead of a tile copy; the GEMM then packs its panels once, straight from the array.
// Element (i, k) of the operand is data[(r0 + i) * rs + (c0 + k) * cs] (strides in elements) while
// row r0 + i is in [0, rows) and column c0 + k in [0, cols), and zero elsewhere (tile_load's
// zero fill past the array's edges). Transposing swaps the two axes; nothing is copied.
template <class T> struct Strided {
    const T* data;
    long long r0, c0;      // the operand's element (0, 0) in array coordinates
    long long rs, cs;      // element strides of the operand's rows and columns
    long long rows, cols;  // the array's extents along the operand's rows and columns
    Strided transpose() const { return {data, c0, r0, cs, rs, cols, rows}; }
    bool interior(int m, int k) const { return r0 >= 0 && c0 >= 0 && r0 + m <= rows && c0 + k <= cols; }
    T at(int i, int k) const {
        const long long r = r0 + i, c = c0 + k;
        return r >= 0 && r < rows && c >= 0 && c < cols ? data[r * rs + c * cs] : T(0);
    }
};

// op(B), K x N, into its NR-column panels (panel p: K rows of NR at panels + p * PS, zero past
// column N; PS = K * NR packs them one after the other, matmul_sum interleaves its steps' panels).
// A row-major view is read row by row (N contiguous values spread over the panels), a few rows
// ahead of the copy asked for: rows of a wide array are pages apart, where no hardware prefetcher
// looks.
template <class T, int K, int N, int NR>
inline void pack_b(const Strided<T>& b, T* __restrict panels, long PS = long(K) * NR) {
    constexpr int FULL = N / NR, AHEAD = TILEC_GEMM_PF_ROWS;
    if (b.interior(K, N) && b.cs == 1) {
        const T* src = b.data + b.r0 * b.rs + b.c0;
        for (int k = 0; k < K; ++k, src += b.rs) {
            if (AHEAD > 0 && k + AHEAD < K)
                for (int q = 0; q < N * int(sizeof(T)); q += 64)
                    __builtin_prefetch(reinterpret_cast<const char*>(src + AHEAD * b.rs) + q, 0, 3);
            for (int p = 0; p < FULL; ++p) std::memcpy(panels + p * PS + k * NR, src + p * NR, NR * sizeof(T));
            if constexpr (N % NR != 0)
                for (int q = 0; q < NR; ++q) panels[FULL * PS + k * NR + q] = q < N % NR ? src[FULL * NR + q] : T(0);
        }
    } else if (b.interior(K, N) && b.rs == 1) {  // a transposed row-major array: op(B)'s columns contiguous
        for (int j = 0; j < (FULL + (N % NR != 0)) * NR; ++j) {
            T* dst = panels + j / NR * PS + j % NR;
            const T* src = b.data + b.r0 + (b.c0 + j) * b.cs;
            if (AHEAD > 0 && j + AHEAD < N)
                for (int q = 0; q < K * int(sizeof(T)); q += 64)
                    __builtin_prefetch(reinterpret_cast<const char*>(src + AHEAD * b.cs) + q, 0, 3);
            for (int k = 0; k < K; ++k) dst[k * NR] = j < N ? src[k] : T(0);
        }
    } else {
        for (int j = 0; j < (FULL + (N % NR != 0)) * NR; ++j)
            for (int k = 0; k < K; ++k) panels[j / NR * PS + k * NR + j % NR] = j < N ? b.at(k, j) : T(0);
    }
}

// op(A) read from an array view, MR rows at a time: each micro-panel's rows are copied into a
// small row-major buffer (vector copies; the micro-kernel reads it as it reads a tile) just before
// the micro-kernels that use it, so it never leaves L1.
template <class T, int M, int K> struct ViewA {
    static constexpr int RSA = K, CSA = 1;
    static constexpr bool from_array = true;
    Strided<T> a;
    const T* panel(int i, int rows, T* __restrict scratch) const {
        if (a.interior(M, K) && a.cs == 1) {
            const T* src = a.data + (a.r0 + i) * a.rs + a.c0;
            for (int r = 0; r < rows; ++r, src += a.rs) {
                std::memcpy(scratch + r * K, src, K * sizeof(T));
            }
        } else {
            for (int r = 0; r < rows; ++r)
                for (int k = 0; k < K; ++k) scratch[r * K + k] = a.at(i + r, k);
        }
        return scratch;
    }
};

// op(A) read in place from a tile (element (i, k) at a[i * RSA + k * CSA]).
template <class T, int RSA_, int CSA_> struct InPlaceA {
    static constexpr int RSA = RSA_, CSA = CSA_;
    static constexpr bool from_array = false;
    const T* a;
    const T* panel(int i, int, T*) const { return a + i * RSA; }
};

// C = alpha * op(A) @ op(B) + beta * C from B's packed panels: each micro-panel of A (copied
// into an L1 buffer first when it comes from an array) sweeps them all.
template <class I, class T, int M, int N, int K, class ASrc>
inline void sweep(const ASrc& a, const T* __restrict panels, T* __restrict c, T alpha, T beta,
                  const T* next = nullptr) {
    constexpr int MR = I::MR, NR = nr_of<I, T>, PANELS = (N + NR - 1) / NR;
    constexpr int LINES = PANELS * K * NR * int(sizeof(T)) / 64, STEPS = (M + MR - 1) / MR;  // micro-panels
    // (a split tail has one more than STEPS: it prefetches nothing)
    constexpr int PER_STEP = (LINES + STEPS - 1) / STEPS;
    alignas(64) T scratch[MR * K];
    int step = 0;
    for_micro_panels<M, MR>([&](auto rows, int i) {
        if (next)  // the next k step's panels, a slice per micro-panel: from L3 into L2 meanwhile
            for (int l = step * PER_STEP; l < (step + 1) * PER_STEP && l < LINES; ++l)
                __builtin_prefetch(reinterpret_cast<const char*>(next) + l * 64, 0, 2);
        ++step;
        constexpr int R = decltype(rows)::value;
        const T* ap = a.panel(i, R, scratch);
        for (int p = 0; p < PANELS; ++p) {
            const int j0 = p * NR, cols = N - j0 < NR ? N - j0 : NR;
            Micro<I>::template run<T, R, K, ASrc::RSA, ASrc::CSA, NR>(ap, panels + p * K * NR, c + i * N + j0, N, cols,
                                                                      alpha, beta);
        }
    });
}

// ---------------------------------------------------------------- B panels reused across blocks
// Block (i, j) of a tiled GEMM reads B's block column j at every k step, and so do the blocks
// (i', j) of every other row; A's block row i is read by every block (i, j'). Packing them again
// in every block cost ~15 % of a 1024 GEMM (B's rows are pages apart). A thread therefore keeps
// what it packed from an array view (never from a tile: a tile's memory is reused) for the rest
// of the launch: B's panels (layout B_PANELS) and A's rows (A_ROWS: the M x K operand copied
// row-major, read by the micro-kernels as a tile; packed k-major per micro-panel instead, it measured
// no faster: the transposing copy cost what the single stream saved). A later block on the same thread that
// multiplies by the same view (same array, origin, strides, extents, shape and layout) reads the
// copy instead. (Blocks run in row-major order of the grid, a chunk of consecutive blocks per
// thread, so A's rows are reused from L2 by the next block, B's panels from L3.)
//
// Why a cached copy cannot be stale: entries live for one launch (the key holds the launch
// number, tl::launch_epoch, bumped by every entry point), and a block never reads an entry it
// packed itself. A hit in block Z on panels packed by block X != Z is stale only if something
// wrote that region of the array after X read it; blocks run in no defined order, so a write by
// X, Z or any other block to a region X and Z both read is a data race in the program itself.
// Per thread at most PanelCache::BYTES of panels; past that, panels are packed on the stack as
// before (the first ones stay: no thrashing).
struct BlockId {              // the block asking, within its launch
    unsigned long long launch;
    long long tid[4];
    bool operator==(const BlockId& o) const {
        return launch == o.launch && tid[0] == o.tid[0] && tid[1] == o.tid[1] && tid[2] == o.tid[2] && tid[3] == o.tid[3];
    }
};

namespace {  // one cache per library and thread (see tl::launch_epoch in lanes.h), and one spare list per library
class PanelCache {
  public:
    static constexpr std::size_t BYTES = std::size_t(16) << 20;  // per thread: B of a 2048 GEMM half fits
    static constexpr int SLOTS = 8192;                           // power of two, at most half used

    // The panels of key packed earlier in this launch by another block on this thread, or nullptr;
    // *fresh is then where to pack them for later blocks (nullptr: the cache is full, or this
    // block packed them itself and must pack again). nr: B_PANELS' panel width (an AVX2 and an
    // AVX-512 kernel lay out the same view differently), 0 for A_ROWS.
    // how the copy is laid out (the same view may be A and B); B_SUM: a sum's B panels of every
    // step (key: the first step's view, k = K * steps)
    // A_SUM: a sum's A rows of every step (key: the first step's view, k = K * steps, n = M)
    enum Layout { B_PANELS, A_ROWS, B_SUM, A_SUM, LAYOUTS };
    template <class T>
    const T* find(const Strided<T>& key, Layout layout, int k, int n, int nr, const BlockId& who, std::size_t bytes,
                  T** fresh) {
        *fresh = nullptr;
        if (who.launch != launch_) {  // a new launch: everything cached before is gone
            launch_ = who.launch;
            forget();
        }
        if (index_.empty()) adopt();
        const Key want{key.data, key.r0, key.c0, key.rs, key.cs, key.rows, key.cols, k, n, nr, int(sizeof(T)), layout};
        const int guess = near(want, last_[layout]);
        if (guess >= 0) {
            last_[layout] = unsigned(guess);
            const Entry& e = entries_[unsigned(guess)];
            return e.owner == who ? nullptr : reinterpret_cast<const T*>(arena_.get() + e.offset);
        }
        const unsigned long long h = want.hash();
        const unsigned tag = unsigned(h >> 32) | 1u;
        for (unsigned i = unsigned(h) & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
            Index& x = index_[i];
            if (x.tag == 0) {  // empty: not cached
                if (entries_.size() >= SLOTS / 2 || used_ + bytes > BYTES) return nullptr;
                if (!arena_) arena_.reset(new (std::align_val_t(64)) unsigned char[BYTES]);  // pages untouched until used
                x = Index{tag, unsigned(entries_.size())};
                last_[layout] = unsigned(entries_.size());
                entries_.push_back(Entry{want, who, used_});
                used_ += (bytes + 63) / 64 * 64;
                *fresh = reinterpret_cast<T*>(arena_.get() + entries_.back().offset);
                return nullptr;
            }
            if (x.tag == tag && entries_[x.entry].key == want) {
                last_[layout] = x.entry;
                const Entry& e = entries_[x.entry];
                return e.owner == who ? nullptr : reinterpret_cast<const T*>(arena_.get() + e.offset);
            }
        }
    }

    // The copy of key another block packed in this launch, if any (for prefetching: no owner check).
    template <class T>
    const T* peek(const Strided<T>& key, Layout layout, int k, int n, int nr, unsigned long long launch) const {
        if (launch != launch_ || index_.empty()) return nullptr;
        const Key want{key.data, key.r0, key.c0, key.rs, key.cs, key.rows, key.cols, k, n, nr, int(sizeof(T)), layout};
        const int guess = near(want, last_[layout]);
        if (guess >= 0) return reinterpret_cast<const T*>(arena_.get() + entries_[unsigned(guess)].offset);
        const unsigned long long h = want.hash();
        const unsigned tag = unsigned(h >> 32) | 1u;
        for (unsigned i = unsigned(h) & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
            const Index& x = index_[i];
            if (x.tag == 0) return nullptr;
            if (x.tag == tag && entries_[x.entry].key == want)
                return reinterpret_cast<const T*>(arena_.get() + entries_[x.entry].offset);
        }
    }

    PanelCache() = default;
    PanelCache(const PanelCache&) = delete;
    PanelCache& operator=(const PanelCache&) = delete;
    ~PanelCache() {  // the thread ends: its memory goes to the next thread that needs a cache
        if (index_.empty()) return;
        forget();
        std::lock_guard<std::mutex> hold(spare_lock());
        spares().push_back(Spare{std::move(index_), std::move(entries_), std::move(arena_)});
    }

  private:
    struct Key {
        const void* data;
        long long r0, c0, rs, cs, rows, cols;
        int k, n, nr, size;
        Layout layout;
        bool operator==(const Key& o) const {
            return data == o.data && r0 == o.r0 && c0 == o.c0 && rs == o.rs && cs == o.cs && rows == o.rows &&
                   cols == o.cols && k == o.k && n == o.n && nr == o.nr && size == o.size && layout == o.layout;
        }
        unsigned long long hash() const {
            unsigned long long h = reinterpret_cast<unsigned long long>(data);
            for (long long v : {r0, c0, rs, cs, rows, cols, (long long)k, (long long)n, (long long)nr, (long long)layout}) h = (h ^ (unsigned long long)v) * 0x100000001b3ULL;
            return h ^ (h >> 29);
        }
    };
    // The lookup touches index_ only (8 bytes a slot, SLOTS * 8 = 64 KiB): a probe of the 128-byte
    // entries themselves missed the caches and cost ~10 % of a 1024 GEMM at tile 32 (perf).
    struct Index {
        unsigned tag = 0;  // 0: empty; else the key's hash's high half, odd
        unsigned entry = 0;  // into entries_
    };
    struct Entry {
        Key key;
        BlockId owner;
        std::size_t offset;  // into arena_
    };
    void forget() {  // a new launch
        if (!entries_.empty()) std::memset(static_cast<void*>(index_.data()), 0, index_.size() * sizeof(Index));
        entries_.clear();
        used_ = 0;
        for (unsigned& l : last_) l = 0;
    }
    // A block's k steps ask for copies that an earlier block made one after the other (A's rows at
    // k + 1 right after k; B's panels at k + 1 after k, or after k's A rows), so the one or two
    // entries after the last one found for the layout are compared before the key is hashed: most
    // lookups then read two adjacent entries instead of hashing and probing the index.
    int near(const Key& want, unsigned from) const {
        for (unsigned e = from + 1; e <= from + 2 && e < entries_.size(); ++e)
            if (entries_[e].key == want) return int(e);
        return -1;
    }
    // The copies' memory, 64-byte aligned like each copy in it: operator new[]'s 16 (mmap's page plus
    // malloc's header) split every other 32-byte load of the micro-kernel's B stream across two
    // cache lines (GEMM 512 and 1024, tile 64, AVX2 on Zen 3: 2 % of the forward).
    struct ArenaDelete {
        void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t(64)); }
    };
    using Arena = std::unique_ptr<unsigned char[], ArenaDelete>;
    // Threads a launch starts past the pool's kept helpers (thread_pool.h) end with it: without the
    // spares each of them allocated a fresh arena and index and faulted their pages in again.
    struct Spare {
        std::vector<Index> index;
        std::vector<Entry> entries;
        Arena arena;
    };
    static std::mutex& spare_lock() {
        static std::mutex lock;
        return lock;
    }
    static std::vector<Spare>& spares() {
        static std::vector<Spare> kept;
        return kept;
    }
    void adopt() {  // this thread's first use: a spare left by an ended thread, else new memory
        {
            std::lock_guard<std::mutex> hold(spare_lock());
            if (!spares().empty()) {
                Spare& s = spares().back();
                index_ = std::move(s.index);
                entries_ = std::move(s.entries);
                arena_ = std::move(s.arena);
                spares().pop_back();
                return;
            }
        }
        index_.resize(SLOTS);
        entries_.reserve(SLOTS / 2);
    }
    unsigned long long launch_ = 0;
    std::size_t used_ = 0;
    unsigned last_[LAYOUTS] = {};  // per Layout: the entry last found or made
    std::vector<Index> index_;
    std::vector<Entry> entries_;
    Arena arena_;
};

inline PanelCache& panel_cache() {  // this thread's
    static thread_local PanelCache cache;
    return cache;
}
}  // namespace

// C = alpha * op(A) @ op(B) + beta * C where op(B) (K x N) is an array view or a tile described
// as one: B is packed into its NR-column panels once (K * N values), then each micro-panel of A
// sweeps them all, so the inner loops touch the packed B, MR rows of A and MR rows of C.
// `reuse` (op(B) read from an array, one lane per block): the block asking, so that B's panels
// come from, or go to, this thread's PanelCache.
template <class I, class T, int M, int N, int K, class ASrc>
inline void matmul_packed_with(const ASrc& a, const Strided<T>& b, T* __restrict c, T alpha, T beta,
                               const BlockId* reuse) {
    constexpr int NR = nr_of<I, T>, PANELS = (N + NR - 1) / NR;
    alignas(64) T stack_panels[PANELS * K * NR];
    const T* panels = nullptr;
    T* fresh = nullptr;
    if (reuse) panels = panel_cache().find(b, PanelCache::B_PANELS, K, N, NR, *reuse, sizeof(stack_panels), &fresh);
    if (!panels) {
        pack_b<T, K, N, NR>(b, fresh ? fresh : stack_panels);
        panels = fresh ? fresh : stack_panels;
    }
    const T* next = nullptr;  // B's panels of the next k step, when this thread packed them already
    if (reuse) {
        Strided<T> after = b;
        after.r0 += K;
        next = panel_cache().peek(after, PanelCache::B_PANELS, K, N, NR, reuse->launch);
    }
    if constexpr (ASrc::from_array) {  // op(A) from an array: its row-major copy is kept too
        if (reuse) {
            T* fresh_a = nullptr;
            const T* rows = panel_cache().find(a.a, PanelCache::A_ROWS, M, K, 0, *reuse, M * K * sizeof(T), &fresh_a);
            if (!rows && fresh_a) rows = a.panel(0, M, fresh_a);
            if (rows) return sweep<I, T, M, N, K>(InPlaceA<T, K, 1>{rows}, panels, c, alpha, beta, next);
        }  // else each micro-panel copied just before use (sweep)
    }
    sweep<I, T, M, N, K>(a, panels, c, alpha, beta, next);
}

template <class T, int M, int N, int K, class ASrc>
void matmul_packed(const ASrc& a, const Strided<T>& b, T* __restrict c, T alpha, T beta,
                   const BlockId* reuse = nullptr);


// ---------------------------------------------------------------- a loop's products summed at once
// C += sum_s op(A_s) @ op(B_s), s < steps, every A_s (M x K) and B_s (K x N) an array view: the
// generated code's `for k: tile_matmul(load(A, .., k), load(B, k, ..), acc)` (linalg.h MatmulSum
// gathers the loop's operands). Each step's B panels and A rows are packed (or found in the
// PanelCache) first, then every MR x NR block of C runs the micro-kernel over all the steps with
// its accumulators in registers (Micro::run_sum): C is read and written once instead of once per
// step, and the per-step call overhead goes. At GEMM 512 / tile 64 the k-step form spent ~10 % of
// its time outside the micro-kernel's FMAs on those (bench/README.md). The sum is the same
// products added in another order (within float rounding of the step-by-step form).
constexpr int SUM_STEPS = 64;  // at most this many steps per call (MatmulSum flushes when full)

// Bytes of this thread's buffer for copies the PanelCache does not keep (a full cache, or a block
// that packed the view itself and may not read its own copy).
inline unsigned char* sum_scratch(std::size_t bytes) {
    static thread_local std::unique_ptr<unsigned char[]> buffer;
    static thread_local std::size_t size = 0;
    if (size < bytes) {
        buffer.reset(new unsigned char[bytes + 64]);
        size = bytes;
    }
    const std::size_t p = reinterpret_cast<std::size_t>(buffer.get());
    return buffer.get() + ((64 - p % 64) % 64);
}

template <class I, class T, int M, int N, int K>
inline void matmul_sum_with(const Strided<T>* as, const Strided<T>* bs, int steps, T* __restrict c, int ldc, T beta,
                            const BlockId* reuse) {
    constexpr int NR = nr_of<I, T>, PANELS = (N + NR - 1) / NR;
    constexpr std::size_t B_BYTES = std::size_t(PANELS) * K * NR * sizeof(T), A_BYTES = std::size_t(M) * K * sizeof(T);
    const T* a_rows[SUM_STEPS];
    const T* b_panels[SUM_STEPS];
    unsigned char* spare = nullptr;  // where copies go that the cache does not keep
    std::size_t spare_used = 0;
    auto place = [&](std::size_t bytes) -> T* {
        if (!spare) spare = sum_scratch(std::size_t(steps) * (A_BYTES + B_BYTES) + std::size_t(M) * 64 + 64);
        T* p = reinterpret_cast<T*>(spare + spare_used);
        spare_used += (bytes + 63) / 64 * 64;
        return p;
    };
    // A's rows are read in place when every step's are inside the array and contiguous along k
    // (rows lda apart): the micro-kernel's MR row streams then run on from step to step, and A
    // needs no copy. Else each step's rows are copied (PanelCache A_ROWS), lda = K.
    bool in_place = as[0].cs == 1 && as[0].rs != K;
    for (int s = 0; s < steps && in_place; ++s) in_place = as[s].interior(M, K) && as[s].cs == 1 && as[s].rs == as[0].rs;
    // Rows a multiple of 4 KiB apart put the MR values of one k in the same L1 set, where beside
    // B's stream they miss by conflict (GEMM 1024, tile 64, AVX2 on Zen 3: 3 % slower than a copy;
    // at 512, rows 2 KiB apart, reading in place is 4 % faster than copying). Steps that walk along
    // the same rows (step s: columns K * s on) then have the rows of all steps copied at once (PanelCache
    // A_SUM) into rows one cache line longer; others a copy per step.
    const bool conflicts = in_place && (std::size_t(as[0].rs) * sizeof(T)) % 4096 == 0;
    bool a_walk = conflicts;
    for (int s = 1; s < steps && a_walk; ++s)
        a_walk = as[s].data == as[0].data && as[s].r0 == as[0].r0 && as[s].c0 == as[0].c0 + (long long)s * K;
    const long walk_lda = long(steps) * K + ((std::size_t(steps) * K * sizeof(T)) % 4096 == 0 ? 64 / long(sizeof(T)) : 0);
    if (conflicts && !a_walk) in_place = false;
    const long lda = a_walk ? walk_lda : in_place ? long(as[0].rs) : long(K);
    // Steps that walk down one array (step s: rows K * s on, the same columns: the tiled GEMM's k
    // loop) have their B panels packed into one copy, panel-major (panel p of step s at p * pstride
    // + s * K * NR): the micro-kernel's stream of one panel then runs on through the steps, where
    // one copy per step put the next step's panel PANELS * K * NR values further (GEMM 1024, tile
    // 64, AVX2 on Zen 3: 3 % slower; bench/README.md). Else each step's panels are a copy of their own.
    bool walk = steps > 1;
    for (int s = 1; s < steps && walk; ++s)
        walk = bs[s].data == bs[0].data && bs[s].r0 == bs[0].r0 + (long long)s * K && bs[s].c0 == bs[0].c0 &&
               bs[s].rs == bs[0].rs && bs[s].cs == bs[0].cs && bs[s].rows == bs[0].rows && bs[s].cols == bs[0].cols;
    const long pstride = walk ? long(steps) * K * NR : long(K) * NR;
    // The copy of `key` this thread's PanelCache holds, else the one make(to) writes: into the
    // cache when it takes it, else into this call's scratch.
    auto cached = [&](const Strided<T>& key, PanelCache::Layout layout, int k, int n, int nr, std::size_t bytes,
                      auto&& make) -> const T* {
        T* fresh = nullptr;
        if (reuse)
            if (const T* hit = panel_cache().find(key, layout, k, n, nr, *reuse, bytes, &fresh)) return hit;
        T* to = fresh ? fresh : place(bytes);
        make(to);
        return to;
    };
    if (walk) {
        const T* all = cached(bs[0], PanelCache::B_SUM, K * steps, N, NR, std::size_t(steps) * B_BYTES, [&](T* to) {
            for (int s = 0; s < steps; ++s) pack_b<T, K, N, NR>(bs[s], to + long(s) * K * NR, pstride);
        });
        for (int s = 0; s < steps; ++s) b_panels[s] = all + long(s) * K * NR;
    }
    const T* a_all = nullptr;  // A_SUM: every step's rows, lda apart
    if (a_walk)
        a_all = cached(as[0], PanelCache::A_SUM, K * steps, M, 0, std::size_t(M) * lda * sizeof(T), [&](T* to) {
            const T* from = as[0].data + as[0].r0 * as[0].rs + as[0].c0;
            for (int r = 0; r < M; ++r) std::memcpy(to + r * lda, from + r * as[0].rs, std::size_t(steps) * K * sizeof(T));
        });
    for (int s = 0; s < steps; ++s) {
        if (!walk)
            b_panels[s] = cached(bs[s], PanelCache::B_PANELS, K, N, NR, B_BYTES, [&](T* to) { pack_b<T, K, N, NR>(bs[s], to); });
        a_rows[s] = a_walk     ? a_all + long(s) * K
                    : in_place ? as[s].data + as[s].r0 * as[s].rs + as[s].c0
                             : cached(as[s], PanelCache::A_ROWS, M, K, 0, A_BYTES,
                                      [&](T* to) { ViewA<T, M, K>{as[s]}.panel(0, M, to); });
    }
    for_micro_panels<M, I::MR>([&](auto r, int i) {
        constexpr int R = decltype(r)::value;
        for (int p = 0; p < PANELS; ++p) {
            const int j0 = p * NR, cols = N - j0 < NR ? N - j0 : NR;
            Micro<I>::template run_sum<T, R, K, NR>(a_rows, long(i) * lda, lda, b_panels, long(p) * pstride, steps,
                                                   c + long(i) * ldc + j0, ldc, cols, T(1), beta);
        }
    });
}

// C = sum of `steps` (at most SUM_STEPS) products of array views + beta * C (beta 1 or 0), C's rows
// ldc apart; `reuse`: the block asking (its copies go to, and come from, this thread's PanelCache),
// or nullptr.
template <class T, int M, int N, int K>
void matmul_sum(const Strided<T>* as, const Strided<T>* bs, int steps, T* __restrict c, int ldc, T beta,
                const BlockId* reuse);

// ---------------------------------------------------------------- transposed array operands
// C = alpha * X^T @ B + beta * C with X (K x M) an array view and B a row-major K x N tile: an
// adjoint's A^T @ dC. X's rows are copied row-major (the copy a forward A operand of the same view
// gets: PanelCache A_ROWS, zero past the array's edges) and the micro-kernels read the copy
// transposed by stride, as they read a transposed tile. `reuse` (one lane per block): the copy is
// kept for the launch, so every later block on this thread that multiplies by the same X^T (all
// blocks (i, j') of an adjoint's block row) skips the copy.
template <class T, int M, int N, int K>
void matmul_transposed_view(const Strided<T>& x, const T* __restrict b, T* __restrict c, T alpha, T beta,
                            const BlockId* reuse);


// matmul_b_in_place with A's own strides (a window of a larger tile, read in place: linalg.h
// TileWindow), on the AVX-512 kernel where matmul would take it (its 8-row micro-panels: the MLP
// adjoint's 32-row window^T @ dC ran the build's 6-row kernel plus a 2-row remainder), else the build's.
template <class T, int M, int N, int K, int RSA, int CSA>
void matmul_strided_a(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta);

}  // namespace gemm
}  // namespace tl

#if !defined(TILEC_GEMM_EXTERN)
#include "gemm_entries.h"
#endif
