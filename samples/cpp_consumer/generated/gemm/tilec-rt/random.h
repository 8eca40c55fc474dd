// tilec runtime: random numbers, bit for bit Warp's (the PCG hash of Jarzynski and Olano, "Hash
// Functions for GPU Rendering", JCGT 2020). Tile element e comes from thread e % block_dim's
// stream, seeded with hash(thread + rng), its (e / block_dim + 1)-th draw.
#pragma once
#include "ctx.h"

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

// Calls put(element, draw) for every element, in the streams Warp's threads draw.
template <class TT, class F> TL_HD void tile_rand_draws(Ctx& ctx, uint32_t rng, F put) {
    const int threads = ctx.block_dim > 0 ? ctx.block_dim : 1;
    for (int t = 0; t < threads && t < TT::size; ++t) {
        uint32_t state = rand_pcg(uint32_t(t) + rng);
        for (int e = t; e < TT::size; e += threads) {
            state = rand_pcg(state);
            put(e, state);
        }
    }
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

}  // namespace tl
