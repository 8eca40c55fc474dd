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
#include <climits>
#include <cmath>
#include <cstdint>
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
};

TL_HD const HashGrid& hash_grid(uint64_t id) { return *reinterpret_cast<const HashGrid*>(uintptr_t(id)); }

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

TL_HD int32_t hash_grid_cell(uint64_t id, int32_t x, int32_t y, int32_t z) {
    const HashGrid& g = hash_grid(id);
    return (hash_grid_wrap(z, g.dim_z) * g.dim_y + hash_grid_wrap(y, g.dim_y)) * g.dim_x + hash_grid_wrap(x, g.dim_x);
}

TL_HD int32_t hash_grid_cell_begin(uint64_t id, int32_t cell) {
    const HashGrid& g = hash_grid(id);
    return g.built ? g.cell_starts[cell] : 0;
}

TL_HD int32_t hash_grid_cell_end(uint64_t id, int32_t cell) {
    const HashGrid& g = hash_grid(id);
    return g.built ? g.cell_ends[cell] : 0;
}

// wp.hash_grid_point_id: the point at position `k` of the cell-sorted order; -1 before a build and
// (unlike Warp, which reads past its buffer) for k outside [0, num_points).
TL_HD int32_t hash_grid_point_id(uint64_t id, int32_t k) {
    const HashGrid& g = hash_grid(id);
    return g.built && k >= 0 && k < g.num_points ? g.point_ids[k] : -1;
}

}  // namespace tl
