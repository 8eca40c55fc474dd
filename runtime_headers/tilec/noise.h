// tilec runtime: Perlin noise as Warp 1.19 defines it (wp.noise, wp.pnoise, wp.curlnoise) and its
// gradient. Each corner of the lattice cell around a point gets a pseudo-random gradient, hashed
// from the corner's integer coordinates and the state: in 1-d a uniform value in [-1, 1], else the
// normalized uniform point of the centred unit square, cube or hypercube (the same PCG draws as
// random.h). A corner's value is the dot product of its gradient with the point's offset from the
// corner; the corner values are blended with the quintic smootherstep along x, then y, z and t.
// The same operations in the same order as Warp's, so the values are Warp's (no FMA contraction).
#pragma once
#include "random.h"
#include "vec.h"

namespace tl {
namespace perlin {

TL_HD float smoother(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
TL_HD float smoother_slope(float t) { return 30.0f * t * t * (t * (t - 2.0f) + 1.0f); }
TL_HD float blend(float a0, float a1, float t) { return (a1 - a0) * smoother(t) + a0; }

// The hash of a corner: x * p0 ^ y * p1 ^ ... ^ (last * p_last + state), in uint32 (C++ binds the
// addition tighter than the XORs, as in Warp's source).
template <int N> TL_HD uint32_t corner_hash(uint32_t state, const int* corner) {
    const uint32_t primes[4] = {73856093u, 19349663u, 53471161u, 10000019u};
    uint32_t h = uint32_t(corner[N - 1]) * primes[N - 1] + state;
    for (int k = N - 2; k >= 0; --k) h ^= uint32_t(corner[k]) * primes[k];
    return h;
}

// The corner's gradient as N floats.
template <int N> TL_HD void corner_gradient(uint32_t state, const int* corner, float* g) {
    uint32_t s = corner_hash<N>(state, corner);
    if (N == 1) {
        g[0] = 2.0f * rand_unit(rand_pcg(s)) + -1.0f;  // randf(s, -1, 1): (max - min) * u + min
        return;
    }
    vec<N, float> p;
    for (int k = 0; k < N; ++k) {
        s = rand_pcg(s);
        p.c[k] = rand_unit(s) - 0.5f;
    }
    p = normalize(p);
    for (int k = 0; k < N; ++k) g[k] = p.c[k];
}

// The cell of a point: its lower corner, the corner above it (wrapped to the periods for pnoise:
// C's remainder, as Warp's mod of ints) and the offset inside the cell.
template <int N> struct Cell {
    int lo[N], hi[N];
    float d[N];
};
template <int N> TL_HD Cell<N> cell(const float* x, const int* periods) {
    Cell<N> c;
    for (int k = 0; k < N; ++k) {
        const float f = floorf(x[k]);
        c.d[k] = x[k] - f;
        c.lo[k] = int(f);
        c.hi[k] = c.lo[k] + 1;
        if (periods != nullptr) {
            c.lo[k] = c.lo[k] % periods[k];
            c.hi[k] = (c.lo[k] + 1) % periods[k];
        }
    }
    return c;
}

// The 2^N corners, corner i taking hi on axis k where bit k of i is set.
template <int N> TL_HD void corner_of(const Cell<N>& c, int i, int* corner, float* offset) {
    for (int k = 0; k < N; ++k) {
        const bool high = (i >> k) & 1;
        corner[k] = high ? c.hi[k] : c.lo[k];
        offset[k] = high ? c.d[k] - 1.0f : c.d[k];
    }
}

// Warp's corner value: dx * g0 + dy * g1 + ..., left to right.
template <int N> TL_HD float corner_value(const float* offset, const float* g) {
    float v = offset[0] * g[0];
    for (int k = 1; k < N; ++k) v = v + offset[k] * g[k];
    return v;
}

template <int N> TL_HD float value(uint32_t state, const Cell<N>& c) {
    float v[1 << N];
    for (int i = 0; i < (1 << N); ++i) {
        int corner[N];
        float offset[N], g[N];
        corner_of<N>(c, i, corner, offset);
        corner_gradient<N>(state, corner, g);
        v[i] = corner_value<N>(offset, g);
    }
    for (int k = 0; k < N; ++k)  // blend along axis k: corner i (bit k clear) with corner i | 2^k
        for (int i = 0; i < (1 << N); i += 2 << k) v[i] = blend(v[i], v[i | (1 << k)], c.d[k]);
    return v[0];
}

// The gradient of value() with respect to the point, as Warp's noise_Nd_gradient computes it: each
// blend of (a0, g0) and (a1, g1) along axis k gives (g1 - g0) * S(t) + ((a1 - a0) * S'(t)) * e_k + g0.
template <int N> TL_HD vec<N, float> gradient(uint32_t state, const Cell<N>& c) {
    float v[1 << N];
    vec<N, float> dv[1 << N];
    for (int i = 0; i < (1 << N); ++i) {
        int corner[N];
        float offset[N], g[N];
        corner_of<N>(c, i, corner, offset);
        corner_gradient<N>(state, corner, g);
        vec<N, float> d, gv;
        for (int k = 0; k < N; ++k) {
            d.c[k] = offset[k];
            gv.c[k] = g[k];
        }
        v[i] = N == 1 ? offset[0] * g[0] : dot(d, gv);
        dv[i] = gv;
    }
    for (int k = 0; k < N; ++k) {
        vec<N, float> axis;
        axis.c[k] = 1.0f;
        for (int i = 0; i < (1 << N); i += 2 << k) {
            const int j = i | (1 << k);
            const float t = c.d[k];
            dv[i] = (dv[j] - dv[i]) * smoother(t) + ((v[j] - v[i]) * smoother_slope(t)) * axis + dv[i];
            v[i] = blend(v[i], v[j], t);
        }
    }
    return dv[0];
}

// The noise's second derivatives (curlnoise's adjoint): each corner's value is linear in the point,
// so they come from the blends alone. Blending (a0, g0, H0) with (a1, g1, H1) along axis k at t:
// H = H0 + (H1 - H0) S(t) + S'(t) ((g1 - g0) e_k^T + e_k (g1 - g0)^T) + (a1 - a0) S''(t) e_k e_k^T.
template <int N> struct Hessian {
    float h[N][N];
};
TL_HD float smoother_curvature(float t) { return 60.0f * t * (t * (t * 2.0f - 3.0f) + 1.0f); }
template <int N> TL_HD Hessian<N> hessian(uint32_t state, const Cell<N>& c) {
    float v[1 << N], g[1 << N][N], h[1 << N][N][N];
    for (int i = 0; i < (1 << N); ++i) {
        int corner[N];
        float offset[N];
        corner_of<N>(c, i, corner, offset);
        corner_gradient<N>(state, corner, g[i]);
        v[i] = corner_value<N>(offset, g[i]);
        for (int a = 0; a < N; ++a)
            for (int b = 0; b < N; ++b) h[i][a][b] = 0.0f;
    }
    for (int k = 0; k < N; ++k) {
        const float t = c.d[k], s = smoother(t), s1 = smoother_slope(t), s2 = smoother_curvature(t);
        for (int i = 0; i < (1 << N); i += 2 << k) {
            const int j = i | (1 << k);
            const float dv = v[j] - v[i];
            float dg[N];
            for (int a = 0; a < N; ++a) dg[a] = g[j][a] - g[i][a];
            for (int a = 0; a < N; ++a)
                for (int b = 0; b < N; ++b) h[i][a][b] = h[i][a][b] + (h[j][a][b] - h[i][a][b]) * s;
            for (int a = 0; a < N; ++a) {
                h[i][a][k] = h[i][a][k] + dg[a] * s1;
                h[i][k][a] = h[i][k][a] + dg[a] * s1;
            }
            h[i][k][k] = h[i][k][k] + dv * s2;
            for (int a = 0; a < N; ++a) g[i][a] = g[i][a] + dg[a] * s;
            g[i][k] = g[i][k] + dv * s1;
            v[i] = v[i] + dv * s;
        }
    }
    Hessian<N> out;
    for (int a = 0; a < N; ++a)
        for (int b = 0; b < N; ++b) out.h[a][b] = h[0][a][b];
    return out;
}

template <int N> TL_HD const float* components(const vec<N, float>& x) { return x.c; }
TL_HD const float* components(const float& x) { return &x; }

}  // namespace perlin

// wp.noise(state, x): x a float, vec2, vec3 or vec4.
template <class X> TL_HD float noise(uint32_t state, const X& x) {
    constexpr int N = sizeof(X) / sizeof(float);
    return perlin::value<N>(state, perlin::cell<N>(perlin::components(x), nullptr));
}
// Its gradient with respect to x (the adjoint's), of x's type.
TL_HD float noise_gradient(uint32_t state, float x) {
    return perlin::gradient<1>(state, perlin::cell<1>(&x, nullptr)).c[0];
}
template <int N> TL_HD vec<N, float> noise_gradient(uint32_t state, const vec<N, float>& x) {
    return perlin::gradient<N>(state, perlin::cell<N>(x.c, nullptr));
}

// wp.pnoise(state, x, px, ...): periodic in each axis (the periods one int per component of x).
template <class X, class... P> TL_HD float pnoise(uint32_t state, const X& x, P... periods) {
    constexpr int N = sizeof(X) / sizeof(float);
    static_assert(sizeof...(P) == N, "one period per component");
    const int p[N] = {int(periods)...};
    return perlin::value<N>(state, perlin::cell<N>(perlin::components(x), p));
}
template <class... P> TL_HD float pnoise_gradient(uint32_t state, float x, P... periods) {
    const int p[1] = {int(periods)...};
    return perlin::gradient<1>(state, perlin::cell<1>(&x, p)).c[0];
}
template <int N, class... P> TL_HD vec<N, float> pnoise_gradient(uint32_t state, const vec<N, float>& x, P... periods) {
    const int p[N] = {int(periods)...};
    return perlin::gradient<N>(state, perlin::cell<N>(x.c, p));
}

// wp.curlnoise(state, x, octaves, lacunarity, gain): a divergence-free field, summed over octaves of
// frequency lacunarity^i and amplitude gain^i. 2-d: the gradient of one noise field turned by 90
// degrees; 3-d and 4-d (x, y, z, t): the curl of three fields, the second and third with the state
// rehashed by rand_init(state, 10019689) and then rand_init(state, 13112221), each octave.
TL_HD vec<2, float> curlnoise(uint32_t state, const vec<2, float>& x, uint32_t octaves, float lacunarity, float gain) {
    vec<2, float> sum(0.0f);
    float freq = 1.0f, amplitude = 1.0f;
    for (int i = 0; i < int(octaves); ++i) {
        const vec<2, float> p = freq * x;
        sum = sum + amplitude * perlin::gradient<2>(state, perlin::cell<2>(p.c, nullptr));
        amplitude = amplitude * gain;
        freq = freq * lacunarity;
    }
    return vec<2, float>(-sum.c[1], sum.c[0]);
}
template <int N>
TL_HD vec<3, float> curlnoise(uint32_t state, const vec<N, float>& x, uint32_t octaves, float lacunarity, float gain) {
    static_assert(N == 3 || N == 4, "curlnoise takes a vec2, vec3 or vec4");
    vec<N, float> s1(0.0f), s2(0.0f), s3(0.0f);
    float freq = 1.0f, amplitude = 1.0f;
    for (int i = 0; i < int(octaves); ++i) {
        const vec<N, float> p = freq * x;
        const perlin::Cell<N> c = perlin::cell<N>(p.c, nullptr);
        const vec<N, float> g1 = perlin::gradient<N>(state, c);
        state = rand_init(int32_t(state), 10019689);
        const vec<N, float> g2 = perlin::gradient<N>(state, c);
        state = rand_init(int32_t(state), 13112221);
        const vec<N, float> g3 = perlin::gradient<N>(state, c);
        s1 = s1 + amplitude * g1;
        s2 = s2 + amplitude * g2;
        s3 = s3 + amplitude * g3;
        amplitude = amplitude * gain;
        freq = freq * lacunarity;
    }
    return vec<3, float>(s3.c[1] - s2.c[2], s1.c[2] - s3.c[0], s2.c[0] - s1.c[1]);
}

// curlnoise's adjoint: r (the gradient of its result) times the Jacobian of the result with respect
// to x, summed over the octaves (each Jacobian the noises' Hessians at freq * x times amplitude *
// freq). The lacunarity and gain get none here: the adjoint rule refuses them when they vary.
TL_HD vec<2, float> curlnoise_adjoint(uint32_t state, const vec<2, float>& x, uint32_t octaves, float lacunarity,
                                      float gain, const vec<2, float>& r) {
    vec<2, float> adj(0.0f);
    float freq = 1.0f, amplitude = 1.0f;
    for (int i = 0; i < int(octaves); ++i) {
        const vec<2, float> p = freq * x;
        const perlin::Hessian<2> H = perlin::hessian<2>(state, perlin::cell<2>(p.c, nullptr));
        const float k = amplitude * freq;  // d(-s.y, s.x)/dx = k [[-H10, -H11], [H00, H01]]
        for (int c = 0; c < 2; ++c) adj.c[c] = adj.c[c] + k * (-H.h[1][c] * r.c[0] + H.h[0][c] * r.c[1]);
        amplitude = amplitude * gain;
        freq = freq * lacunarity;
    }
    return adj;
}
template <int N>
TL_HD vec<N, float> curlnoise_adjoint(uint32_t state, const vec<N, float>& x, uint32_t octaves, float lacunarity,
                                      float gain, const vec<3, float>& r) {
    vec<N, float> adj(0.0f);
    float freq = 1.0f, amplitude = 1.0f;
    for (int i = 0; i < int(octaves); ++i) {
        const vec<N, float> p = freq * x;
        const perlin::Cell<N> cell = perlin::cell<N>(p.c, nullptr);
        const perlin::Hessian<N> H1 = perlin::hessian<N>(state, cell);
        state = rand_init(int32_t(state), 10019689);
        const perlin::Hessian<N> H2 = perlin::hessian<N>(state, cell);
        state = rand_init(int32_t(state), 13112221);
        const perlin::Hessian<N> H3 = perlin::hessian<N>(state, cell);
        const float k = amplitude * freq;  // rows of the Jacobian: H3[1] - H2[2], H1[2] - H3[0], H2[0] - H1[1]
        for (int c = 0; c < N; ++c)
            adj.c[c] = adj.c[c] + k * (r.c[0] * (H3.h[1][c] - H2.h[2][c]) + r.c[1] * (H1.h[2][c] - H3.h[0][c]) +
                                       r.c[2] * (H2.h[0][c] - H1.h[1][c]));
        amplitude = amplitude * gain;
        freq = freq * lacunarity;
    }
    return adj;
}

}  // namespace tl
