// tilec runtime: the definitions of gemm.h's five entry points (declared and documented there).
//
// Included at the end of gemm.h, unless TILEC_GEMM_EXTERN is defined: then a module's translation
// unit only declares them, and tilec's cached instances object (backend_cpu/gemm_instances.py)
// includes this header after tilec.h to define the instances the module needs. Not inline: every
// translation unit declares them alike, whichever defines them.
#pragma once

namespace tl {
namespace gemm {

template <class T, int M, int N, int K, bool TA, bool TB>
void matmul(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta) {
#if TILEC_GEMM_DISPATCH
    if constexpr (avx512_fits<T, N>)
        if (use_avx512()) return matmul_with<IsaAvx512, T, M, N, K, TA, TB>(a, b, c, alpha, beta);
#endif
    matmul_with<IsaBuild, T, M, N, K, TA, TB>(a, b, c, alpha, beta);
}

template <class T, int M, int N, int K, class ASrc>
void matmul_packed(const ASrc& a, const Strided<T>& b, T* __restrict c, T alpha, T beta,
                   const BlockId* reuse) {
#if TILEC_GEMM_DISPATCH
    if constexpr (avx512_fits<T, N>)
        if (use_avx512()) return matmul_packed_with<IsaAvx512, T, M, N, K>(a, b, c, alpha, beta, reuse);
#endif
    matmul_packed_with<IsaBuild, T, M, N, K>(a, b, c, alpha, beta, reuse);
}

template <class T, int M, int N, int K>
void matmul_sum(const Strided<T>* as, const Strided<T>* bs, int steps, T* __restrict c, int ldc, T beta,
                const BlockId* reuse) {
#if TILEC_GEMM_DISPATCH
    if constexpr (avx512_fits<T, N>)
        if (use_avx512()) return matmul_sum_with<IsaAvx512, T, M, N, K>(as, bs, steps, c, ldc, beta, reuse);
#endif
    matmul_sum_with<IsaBuild, T, M, N, K>(as, bs, steps, c, ldc, beta, reuse);
}

template <class T, int M, int N, int K>
void matmul_transposed_view(const Strided<T>& x, const T* __restrict b, T* __restrict c, T alpha, T beta,
                            const BlockId* reuse) {
    const ViewA<T, K, M> rows_of_x{x};
    const T* copied = nullptr;
    if (reuse) {
        T* fresh = nullptr;
        copied = panel_cache().find(x, PanelCache::A_ROWS, K, M, 0, *reuse, K * M * sizeof(T), &fresh);
        if (!copied && fresh) copied = rows_of_x.panel(0, K, fresh);
    }
    if (copied) return matmul<T, M, N, K, true, false>(copied, b, c, alpha, beta);
    alignas(64) T local[K * M];
    matmul<T, M, N, K, true, false>(rows_of_x.panel(0, K, local), b, c, alpha, beta);
}

template <class T, int M, int N, int K, int RSA, int CSA>
void matmul_strided_a(const T* __restrict a, const T* __restrict b, T* __restrict c, T alpha, T beta) {
#if TILEC_GEMM_DISPATCH
    if constexpr (avx512_fits<T, N>)
        if (use_avx512()) return matmul_b_in_place<IsaAvx512, T, M, N, K, RSA, CSA>(a, b, c, alpha, beta);
#endif
    matmul_b_in_place<IsaBuild, T, M, N, K, RSA, CSA>(a, b, c, alpha, beta);
}

}  // namespace gemm
}  // namespace tl
