"""Conformance cases of issue #13 items 4, 5 (area prefix `kern_paths`): nested kernels bound path
by path through a factory's if/elif/else and with, constants folded with min/max/int/float,
overloads declared in loops over literal kernels and dtypes, funcs overloaded by redefinition."""
from cases import Case, Scal, arr, out, varr

P = "kern_paths.py"
F64 = "float64"
# measured: tilec's dL/dx equals the closed form sum_r seed[r, j] * (W[r, 0] + 2 W[r, 1] x_j + W[r, 2] cos x_j)
# to 1e-7; Warp's does not (e.g. -3.108 where the closed form gives -1.566)
TILE_OF_VECTOR = ("Warp 1.19's adjoint of wp.tile(v), v a vector local set component by component in a SIMT "
                  "launch, is wrong for x; the reference is finite differences")

CASES = [
    Case("kern_paths_if_wide", P, "spread__LANES_8", dim=(2,), args=(arr(6, 16), out(6, 16)),
         warp_kernel="spread_wide"),
    Case("kern_paths_if_narrow", P, "spread__LANES_4", dim=(3,), args=(arr(6, 12), out(6, 12)),
         warp_kernel="spread_narrow"),
    Case("kern_paths_elif_first", P, "window__SCALE_1p0__WIDTH_2", dim=(4,), args=(arr(8), out(8)),
         warp_kernel="window_two"),
    Case("kern_paths_elif_second", P, "window__SCALE_1p5__WIDTH_3", dim=(3,), args=(arr(9), out(9)),
         warp_kernel="window_three"),
    Case("kern_paths_else_max", P, "window__SCALE_2p0__WIDTH_4", dim=(2,), args=(arr(8), out(8)),
         warp_kernel="window_four"),
    Case("kern_paths_func_overload_f32", P, "bumped", dim=(2,), args=(arr(16), out(16))),
    Case("kern_paths_func_overload_f64", P, "bumped", dim=(3,), args=(arr(24, dtype=F64), out(24, dtype=F64))),
    Case("kern_paths_loop_overload_f32", P, "doubled", dim=(2,), args=(arr(16), out(16)), rtol=1e-4),
    Case("kern_paths_loop_overload_f64", P, "doubled", dim=(3,), args=(arr(24, dtype=F64), out(24, dtype=F64))),
    Case("kern_paths_tuple_overload_f32", P, "rowcube", dim=(3,), args=(arr(3, 8), out(3)), rtol=1e-4, atol=1e-4),
    # wp.vector(length=, dtype=) in a body, tiled across the block; block_dim per path (launch block_dim=THREADS)
    Case("kern_paths_vector_tile_b4", P, "features__THREADS_4", dim=(8,), args=(arr(8), arr(2, 3), out(2, 8)),
         block_dim=4, launch="simt", warp_kernel="features_cpu", rtol=1e-4, atol=1e-4, warp_wrong=TILE_OF_VECTOR),
    Case("kern_paths_vector_tile_b8", P, "features__THREADS_8", dim=(16,), args=(arr(16), arr(2, 3), out(2, 16)),
         block_dim=8, launch="simt", warp_kernel="features_gpu", rtol=1e-4, atol=1e-4, warp_wrong=TILE_OF_VECTOR),
    # a generic kernel without wp.overload: one instance per launch whose array dtypes are visible
    Case("kern_paths_launch_typed_f32", P, "launched_pair", dim=(2,), args=(arr(4, 8), out(4, 8)), rtol=1e-4,
         atol=1e-4),
    Case("kern_paths_launch_typed_f64", P, "launched_pair", dim=(3,), args=(arr(6, 8, dtype=F64), out(6, 8, dtype=F64))),
    # ... and a scalar `Any` parameter typed from the launch's argument (a Python int, a float, wp.float64(...))
    Case("kern_paths_launch_fill_i32", P, "launched_fill", dim=(8,), args=(arr(8, dtype="int32"), out(8, dtype="int32"), Scal(3, "int32")),
         launch="simt", block_dim=8),
    Case("kern_paths_launch_fill_f32", P, "launched_fill", dim=(8,), args=(arr(8), out(8), Scal(1.5)), launch="simt", block_dim=8),
    Case("kern_paths_launch_fill_f64", P, "launched_fill", dim=(8,), args=(arr(8, dtype=F64), out(8, dtype=F64), Scal(0.25, F64)),
         launch="simt", block_dim=8),
    # ... and overloads declared in a loop over vector and matrix types, `[wp.array[T]] * 2`
    Case("kern_paths_value_overload_vec3", P, "value_overloads", dim=(8,), args=(varr(8, "vec3"), varr(8, "vec3", "out")),
         launch="simt", block_dim=8),
    Case("kern_paths_value_overload_mat22", P, "value_overloads", dim=(8,),
         args=(varr(8, "mat22"), varr(8, "mat22", "out")), launch="simt", block_dim=8),
    Case("kern_paths_tuple_overload_f64", P, "rowcube", dim=(2,), args=(arr(2, 8, dtype=F64), out(2, dtype=F64))),
]

L = "annot_literal_static.py"
CASES += [
    Case("annot_literal_ndim_static_len", L, "row_scaled", dim=(3,), args=(arr(12, 8), out(12, 8), out(1, dtype="int32")),
         rtol=1e-5),
]
