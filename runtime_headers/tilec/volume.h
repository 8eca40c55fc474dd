// tilec runtime: Warp's sparse volumes (wp.Volume) as kernels read them. Voxels live in dense 8x8x8
// leaves (Warp's tiles, NanoVDB's leaf nodes); a voxel outside every leaf reads the background value. The
// loader's Volume (tilec-rt/spatial.py) fills this descriptor: the leaves' origins, packed and ascending,
// and their values (512 per leaf, voxel (i & 7, j & 7, k & 7) at ((i & 7) << 6) | ((j & 7) << 3) | (k & 7),
// NanoVDB's order), which volume_store writes in place.
//
// Sampling is Warp 1.19's (its native volume.h): index-space coordinates; CLOSEST reads the voxel at
// roundf of each coordinate, LINEAR blends the 8 voxels around floor(uvw) with weights (1 - f, f) per axis
// in its order of corners; a volume of another value type reads 0 (Warp's invalid accessor), and a store
// of another type, or outside the leaves, does nothing. World and index space are Warp's map: world =
// M index + t, index = M^-1 (world - t), in float32 with M^-1 computed in float64.
#pragma once
#include <cmath>
#include <cstdint>
#include "vec.h"

namespace tl {

enum VolumeType : int32_t { VOLUME_NONE = 0, VOLUME_FLOAT = 1, VOLUME_VEC3 = 2, VOLUME_INT = 3 };

// The layout the loader fills (tilec-rt/spatial.py `_VolumeDesc`): keep the two in step.
struct Volume {
    int32_t type;  // VolumeType: the empty volume (live_ids.h) is VOLUME_NONE
    int32_t num_leaves;
    const uint64_t* leaf_keys;  // num_leaves, ascending (volume_leaf_key)
    void* values;  // num_leaves * 512 values of the type (a vec3's three floats together)
    float background[3];  // a float volume's in [0]
    int32_t background_int;
    float mat[9];  // world = mat index + vec (row-major)
    float inv_mat[9];
    float vec[3];
    int32_t hash_bits;  // the leaves by key: 2^hash_bits slots, open addressing (volume_hash)
    const int32_t* hash_slots;  // a leaf's index + 1, or 0 for an empty slot
};

// A leaf key's first slot: Fibonacci hashing, the loader's (tilec-rt/spatial.py _volume_hash) too.
TL_HD uint64_t volume_hash(uint64_t key, int32_t bits) { return (key * 0x9E3779B97F4A7C15ull) >> (64 - bits); }

#ifndef __CUDA_ARCH__
__attribute__((visibility("hidden"))) inline const Volume empty_volume = {};  // VOLUME_NONE: every read is 0
#endif

// The volume behind an id: the null id (0, Warp's unset id) is the empty volume, whose reads are 0.
TL_HD const Volume& volume_of(uint64_t id) {
#ifndef __CUDA_ARCH__
    if (id == 0) return empty_volume;
#endif
    return *reinterpret_cast<const Volume*>(uintptr_t(id));
}

constexpr int64_t kVolumeLeafRange = int64_t(1) << 20;  // leaf coordinates in [-2^20, 2^20): voxels within 2^23

// A leaf's key from a voxel's coordinates; -1 for coordinates outside the range any leaf can have.
TL_HD int64_t volume_leaf_key(int64_t i, int64_t j, int64_t k) {
    const int64_t a = (i >> 3) + kVolumeLeafRange, b = (j >> 3) + kVolumeLeafRange, c = (k >> 3) + kVolumeLeafRange;
    if (a < 0 || b < 0 || c < 0 || a >= 2 * kVolumeLeafRange || b >= 2 * kVolumeLeafRange || c >= 2 * kVolumeLeafRange)
        return -1;
    return (a << 42) | (b << 21) | c;
}

// The last leaf a sample's corners found: most of the 8 share it (NanoVDB's accessors keep one too).
struct VolumeLeafCache {
    int64_t key = -1;
    int64_t leaf = -1;  // its index, or -1 when no leaf has that key
};

// The position of voxel (i, j, k)'s value in the values (leaf * 512 + offset), or -1 outside the leaves.
TL_HD int64_t volume_voxel(const Volume& v, int64_t i, int64_t j, int64_t k, VolumeLeafCache* cache = nullptr) {
    const int64_t key = volume_leaf_key(i, j, k);
    if (key < 0) return -1;
    int64_t leaf;
    if (cache != nullptr && cache->key == key) {
        leaf = cache->leaf;
    } else {
        leaf = -1;
        if (v.num_leaves > 0) {
            const uint64_t mask = (uint64_t(1) << v.hash_bits) - 1;
            for (uint64_t h = volume_hash(uint64_t(key), v.hash_bits);; h = (h + 1) & mask) {
                const int32_t slot = v.hash_slots[h];
                if (slot == 0) break;
                if (v.leaf_keys[slot - 1] == uint64_t(key)) {
                    leaf = slot - 1;
                    break;
                }
            }
        }
        if (cache != nullptr) *cache = VolumeLeafCache{key, leaf};
    }
    return leaf < 0 ? -1 : leaf * 512 + (((i & 7) << 6) | ((j & 7) << 3) | (k & 7));
}

// A float coordinate as a voxel coordinate: far outside any leaf for NaN and magnitudes past int32 (where
// Warp's conversion is undefined).
TL_HD int64_t volume_coord(float x) { return x == x && std::fabs(x) < 2.0e9f ? int64_t(x) : int64_t(1) << 40; }

// The value of voxel (i, j, k) of a float (C 1) or vec3 (C 3) volume as `C` floats, or zeros when the volume
// holds another type.
template <int C> TL_HD void volume_read(const Volume& v, int32_t type, int64_t i, int64_t j, int64_t k, float* out,
                                        VolumeLeafCache* cache = nullptr) {
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
    if (v.type != type) return;
    const int64_t at = volume_voxel(v, i, j, k, cache);
    for (int c = 0; c < C; ++c) out[c] = at < 0 ? v.background[c] : static_cast<const float*>(v.values)[at * C + c];
}

// The value of voxel (i, j, k) of an int32 volume, or 0 when the volume holds another type.
TL_HD int32_t volume_read_int(const Volume& v, int64_t i, int64_t j, int64_t k) {
    if (v.type != VOLUME_INT) return 0;
    const int64_t at = volume_voxel(v, i, j, k);
    return at < 0 ? v.background_int : static_cast<const int32_t*>(v.values)[at];
}

// The trilinear weights around uvw: w[axis][0 or 1] for the corner's offset on that axis; a corner's weight, and its
// slopes (d weight / d uvw) in Warp's order of products.
struct VolumeCell {
    int64_t base[3];
    float w[3][2];

