// Calls the tilec-generated GEMM (forward and adjoint) through its C API and checks the results
// against a naive loop. Exit status 0 and "cpp_consumer ok" on success.
#include <cmath>
#include <cstdio>
#include <vector>

#include "gemm.h"

static tilec_array view(float* data, int64_t rows, int64_t cols) {
    tilec_array a = {};
    a.data = data;
    a.shape[0] = rows;
    a.shape[1] = cols;
    a.strides[0] = cols * int64_t(sizeof(float));
    a.strides[1] = int64_t(sizeof(float));
    return a;
}

int main() {
    const int M = 70, N = 50, K = 45;
    std::vector<float> A(M * K), B(K * N), C(M * N, 0.0f), dA(M * K, 0.0f), dB(K * N, 0.0f), dC(M * N, 1.0f);
    for (int i = 0; i < M * K; ++i) A[i] = float((i * 37) % 17) / 8.0f - 1.0f;
    for (int i = 0; i < K * N; ++i) B[i] = float((i * 11) % 13) / 6.0f - 1.0f;

    tilec_launch launch = {};
    launch.dim[0] = (M + 31) / 32;
    launch.dim[1] = (N + 31) / 32;
    launch.ndim = 2;
    launch.block_dim = 256;
    if (gemm_gemm_cpu_forward(&launch, view(A.data(), M, K), view(B.data(), K, N), view(C.data(), M, N)) != 0) return 1;
    if (gemm_gemm_cpu_backward(&launch, view(A.data(), M, K), view(B.data(), K, N), view(C.data(), M, N),
                          view(dA.data(), M, K), view(dB.data(), K, N), view(dC.data(), M, N)) != 0)
        return 1;

    double worst = 0.0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0.0;
            for (int k = 0; k < K; ++k) s += double(A[i * K + k]) * B[k * N + j];
            worst = std::fmax(worst, std::fabs(s - C[i * N + j]));
        }
    for (int i = 0; i < M; ++i)  // dA = dC @ B^T with dC = 1: row sums of B
        for (int k = 0; k < K; ++k) {
            double s = 0.0;
            for (int j = 0; j < N; ++j) s += B[k * N + j];
            worst = std::fmax(worst, std::fabs(s - dA[i * K + k]));
        }
    if (worst > 1e-3) {
        std::printf("cpp_consumer mismatch: %g\n", worst);
        return 1;
    }
    std::printf("cpp_consumer ok\n");
    return 0;
}
