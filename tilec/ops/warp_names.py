"""Warp's tile builtins by name (data): what the op table is measured against.

`WARP_TILE_BUILTINS` is every tile builtin of Warp 1.19, selected from
`warp._src.context.builtin_functions` as the names starting with `tile` (68) plus the
other members of Warp's "Tile Primitives" group (`untile`, `assign`).
`WARP_RANDOM_BUILTINS` is Warp's "Random" group, which tile programs use with
`tile_randf`/`tile_randi`. A test re-derives both lists from an installed Warp, so a
Warp op can never be silently missing here; docs/ops.md shows tilec's status for each.

A Warp builtin that is not (yet) in the op table gets a "not supported by tilec yet"
diagnostic naming it, with the note below when there is one, never a spelling
suggestion for another op.
"""
from __future__ import annotations

WARP_VERSION = "1.19.0"

WARP_TILE_BUILTINS = tuple("""
tile tile_add_inplace tile_arange tile_argmax tile_argmin tile_assign tile_astype
tile_atomic_add tile_atomic_add_indexed tile_axpy tile_bit_and_inplace tile_bit_or_inplace
tile_bit_xor_inplace tile_broadcast tile_bvh_query_aabb tile_bvh_query_next tile_bvh_query_ray
tile_cholesky tile_cholesky_inplace tile_cholesky_solve tile_cholesky_solve_inplace
tile_diag_add tile_dot tile_empty tile_extract tile_fft tile_from_thread tile_full tile_ifft
tile_load tile_load_indexed tile_lower_solve tile_lower_solve_inplace tile_map tile_matmul
tile_max tile_mesh_query_aabb tile_mesh_query_aabb_next tile_min tile_ones tile_query_valid
tile_randf tile_randi tile_reduce tile_reshape tile_scan_exclusive tile_scan_inclusive
tile_scan_max_inclusive tile_scan_min_inclusive tile_scatter_add tile_scatter_masked
tile_slice_indexed tile_sort tile_squeeze tile_stack tile_stack_clear tile_stack_count
tile_stack_pop tile_stack_push tile_store tile_store_indexed tile_sub_inplace tile_sum
tile_transpose tile_upper_solve tile_upper_solve_inplace tile_view tile_zeros
assign untile
""".split())

WARP_RANDOM_BUILTINS = tuple("""
curlnoise noise pnoise poisson rand_init randf randi randn randu sample_cdf sample_triangle
sample_unit_cube sample_unit_disk sample_unit_hemisphere sample_unit_hemisphere_surface
sample_unit_ring sample_unit_sphere sample_unit_sphere_surface sample_unit_square
""".split())

# Why a Warp builtin is missing (a note under the diagnostic).
NOTES = {
    "tile_bvh_query_aabb": "BVH queries are out of scope for now",
    "tile_bvh_query_ray": "BVH queries are out of scope for now",
    "tile_bvh_query_next": "BVH queries are out of scope for now",
    "tile_mesh_query_aabb": "mesh queries are out of scope for now",
    "tile_mesh_query_aabb_next": "mesh queries are out of scope for now",
    "tile_query_valid": "BVH and mesh queries are out of scope for now",
}
# What to write instead, where tilec has the same operation under another spelling.
HELP = {
    "assign": "write `t[i, j] = value`",
    "tile_slice_indexed": "write `t[idx, :]` or `t[:, idx]`",
}


def is_warp_builtin(name: str) -> bool:
    return name in _KNOWN


_KNOWN = frozenset(WARP_TILE_BUILTINS + WARP_RANDOM_BUILTINS)