    TL_HD float weight(const int* o) const { return w[0][o[0]] * w[1][o[1]] * w[2][o[2]]; }
    TL_HD void slopes(const int* o, float* dw) const {
        dw[0] = float(2 * o[0] - 1) * w[1][o[1]] * w[2][o[2]];
        dw[1] = float(2 * o[1] - 1) * w[0][o[0]] * w[2][o[2]];
        dw[2] = float(2 * o[2] - 1) * w[0][o[0]] * w[1][o[1]];
    }
};

TL_HD VolumeCell volume_cell(const vec<3, float>& uvw) {
    VolumeCell cell;
    for (int a = 0; a < 3; ++a) {
        const float b = floorf(uvw[a]), f = uvw[a] - b;
        cell.base[a] = volume_coord(b);
        cell.w[a][0] = 1 - f;
        cell.w[a][1] = f;
    }
    return cell;
}

// The sample at uvw (index space) as C floats; with `grad`, also d sample / d uvw (C rows of 3).
template <int C>
TL_HD void volume_sample_into(uint64_t id, int32_t type, const vec<3, float>& uvw, int32_t mode, float* out,
                              float* grad = nullptr) {
    const Volume& v = volume_of(id);
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
    if (grad != nullptr)
        for (int c = 0; c < 3 * C; ++c) grad[c] = 0.0f;
    if (v.type != type) return;
    if (mode == 0) {  // CLOSEST
        volume_read<C>(v, type, volume_coord(roundf(uvw[0])), volume_coord(roundf(uvw[1])),
                       volume_coord(roundf(uvw[2])), out);
        return;
    }
    if (mode != 1) return;  // LINEAR
    const VolumeCell cell = volume_cell(uvw);
    VolumeLeafCache cache;
    for (int corner = 0; corner < 8; ++corner) {  // Warp's order: z fastest
        const int o[3] = {corner >> 2, (corner >> 1) & 1, corner & 1};
        float value[C];
        volume_read<C>(v, type, cell.base[0] + o[0], cell.base[1] + o[1], cell.base[2] + o[2], value, &cache);
        const float weight = cell.weight(o);
        for (int c = 0; c < C; ++c) out[c] += weight * value[c];
        if (grad != nullptr) {
            float dw[3];
            cell.slopes(o, dw);
            for (int c = 0; c < C; ++c)
                for (int a = 0; a < 3; ++a) grad[3 * c + a] += value[c] * dw[a];
        }
    }
}

TL_HD float volume_sample_f(uint64_t id, const vec<3, float>& uvw, int32_t mode) {
    float out[1];
    volume_sample_into<1>(id, VOLUME_FLOAT, uvw, mode, out);
    return out[0];
}

TL_HD vec<3, float> volume_sample_v(uint64_t id, const vec<3, float>& uvw, int32_t mode) {
    vec<3, float> out;
    volume_sample_into<3>(id, VOLUME_VEC3, uvw, mode, &out[0]);
    return out;
}

TL_HD int32_t volume_sample_i(uint64_t id, const vec<3, float>& uvw) {
    return volume_read_int(volume_of(id), volume_coord(roundf(uvw[0])), volume_coord(roundf(uvw[1])),
                           volume_coord(roundf(uvw[2])));
}

// wp.volume_sample_grad_f: the sample and d sample / d uvw (0 under CLOSEST), as (value, gradient).
TL_HD vec<4, float> volume_sample_grad4(uint64_t id, const vec<3, float>& uvw, int32_t mode) {
    vec<4, float> out;
    volume_sample_into<1>(id, VOLUME_FLOAT, uvw, mode, &out[0], &out[1]);
    return out;
}

// d dot(sample, adj) / d uvw of a float (C 1) or vec3 (C 3) volume's LINEAR sample (0 under CLOSEST), and with
// `adj_grad` (a float volume's) d dot(d sample / d uvw, adj_grad) / d uvw: the weights' mixed second
// derivatives. Per corner as Warp's adj_volume_sample_grad adds them (its rounding of the cancellations
// where the corners hold one value).
template <int C> TL_HD vec<3, float> volume_sample_adjoint(uint64_t id, int32_t type, const vec<3, float>& uvw,
                                                           int32_t mode, const float* adj, const float* adj_grad) {
    const Volume& v = volume_of(id);
    vec<3, float> d;
    if (v.type != type || mode != 1) return d;
    const VolumeCell cell = volume_cell(uvw);
    const auto& w = cell.w;
    VolumeLeafCache cache;
    for (int corner = 0; corner < 8; ++corner) {
        const int o[3] = {corner >> 2, (corner >> 1) & 1, corner & 1};
        float value[C];
        volume_read<C>(v, type, cell.base[0] + o[0], cell.base[1] + o[1], cell.base[2] + o[2], value, &cache);
        const float s[3] = {float(2 * o[0] - 1), float(2 * o[1] - 1), float(2 * o[2] - 1)};
        if (adj != nullptr) {
            float dot = 0.0f;
            for (int c = 0; c < C; ++c) dot += value[c] * adj[c];
            float dw[3];
            cell.slopes(o, dw);
            for (int a = 0; a < 3; ++a) d[a] += dot * dw[a];
        }
        if (adj_grad != nullptr) {  // (v adj_grad) as a row times the weights' Hessian, whose diagonal is 0
            float term[3] = {0.0f, 0.0f, 0.0f};
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c)
                    term[c] += value[0] * adj_grad[r] * (r == c ? 0.0f : s[r] * s[c] * w[3 - r - c][o[3 - r - c]]);
            for (int a = 0; a < 3; ++a) d[a] += term[a];
        }
    }
    return d;
}

