"""Conformance cases of issue #13 items 4, 5, 8: nested and factory kernels, generics and
overloads, both launch forms and several block_dims (area prefix `kern`)."""
from cases import Case, arr, out

P = "kern_nested.py"
SCAN = "Warp 1.19's tile_scan_inclusive has a zero adjoint (DESIGN section 6)"

CASES = [
    Case("kern_factory_scale8", P, "scale__TILE_8", dim=(3,), args=(arr(24), out(24)), warp_kernel="make_scale(8)"),
    Case("kern_factory_scale16", P, "scale__TILE_16", dim=(2,), args=(arr(30), out(30)), warp_kernel="scale16"),
    Case("kern_factory_scale32_kw", P, "scale__TILE_32", dim=(2,), args=(arr(64), out(64)), warp_kernel="scale32"),
    Case("kern_factory_func4", P, "apply__TILE_4", dim=(5,), args=(arr(20), out(20)), warp_kernel="softplus4"),
    Case("kern_factory_func12", P, "apply__TILE_12", dim=(2,), args=(arr(24), out(24)), warp_kernel="softplus12"),
    Case("kern_factory_local8", P, "rownorm__COLS_8", dim=(2,), args=(arr(8, 8), out(8)), warp_kernel="rownorm8"),
    Case("kern_factory_local6", P, "rownorm__COLS_6", dim=(3,), args=(arr(12, 6), out(12)), warp_kernel="rownorm6"),
    Case("kern_factory_gemm_4x8", P, "gemm__M_4__N_8__K_8", dim=(2, 2), args=(arr(8, 8), arr(8, 16), out(8, 16)),
         warp_kernel="gemm_4x8", rtol=1e-4, atol=1e-4),
    Case("kern_factory_gemm_8x4_kw", P, "gemm__M_8__N_4__K_4", dim=(1, 3), args=(arr(8, 4), arr(4, 12), out(8, 12)),
         warp_kernel="gemm_8x4", rtol=1e-4, atol=1e-4),
    Case("kern_factory_float_half", P, "affine__S_0p5__B_1p0", dim=(2,), args=(arr(32), out(32)),
         warp_kernel="affine_half"),
    Case("kern_factory_float_neg", P, "affine__S_m2p0__B_0p25", dim=(1,), args=(arr(16), out(16)),
         warp_kernel="affine_neg"),
    Case("kern_factory_dtype_f32", P, "typed_square__dtype_float32", dim=(2,), args=(arr(16), out(16)),
         warp_kernel="typed_f32"),
    Case("kern_factory_dtype_f64", P, "typed_square__dtype_float64", dim=(3,),
         args=(arr(24, dtype="float64"), out(24, dtype="float64")), warp_kernel="typed_f64"),
    Case("kern_factory_defaults", P, "repeat_add__TILE_8__REPEAT_2", dim=(2,), args=(arr(16), out(16)),
         warp_kernel="repeat_default"),
    Case("kern_factory_default_kw", P, "repeat_add__TILE_8__REPEAT_3", dim=(2,), args=(arr(16), out(16)),
         warp_kernel="repeat_three"),
    Case("kern_loop_width4", P, "cumsum__WIDTH_4", dim=(3,), args=(arr(12), out(12)), warp_kernel="cumulative[4]",
         warp_wrong=SCAN),
    Case("kern_loop_width8", P, "cumsum__WIDTH_8", dim=(2,), args=(arr(16), out(16)), warp_kernel="cumulative[8]",
         warp_wrong=SCAN),
    Case("kern_loop_width16", P, "cumsum__WIDTH_16", dim=(2,), args=(arr(32), out(32)), warp_kernel="cumulative[16]",
         warp_wrong=SCAN),
    Case("kern_loop_last_value", P, "sum_first__COUNT_5", dim=(1,), args=(arr(8), out(1)), warp_kernel="looped[1]"),
    Case("kern_class_kernel", P, "negate_sum", dim=(3,), args=(arr(6, 8), out(24)), warp_kernel="Ops.negate_sum"),
    Case("kern_test_function_local", P, "local_const", dim=(2,), args=(arr(16), out(16)), warp_kernel="local_const"),
]
