"""Conformance cases for array views and slices, tile subscripts, and funcs with Warp's calling
convention (tiles by reference, arrays through funcs), written in Warp's idioms."""
from cases import Arr, Case, Scal, arr, out, varr

A = "views_arrays.py"
T = "views_tiles.py"
F = "views_funcs.py"


def inout(*shape, dtype="float32"):
    return Arr(tuple(shape), dtype, "inout", "randn")


CASES = [
    Case("views_row_copy", A, "row_copy", dim=(3,), args=(arr(3, 8), out(3, 8))),
    Case("views_plane_load", A, "plane_load", dim=(2,), args=(arr(2, 4, 8), out(2, 4, 8))),
    Case("views_nested_index_store", A, "nested_index_store", dim=(2,), args=(arr(2, 8), out(2, 2, 8))),
    Case("views_slice_start", A, "slice_start", dim=(3,), args=(arr(3, 8), out(3, 8))),
    Case("views_slice_step", A, "slice_step", dim=(3,), args=(arr(3, 8), out(3, 8))),
    Case("views_slice_negative_start", A, "slice_negative_start", dim=(3,), args=(arr(3, 8), out(3, 8))),
    Case("views_slice_clamped", A, "slice_clamped", dim=(2,), args=(arr(2, 8), out(2, 8))),
    Case("views_column_view", A, "column_view", dim=(5,), args=(arr(8, 5), out(5, 8))),
    Case("views_view_to_func", A, "view_to_func", dim=(3,), args=(arr(3, 8), out(3, 8))),
    Case("views_plane_to_func", A, "plane_to_func", dim=(2,), args=(arr(2, 4, 8), out(2, 8))),
    Case("views_view_of_view", A, "view_of_view", dim=(2,), args=(arr(2, 4, 8), out(2, 4, 8))),
    Case("views_view_with_offset", A, "view_with_offset", dim=(3, 2), args=(arr(3, 8), out(3, 8))),
    Case("views_atomic_into_view", A, "atomic_into_view", dim=(3,), args=(arr(3, 8), out(2, 8))),
    Case("views_rows_in_loop", A, "rows_in_loop", dim=(1,), args=(arr(4, 8), out(8))),
    Case("views_leading_slice", A, "leading_slice", dim=(1,), args=(arr(4, 8), out(2, 8))),
    Case("views_every_other_row", A, "every_other_row", dim=(1,), args=(arr(8, 8), out(8, 8))),
    Case("views_partial_store", A, "partial_store", dim=(3,), args=(arr(3, 8), out(3, 6))),
    Case("views_simt_row_reads", A, "simt_row_reads", dim=(5,), args=(arr(5, 8), out(5)), launch="simt"),
    Case("views_simt_view_write", A, "simt_view_write", dim=(5,), args=(arr(5, 8), out(5, 3)), launch="simt"),
    Case("views_simt_slice_shape", A, "simt_slice_shape", dim=(4,), args=(arr(4, 8), out(4)), launch="simt"),
    Case("views_simt_atomic_view", A, "simt_atomic_view", dim=(6,), args=(arr(6, 2), out(1, 2)), launch="simt"),
    Case("views_tile_view_slices_2d", A, "tile_view_slices_2d", dim=(2,), args=(arr(2, 4, 8), out(2, 8))),
    Case("views_func_writes_view", A, "func_writes_view", dim=(2,), args=(arr(2, 8), out(2, 2, 8))),
]

