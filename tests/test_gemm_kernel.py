"""gemm.h, the CPU matmul micro-kernel, against a float64 reference in C++: every operand form
(A and B each plain or transposed), shapes that leave row and column remainders, float and double,
alpha/beta; with the host's ISA (-march=native), the compiler's default one, and the scalar fallback forced.
The portable x86-64-v3 build both ways: its AVX2 kernel alone (TILEC_GEMM_NO_DISPATCH) and with the
AVX-512 kernel it picks at run time on a CPU that has AVX-512F (whole 32-float / 16-double panels).
The same for matmul_packed, whose operands are array views (tl::gemm::Strided): tiles at an
array's edges (zero fill past them, offsets below zero), transposed and non-unit strides, each
without the PanelCache and through it (packed by one block, read back by another); the
PanelCache's copies 64-byte aligned."""
from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, needs_cxx
from tilec.backend_cpu.compiler import find_cxx

pytestmark = [pytest.mark.build, needs_cxx]

PROGRAM = r"""
#include "tilec/gemm.h"
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdint>
#include <random>

template <class T, int M, int N, int K, bool TA, bool TB> int check(T alpha, T beta) {
    static T a[M * K], b[K * N], c[M * N], want[M * N];
    std::mt19937 gen(M * 131 + N * 7 + K);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : a) x = T(u(gen));
    for (auto& x : b) x = T(u(gen));
    for (auto& x : c) x = T(u(gen));
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k)
                s += double(TA ? a[k * M + i] : a[i * K + k]) * double(TB ? b[j * K + k] : b[k * N + j]);
            want[i * N + j] = T(double(alpha) * s + (beta == T(0) ? 0.0 : double(beta) * double(c[i * N + j])));
        }
    if (beta == T(0))
        for (auto& x : c) x = T(NAN);  // beta == 0 must not read C
    tl::gemm::matmul<T, M, N, K, TA, TB>(a, b, c, alpha, beta);
    double err = 0;
    for (int e = 0; e < M * N; ++e) err = std::fmax(err, std::fabs(double(c[e]) - double(want[e])));
    const double tol = (sizeof(T) == 4 ? 1e-5 : 1e-12) * (K + 2);
    if (!(err <= tol)) std::printf("%dx%dx%d TA=%d TB=%d %s: error %g\n", M, N, K, TA, TB, sizeof(T) == 4 ? "float" : "double", err);
    return !(err <= tol);
}

template <class T, int M, int N, int K> int forms() {
    return check<T, M, N, K, false, false>(T(1), T(1)) + check<T, M, N, K, false, true>(T(0.5), T(2)) +
           check<T, M, N, K, true, false>(T(-1), T(0)) + check<T, M, N, K, true, true>(T(2), T(-0.5));
}

// op(A) and op(B) as views of larger arrays (R x C, row-major, elements `step` apart along a row)
// at (r0, c0), possibly past the edges, B possibly transposed; against tile_load's zero fill.
template <class T, int M, int N, int K>
int check_views(bool tb, int step, long long ar0, long long ac0, long long br0, long long bc0, T alpha, T beta) {
    constexpr int R = 70, C = 70;
    static T a[R * C * 2], b[R * C * 2], c[M * N], want[M * N];
    std::mt19937 gen(M * 17 + N * 3 + K + step);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : a) x = T(u(gen));
    for (auto& x : b) x = T(u(gen));
    for (auto& x : c) x = T(u(gen));
    const tl::gemm::Strided<T> sa{a, ar0, ac0, C * step, step, R, C};
    const tl::gemm::Strided<T> sb0{b, br0, bc0, C * step, step, R, C};  // B as stored (N x K when transposed)
    const tl::gemm::Strided<T> sb = tb ? sb0.transpose() : sb0;
    auto at = [](const tl::gemm::Strided<T>& s, long long i, long long k) {
        const long long r = s.r0 + i, q = s.c0 + k;
        return r >= 0 && r < s.rows && q >= 0 && q < s.cols ? double(s.data[r * s.rs + q * s.cs]) : 0.0;
    };
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += at(sa, i, k) * at(sb, k, j);
            want[i * N + j] = T(double(alpha) * s + (beta == T(0) ? 0.0 : double(beta) * double(c[i * N + j])));
        }
    if (beta == T(0))
        for (auto& x : c) x = T(NAN);
    static T c_in[M * N];
    std::copy(c, c + M * N, c_in);
    // Without the PanelCache, then as two blocks of one launch: the first copies A's rows and
    // packs B's panels into the cache, the second reads them back.
    static unsigned long long launch = 1000;
    ++launch;
    int bad = 0;
    for (int block = -1; block < 2; ++block) {
        std::copy(c_in, c_in + M * N, c);
        const tl::gemm::BlockId who{launch, {block, 0, 0, 0}};
        tl::gemm::matmul_packed<T, M, N, K>(tl::gemm::ViewA<T, M, K>{sa}, sb, c, alpha, beta, block < 0 ? nullptr : &who);
        double err = 0;
        for (int e = 0; e < M * N; ++e) err = std::fmax(err, std::fabs(double(c[e]) - double(want[e])));
        const double tol = (sizeof(T) == 4 ? 1e-5 : 1e-12) * (K + 2);
        if (!(err <= tol))
            std::printf("views %dx%dx%d tb=%d step=%d A@(%lld,%lld) B@(%lld,%lld) block %d: error %g\n", M, N, K, tb, step,
                        ar0, ac0, br0, bc0, block, err);
        bad += !(err <= tol);
    }
    return bad;
}

template <class T, int M, int N, int K> int view_forms() {
    int bad = 0;
    for (int tb = 0; tb < 2; ++tb)
        for (int step = 1; step <= 2; ++step)
            bad += check_views<T, M, N, K>(tb, step, 3, 5, 2, 1, T(1), T(1)) +        // interior
                   check_views<T, M, N, K>(tb, step, 70 - M / 2, 70 - K + 3, 70 - K / 2, 70 - N / 2, T(1), T(0)) +  // past the far edges
                   check_views<T, M, N, K>(tb, step, -3, -2, -1, -N / 2, T(0.5), T(2));  // before the near edges
    return bad;
}

int main() {
    int bad = view_forms<float, 64, 64, 64>() + view_forms<float, 13, 33, 7>() + view_forms<float, 12, 16, 20>() +
              view_forms<double, 9, 40, 3>() + view_forms<double, 32, 32, 32>() + view_forms<float, 8, 20, 9>();
    bad += forms<float, 64, 64, 64>() + forms<float, 12, 6, 20>() + forms<float, 1, 1, 1>() +
              forms<float, 13, 33, 7>() + forms<float, 16, 256, 32>() + forms<double, 9, 40, 3>() +
              forms<double, 32, 32, 32>() + forms<float, 20, 16, 5>() + forms<float, 8, 24, 4>();
    // Whole AVX-512 panels with row remainders of 8-row micro-panels (13 = 8 + 5, 20 = 8 + 6 + 6, 3)
    bad += forms<float, 13, 32, 7>() + forms<float, 20, 64, 5>() + forms<double, 3, 16, 9>() +
           view_forms<float, 20, 32, 11>() + view_forms<double, 13, 48, 5>();
    {  // the PanelCache's copies start 64-byte aligned (its memory is as large as a malloc'd mmap)
        static float view[64 * 64];
        const tl::gemm::Strided<float> key{view, 0, 0, 64, 1, 64, 64};
        const tl::gemm::BlockId who{1ull << 40, {0, 0, 0, 0}};
        float* fresh = nullptr;
        tl::gemm::panel_cache().find(key, tl::gemm::PanelCache::A_ROWS, 64, 64, 0, who, 100, &fresh);
        if (fresh == nullptr || reinterpret_cast<std::uintptr_t>(fresh) % 64 != 0) {
            std::printf("PanelCache copy at %p\n", static_cast<void*>(fresh));
            ++bad;
        }
    }
    std::printf("%s %d\n", tl::gemm::kernel_isa(), bad);
    return bad != 0;
}
"""


