// The 64x64-tile GEMM of bench/programs/gemm64.py at N = 1024, replayed outside tilec so that the
// runtime's GEMM strategies can be compared in one process on one thread (thread CPU time, best
// of REPEATS runs per variant, variants interleaved so that other load hits them alike):
//
//   tiles      what the generated code does today: copy the 64x64 tiles of A and B out of the
//              arrays (tile_load), then tl::gemm::matmul on the copies (B read in place)
//   in-place   no copies: A and B read straight from the arrays (rows 4 KiB apart)
//   pack-B     A read from the array, each 64x16 panel of B packed from the array (the "pack B
//              straight into the micro-kernel's panels" plan)
//   pack-AB    what the generated code does since #20: no tile copies; the matmul packs A's
//              micro-panels and B's panels straight from the arrays (gemm.h ViewA, matmul_packed)
//   tiles-G4   `tiles` with the blocks run in groups of 4 block rows (B's column panels reused
//              from L2 by 4 consecutive blocks)
//   kernel     tl::gemm::matmul alone on hot 64x64 tiles (the micro-kernel's ceiling)
//   cached     what the generated code does since gemm4: pack-AB with the thread's PanelCache (each
//              block names itself, so B's panels and A's rows packed by an earlier block are reused)
//   cached-60  `cached` on the first 60 rows of every 64-row tile only (same K and N): with AVX2's
//              MR = 6 a 64-row tile is 10 micro-panels and a 4-row tail, 60 rows have no tail, so
//              1 - cached-60 / cached is the tail's share of the time (its share of the FLOPs: 6.25 %)
//   kernel-60  `kernel` on 60x64 tiles (the same comparison with every operand hot in L1)
//
//   g++ -O3 -march=x86-64-v3 -std=c++17 -Iruntime_headers bench/gemm_replica.cpp -o /tmp/gemm_replica
//   /tmp/gemm_replica [REPEATS]
#include "tilec/gemm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

constexpr int N = 1024, T = 64, NB = N / T;
using namespace tl::gemm;

double thread_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// acc += A(i0.., k0..) @ B(k0.., j0..) for one 64-step, A and B read through row stride N.
template <bool PackB> void step_from_arrays(const float* a, const float* b, float* acc) {
    constexpr int NR = NV * Simd<float>::W, MB = T / MR * MR;
    alignas(64) float panel[T * NR];
    for (int j0 = 0; j0 < T; j0 += NR) {
        if (PackB)
            for (int k = 0; k < T; ++k) std::memcpy(panel + k * NR, b + k * N + j0, NR * sizeof(float));
        const float* bp = PackB ? panel : b + j0;
        constexpr int LDB = PackB ? NR : N;
        for (int i = 0; i < MB; i += MR) micro_kernel<float, MR, T, N, 1, LDB>(a + i * N, bp, acc + i * T + j0, T, NR, 1.f, 1.f);
        micro_kernel<float, T - MB, T, N, 1, LDB>(a + MB * N, bp, acc + MB * T + j0, T, NR, 1.f, 1.f);
    }
}

enum Variant { TILES, IN_PLACE, PACK_B, PACK_AB, TILES_G4, KERNEL, CACHED, CACHED_60, KERNEL_60, VARIANTS };
const char* const NAMES[] = {"tiles", "in-place", "pack-B", "pack-AB", "tiles-G4", "kernel", "cached", "cached-60",
                             "kernel-60"};
constexpr int ROWS_60 = 60;  // the rows of a tile that the -60 variants compute
bool tail_less(Variant v) { return v == CACHED_60 || v == KERNEL_60; }

// The generated code's block loop with PanelCache reuse (ROWS of each tile); a run is one launch.
template <int ROWS> void run_cached(const float* A, const float* B, float* C) {
    static unsigned long long launch = 0;  // PanelCache: launch numbers start at 1
    ++launch;
    alignas(64) static float acc[ROWS * T];
    for (int blk = 0; blk < NB * NB; ++blk) {
        const int bi = blk / NB, bj = blk % NB;
        const BlockId who{launch, {bi, bj, 0, 0}};
        std::memset(acc, 0, sizeof(acc));
        for (int k = 0; k < NB; ++k) {
            const ViewA<float, ROWS, T> pa{Strided<float>{A, bi * T, k * T, N, 1, N, N}};
            matmul_packed<float, ROWS, T, T>(pa, Strided<float>{B, k * T, bj * T, N, 1, N, N}, acc, 1.f, 1.f, &who);
        }
        for (int r = 0; r < ROWS; ++r) std::memcpy(C + (bi * T + r) * N + bj * T, acc + r * T, T * sizeof(float));
    }
}

