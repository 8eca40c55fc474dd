// tilec runtime: Warp's textures (wp.Texture1D / 2D / 3D) as kernels sample them, in software on
// every target (the same arithmetic on the CPU and in CUDA code, Warp's CPU sampler's): one mip
// level, texels of 8-, 16- or 32-bit integers, float16 or float32, 1, 2 or 4 channels.
//
// A kernel holds a texture as the uint64 id the loader checked (tilec-rt/spatial.py `Texture*D`):
// the address of the descriptor below. Id 0 is Warp's empty texture: sizes 0, every sample zero.
//
// Sampling (wp.texture_sample): a coordinate is in [0, 1] over the texture (normalized) or in
// texels; texel i's centre is at (i + 0.5) / size (or i + 0.5). WRAP and MIRROR reduce the
// coordinate modulo the period first; CLOSEST takes the texel the coordinate falls in, LINEAR
// interpolates between the two nearest texels on each axis (x first, then y, then z: Warp's
// order). Out of range: CLAMP repeats the edge texel, BORDER reads zero.
// The gradient (texture_sample_gradient) is the derivative of that interpolation in one coordinate,
// dotted with the sample's adjoint: zero under CLOSEST and wherever CLAMP or BORDER hold the
// coordinate still, as Warp's adjoint; the texels take no gradient (Warp's neither).
#pragma once
#include <cmath>
#include <cstdint>
#include "core.h"
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
};

enum { TEXTURE_UINT8, TEXTURE_UINT16, TEXTURE_UINT32, TEXTURE_INT8, TEXTURE_INT16, TEXTURE_INT32, TEXTURE_FLOAT16,
       TEXTURE_FLOAT32 };
enum { TEXTURE_WRAP, TEXTURE_CLAMP, TEXTURE_MIRROR, TEXTURE_BORDER };

TL_HD const Texture* texture_of(uint64_t id) { return reinterpret_cast<const Texture*>(uintptr_t(id)); }

TL_HD int32_t texture_size(uint64_t id, int32_t axis) {  // width (axis 0), height, depth; 0 for the empty texture
    const Texture* t = texture_of(id);
    if (t == nullptr) return 0;
    return axis == 0 ? t->width : axis == 1 ? t->height : t->depth;
}

TL_HD int32_t texture_extent(const Texture& t, int axis) { return axis == 0 ? t.width : axis == 1 ? t.height : t.depth; }