CASES += [
    Case("views_tile_row_const", T, "row_const", dim=(1,), args=(arr(4, 6), out(6))),
    Case("views_tile_row_dynamic", T, "row_dynamic", dim=(3,), args=(arr(4, 6), out(3, 6))),
    Case("views_tile_last_row", T, "last_row", dim=(1,), args=(arr(4, 6), out(6))),
    Case("views_tile_column", T, "column", dim=(1,), args=(arr(4, 6), out(4))),
    Case("views_tile_block_strided", T, "block_strided", dim=(1,), args=(arr(4, 6), out(2, 3))),
    Case("views_tile_reversed_rows", T, "reversed_rows", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_reversed_both", T, "reversed_both", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_view_slice_offset", T, "view_slice_offset", dim=(1,), args=(arr(4, 6), out(3))),
    Case("views_tile_gather_row", T, "gather_row", dim=(1,), args=(arr(4, 6), out(3))),
    Case("views_tile_gather_rows", T, "gather_rows", dim=(1,), args=(arr(4, 6), out(2, 6))),
    Case("views_tile_gather_loaded", T, "gather_loaded", dim=(1,),
         args=(arr(8), Arr((4,), "int32", "in", "int:0:8"), out(4))),
    Case("views_tile_assign_row", T, "assign_row", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_assign_partial_row", T, "assign_partial_row", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_assign_block", T, "assign_block", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_scale_by_element", T, "scale_by_element", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_row_sums", T, "row_sums", dim=(1,), args=(arr(4, 6), out(1))),
    Case("views_tile_rows_added", T, "rows_added", dim=(1,), args=(arr(4, 6), out(6))),
    Case("views_tile_matmul_of_slices", T, "matmul_of_slices", dim=(1,), args=(arr(4, 6), arr(6, 6), out(4, 3)),
         rtol=1e-4, atol=1e-4),
    Case("views_tile_reversed_1d", T, "reversed_1d", dim=(1,), args=(arr(8), out(8))),
    Case("views_tile_strided_1d", T, "strided_1d", dim=(1,), args=(arr(8), out(4))),
    Case("views_tile_chained_slices", T, "chained_slices", dim=(1,), args=(arr(4, 6), out(3, 3))),
    Case("views_tile_plane_of_3d", T, "plane_of_3d", dim=(1,), args=(arr(2, 4, 6), out(4, 6))),
    Case("views_tile_middle_axis", T, "middle_axis", dim=(1,), args=(arr(2, 4, 6), out(2, 6))),
    Case("views_tile_rows_in_loop", T, "rows_in_loop", dim=(1,), args=(arr(4, 6), out(6))),
    Case("views_tile_rows_rewritten_in_loop", T, "rows_rewritten_in_loop", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_assign_f64_into_f32", T, "assign_f64_into_f32", dim=(1,),
         args=(arr(1, 6, dtype="float64"), out(4, 6))),
    Case("views_tile_assign_f32_into_f64", T, "assign_f32_into_f64", dim=(1,),
         args=(arr(2, 3), out(4, 6, dtype="float64"))),
    Case("views_tile_assign_int_into_f32", T, "assign_int_into_f32", dim=(1,),
         args=(arr(4, 6, dtype="int32", kind="int:-100000000:100000000"), out(4, 6)), grad=False),
]

CASES += [
    Case("views_func_bump", F, "k_bump", dim=(2,), args=(arr(16), out(16))),
    Case("views_func_pull", F, "k_pull", dim=(2,), args=(arr(16), arr(16), out(16))),
    Case("views_func_nested", F, "k_nested", dim=(2,), args=(arr(16), out(16))),
    Case("views_func_mul_assign_copies", F, "k_mul_assign_copies", dim=(2,), args=(arr(16), out(16), out(16))),
    Case("views_func_rebound", F, "k_rebound", dim=(2,), args=(arr(16), out(16), out(16))),
    Case("views_func_add_and_total", F, "k_add_and_total", dim=(2,), args=(arr(16), out(16), out(2)),
         warp_wrong="the same tile passed twice by reference: Warp's gradient drops most of d(t + t*t)/dt"),
    Case("views_func_bump_loop", F, "k_bump_loop", dim=(2,), args=(Arr((16,), kind="rand"), out(16)),
         rtol=1e-4, atol=1e-4),
    Case("views_func_scaled_bump", F, "k_scaled_bump", dim=(2,), args=(arr(16), out(16), Scal(0.75))),
    Case("views_func_matmul_in_func", F, "k_matmul_in_func", dim=(1,), args=(arr(8, 8), arr(8, 8), out(8, 8)),
         rtol=1e-4, atol=1e-4),
    Case("views_func_both", F, "k_both", dim=(2,), args=(arr(16), arr(16), out(16), out(16))),
    Case("views_func_atomic_in_func", F, "k_atomic_in_func", dim=(2,), args=(arr(16), out(8))),
    Case("views_func_simt_array_func", F, "k_simt_array_func", dim=(10,), args=(arr(10), out(10), Scal(1.5)),
         launch="simt"),
    Case("views_func_view_and_ref", F, "k_view_and_ref", dim=(3,), args=(arr(3, 8), out(3, 8)),
         warp_wrong="a func updating a by-reference tile from an array view: Warp's gradient of the view "
                    "is wrong (numpy: seed_i * (1 + A[i+1]) + seed_(i-1) * A[i-1])"),
    Case("views_func_load_store", F, "k_func_load_store", dim=(2,), args=(arr(16), out(16))),
    Case("views_func_no_backward", F, "k_no_backward", dim=(2,), args=(arr(16), out(16)), grad=False),
]