double run(Variant v, const float* A, const float* B, float* C) {
    alignas(64) static float ta[T * T], tb[T * T], acc[T * T];
    const double t0 = thread_seconds();
    if (v == KERNEL || v == KERNEL_60) {
        for (int s = 0; s < NB * NB * NB; ++s)
            if (v == KERNEL)
                matmul<float, T, T, T, false, false>(ta, tb, acc, 1.f, 1.f);
            else
                matmul<float, ROWS_60, T, T, false, false>(ta, tb, acc, 1.f, 1.f);
        return thread_seconds() - t0;
    }
    if (v == CACHED || v == CACHED_60) {
        if (v == CACHED)
            run_cached<T>(A, B, C);
        else
            run_cached<ROWS_60>(A, B, C);
        return thread_seconds() - t0;
    }
    for (int blk = 0; blk < NB * NB; ++blk) {
        int bi = blk / NB, bj = blk % NB;
        if (v == TILES_G4) bi = blk / (4 * NB) * 4 + blk % 4, bj = blk % (4 * NB) / 4;
        std::memset(acc, 0, sizeof(acc));
        for (int k = 0; k < NB; ++k) {
            const float* a = A + (bi * T) * N + k * T;
            const float* b = B + (k * T) * N + bj * T;
            if (v == IN_PLACE) {
                step_from_arrays<false>(a, b, acc);
            } else if (v == PACK_B) {
                step_from_arrays<true>(a, b, acc);
            } else if (v == PACK_AB) {
                const ViewA<float, T, T> pa{Strided<float>{A, bi * T, k * T, N, 1, N, N}};
                matmul_packed<float, T, T, T>(pa, Strided<float>{B, k * T, bj * T, N, 1, N, N}, acc, 1.f, 1.f);
            } else {
                for (int r = 0; r < T; ++r) std::memcpy(ta + r * T, a + r * N, T * sizeof(float));
                for (int r = 0; r < T; ++r) std::memcpy(tb + r * T, b + r * N, T * sizeof(float));
                matmul<float, T, T, T, false, false>(ta, tb, acc, 1.f, 1.f);
            }
        }
        for (int r = 0; r < T; ++r) std::memcpy(C + (bi * T + r) * N + bj * T, acc + r * T, T * sizeof(float));
    }
    return thread_seconds() - t0;
}

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 9;
    std::vector<float> A(N * N), B(N * N), C(N * N), ref;
    for (int i = 0; i < N * N; ++i) A[i] = float(i % 7) * 0.125f, B[i] = float(i % 5) * 0.25f;
    double best[VARIANTS];
    for (double& b : best) b = 1e30;
    for (int r = 0; r < repeats; ++r)
        for (int v = 0; v < VARIANTS; ++v) {
            const double s = run(Variant(v), A.data(), B.data(), C.data());
            if (s < best[v]) best[v] = s;
            if (v == TILES && r == 0) ref = C;
            if (v != KERNEL && !tail_less(Variant(v)) && C != ref) return std::printf("%s: result differs from tiles\n", NAMES[v]), 1;
        }
    std::printf("ISA %s, N = %d, tile %d, best of %d (thread CPU time)\n", TILEC_GEMM_ISA, N, T, repeats);
    for (int v = 0; v < VARIANTS; ++v) {
        const double flops = 2.0 * N * N * N * (tail_less(Variant(v)) ? ROWS_60 / double(T) : 1.0);
        std::printf("%-9s %7.2f ms %6.1f GFLOP/s\n", NAMES[v], best[v] * 1e3, flops / best[v] * 1e-9);
    }
    std::printf("the %d-row tail (%.2f %% of the FLOPs): %.1f %% of `cached`, %.1f %% of `kernel`\n", T - ROWS_60,
                100.0 * (T - ROWS_60) / T, 100.0 * (1 - best[CACHED_60] / best[CACHED]),
                100.0 * (1 - best[KERNEL_60] / best[KERNEL]));
}
