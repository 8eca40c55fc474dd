"""Warp's tile builtins by name (data): what the op table is measured against.

`WARP_TILE_BUILTINS` is every tile builtin of Warp 1.19, selected from
`warp._src.context.builtin_functions` as the names starting with `tile` (68) plus the
other members of Warp's "Tile Primitives" group (`untile`, `assign`).
`WARP_RANDOM_BUILTINS` is Warp's "Random" group, which tile programs use with
`tile_randf`/`tile_randi`. `WARP_OTHER_BUILTINS` is every other name of
`builtin_functions` (math, vectors, atomics, geometry queries, volumes, ...). A test
re-derives the three lists from an installed Warp, so a Warp op can never be silently
missing here; docs/ops.md shows tilec's status for each tile and random builtin.

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

WARP_OTHER_BUILTINS = tuple("""
abs acos add add_inplace address argmax argmin array array_store asin assign_copy assign_inplace
atan atan2 atomic_add atomic_and atomic_cas atomic_exch atomic_max atomic_min atomic_or atomic_sub
atomic_xor bfloat16 bit_and bit_and_inplace bit_count bit_or bit_or_inplace bit_xor bit_xor_inplace
block_dim bool breakpoint bvh_get_group_root bvh_query_aabb bvh_query_aabb_tiled bvh_query_capsule
bvh_query_next bvh_query_next_tiled bvh_query_ray bvh_query_ray_tiled bvh_query_sphere cast cbrt
ceil clamp closest_point_edge_edge copy copysign cos cosh cross cw_div cw_mul ddot degrees
dense_chol dense_chol_batched dense_gemm dense_gemm_batched dense_solve dense_solve_batched
dense_subs determinant diag div div_approx dot eig3 erf erfc erfcinv erfinv exp expect_eq
expect_near expect_neq extract float float16 float32 float64 floor floordiv frac get_diag
hash_grid_point_id hash_grid_query hash_grid_query_next identity index indexref int int16 int32
int64 int8 intersect_tri_tri inverse inverse_approx invert isfinite isinf isnan iter_next len length
length_sq lerp load log log10 log2 lower_bound lshift matrix matrix_from_cols matrix_from_rows max
mesh_eval_face_normal mesh_eval_position mesh_eval_velocity mesh_get mesh_get_bvh
mesh_get_group_root mesh_get_index mesh_get_point mesh_get_velocity mesh_query_aabb
mesh_query_aabb_next mesh_query_aabb_next_tiled mesh_query_aabb_tiled
mesh_query_furthest_point_no_sign mesh_query_next mesh_query_point mesh_query_point_no_sign
mesh_query_point_sign_normal mesh_query_point_sign_parity mesh_query_point_sign_winding_number
mesh_query_ray mesh_query_ray_anyhit mesh_query_ray_count_intersections mesh_query_sphere min mod
mul neg nonzero norm_huber norm_l1 norm_l2 norm_pseudo_huber normalize outer pos pow print printf
qr3 quat_from_axis_angle quat_from_euler quat_from_matrix quat_identity quat_inverse quat_rotate
quat_rotate_inv quat_rpy quat_slerp quat_to_axis_angle quat_to_euler quat_to_matrix quat_to_rpy
quat_twist quat_twist_angle quat_twist_angle_signed quaternion radians range reversed rint round
rshift select sign sin sinh skew slice smooth_normalize smoothstep spatial_adjoint spatial_bottom
spatial_cross spatial_cross_dual spatial_dot spatial_top spatial_vector sqrt static step store sub
sub_inplace svd2 svd3 tan tanh texture_sample tid trace transform_add_inplace transform_compose
transform_decompose transform_from_matrix transform_get_rotation transform_get_translation
transform_identity transform_inverse transform_multiply transform_point transform_set_rotation
transform_set_rotation_copy transform_set_translation transform_set_translation_copy
transform_sub_inplace transform_to_matrix transform_twist transform_vector transform_wrench
transformation transpose trunc tuple uint16 uint32 uint64 uint8 unot vector velocity_at_point view
volume_index_to_world volume_index_to_world_dir volume_lookup volume_lookup_f volume_lookup_i
volume_lookup_index volume_lookup_v volume_sample volume_sample_f volume_sample_grad
volume_sample_grad_f volume_sample_grad_index volume_sample_i volume_sample_index volume_sample_v
volume_store volume_store_f volume_store_i volume_store_v volume_voxel_count volume_world_to_index
volume_world_to_index_dir where zeros
""".split())

# The builtins Warp's module does not export as attributes: in a kernel these need `wp.` (Warp reads a
# bare name the module does not bind as an attribute of warp, so a bare `tid()` is an undefined name
# there; `sqrt(x)` and `vec3(...)` are warp's). Re-derived from an installed Warp by a test.
WARP_NOT_EXPORTED = frozenset("""
add_inplace assign assign_copy assign_inplace bit_and_inplace bit_or_inplace bit_xor_inplace
breakpoint bvh_get_group_root bvh_query_aabb bvh_query_aabb_tiled bvh_query_capsule bvh_query_next
bvh_query_next_tiled bvh_query_ray bvh_query_ray_tiled bvh_query_sphere cast closest_point_edge_edge
div_approx expect_neq extract float hash_grid_point_id hash_grid_query hash_grid_query_next identity
int intersect_tri_tri inverse_approx iter_next len matrix mesh_eval_face_normal mesh_eval_position
mesh_eval_velocity mesh_get mesh_get_bvh mesh_get_group_root mesh_get_index mesh_get_point
mesh_get_velocity mesh_query_aabb mesh_query_aabb_next mesh_query_aabb_next_tiled
mesh_query_aabb_tiled mesh_query_furthest_point_no_sign mesh_query_next mesh_query_point
mesh_query_point_no_sign mesh_query_point_sign_normal mesh_query_point_sign_parity
mesh_query_point_sign_winding_number mesh_query_ray mesh_query_ray_anyhit
mesh_query_ray_count_intersections mesh_query_sphere print quaternion range reversed slice
spatial_adjoint sub_inplace texture_sample tid tile_add_inplace tile_arange tile_argmax tile_argmin
tile_assign tile_astype tile_atomic_add tile_atomic_add_indexed tile_axpy tile_bit_and_inplace
tile_bit_or_inplace tile_bit_xor_inplace tile_broadcast tile_bvh_query_aabb tile_bvh_query_next
tile_bvh_query_ray tile_cholesky tile_cholesky_inplace tile_cholesky_solve
tile_cholesky_solve_inplace tile_diag_add tile_dot tile_empty tile_extract tile_fft tile_from_thread
tile_full tile_ifft tile_load tile_load_indexed tile_lower_solve tile_lower_solve_inplace tile_map
tile_matmul tile_max tile_mesh_query_aabb tile_mesh_query_aabb_next tile_min tile_ones
tile_query_valid tile_randf tile_randi tile_reduce tile_reshape tile_scan_exclusive
tile_scan_inclusive tile_scan_max_inclusive tile_scan_min_inclusive tile_scatter_add
tile_scatter_masked tile_slice_indexed tile_sort tile_squeeze tile_stack_clear tile_stack_count
tile_stack_pop tile_stack_push tile_store tile_store_indexed tile_sub_inplace tile_sum
tile_transpose tile_upper_solve tile_upper_solve_inplace tile_view tile_zeros transform_add_inplace
transform_set_rotation_copy transform_set_translation_copy transform_sub_inplace transformation
tuple untile vector volume_lookup volume_sample volume_sample_grad volume_sample_grad_index
volume_sample_index volume_store volume_store_f volume_store_i volume_store_v
""".split())

# Why a family of Warp builtins is missing (a note under the diagnostic), by the start of their names.
FAMILY_NOTES = {
    "bvh_": "of Warp's BVH queries tilec has bvh_query_aabb, bvh_query_sphere, bvh_query_ray and bvh_query_capsule "
            "loops (with bvh_query_next and its max_dist), the tiled bvh queries, grouped BVHs and bvh_get_group_root",
    "volume_": "tilec's volumes hold float32, vec3f or int32 voxels (Volume.allocate, allocate_by_tiles, "
               "load_from_numpy); index volumes (volume_*_index, volume_voxel_count) are not supported yet",
}
# Builtins the frontend lowers as other ops (no op of their own), with what they become.
LOWERED_AS = {
    "sample_cdf": "`lower_bound(cdf, randf(state))`, one draw, as Warp computes it",
    **{name: "a block's shared walk of the tree (frontend/tiled_queries.py: a cursor the lanes read and move alike)"
       for name in ("tile_bvh_query_aabb", "tile_bvh_query_ray", "tile_mesh_query_aabb")},
    **{name: "lane l's item the step's l-th from the cursor (`mesh_batch_item`), the cursor moved after "
             "(`mesh_batch_advance`)" for name in ("tile_bvh_query_next", "tile_mesh_query_aabb_next")},
    "texture_sample": "an op by the sample's type (texture_sample_f, _v2, _v4) over the coordinates as one float or "
                      "vector (frontend/textures.py)",
    "tile_query_valid": "whether the query's last step found an item (true before the first)",
    **{name: "the typed op of its dtype or value (volume_sample_f, _v, _i; volume_lookup_*; volume_store_*: "
             "frontend/volumes.py)" for name in ("volume_sample", "volume_lookup", "volume_store")},
    **{name: "volume_sample_grad4 (the sample and its gradient) before the statement, its `grad` variable assigned "
             "the gradient (frontend/volumes.py)"
       for name in ("volume_sample_grad", "volume_sample_grad_f")},
    "mesh_get": "a struct value of the mesh's arrays: `points`, `velocities` and `indices` (mesh_points, "
                "mesh_velocities, mesh_indices)",
}
# What to write instead, where tilec has the same operation under another spelling.
HELP = {
    "assign": "write `t[i, j] = value`",
    "tile_slice_indexed": "write `t[idx, :]` or `t[:, idx]`",
}


def is_warp_builtin(name: str) -> bool:
    return name in _KNOWN


def note(name: str) -> str | None:
    """Why the Warp builtin `name` is missing, when it is said."""
    return next((text for start, text in FAMILY_NOTES.items() if name.startswith(start)), None)


# Warp's funcs written in Python outside its builtin table but exported as `wp.<name>` (warp/_src/utils.py)
WARP_EXPORTED_FUNCS = ("quat_between_vectors",)

_KNOWN = frozenset(WARP_TILE_BUILTINS + WARP_RANDOM_BUILTINS + WARP_OTHER_BUILTINS + WARP_EXPORTED_FUNCS)


# Warp"s keyword names of the builtins whose parameters tilec"s op table names otherwise (`wp.pow(x=2.0,
# y=4.0)`, `wp.clamp(v, low=0.0, high=1.0)`): op -> {Warp"s keyword: its position}, over Warp"s
# overloads of the op"s arity (a name at two positions is left out). Re-derived from an installed Warp
# by a test.
WARP_KEYWORDS: dict[str, dict[str, int]] = {
    "abs": {"x": 0},
    "acos": {"x": 0},
    "add": {"a": 0, "b": 1},
    "asin": {"x": 0},
    "atan": {"x": 0},
    "atan2": {"y": 0, "x": 1},
    "bit_count": {"x": 0},
    "cbrt": {"x": 0},
    "ceil": {"x": 0},
    "clamp": {"low": 1, "high": 2},
    "copysign": {"x": 0, "y": 1},
    "cos": {"x": 0},
    "cosh": {"x": 0},
    "curlnoise": {"xy": 1, "xyz": 1, "xyzt": 1},
    "diag": {"vec": 0},
    "div": {"a": 0, "b": 1},
    "erf": {"x": 0},
    "erfc": {"x": 0},
    "erfcinv": {"x": 0},
    "erfinv": {"x": 0},
    "exp": {"x": 0},
    "expect_eq": {"a": 0, "b": 1},
    "expect_near": {"a": 0, "b": 1},
    "expect_neq": {"a": 0, "b": 1},
    "floor": {"x": 0},
    "frac": {"x": 0},
    "get_diag": {"mat": 0},
    "log": {"x": 0},
    "log10": {"x": 0},
    "log2": {"x": 0},
    "max": {"a": 0, "b": 1},
    "min": {"a": 0, "b": 1},
    "mul": {"a": 0, "b": 1},
    "noise": {"xy": 1, "xyz": 1, "xyzt": 1},
    "pow": {"x": 0, "y": 1},
    "quat_from_axis_angle": {"axis": 0, "angle": 1},
    "quat_inverse": {"quat": 0},
    "quat_rotate": {"quat": 0, "vec": 1},
    "quat_rotate_inv": {"quat": 0, "vec": 1},
    "rint": {"x": 0},
    "round": {"x": 0},
    "select": {"value_if_false": 1, "value_if_true": 2, "arr": 0},
    "sign": {"x": 0},
    "sin": {"x": 0},
    "sinh": {"x": 0},
    "skew": {"vec": 0},
    "sqrt": {"x": 0},
    "sub": {"a": 0, "b": 1},
    "tan": {"x": 0},
    "tanh": {"x": 0},
    "tile_astype": {"t": 0},
    "tile_cholesky": {"A": 0},
    "tile_reshape": {"t": 0},
    "tile_squeeze": {"t": 0},
    "tile_upper_solve": {"z": 1},
    "tile_view": {"t": 0},
    "transform_get_rotation": {"xform": 0},
    "transform_get_translation": {"xform": 0},
    "transform_inverse": {"xform": 0},
    "transform_point": {"xform": 0, "point": 1, "mat": 0},
    "transform_vector": {"xform": 0, "vec": 1, "mat": 0},
    "trunc": {"x": 0},
    "where": {"value_if_true": 1, "value_if_false": 2, "arr": 0},
}