# Rows M with M % MR in 1 .. MR / 2 (8, 9, 13, 20, 32 for one ISA or another) take gemm.h's split tail
# (for_micro_panels); x86-64-v3 is the portable build's AVX2 6x16 kernel whatever this host has.
def _host_has(flag: str) -> bool:
    try:
        return platform.machine().lower() in ("x86_64", "amd64") and f" {flag} " in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


NEEDS_AVX2 = pytest.mark.skipif(not _host_has("avx2"), reason="needs AVX2")
V3 = pytest.param(["-march=x86-64-v3"], id="x86-64-v3", marks=NEEDS_AVX2)
V3_AVX2_ONLY = pytest.param(["-march=x86-64-v3", "-DTILEC_GEMM_NO_DISPATCH"], id="x86-64-v3-avx2", marks=NEEDS_AVX2)


def _expected_isa(flags: list[str]) -> str | None:
    """The kernel the program must report, where the flags decide it (None: the host's own)."""
    if "-DTILEC_GEMM_SCALAR" in flags:
        return "scalar"
    if "-march=x86-64-v3" in flags:
        dispatch = "-DTILEC_GEMM_NO_DISPATCH" not in flags
        return "avx512" if dispatch and _host_has("avx512f") else "avx2-fma"
    return None


@pytest.mark.parametrize("flags", [pytest.param(["-march=native"], id="native"), V3, V3_AVX2_ONLY,
                                   pytest.param([], id="default"), pytest.param(["-DTILEC_GEMM_SCALAR"], id="scalar")])
def test_gemm_kernel_matches_float64_reference(tmp_path: Path, flags):
    src, exe = tmp_path / "gemm_check.cpp", tmp_path / "gemm_check"
    src.write_text(PROGRAM)
    cxx = find_cxx()
    subprocess.run([cxx, "-std=c++17", "-O2", *flags, "-I", str(ROOT / "runtime_headers"),
                    "-o", str(exe), str(src)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    isa, bad = run.stdout.split()[-2:]
    assert bad == "0"
    assert (isa == "scalar") == ("-DTILEC_GEMM_SCALAR" in flags)
    if _expected_isa(flags) is not None:
        assert isa == _expected_isa(flags)