// One texel's channel as float: 8- and 16-bit integers normalized to [0, 1] (unsigned) or [-1, 1]
// (signed, the most negative value clamped), 32-bit integers converted, floats as they are.
// Outside the texture (BORDER's reads): zero.
TL_HD float texture_texel(const Texture& t, int64_t x, int64_t y, int64_t z, int c) {
    if (x < 0 || x >= t.width || y < 0 || y >= t.height || z < 0 || z >= t.depth || c >= t.channels) return 0.0f;
    size_t i = size_t(((z * t.height + y) * t.width + x) * t.channels + c);
    switch (t.dtype) {
    case TEXTURE_UINT8: return static_cast<const uint8_t*>(t.data)[i] / 255.0f;
    case TEXTURE_UINT16: return static_cast<const uint16_t*>(t.data)[i] / 65535.0f;
    case TEXTURE_UINT32: return float(static_cast<const uint32_t*>(t.data)[i]);
    case TEXTURE_INT8: return fmaxf(static_cast<const int8_t*>(t.data)[i] / 127.0f, -1.0f);
    case TEXTURE_INT16: return fmaxf(static_cast<const int16_t*>(t.data)[i] / 32767.0f, -1.0f);
    case TEXTURE_INT32: return float(static_cast<const int32_t*>(t.data)[i]);
    case TEXTURE_FLOAT16: return half::to_float(static_cast<const uint16_t*>(t.data)[i]);
    default: return static_cast<const float*>(t.data)[i];
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

// The coordinate as a fraction of the texture, reduced modulo the period under WRAP and MIRROR
// first, so that a large coordinate keeps its position within a texel.
TL_HD float texture_reduced(float coord, int size, int mode, bool normalized) {
    if (mode == TEXTURE_WRAP || mode == TEXTURE_MIRROR) {
        float period = (normalized ? 1.0f : float(size)) * (mode == TEXTURE_MIRROR ? 2.0f : 1.0f);
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

TL_HD TextureAxis texture_linear_axis(float coord, int size, int mode, bool normalized) {
    float texel = texture_reduced(coord, size, mode, normalized) * float(size) - 0.5f;
    float low = mode == TEXTURE_CLAMP ? 0.0f : -2.0f, high = mode == TEXTURE_CLAMP ? float(size - 1) : float(size);
    TextureAxis a;
    a.slope = normalized ? float(size) : 1.0f;
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
TL_HD int64_t texture_nearest(float coord, int size, int mode, bool normalized) {
    double reduced = double(coord);
    if (mode == TEXTURE_WRAP || mode == TEXTURE_MIRROR)
        reduced = fmod(reduced, (normalized ? 1.0 : double(size)) * (mode == TEXTURE_MIRROR ? 2.0 : 1.0));
    double texel = normalized ? reduced * double(size) : reduced;
    if (mode != TEXTURE_WRAP && mode != TEXTURE_MIRROR) texel = fmin(fmax(texel, -1.0), double(size));
    return texture_address(texture_floor_index(texel), size, mode);
}

// A LINEAR sample's corners for one channel, v[z][y][x], and its axes; the axes the texture lacks
// have one texel (index 0).
struct TextureCell {
    TextureAxis axis[3];
    float v[2][2][2];
};

TL_HD void texture_cell(const Texture& t, const float* coords, TextureCell& cell) {  // coords: u, v, w
    bool normalized = t.normalized != 0;
    for (int k = 0; k < t.ndim; ++k)
        cell.axis[k] = texture_linear_axis(coords[k], texture_extent(t, k), t.address[k], normalized);
}

TL_HD void texture_corners(const Texture& t, TextureCell& cell, int c) {
    const TextureAxis* a = cell.axis;
    for (int z = 0; z < (t.ndim > 2 ? 2 : 1); ++z)
        for (int y = 0; y < (t.ndim > 1 ? 2 : 1); ++y)
            for (int x = 0; x < 2; ++x)
                cell.v[z][y][x] = texture_texel(t, x ? a[0].i1 : a[0].i0, y ? a[1].i1 : a[1].i0,
                                                z ? a[2].i1 : a[2].i0, c);
}

TL_HD float texture_lerp(float a, float b, float f) { return a * (1.0f - f) + b * f; }

// The interpolation of the corners, x then y then z; with `wrt` >= 0 instead its derivative in that
// axis's weight (the corners' differences along it, interpolated along the others).
TL_HD float texture_blend(const Texture& t, const TextureCell& cell, int wrt) {
    float fx = cell.axis[0].f, fy = cell.axis[1].f, fz = cell.axis[2].f;
    float row[2][2];  // [z][y], after x
    for (int z = 0; z < (t.ndim > 2 ? 2 : 1); ++z)
        for (int y = 0; y < (t.ndim > 1 ? 2 : 1); ++y) {
            const float* v = cell.v[z][y];
            row[z][y] = wrt == 0 ? v[1] - v[0] : texture_lerp(v[0], v[1], fx);
        }
    if (t.ndim == 1) return row[0][0];
    float plane[2];  // [z], after y
    for (int z = 0; z < (t.ndim > 2 ? 2 : 1); ++z)
        plane[z] = wrt == 1 ? row[z][1] - row[z][0] : texture_lerp(row[z][0], row[z][1], fy);
    if (t.ndim == 2) return plane[0];
    return wrt == 2 ? plane[1] - plane[0] : texture_lerp(plane[0], plane[1], fz);
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

template <int C> TL_HD void texture_sample_into(uint64_t id, const float* coords, float* out) {
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
    const Texture* t = texture_of(id);
    if (t == nullptr) return;
    if (t->filter == 0) {
        bool normalized = t->normalized != 0;
        int64_t i[3] = {0, 0, 0};
        for (int k = 0; k < t->ndim; ++k) i[k] = texture_nearest(coords[k], texture_extent(*t, k), t->address[k], normalized);
        for (int c = 0; c < C; ++c) out[c] = texture_texel(*t, i[0], i[1], i[2], c);
        return;
    }
    TextureCell cell;
    texture_cell(*t, coords, cell);
    for (int c = 0; c < C; ++c) {
        texture_corners(*t, cell, c);
        out[c] = texture_blend(*t, cell, -1);
    }
}

// wp.texture_sample with dtype=float, wp.vec2f or wp.vec4f: the first 1, 2 or 4 channels (zero past
// the texture's).
template <class P> TL_HD float texture_sample_f(uint64_t id, const P& uvw) {
    float out[1];
    texture_sample_into<1>(id, texture_coords(uvw).c, out);
    return out[0];
}

template <class P> TL_HD vec<2, float> texture_sample_v2(uint64_t id, const P& uvw) {
    vec<2, float> out;
    texture_sample_into<2>(id, texture_coords(uvw).c, out.c);
    return out;
}

template <class P> TL_HD vec<4, float> texture_sample_v4(uint64_t id, const P& uvw) {
    vec<4, float> out;
    texture_sample_into<4>(id, texture_coords(uvw).c, out.c);
    return out;
}

// d(dot(sample, adj)) / d(coordinate `axis`): a channel whose adjoint is 0 adds nothing (not 0 times
// an infinite difference, NaN).
template <int C> TL_HD float texture_gradient(uint64_t id, const float* coords, const float* adj, int axis) {
    const Texture* t = texture_of(id);
    if (t == nullptr || t->filter == 0 || axis >= t->ndim) return 0.0f;
    TextureCell cell;
    texture_cell(*t, coords, cell);
    if (cell.axis[axis].slope == 0.0f) return 0.0f;
    float sum = 0.0f;
    for (int c = 0; c < C; ++c) {
        if (adj[c] == 0.0f) continue;
        texture_corners(*t, cell, c);
        sum += adj[c] * texture_blend(*t, cell, axis);
    }
    return sum * cell.axis[axis].slope;
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
template <class A> TL_HD float texture_sample_gradient(uint64_t id, float u, const A& adj) {
    using Adj = TextureAdjoint<A>;
    return texture_gradient<Adj::channels>(id, texture_coords(u).c, Adj::of(adj), 0);
}

template <int D, class A>
TL_HD vec<D, float> texture_sample_gradient(uint64_t id, const vec<D, float>& uvw, const A& adj) {
    using Adj = TextureAdjoint<A>;
    TextureCoords p = texture_coords(uvw);
    vec<D, float> out;
    for (int k = 0; k < D; ++k) out.c[k] = texture_gradient<Adj::channels>(id, p.c, Adj::of(adj), k);
    return out;
}

}  // namespace tl
