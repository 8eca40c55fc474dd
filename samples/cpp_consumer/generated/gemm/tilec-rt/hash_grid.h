// tilec runtime: Warp's hash grid (wp.HashGrid) as kernels read it. A grid buckets points into
// cubic cells of edge `cell_width`; cell coordinates wrap modulo (dim_x, dim_y, dim_z), so the grid
// covers all of space. A build (the loader's HashGrid.build, or any host code filling this struct)
// sorts the point indices by cell, stably: `point_ids` holds them in that order, and the points of
// cell c are point_ids[cell_starts[c] .. cell_ends[c]) (both 0 for an empty cell).
//
// A query is not a state machine here: the front end expands `for index in wp.hash_grid_query(...)`
// into loops over z, y, x (x fastest) of the cells the query's box overlaps, then over each cell's
// points, in Warp 1.19's order, so sums over neighbours add in the same order as Warp's.
#pragma once
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>
#include "vec.h"

namespace tl {

// The layout the loader fills (tilec-rt/loader.py `_HashGridDesc`): keep the two in step.
struct HashGrid {
    int32_t dim_x, dim_y, dim_z;
    int32_t num_points;  // points of the last build; 0 before the first
    int32_t built;  // 1 once built: queries of an unbuilt grid visit nothing
    int32_t dtype_bits;  // 32 or 64: the precision of the points it was built from
    float cell_width_inv_f;  // 1 / cell_width in float32 (a float32 grid's cells)
    double cell_width_inv_d;  // and in float64 (a float64 grid's)
    const int32_t* point_ids;  // num_points indices into the points, sorted by cell
    const int32_t* cell_starts;  // dim_x * dim_y * dim_z
    const int32_t* cell_ends;
    const uint64_t* point_keys;  // a grouped build's sorted (cell << 32 | group) keys, else null
    int32_t has_groups;  // 1 after a grouped build
};

#ifndef __CUDA_ARCH__
__attribute__((visibility("hidden"))) inline const HashGrid empty_hash_grid = {1, 1, 1, 0, 0, 32, 0.0f, 0.0, nullptr,
                                                                              nullptr, nullptr, nullptr, 0};
#endif

// The grid behind an id: the null id (0, Warp's unset id) is an empty, unbuilt grid (a query visits nothing).
TL_HD const HashGrid& hash_grid(uint64_t id) {
#ifndef __CUDA_ARCH__
    if (id == 0) return empty_hash_grid;
#endif
    return *reinterpret_cast<const HashGrid*>(uintptr_t(id));
}

TL_HD float hash_grid_inv(const HashGrid& g, float) { return g.cell_width_inv_f; }
TL_HD double hash_grid_inv(const HashGrid& g, double) { return g.cell_width_inv_d; }

// A scaled coordinate's cell: floor, saturated to [INT_MIN, INT_MAX - 1] (a loop may step one cell
// past the end without overflow), NaN to 0 (Warp's rule).
template <class T> TL_HD int32_t hash_grid_cell_coord(T v) {
    const T c = std::floor(v);
    if (c >= T(2147483646.0)) return INT_MAX - 1;
    if (c >= T(-2147483648.0)) return int32_t(c);
    if (c < T(-2147483648.0)) return INT_MIN;
    return 0;  // NaN
}

// The first cell coordinate along `axis` of the box point +- radius.
template <class T> TL_HD int32_t hash_grid_query_start(uint64_t id, const vec<3, T>& point, T radius, int32_t axis) {
    const HashGrid& g = hash_grid(id);
    return hash_grid_cell_coord((point[axis] - radius) * hash_grid_inv(g, T(0)));
}

// One past the last cell coordinate along `axis`: at most one pass over the axis's cells (a box
// wider than the grid visits each once), and at least the start cell (Warp's query visits it even
// for a negative radius). In 64 bits: start + dim overflows int32 near INT_MAX.
template <class T> TL_HD int32_t hash_grid_query_stop(uint64_t id, const vec<3, T>& point, T radius, int32_t axis) {
    const HashGrid& g = hash_grid(id);
    const int64_t start = hash_grid_query_start(id, point, radius, axis);
    int64_t end = hash_grid_cell_coord((point[axis] + radius) * hash_grid_inv(g, T(0)));
    const int64_t dim = axis == 0 ? g.dim_x : axis == 1 ? g.dim_y : g.dim_z;
    if (end - start >= dim) end = start + dim - 1;
    if (end < start) end = start;
    return int32_t(end + 1);
}

// The physical cell of cell coordinates (x, y, z): each wrapped into [0, dim).
TL_HD int32_t hash_grid_wrap(int32_t v, int32_t dim) {
    const int32_t c = v % dim;
    return c < 0 ? c + dim : c;
}

TL_HD int32_t hash_grid_index(const HashGrid& g, int32_t x, int32_t y, int32_t z) {
    return (hash_grid_wrap(z, g.dim_z) * g.dim_y + hash_grid_wrap(y, g.dim_y)) * g.dim_x + hash_grid_wrap(x, g.dim_x);
}

TL_HD int32_t hash_grid_cell(uint64_t id, int32_t x, int32_t y, int32_t z) {
    return hash_grid_index(hash_grid(id), x, y, z);
}

TL_HD int32_t hash_grid_cell_begin(uint64_t id, int32_t cell) {
    const HashGrid& g = hash_grid(id);
    return g.built ? g.cell_starts[cell] : 0;
}

TL_HD int32_t hash_grid_cell_end(uint64_t id, int32_t cell) {
    const HashGrid& g = hash_grid(id);
    return g.built ? g.cell_ends[cell] : 0;
}

// A grouped query's range of a cell: the points of `group` in it, the first key >= (cell, group) and
// the first >= (cell, group + 1) in the cell's sorted keys (Warp's two binary searches give the same
// positions: its second starts at the first's answer, below which every key is smaller). A grid built
// without groups gives the whole cell. stop: the range's end, else its start.
TL_HD int32_t hash_grid_group_bound(uint64_t id, int32_t cell, int32_t group, bool stop) {
    const HashGrid& g = hash_grid(id);
    int32_t lo = hash_grid_cell_begin(id, cell), hi = hash_grid_cell_end(id, cell);
    if (!(g.built && g.point_keys != nullptr && g.has_groups)) return stop ? hi : lo;
    const uint64_t want = ((uint64_t(uint32_t(cell)) << 32) | uint64_t(uint32_t(group))) + (stop ? 1 : 0);
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (g.point_keys[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

TL_HD int32_t hash_grid_group_begin(uint64_t id, int32_t cell, int32_t group) {
    return hash_grid_group_bound(id, cell, group, false);
}

TL_HD int32_t hash_grid_group_end(uint64_t id, int32_t cell, int32_t group) {
    return hash_grid_group_bound(id, cell, group, true);
}

// wp.hash_grid_point_id: the point at position `k` of the cell-sorted order; -1 before a build and
// (unlike Warp, which reads past its buffer) for k outside [0, num_points).
TL_HD int32_t hash_grid_point_id(uint64_t id, int32_t k) {
    const HashGrid& g = hash_grid(id);
    return g.built && k >= 0 && k < g.num_points ? g.point_ids[k] : -1;
}

#ifndef __CUDA_ARCH__
// A grid with buffers of its own, for C++ callers of the C API (Python's loader builds with numpy, the
// same cells and order): `tl::HashGridStorage grid(128, 128, 128); grid.build(xyz, n, radius);` then pass
// `grid.id()` where the kernel takes the grid. T: float or double, the points' precision (xyz: n
// points, three values each, `stride` values apart).
class HashGridStorage {
public:
    HashGridStorage(int32_t dim_x, int32_t dim_y, int32_t dim_z)
        : desc_{dim_x, dim_y, dim_z, 0, 0, 32, 0.0f, 0.0, nullptr, nullptr, nullptr, nullptr, 0},
          starts_(size_t(dim_x) * size_t(dim_y) * size_t(dim_z), 0), ends_(starts_.size(), 0) {}
    HashGridStorage(const HashGridStorage&) = delete;  // its id is its descriptor's address: it stays put
    HashGridStorage& operator=(const HashGridStorage&) = delete;

    // groups: null, or one int32 per point (a grouped grid: each cell's points sorted by group, Warp's keys)
    template <class T> void build(const T* xyz, int32_t n, double radius, int64_t stride = 3,
                                  const int32_t* groups = nullptr) {
        const T inv = T(1) / T(radius);
        std::vector<int32_t> cells(size_t(n > 0 ? n : 0));
        std::vector<int32_t> counts(starts_.size() + 1, 0);
        for (int32_t i = 0; i < n; ++i) {
            const T* p = xyz + int64_t(i) * stride;
            cells[i] = hash_grid_index(desc_, hash_grid_cell_coord(p[0] * inv), hash_grid_cell_coord(p[1] * inv),
                                       hash_grid_cell_coord(p[2] * inv));
            ++counts[size_t(cells[i]) + 1];
        }
        for (size_t c = 1; c < counts.size(); ++c) counts[c] += counts[c - 1];  // each cell's first position
        ids_.assign(cells.size(), 0);
        std::vector<int32_t> next(counts.begin(), counts.end() - 1);
        for (int32_t i = 0; i < n; ++i) ids_[size_t(next[size_t(cells[i])]++)] = i;  // stable: points in order
        keys_.clear();
        if (groups != nullptr) {  // within each cell, by group (stable: a group's points in order)
            for (size_t c = 0; c + 1 < counts.size(); ++c)
                std::stable_sort(ids_.begin() + counts[c], ids_.begin() + counts[c + 1], [&](int32_t a, int32_t b) {
                    return uint32_t(groups[a]) < uint32_t(groups[b]);
                });
            for (int32_t id : ids_) keys_.push_back((uint64_t(uint32_t(cells[size_t(id)])) << 32) | uint32_t(groups[id]));
        }
        for (size_t c = 0; c < starts_.size(); ++c) {
            const bool used = counts[c + 1] > counts[c];
            starts_[c] = used ? counts[c] : 0;
            ends_[c] = used ? counts[c + 1] : 0;
        }
        desc_.num_points = n;
        desc_.built = 1;
        desc_.dtype_bits = int32_t(sizeof(T) * 8);
        desc_.cell_width_inv_f = 1.0f / float(radius);
        desc_.cell_width_inv_d = 1.0 / radius;
        desc_.point_ids = ids_.data();
        desc_.cell_starts = starts_.data();
        desc_.cell_ends = ends_.data();
        desc_.point_keys = groups != nullptr ? keys_.data() : nullptr;
        desc_.has_groups = groups != nullptr ? 1 : 0;
    }

    uint64_t id() const { return uint64_t(uintptr_t(&desc_)); }

private:
    HashGrid desc_;
    std::vector<int32_t> starts_, ends_, ids_;
    std::vector<uint64_t> keys_;
};
#endif

}  // namespace tl
