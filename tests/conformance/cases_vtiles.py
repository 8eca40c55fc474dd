"""Conformance cases for tiles of Warp's value types: tiles loaded from vec3/mat22 arrays, reduced,
mapped with funcs over vectors, accumulated, dotted and stored back (issue #15)."""
from cases import Arr, Case, Scal, arr, out

P = "vtiles_particles.py"
R = "vtiles_reduce.py"
L = "vtiles_layout.py"
COMPONENTS = {"vec2": (2,), "vec3": (3,), "vec3d": (3,), "mat22": (2, 2), "mat33": (3, 3), "quat": (4,)}


def varr(*shape, vt="vec3", role="in"):
    """An array of Warp value type `vt`: numpy's shape is the array's shape and then the components."""
    dtype = "float64" if vt.endswith("d") else "float32"
    kind = "zeros" if role == "out" else "randn"
    return Arr(tuple(shape) + COMPONENTS[vt], dtype, role, kind, value=vt)


def vout(*shape, vt="vec3"):
    return varr(*shape, vt=vt, role="out")


CASES = [
    Case("vtiles_centroid", P, "centroid", dim=(3,), args=(varr(96), vout(3)), block_dim=32),
    Case("vtiles_speeds", P, "speeds", dim=(2,), args=(varr(64), out(64)), block_dim=32),
    Case("vtiles_directions", P, "directions", dim=(2,), args=(varr(64), vout(64)), block_dim=32),
    Case("vtiles_energy", P, "energy", dim=(2,), args=(varr(64), arr(64, kind="rand"), out(1)), block_dim=32),
    Case("vtiles_step", P, "step", dim=(2,), args=(varr(64), varr(64), vout(64)), block_dim=32),
    Case("vtiles_scaled", P, "scaled", dim=(2,), args=(varr(64), vout(64), Scal(1.5)), block_dim=32),
    Case("vtiles_shifted", P, "shifted", dim=(2,), args=(varr(64), vout(64)), block_dim=32),
    Case("vtiles_pick", P, "pick", dim=(2,), args=(varr(64), vout(2)), block_dim=32),
    Case("vtiles_mat_accumulate", R, "mat_accumulate", dim=(1,), args=(varr(48, vt="mat22"), vout(16, vt="mat22")),
         block_dim=32),
    Case("vtiles_vec_dot", R, "vec_dot", dim=(2,), args=(varr(32), varr(32), out(2)), block_dim=32),
    Case("vtiles_mat_ddot", R, "mat_ddot", dim=(2,), args=(varr(32, vt="mat22"), varr(32, vt="mat22"), out(2)),
         block_dim=32),
    Case("vtiles_vec_axpy", R, "vec_axpy", dim=(2,), args=(varr(32), varr(32), vout(32), Scal(0.75)),
         block_dim=32),
    Case("vtiles_reduce_add", R, "vec_reduce_add", dim=(2,), args=(varr(32), vout(2)), block_dim=32,
         warp_wrong="Warp 1.19's adjoint of tile_reduce(wp.add, ...) over a vec3 tile leaves the input's gradient at "
         "zero; the sum's gradient is the seed broadcast to every element"),
    Case("vtiles_mat_scatter_masked", R, "mat_scatter_masked", dim=(2,),
         args=(varr(64, vt="mat33"), vout(64, vt="mat33")), block_dim=32),
    Case("vtiles_row_sums", R, "row_sums", dim=(2,), args=(varr(8, 16, vt="vec2"), vout(8, vt="vec2")),
         block_dim=32),
    Case("vtiles_atomic", R, "vec_atomic", dim=(2,), args=(varr(32), vout(16)), block_dim=32),
    Case("vtiles_double", R, "vec_double", dim=(2,), args=(varr(32, vt="vec3d"), vout(2, vt="vec3d")),
         block_dim=32),
    Case("vtiles_transpose", L, "transpose_grid", dim=(1,), args=(varr(4, 8, vt="vec2"), vout(8, 4, vt="vec2")),
         block_dim=32),
    Case("vtiles_broadcast", L, "broadcast_rows", dim=(1,), args=(varr(8), varr(4, 8), vout(4, 8)), block_dim=32),
    Case("vtiles_gather", L, "gather", dim=(1,), args=(varr(12), arr(8, dtype="int32", kind="int:0:12"), vout(8)),
         block_dim=32),
    Case("vtiles_lengths_builtin", L, "lengths_builtin", dim=(1,), args=(varr(8), out(8)), block_dim=32),
    Case("vtiles_map_add", L, "map_add", dim=(1,), args=(varr(8), varr(8), vout(8)), block_dim=32),
    Case("vtiles_rotate", L, "rotate", dim=(1,), args=(varr(8, vt="mat33"), varr(8), vout(8)), block_dim=32),
    Case("vtiles_weighted", L, "weighted", dim=(1,), args=(varr(8), arr(8), vout(8)), block_dim=32),
    Case("vtiles_element_update", L, "element_update", dim=(1,), args=(varr(8), vout(8)), block_dim=32),
    Case("vtiles_component", L, "component", dim=(1,), args=(varr(8), out(1)), block_dim=32),
    Case("vtiles_component_pairs", L, "component_pairs", dim=(1,), args=(varr(8), varr(8, vt="mat22"), out(1)),
         block_dim=32),
    Case("vtiles_sort_values", L, "sort_by_key", dim=(1,), args=(arr(8), varr(8), vout(8)), block_dim=32,
         warp_wrong="Warp 1.19's adjoint of tile_sort hands the output's gradient back unpermuted; the values' "
         "gradient is the seed moved back to where each value came from"),
    Case("vtiles_fill_scalar", L, "fill_scalar", dim=(1,), args=(varr(8), vout(8)), block_dim=32),
    Case("vtiles_quat_rotate", L, "quat_tiles", dim=(1,), args=(varr(8, vt="quat"), varr(8), vout(8)), block_dim=32),
    Case("vtiles_lanes_to_tile", L, "lanes_to_tile", dim=(2,), args=(varr(64), vout(64), vout(64)), block_dim=32),
]