TL_HD vec<3, float> volume_sample_f_gradient(uint64_t id, const vec<3, float>& uvw, int32_t mode, float adj) {
    return volume_sample_adjoint<1>(id, VOLUME_FLOAT, uvw, mode, &adj, nullptr);
}

TL_HD vec<3, float> volume_sample_v_gradient(uint64_t id, const vec<3, float>& uvw, int32_t mode,
                                             const vec<3, float>& adj) {
    return volume_sample_adjoint<3>(id, VOLUME_VEC3, uvw, mode, &adj[0], nullptr);
}

// d dot(volume_sample_grad4(...), adj) / d uvw, as Warp's adj_volume_sample_grad: the sample's adjoint adj[0],
// its gradient's adj[1..3].
TL_HD vec<3, float> volume_sample_grad4_gradient(uint64_t id, const vec<3, float>& uvw, int32_t mode,
                                                 const vec<4, float>& adj) {
    return volume_sample_adjoint<1>(id, VOLUME_FLOAT, uvw, mode, &adj[0], &adj[1]);
}

TL_HD float volume_lookup_f(uint64_t id, int32_t i, int32_t j, int32_t k) {
    float out[1];
    volume_read<1>(volume_of(id), VOLUME_FLOAT, i, j, k, out);
    return out[0];
}

