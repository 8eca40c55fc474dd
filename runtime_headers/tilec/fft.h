// tilec runtime: unnormalised DFTs of complex tiles along the last axis (Warp's tile_fft/tile_ifft).
// An element is a tl::vec<2, T> holding [real, imag]; every leading axis is a batch of rows of
// length N = the last extent. Sign -1 is the forward transform X[k] = sum_n x[n] e^(-2 pi i kn/N)
// (numpy.fft.fft), sign +1 the inverse without the 1/N. Each is the other's adjoint (on [re, im]
// pairs the DFT matrix's transpose is its conjugate), so the compiler differentiates tile_fft with
// tile_ifft and back (ops/adjoints.py); no adj_ function is needed here.
//
// Power-of-two N: an iterative radix-2 Cooley-Tukey FFT, in place in dst (bit-reversal
// permutation, then log2 N butterfly passes), O(N log N). Other N: the direct O(N^2) sum, with a
// row of N values as scratch (the checker limits such N to 4096, ops/fft.py). Twiddles are
// e^(sign 2 pi i m/N) for m = k*n mod N, computed in double and rounded to the compute type, so
// large k*n lose no precision. On the GPU one thread (the leader) transforms the shared tile
// between barriers, like the other whole-tile ops.
#pragma once
#include "ctx.h"
#include "vec.h"

namespace tl {

// e^(sign 2 pi i m / n) as (cos, sin), m reduced mod n by the caller.
template <class C> TL_HD void fft_twiddle(int m, int n, int sign, C& re, C& im) {
    const double angle = double(sign) * 6.283185307179586476925286766559 * double(m) / double(n);
    re = C(cos(angle));
    im = C(sin(angle));
}

// One row of n complex values in place: radix-2 (n a power of two).
template <class V> TL_HD void fft_row_radix2(V* x, int n, int sign) {
    using C = compute_t<typename std::remove_reference<decltype(x[0].c[0])>::type>;
    for (int i = 1, j = 0; i < n; ++i) {  // bit-reversal permutation
        int bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            V t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        const int half = len >> 1, step = n / len;
        for (int k = 0; k < half; ++k) {
            C wr, wi;
            fft_twiddle(k * step, n, sign, wr, wi);
            for (int s = 0; s < n; s += len) {
                V& a = x[s + k];
                V& b = x[s + k + half];
                const C br = C(b.c[0]), bi = C(b.c[1]);
                const C tr = br * wr - bi * wi, ti = br * wi + bi * wr;
                const C ar = C(a.c[0]), ai = C(a.c[1]);
                a.c[0] = ar + tr;
                a.c[1] = ai + ti;
                b.c[0] = ar - tr;
                b.c[1] = ai - ti;
            }
        }
    }
}

// One row of N complex values in place: the direct sum (any N), through a copy of the row.
template <int N, class V> TL_HD void fft_row_direct(V* x, int sign) {
    using T = typename std::remove_reference<decltype(x[0].c[0])>::type;
    using C = compute_t<T>;
    vec<2, C> in[N];
    for (int n = 0; n < N; ++n) in[n] = vec<2, C>(C(x[n].c[0]), C(x[n].c[1]));
    for (int k = 0; k < N; ++k) {
        C sr = 0, si = 0;
        long long m = 0;  // k * n mod N, stepped
        for (int n = 0; n < N; ++n) {
            C wr, wi;
            fft_twiddle(int(m), N, sign, wr, wi);
            sr += in[n].c[0] * wr - in[n].c[1] * wi;
            si += in[n].c[0] * wi + in[n].c[1] * wr;
            m += k;
            if (m >= N) m -= N;
        }
        x[k].c[0] = T(sr);
        x[k].c[1] = T(si);
    }
}

// Every row of t in place (the emitter hands an in-place op its operand already in t).
template <class TT> TL_HD void fft_rows(TT& t, int sign) {
    constexpr int N = TT::dim(TT::ndim - 1);
    for (int row = 0; row < TT::size / N; ++row) {
        if constexpr ((N & (N - 1)) == 0)
            fft_row_radix2(t.data + row * N, N, sign);
        else
            fft_row_direct<N>(t.data + row * N, sign);
    }
}

template <class TT> TL_HD void tile_fft(Ctx&, TT& inout) { fft_rows(inout, -1); }
template <class TT> TL_HD void tile_ifft(Ctx&, TT& inout) { fft_rows(inout, +1); }

}  // namespace tl
