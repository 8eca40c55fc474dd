// tilec runtime: random numbers, bit for bit Warp's (the PCG hash of Jarzynski and Olano, "Hash
// Functions for GPU Rendering", JCGT 2020). Tile element e comes from thread e % block_dim's
// stream, seeded with hash(thread + rng), its (e / block_dim + 1)-th draw.
#pragma once
#include "ctx.h"
#include "vec.h"

namespace tl {

TL_HD uint32_t rand_pcg(uint32_t state) {
    const uint32_t b = state * 747796405u + 2891336453u;
    const uint32_t c = ((b >> ((b >> 28u) + 4u)) ^ b) * 277803737u;
    return (c >> 22u) ^ c;
}
TL_HD uint32_t rand_init(int32_t seed) { return rand_pcg(uint32_t(seed)); }
TL_HD uint32_t rand_init(int32_t seed, int32_t offset) { return rand_pcg(uint32_t(seed) + rand_pcg(uint32_t(offset))); }
// The top 24 bits as a float in [0, 1 - 2^-24].
TL_HD float rand_unit(uint32_t draw) { return float(draw >> 8) * (1.0f / 16777216.0f); }

// Calls put(element, draw) for every element, in the streams Warp's threads draw. Each thread
// seeds its stream with its own rng: where lanes run, lane t's rng (they may differ per lane).
template <class TT, class F> TL_HD void tile_rand_draws(Ctx& ctx, uint32_t rng, F put) {
    const int threads = ctx.block_dim > 0 ? ctx.block_dim : 1;
    uint32_t* lane_rng = nullptr;
    if (ctx.nlanes > 1) {
        lane_rng = reinterpret_cast<uint32_t*>(ctx.scratch());
        lane_rng[ctx.lane] = rng;
        ctx.sync();
    }
    for (int t = 0; t < threads && t < TT::size; ++t) {
        uint32_t state = rand_pcg(uint32_t(t) + (lane_rng != nullptr && t < ctx.nlanes ? lane_rng[t] : rng));
        for (int e = t; e < TT::size; e += threads) {
            state = rand_pcg(state);
            put(e, state);
        }
    }
    if (lane_rng != nullptr) ctx.sync();  // the slots are read before any lane reuses the scratch
}
template <class TT> TL_HD void tile_randf(Ctx& ctx, TT& dst, uint32_t rng) {
    tile_rand_draws<TT>(ctx, rng, [&](int e, uint32_t s) { dst.data[e] = rand_unit(s); });
}
// a * b rounded to float on its own: never contracted with a following add into an FMA (which
// g++ -O3 and nvcc do by default), so (hi - lo) * u + lo rounds as in Warp's CPU build.
TL_HD float mul_rounded(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    volatile float p = a * b;
    return p;
#endif
}
template <class TT> TL_HD void tile_randf(Ctx& ctx, TT& dst, uint32_t rng, float lo, float hi) {
    tile_rand_draws<TT>(ctx, rng, [&](int e, uint32_t s) { dst.data[e] = mul_rounded(hi - lo, rand_unit(s)) + lo; });
}
template <class TT> TL_HD void tile_randi(Ctx& ctx, TT& dst, uint32_t rng) {
    tile_rand_draws<TT>(ctx, rng, [&](int e, uint32_t s) { dst.data[e] = int32_t(s); });
}
// As Warp: the draw modulo (max - min) in unsigned arithmetic, plus min.
template <class TT> TL_HD void tile_randi(Ctx& ctx, TT& dst, uint32_t rng, int32_t lo, int32_t hi) {
    tile_rand_draws<TT>(ctx, rng, [&](int e, uint32_t s) { dst.data[e] = int32_t(s % uint32_t(hi - lo) + uint32_t(lo)); });
}

// The GPU model: each thread draws its own elements (e = lane, lane + block_dim, ...) from its own
// rng straight into the block's shared tile, as Warp's threads do.
template <class TT, class F> TL_HD void shared_tile_rand(Ctx& ctx, TT& dst, uint32_t rng, F value) {
    ctx.sync();
    uint32_t state = rand_pcg(uint32_t(ctx.lane) + rng);
    for (int e = ctx.lane; e < TT::size; e += ctx.nlanes) {
        state = rand_pcg(state);
        dst.data[e] = value(state);
    }
    ctx.sync();
}
template <class TT> TL_HD void shared_tile_randf(Ctx& ctx, TT& dst, uint32_t rng) {
    shared_tile_rand(ctx, dst, rng, [](uint32_t s) { return rand_unit(s); });
}
template <class TT> TL_HD void shared_tile_randf(Ctx& ctx, TT& dst, uint32_t rng, float lo, float hi) {
    shared_tile_rand(ctx, dst, rng, [=](uint32_t s) { return mul_rounded(hi - lo, rand_unit(s)) + lo; });
}
template <class TT> TL_HD void shared_tile_randi(Ctx& ctx, TT& dst, uint32_t rng) {
    shared_tile_rand(ctx, dst, rng, [](uint32_t s) { return int32_t(s); });
}
template <class TT> TL_HD void shared_tile_randi(Ctx& ctx, TT& dst, uint32_t rng, int32_t lo, int32_t hi) {
    shared_tile_rand(ctx, dst, rng, [=](uint32_t s) { return int32_t(s % uint32_t(hi - lo) + uint32_t(lo)); });
}

// Scalar draws: pure functions of the state before the call (the caller advances its state
// variable with rand_advance), each the value Warp's randf/randi/randu/randn return from it.
TL_HD uint32_t rand_advance(uint32_t state, int count) {
    for (int k = 0; k < count; ++k) state = rand_pcg(state);
    return state;
}
TL_HD float randf(uint32_t state) { return rand_unit(rand_pcg(state)); }
TL_HD float randf(uint32_t state, float lo, float hi) { return mul_rounded(hi - lo, randf(state)) + lo; }
TL_HD int32_t randi(uint32_t state) { return int32_t(rand_pcg(state)); }
TL_HD int32_t randi(uint32_t state, int32_t lo, int32_t hi) {
    return int32_t(rand_pcg(state) % uint32_t(hi - lo) + uint32_t(lo));
}
TL_HD uint32_t randu(uint32_t state) { return rand_pcg(state); }
TL_HD uint32_t randu(uint32_t state, uint32_t lo, uint32_t hi) { return rand_pcg(state) % (hi - lo) + lo; }
// Box-Muller from two draws; 5.96e-8f keeps the log finite (Warp's RANDN_EPSILON).
TL_HD float randn(uint32_t state) {
    const uint32_t first = rand_pcg(state), second = rand_pcg(first);
    const float radius = sqrtf(-2.0f * logf(rand_unit(first) + 5.96e-8f));
    return radius * cosf(mul_rounded(2.0f * 3.14159265358979323846f, rand_unit(second)));
}

// Warp's samplers of points in shapes: a fixed number of uniform draws each (ops/random.py's DRAWS,
// by which the caller advances its state), in Warp's order and with its formulas, so the points are
// Warp's bit for bit on the CPU.
struct Uniforms {
    uint32_t state;
    TL_HD float next() {  // randf(state)
        state = rand_pcg(state);
        return rand_unit(state);
    }
    TL_HD float angle() { return mul_rounded(6.2831855f, next()) + 0.0f; }  // randf(state, 0, 2 pi)
};
TL_HD vec<2, float> sample_triangle(uint32_t state) {  // barycentric (u, v), uniform over the triangle
    Uniforms draw{state};
    const float r = sqrtf(draw.next());
    const float u = 1.0f - r;
    return vec<2, float>(u, draw.next() * r);
}
TL_HD vec<2, float> sample_unit_ring(uint32_t state) {
    Uniforms draw{state};
    const float theta = draw.angle();
    return vec<2, float>(cosf(theta), sinf(theta));
}
TL_HD vec<2, float> sample_unit_disk(uint32_t state) {
    Uniforms draw{state};
    const float r = sqrtf(draw.next());
    const float theta = draw.angle();
    return vec<2, float>(r * cosf(theta), r * sinf(theta));
}
// A point of the sphere (or of the hemisphere z >= 0, from a polar angle drawn over half the range),
// on its surface or, at radius u^(1/3), inside it.
TL_HD vec<3, float> sphere_point(uint32_t state, bool hemisphere, bool inside) {
    Uniforms draw{state};
    const float phi = acosf(hemisphere ? 1.0f - draw.next() : 1.0f - 2.0f * draw.next());
    const float theta = draw.angle();
    const float r = inside ? powf(draw.next(), 1.0f / 3.0f) : 1.0f;
    const float s = sinf(phi);
    if (!inside) return vec<3, float>(cosf(theta) * s, sinf(theta) * s, cosf(phi));
    return vec<3, float>(r * cosf(theta) * s, r * sinf(theta) * s, r * cosf(phi));
}
TL_HD vec<3, float> sample_unit_sphere_surface(uint32_t state) { return sphere_point(state, false, false); }
TL_HD vec<3, float> sample_unit_sphere(uint32_t state) { return sphere_point(state, false, true); }
TL_HD vec<3, float> sample_unit_hemisphere_surface(uint32_t state) { return sphere_point(state, true, false); }
TL_HD vec<3, float> sample_unit_hemisphere(uint32_t state) { return sphere_point(state, true, true); }
TL_HD vec<2, float> sample_unit_square(uint32_t state) {  // centred on the origin, side 1
    Uniforms draw{state};
    const float x = draw.next() - 0.5f;
    return vec<2, float>(x, draw.next() - 0.5f);
}
TL_HD vec<3, float> sample_unit_cube(uint32_t state) {
    Uniforms draw{state};
    const float x = draw.next() - 0.5f;
    const float y = draw.next() - 0.5f;
    return vec<3, float>(x, y, draw.next() - 0.5f);
}

// Poisson draws, as Warp's poisson draws them (NumPy's method in float): a product of uniforms below
// exp(-lam) for lam < 10, Hoermann's transformed rejection (PTRS, 1993) from lam = 10. The number of
// draws varies, so the caller advances its state with poisson_state. Every product that an add
// follows is rounded on its own (mul_rounded), as Warp's CPU build computes it.
struct PoissonDraw {
    uint32_t value;
    uint32_t state;  // after the draws
};
// log(Gamma(x)) by Stirling's series from x + n >= 7 down (NumPy's random_loggam, in float).
TL_HD float poisson_log_gamma(float x) {
    const float series[10] = {8.333333333333333e-02f, -2.777777777777778e-03f, 7.936507936507937e-04f,
                              -5.952380952380952e-04f, 8.417508417508418e-04f, -1.917526917526918e-03f,
                              6.410256410256410e-03f, -2.955065359477124e-02f, 1.796443723688307e-01f,
                              -1.39243221690590e+00f};
    if (x == 1.0f || x == 2.0f) return 0.0f;
    const uint32_t shift = x < 7.0f ? uint32_t(7.0f - x) : 0u;
    float z = x + float(shift);
    const float inv = 1.0f / z;
    const float inv2 = mul_rounded(inv, inv);
    float sum = series[9];
    for (int i = 8; i >= 0; --i) sum = mul_rounded(sum, inv2) + series[i];
    const float half_log_two_pi = mul_rounded(0.5f, 1.8378770664093453f);
    float result = sum / z + half_log_two_pi + mul_rounded(z - 0.5f, logf(z)) - z;
    for (uint32_t k = 0; k < shift; ++k) {  // Gamma(x) = Gamma(x + n) / (x (x + 1) ... (x + n - 1))
        result -= logf(z - 1.0f);
        z -= 1.0f;
    }
    return result;
}
TL_HD PoissonDraw poisson_draw(uint32_t state, float lam) {
    Uniforms draw{state};
    if (lam == 0.0f) return PoissonDraw{0u, state};
    if (!(lam >= 10.0f)) {  // count uniforms until their product falls to exp(-lam) (a NaN: one draw, 0)
        const float limit = expf(-lam);
        uint32_t count = 0;
        float product = 1.0f;
        for (;;) {
            product *= draw.next();
            if (!(product > limit)) return PoissonDraw{count, draw.state};
            ++count;
        }
    }
    const float root = sqrtf(lam), log_lam = logf(lam);
    const float b = mul_rounded(2.53f, root) + 0.931f;
    const float a = mul_rounded(0.02483f, b) + -0.059f;
    const float inv_alpha = 1.1239f + 1.1328f / (b - 3.4f);
    const float v_r = 0.9277f - 3.6224f / (b - 2.0f);
    for (;;) {
        const float u = draw.next() - 0.5f;
        const float v = draw.next();
        const float us = 0.5f - fabsf(u);
        const float k = floorf(mul_rounded((2.0f * a) / us + b, u) + lam + 0.43f);
        if (us >= 0.07f && v <= v_r) return PoissonDraw{uint32_t(k), draw.state};
        if (k < 0.0f || (us < 0.013f && v > us)) continue;  // (a negative k never reaches a uint32)
        const float accept = -lam + mul_rounded(k, log_lam) - poisson_log_gamma(k + 1.0f);
        if (logf(v) + logf(inv_alpha) - logf(a / mul_rounded(us, us) + b) <= accept)
            return PoissonDraw{uint32_t(k), draw.state};
    }
}
TL_HD uint32_t poisson(uint32_t state, float lam) { return poisson_draw(state, lam).value; }
TL_HD uint32_t poisson_state(uint32_t state, float lam) { return poisson_draw(state, lam).state; }

}  // namespace tl