TL_HD vec<3, float> volume_lookup_v(uint64_t id, int32_t i, int32_t j, int32_t k) {
    vec<3, float> out;
    volume_read<3>(volume_of(id), VOLUME_VEC3, i, j, k, &out[0]);
    return out;
}

TL_HD int32_t volume_lookup_i(uint64_t id, int32_t i, int32_t j, int32_t k) {
    return volume_read_int(volume_of(id), i, j, k);
}

// Stores write a voxel of a leaf, of the volume's own type; elsewhere nothing (Warp's volume_store).
TL_HD void volume_store_f(uint64_t id, int32_t i, int32_t j, int32_t k, float value) {
    const Volume& v = volume_of(id);
    const int64_t at = v.type == VOLUME_FLOAT ? volume_voxel(v, i, j, k) : -1;
    if (at >= 0) static_cast<float*>(v.values)[at] = value;
}

TL_HD void volume_store_v(uint64_t id, int32_t i, int32_t j, int32_t k, const vec<3, float>& value) {
    const Volume& v = volume_of(id);
    const int64_t at = v.type == VOLUME_VEC3 ? volume_voxel(v, i, j, k) : -1;
    if (at >= 0)
        for (int c = 0; c < 3; ++c) static_cast<float*>(v.values)[3 * at + c] = value[c];
}

TL_HD void volume_store_i(uint64_t id, int32_t i, int32_t j, int32_t k, int32_t value) {
    const Volume& v = volume_of(id);
    const int64_t at = v.type == VOLUME_INT ? volume_voxel(v, i, j, k) : -1;
    if (at >= 0) static_cast<int32_t*>(v.values)[at] = value;
}

// m x (+ t): NanoVDB's map in float32, in its order of operations.
TL_HD vec<3, float> volume_map(const float* m, const vec<3, float>& x) {
    return vec<3, float>(x[0] * m[0] + x[1] * m[1] + x[2] * m[2], x[0] * m[3] + x[1] * m[4] + x[2] * m[5],
                         x[0] * m[6] + x[1] * m[7] + x[2] * m[8]);
}

TL_HD vec<3, float> volume_index_to_world(uint64_t id, const vec<3, float>& uvw) {
    const Volume& v = volume_of(id);
    const vec<3, float> m = volume_map(v.mat, uvw);
    return vec<3, float>(m[0] + v.vec[0], m[1] + v.vec[1], m[2] + v.vec[2]);
}

TL_HD vec<3, float> volume_world_to_index(uint64_t id, const vec<3, float>& xyz) {
    const Volume& v = volume_of(id);
    return volume_map(v.inv_mat, vec<3, float>(xyz[0] - v.vec[0], xyz[1] - v.vec[1], xyz[2] - v.vec[2]));
}

TL_HD vec<3, float> volume_index_to_world_dir(uint64_t id, const vec<3, float>& uvw) {
    return volume_map(volume_of(id).mat, uvw);
}

TL_HD vec<3, float> volume_world_to_index_dir(uint64_t id, const vec<3, float>& xyz) {
    return volume_map(volume_of(id).inv_mat, xyz);
}

// The transforms' adjoints: the transposed matrix applied to the result's adjoint.
TL_HD vec<3, float> volume_map_transposed(const float* m, const vec<3, float>& g) {
    return vec<3, float>(g[0] * m[0] + g[1] * m[3] + g[2] * m[6], g[0] * m[1] + g[1] * m[4] + g[2] * m[7],
                         g[0] * m[2] + g[1] * m[5] + g[2] * m[8]);
}

TL_HD vec<3, float> volume_index_to_world_gradient(uint64_t id, const vec<3, float>& adj) {
    return volume_map_transposed(volume_of(id).mat, adj);
}

TL_HD vec<3, float> volume_world_to_index_gradient(uint64_t id, const vec<3, float>& adj) {
    return volume_map_transposed(volume_of(id).inv_mat, adj);
}

}  // namespace tl
