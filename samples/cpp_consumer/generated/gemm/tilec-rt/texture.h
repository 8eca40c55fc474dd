// tilec runtime: Warp's textures (wp.Texture1D / 2D / 3D) as kernels sample them, in software on
// every target (the same arithmetic on the CPU and in CUDA code, Warp's CPU sampler's): texels of
// 8-, 16- or 32-bit integers, float16 or float32, 1, 2 or 4 channels, and mip levels (each half the
// last, floor-halved, at least 1; the loader makes them with Warp's box filter).
//
// A kernel holds a texture as the uint64 id the loader checked (tilec-rt/spatial.py `Texture*D`):
// the address of the descriptor below. Id 0 is Warp's empty texture: sizes 0, every sample zero.
//
// Sampling (wp.texture_sample): a coordinate is in [0, 1] over the texture (normalized) or in
// texels; texel i's centre is at (i + 0.5) / size (or i + 0.5). WRAP and MIRROR reduce the
// coordinate modulo the period first; CLOSEST takes the texel the coordinate falls in, LINEAR
// interpolates between the two nearest texels on each axis (x first, then y, then z: Warp's
// order). Out of range: CLAMP repeats the edge texel, BORDER reads zero. Texel coordinates are the
// base level's on every level. A level of detail (lod, clamped to the levels) picks the nearest
// level (mip filter CLOSEST) or blends the two around it (LINEAR).
// The gradient (texture_sample_gradient) is the derivative of that interpolation in one coordinate,
// dotted with the sample's adjoint: zero under CLOSEST and wherever CLAMP or BORDER hold the
// coordinate still, as Warp's adjoint; the texels take no gradient (Warp's neither). The lod's
// (texture_sample_lod_gradient) is the difference of the two levels it blends, where it blends two
// and is not clamped (toward increasing lod at an integer one, Warp's side).
#pragma once
#include <cmath>
#include <cstdint>
#include "core.h"
#include "scalar.h"
#include "vec.h"