CASES += [
    Case("views_tile_cols_reversed", T, "cols_reversed", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_tile_overlapping_rows", T, "overlapping_rows", dim=(1,), args=(arr(4, 6), out(2, 6))),
    Case("views_tile_window_1d", T, "window_1d", dim=(1,), args=(arr(8), out(4))),
    Case("views_tile_row_of_3d", T, "row_of_3d", dim=(1,), args=(arr(2, 4, 6), out(6))),
    Case("views_tile_gather_then_reduce", T, "gather_then_reduce", dim=(1,), args=(arr(4, 6), out(6))),
    Case("views_tile_rows_swapped", T, "rows_swapped", dim=(1,), args=(arr(4, 6), out(4, 6))),
    Case("views_rows_of_views_in_loop", A, "rows_of_views_in_loop", dim=(2,), args=(arr(2, 4, 8), out(2, 8))),
    Case("views_simt_slice_elements", A, "simt_slice_elements", dim=(3, 4), args=(arr(3, 8), out(3, 4)),
         launch="simt"),
]

CASES += [
    Case("views_func_custom_softplus", F, "k_custom_softplus", dim=(10,), args=(arr(10), out(10)), launch="simt"),
    Case("views_func_custom_straight_through", F, "k_custom_straight_through", dim=(10,), args=(arr(10), out(10)),
         launch="simt", fd=False),  # the rule is deliberately not the derivative: Warp is the oracle
    Case("views_func_custom_two_args", F, "k_custom_two_args", dim=(10,), args=(arr(10), arr(10), out(10)),
         launch="simt"),
]

CASES += [
    Case("views_tile_views_alias_parent", T, "views_alias_parent", dim=(1,), args=(arr(4, 6), out(4, 6), out(2, 6)),
         warp_wrong="Warp's gradient of an element read through a view stored before its column view was "
                    "updated in place is off (A[2, 1]: Warp -3.274, float64 FD -2.5675)"),
    # a row picked by a run-time index, negative ones counted from the end (forward and gradient)
    Case("views_runtime_row_minus1", "views_runtime_negative.py", "pick_row", dim=(1,), block_dim=16,
         args=(arr(6, 8), Scal(-1, "int32"), out(8))),
    Case("views_runtime_row_minus6", "views_runtime_negative.py", "pick_row", dim=(1,), block_dim=16,
         args=(arr(6, 8), Scal(-6, "int32"), out(8))),
    Case("views_runtime_row_2", "views_runtime_negative.py", "pick_row", dim=(1,), block_dim=16,
         args=(arr(6, 8), Scal(2, "int32"), out(8))),
]

R = "views_runtime_steps.py"
CASES += [  # a slice's step an int parameter: positive, negative, from the end, 2-d
    Case("views_runtime_step_3", R, "strided_rows", dim=(8,),
         args=(arr(20), Scal(1, "int32"), Scal(17, "int32"), Scal(3, "int32"), out(8)), launch="simt"),
    Case("views_runtime_step_minus2", R, "strided_rows", dim=(8,),
         args=(arr(20), Scal(-2, "int32"), Scal(3, "int32"), Scal(-2, "int32"), out(8)), launch="simt"),
    Case("views_runtime_step_components", R, "strided_components", dim=(4,),
         args=(varr(12, "vec3", "inout"), arr(4), Scal(2, "int32"), Scal(12, "int32"),
               Scal(3, "int32")), launch="simt"),
    Case("views_runtime_step_plane", R, "strided_plane", dim=(3, 3),
         args=(arr(7, 8), Scal(3, "int32"), out(3, 3)), launch="simt"),
]