namespace tl {

// The layout the loader fills (tilec-rt/spatial.py `_TextureDesc`): keep the two in step.
struct Texture {
    const void* data;  // level-0 texels, C order [depth][height][width][channels]
    int32_t ndim;  // 1, 2 or 3
    int32_t width, height, depth;  // the axes a texture lacks are 1
    int32_t channels;  // 1, 2 or 4
    int32_t dtype;  // TEXTURE_UINT8 ...
    int32_t filter;  // 0 closest, 1 linear
    int32_t address[3];  // per axis (u, v, w): TEXTURE_WRAP ...
    int32_t normalized;  // 1: coordinates in [0, 1]; 0: in texels
    int32_t num_levels;  // mip levels, >= 1
    int32_t mip_filter;  // between levels: 0 closest, 1 linear
    const void* const* levels;  // num_levels pointers, levels[0] == data
};

enum { TEXTURE_UINT8, TEXTURE_UINT16, TEXTURE_UINT32, TEXTURE_INT8, TEXTURE_INT16, TEXTURE_INT32, TEXTURE_FLOAT16,
       TEXTURE_FLOAT32 };
enum { TEXTURE_WRAP, TEXTURE_CLAMP, TEXTURE_MIRROR, TEXTURE_BORDER };

TL_HD const Texture* texture_of(uint64_t id) { return reinterpret_cast<const Texture*>(uintptr_t(id)); }

TL_HD int32_t texture_extent(const Texture& t, int axis) { return axis == 0 ? t.width : axis == 1 ? t.height : t.depth; }

TL_HD int32_t texture_size(uint64_t id, int32_t axis) {  // width (axis 0), height, depth; 0 for the empty texture
    const Texture* t = texture_of(id);
    return t == nullptr ? 0 : texture_extent(*t, axis);
}

// The corners a LINEAR sample reads along an axis: 2, or 1 on an axis the texture lacks.
TL_HD int texture_span(const Texture& t, int axis) { return axis < t.ndim ? 2 : 1; }

// An axis's texels at mip `level`: floor-halved, at least 1 (1 for the axes the texture lacks).
TL_HD int32_t texture_level_extent(const Texture& t, int axis, int level) {
    int32_t n = axis < t.ndim ? texture_extent(t, axis) >> level : 1;
    return n < 1 ? 1 : n;
}

// One texel's channel as float: 8- and 16-bit integers normalized to [0, 1] (unsigned) or [-1, 1]
// (signed, the most negative value clamped), 32-bit integers converted, floats as they are.
// Outside the texture (BORDER's reads): zero.
TL_HD float texture_texel(const Texture& t, int level, int64_t x, int64_t y, int64_t z, int c) {
    int64_t w = texture_level_extent(t, 0, level), h = texture_level_extent(t, 1, level);
    if (x < 0 || x >= w || y < 0 || y >= h || z < 0 || z >= texture_level_extent(t, 2, level) || c >= t.channels)
        return 0.0f;
    size_t i = size_t(((z * h + y) * w + x) * t.channels + c);
    const void* data = t.levels[level];
    switch (t.dtype) {
    case TEXTURE_UINT8: return static_cast<const uint8_t*>(data)[i] / 255.0f;
    case TEXTURE_UINT16: return static_cast<const uint16_t*>(data)[i] / 65535.0f;
    case TEXTURE_UINT32: return float(static_cast<const uint32_t*>(data)[i]);
    case TEXTURE_INT8: return fmaxf(static_cast<const int8_t*>(data)[i] / 127.0f, -1.0f);
    case TEXTURE_INT16: return fmaxf(static_cast<const int16_t*>(data)[i] / 32767.0f, -1.0f);
    case TEXTURE_INT32: return float(static_cast<const int32_t*>(data)[i]);
    case TEXTURE_FLOAT16: return half::to_float(static_cast<const uint16_t*>(data)[i]);
    default: return static_cast<const float*>(data)[i];
    }
}

// floor(x) as an index, saturated (and 0 for NaN: the conversion of either would be undefined).
TL_HD int64_t texture_floor_index(double x) {
    if (!(x == x)) return 0;
    return int64_t(fmin(fmax(floor(x), -4.0e18), 4.0e18));
}

// An index on an axis of `size` texels after its address mode; BORDER keeps it (texture_texel reads 0).
TL_HD int64_t texture_address(int64_t i, int64_t size, int mode) {
    if (mode == TEXTURE_WRAP) {
        int64_t m = i % size;
        return m < 0 ? m + size : m;
    }
    if (mode == TEXTURE_MIRROR) {
        int64_t period = 2 * size, m = i % period;
        if (m < 0) m += period;
        return m >= size ? period - 1 - m : m;
    }
    if (mode == TEXTURE_CLAMP) return i < 0 ? 0 : i >= size ? size - 1 : i;
    return i;
}

// The period WRAP (the texture) and MIRROR (twice it) reduce a coordinate by; 0 for the other modes.
TL_HD double texture_period(int size, int mode, bool normalized) {
    if (mode != TEXTURE_WRAP && mode != TEXTURE_MIRROR) return 0.0;
    return (normalized ? 1.0 : double(size)) * (mode == TEXTURE_MIRROR ? 2.0 : 1.0);
}

// The coordinate as a fraction of the texture, reduced modulo the period under WRAP and MIRROR
// first, so that a large coordinate keeps its position within a texel.
TL_HD float texture_reduced(float coord, int size, int mode, bool normalized) {
    if (double p = texture_period(size, mode, normalized)) {
        float period = float(p);
        coord = fmodf(coord, period);
        if (coord < 0.0f) coord += period;
    }
    return normalized ? coord : coord / float(size);
}

// One axis of a LINEAR sample: the two texels, the weight of the second, and d(texel position) /
// d(coordinate) (0 where CLAMP or BORDER holds the position at a bound).
struct TextureAxis {
    int64_t i0 = 0, i1 = 0;
    float f = 0.0f, slope = 0.0f;
};

TL_HD TextureAxis texture_linear_axis(float coord, int base, int size, int mode, bool normalized) {
    float texel = texture_reduced(coord, base, mode, normalized) * float(size) - 0.5f;
    float low = mode == TEXTURE_CLAMP ? 0.0f : -2.0f, high = mode == TEXTURE_CLAMP ? float(size - 1) : float(size);
    TextureAxis a;
    a.slope = normalized ? float(size) : float(size) / float(base);
    if (mode == TEXTURE_CLAMP || mode == TEXTURE_BORDER) {
        if (texel < low || texel > high) a.slope = 0.0f;
        texel = fminf(fmaxf(texel, low), high);
    }
    int64_t i = texture_floor_index(texel);
    a.f = texel - float(i);
    a.i0 = texture_address(i, size, mode);
    a.i1 = texture_address(i + 1, size, mode);
    return a;
}

// The texel a CLOSEST sample reads on one axis (in double, so that a small negative coordinate
// keeps its sign through the reduction and the scaling).
TL_HD int64_t texture_nearest(float coord, int base, int size, int mode, bool normalized) {
    double period = texture_period(base, mode, normalized), reduced = period ? fmod(double(coord), period) : coord;
    double texel = normalized ? reduced * double(size) : reduced * double(size) / double(base);
    if (!period) texel = fmin(fmax(texel, -1.0), double(size));
    return texture_address(texture_floor_index(texel), size, mode);
}

// A LINEAR sample's corners for one channel, v[z][y][x], and its axes; the axes the texture lacks
// have one texel (index 0).
struct TextureCell {
    int level = 0;
    TextureAxis axis[3];
    float v[2][2][2];
};

TL_HD void texture_cell(const Texture& t, int level, const float* coords, TextureCell& cell) {  // coords: u, v, w
    bool normalized = t.normalized != 0;
    cell.level = level;
    for (int k = 0; k < t.ndim; ++k)
        cell.axis[k] = texture_linear_axis(coords[k], texture_extent(t, k), texture_level_extent(t, k, level),
                                           t.address[k], normalized);
}

TL_HD void texture_corners(const Texture& t, TextureCell& cell, int c) {
    const TextureAxis* a = cell.axis;
    for (int z = 0; z < texture_span(t, 2); ++z)
        for (int y = 0; y < texture_span(t, 1); ++y)
            for (int x = 0; x < 2; ++x)
                cell.v[z][y][x] = texture_texel(t, cell.level, x ? a[0].i1 : a[0].i0, y ? a[1].i1 : a[1].i0,
                                                z ? a[2].i1 : a[2].i0, c);
}

TL_HD float texture_lerp(float a, float b, float f) { return a * (1.0f - f) + b * f; }

// The interpolation of the corners, x then y then z (Warp's order).
TL_HD float texture_blend(const Texture& t, const TextureCell& cell) {
    float fx = cell.axis[0].f, fy = cell.axis[1].f, fz = cell.axis[2].f;
    float row[2][2];  // [z][y], after x
    for (int z = 0; z < texture_span(t, 2); ++z)
        for (int y = 0; y < texture_span(t, 1); ++y) row[z][y] = texture_lerp(cell.v[z][y][0], cell.v[z][y][1], fx);
    if (t.ndim == 1) return row[0][0];
    float plane[2];  // [z], after y
    for (int z = 0; z < texture_span(t, 2); ++z) plane[z] = texture_lerp(row[z][0], row[z][1], fy);
    return t.ndim == 2 ? plane[0] : texture_lerp(plane[0], plane[1], fz);
}

// The interpolation's derivative in axis `wrt`'s weight: the corners' differences along it first (so
// that texels sharing a large offset keep their small differences, as Warp's adjoint keeps them),
// then interpolated along the other axes in order.
TL_HD float texture_slope(const Texture& t, const TextureCell& cell, int wrt) {
    int a = wrt == 0 ? 1 : 0, b = wrt == 2 ? 1 : 2;  // the other two axes, in order
    int na = texture_span(t, a), nb = texture_span(t, b);
    float row[2];
    for (int j = 0; j < nb; ++j) {
        float d[2];
        for (int i = 0; i < na; ++i) {
            int lo[3], hi[3];
            lo[wrt] = 0, hi[wrt] = 1, lo[a] = hi[a] = i, lo[b] = hi[b] = j;
            d[i] = cell.v[hi[2]][hi[1]][hi[0]] - cell.v[lo[2]][lo[1]][lo[0]];
        }
        row[j] = na == 2 ? texture_lerp(d[0], d[1], cell.axis[a].f) : d[0];
    }
    return nb == 2 ? texture_lerp(row[0], row[1], cell.axis[b].f) : row[0];
}

// Up to three coordinates (u, v, w; those past the texture's dimensionality unread).
struct TextureCoords {
    float c[3] = {0.0f, 0.0f, 0.0f};
};

TL_HD TextureCoords texture_coords(float u) {
    TextureCoords p;
    p.c[0] = u;
    return p;
}

template <int D> TL_HD TextureCoords texture_coords(const vec<D, float>& uvw) {
    TextureCoords p;
    for (int k = 0; k < D && k < 3; ++k) p.c[k] = uvw.c[k];
    return p;
}

// The levels a sample at `lod` reads and their weights (Warp's choice): lod clamped to the levels
// (negative or NaN: level 0); CLOSEST between levels takes the nearest, LINEAR blends the two around
// it (one where it is an integer or the last).
struct TextureLevels {
    int level[2] = {0, 0};
    float weight[2] = {1.0f, 0.0f};
    int count = 1;
};

TL_HD TextureLevels texture_levels(const Texture& t, float lod) {
    TextureLevels picked;
    if (t.num_levels <= 1 || !(lod > 0.0f)) return picked;
    int last = t.num_levels - 1;
    float clamped = fminf(lod, float(last));
    if (t.mip_filter == 0) {
        int nearest = int(floorf(clamped + 0.5f));
        picked.level[0] = nearest < last ? nearest : last;
        return picked;
    }
    int l0 = int(floorf(clamped)), l1 = l0 < last ? l0 + 1 : last;
    float f = clamped - float(l0);
    picked.level[0] = l0;
    if (l1 == l0 || f == 0.0f) return picked;
    picked.level[1] = l1, picked.weight[0] = 1.0f - f, picked.weight[1] = f, picked.count = 2;
    return picked;
}

// One level's sample of channels [0, C).
template <int C> TL_HD void texture_sample_level(const Texture& t, int level, const float* coords, float* out) {
    if (t.filter == 0) {
        bool normalized = t.normalized != 0;
        int64_t i[3] = {0, 0, 0};
        for (int k = 0; k < t.ndim; ++k)
            i[k] = texture_nearest(coords[k], texture_extent(t, k), texture_level_extent(t, k, level), t.address[k],
                                   normalized);
        for (int c = 0; c < C; ++c) out[c] = texture_texel(t, level, i[0], i[1], i[2], c);
        return;
    }
    TextureCell cell;
    texture_cell(t, level, coords, cell);
    for (int c = 0; c < C; ++c) {
        texture_corners(t, cell, c);
        out[c] = texture_blend(t, cell);
    }
}

template <int C> TL_HD void texture_sample_into(uint64_t id, const float* coords, float lod, float* out) {
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
    const Texture* t = texture_of(id);
    if (t == nullptr) return;
    TextureLevels picked = texture_levels(*t, lod);
    float v[2][C];
    for (int k = 0; k < picked.count; ++k) texture_sample_level<C>(*t, picked.level[k], coords, v[k]);
    for (int c = 0; c < C; ++c)
        out[c] = picked.count == 1 ? v[0][c] : v[0][c] * picked.weight[0] + v[1][c] * picked.weight[1];
}

// wp.texture_sample with dtype=float, wp.vec2f or wp.vec4f: the first 1, 2 or 4 channels (zero past
// the texture's).
template <class P> TL_HD float texture_sample_f(uint64_t id, const P& uvw, float lod) {
    float out[1];
    texture_sample_into<1>(id, texture_coords(uvw).c, lod, out);
    return out[0];
}

template <class P> TL_HD vec<2, float> texture_sample_v2(uint64_t id, const P& uvw, float lod) {
    vec<2, float> out;
    texture_sample_into<2>(id, texture_coords(uvw).c, lod, out.c);
    return out;
}

template <class P> TL_HD vec<4, float> texture_sample_v4(uint64_t id, const P& uvw, float lod) {
    vec<4, float> out;
    texture_sample_into<4>(id, texture_coords(uvw).c, lod, out.c);
    return out;
}

// d(dot(sample, adj)) / d(coordinate `axis`), over the levels the sample blends: a channel whose
// adjoint is 0 adds nothing (not 0 times an infinite difference, NaN).
template <int C>
TL_HD float texture_gradient(uint64_t id, const float* coords, float lod, const float* adj, int axis) {
    const Texture* t = texture_of(id);
    if (t == nullptr || t->filter == 0 || axis >= t->ndim) return 0.0f;
    TextureLevels picked = texture_levels(*t, lod);
    float total = 0.0f;
    for (int k = 0; k < picked.count; ++k) {
        TextureCell cell;
        texture_cell(*t, picked.level[k], coords, cell);
        if (cell.axis[axis].slope == 0.0f) continue;
        float sum = 0.0f;
        for (int c = 0; c < C; ++c) {
            if (adj[c] == 0.0f) continue;
            texture_corners(*t, cell, c);
            sum += adj[c] * texture_slope(*t, cell, axis);
        }
        total += picked.weight[k] * cell.axis[axis].slope * sum;
    }
    return total;
}

// One level's sample of channel c as an anchor (its first corner's texel) and the rest, so that the
// difference of two levels' samples keeps its small part where their texels share a large offset.
TL_HD void texture_level_parts(const Texture& t, int level, const float* coords, int c, float& anchor, float& rest) {
    if (t.filter == 0) {
        float all[4];
        texture_sample_level<4>(t, level, coords, all);
        anchor = all[c], rest = 0.0f;
        return;
    }
    TextureCell cell;
    texture_cell(t, level, coords, cell);
    texture_corners(t, cell, c);
    anchor = cell.v[0][0][0];
    for (int z = 0; z < texture_span(t, 2); ++z)  // (the corners read: those of the texture's axes)
        for (int y = 0; y < texture_span(t, 1); ++y)
            for (int x = 0; x < 2; ++x) cell.v[z][y][x] -= anchor;
    rest = texture_blend(t, cell);
}

// d(dot(sample, adj)) / d(lod): the difference of the two levels around it, where LINEAR mip
// filtering blends them and the lod is not clamped (0 <= lod < last level); else 0.
template <int C> TL_HD float texture_lod_gradient(uint64_t id, const float* coords, float lod, const float* adj) {
    const Texture* t = texture_of(id);
    if (t == nullptr || t->num_levels <= 1 || t->mip_filter != 1 || !(lod >= 0.0f) ||
        !(lod < float(t->num_levels - 1)))
        return 0.0f;
    int l0 = int(floorf(lod));
    float sum = 0.0f;
    for (int c = 0; c < C; ++c) {
        if (adj[c] == 0.0f) continue;
        float a0, r0, a1, r1;
        texture_level_parts(*t, l0, coords, c, a0, r0);
        texture_level_parts(*t, l0 + 1, coords, c, a1, r1);
        float d = (a1 - a0) + (r1 - r0);
        if ((bits_from_float(d) & 0x7f800000u) == 0x7f800000u) {  // inf or NaN: texels of opposite extremes
            // overflow the parts; the samples' difference instead, as Warp's
            float s0[4], s1[4];
            texture_sample_level<4>(*t, l0, coords, s0);
            texture_sample_level<4>(*t, l0 + 1, coords, s1);
            d = s1[c] - s0[c];
        }
        sum += adj[c] * d;
    }
    return sum;
}

// The sample's adjoint as channels: a float's one, a vector's C.
template <class A> struct TextureAdjoint;
template <> struct TextureAdjoint<float> {
    static constexpr int channels = 1;
    TL_HD static const float* of(const float& a) { return &a; }
};
template <int C> struct TextureAdjoint<vec<C, float>> {
    static constexpr int channels = C;
    TL_HD static const float* of(const vec<C, float>& a) { return a.c; }
};

// The coordinates' gradient (their type) of dot(sample, adj).
template <class A> TL_HD float texture_sample_gradient(uint64_t id, float u, float lod, const A& adj) {
    using Adj = TextureAdjoint<A>;
    return texture_gradient<Adj::channels>(id, texture_coords(u).c, lod, Adj::of(adj), 0);
}

template <int D, class A>
TL_HD vec<D, float> texture_sample_gradient(uint64_t id, const vec<D, float>& uvw, float lod, const A& adj) {
    using Adj = TextureAdjoint<A>;
    TextureCoords p = texture_coords(uvw);
    vec<D, float> out;
    for (int k = 0; k < D; ++k) out.c[k] = texture_gradient<Adj::channels>(id, p.c, lod, Adj::of(adj), k);
    return out;
}

// The lod's gradient of dot(sample, adj).
template <class P, class A> TL_HD float texture_sample_lod_gradient(uint64_t id, const P& uvw, float lod, const A& adj) {
    using Adj = TextureAdjoint<A>;
    return texture_lod_gradient<Adj::channels>(id, texture_coords(uvw).c, lod, Adj::of(adj));
}

}  // namespace tl
