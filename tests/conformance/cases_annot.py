"""Conformance cases for issue #13 items 1 and 6: Warp's annotation spellings (subscript arrays,
keyword arrays, dtype and type aliases, every scalar type, func signatures and return types) and
the statements Warp accepts (assert, bitwise/shift updates, wp.static, wp.constant, expect_*)."""
from cases import Arr, Case, Scal, arr, out

P_ARR, P_SCAL, P_STMT = "annot_arrays.py", "annot_scalars.py", "annot_statements.py"


def inout(*shape, dtype="int32", kind="int:0:64"):
    return Arr(tuple(shape), dtype, "inout", kind)


def simt(id_, program, kernel, n, args, **kw):
    return Case(id_, program, kernel, dim=(n,), args=args, launch="simt", **kw)


def tiled(id_, program, kernel, dim, args, **kw):
    return Case(id_, program, kernel, dim=dim, args=args, **kw)


V, F64 = 128, "float64"

CASES = [
    # ------------------------------------------------ array spellings on tile kernels
    tiled("annot_sub1d", P_ARR, "sub1d", (2,), (arr(V), out(V))),
    tiled("annot_sub1d_f32", P_ARR, "sub1d_f32", (2,), (arr(V), out(V))),
    tiled("annot_array1d_sub", P_ARR, "array1d_sub", (2,), (arr(V), out(V))),
    tiled("annot_array2d_rowsum", P_ARR, "array2d_rowsum", (2,), (arr(8, 16), out(8))),
    tiled("annot_array2d_colsum", P_ARR, "array2d_colsum", (2,), (arr(8, 16), out(2, 16))),
    tiled("annot_array3d_sub", P_ARR, "array3d_sub", (2,), (arr(4, 4, 8), out(4, 4, 8))),
    tiled("annot_array4d_sub", P_ARR, "array4d_sub", (2,), (arr(2, 2, 4, 8), out(2, 2, 4, 8))),
    tiled("annot_call_ndim2", P_ARR, "call_ndim2", (2,), (arr(8, 16), out(8, 16))),
    tiled("annot_call_ndim3", P_ARR, "call_ndim3", (2,), (arr(2, 4, 16), out(V))),
    tiled("annot_call_dtype", P_ARR, "call_dtype", (2,), (arr(V), out(V))),
    tiled("annot_mixed_spellings", P_ARR, "mixed_spellings", (2,), (arr(8, 16), arr(8, 16), out(8, 16))),
    tiled("annot_alias_f64", P_ARR, "alias_f64", (2,), (arr(V, dtype=F64), out(V, dtype=F64))),
    tiled("annot_alias_vec", P_ARR, "alias_vec", (2,), (arr(V), out(V))),
    tiled("annot_alias_rows", P_ARR, "alias_rows", (2,), (arr(8, 16), out(8))),
    tiled("annot_alias_grid_gemm", P_ARR, "alias_grid_gemm", (2, 2),
          (arr(32, 16, dtype=F64), arr(16, 32, dtype=F64), out(32, 32, dtype=F64))),
    tiled("annot_gemm_sub", P_ARR, "gemm_sub", (2, 2), (arr(32, 32), arr(32, 32), out(32, 32)),
          rtol=1e-4, atol=1e-4),
    tiled("annot_map_func_f64", P_ARR, "map_func_f64", (2,), (arr(V, dtype=F64), out(V, dtype=F64))),
    tiled("annot_atomic_tile", P_ARR, "atomic_tile", (2,), (arr(V), out(1)), rtol=1e-4, atol=1e-4),
    tiled("annot_scale_by_element", P_ARR, "scale_by_element", (2,), (arr(V), arr(1), out(V))),
    tiled("annot_f64_rowsum", P_ARR, "f64_rowsum", (2,), (arr(8, 16, dtype=F64), out(8, dtype=F64))),
    tiled("annot_partial_tiles", P_ARR, "partial_tiles", (2,), (arr(100), out(100))),
    # ------------------------------------------------ scalar types and func signatures
    simt("annot_float_builtin", P_SCAL, "float_builtin", 32, (arr(32), out(32), Scal(1.25))),
    simt("annot_int_builtin", P_SCAL, "int_builtin", 32, (arr(32), out(32), Scal(3, "int32"))),
    simt("annot_bool_true", P_SCAL, "bool_builtin", 32, (arr(32), out(32), Scal(True, "bool"))),
    simt("annot_bool_false", P_SCAL, "bool_builtin", 32, (arr(32), out(32), Scal(False, "bool"))),
    simt("annot_wp_float32", P_SCAL, "wp_float32", 32, (arr(32), out(32), Scal(-0.5))),
    simt("annot_wp_float64", P_SCAL, "wp_float64", 32, (arr(32, dtype=F64), out(32, dtype=F64),
                                                        Scal(0.75, F64))),
    simt("annot_gather_int32", P_SCAL, "gather_int32", 32, (arr(32), arr(32, dtype="int32", kind="int:0:32"),
                                                            out(32))),
    simt("annot_gather_int64", P_SCAL, "gather_int64", 32, (arr(32), arr(32, dtype="int64", kind="int:0:32"),
                                                            out(32))),
    simt("annot_uint64_elems", P_SCAL, "uint64_elems", 32, (arr(32), arr(32, dtype="uint64", kind="int:0:1000000"),
                                                            out(32))),
    simt("annot_int16_elems", P_SCAL, "int16_elems", 32, (arr(32), arr(32, dtype="int16", kind="int:-300:300"),
                                                          out(32))),
    simt("annot_uint16_elems", P_SCAL, "uint16_elems", 32, (arr(32), arr(32, dtype="uint16", kind="int:0:60000"),
                                                            out(32))),
    simt("annot_int8_elems", P_SCAL, "int8_elems", 32, (arr(32), arr(32, dtype="int8", kind="int:-120:120"),
                                                        out(32))),
    simt("annot_uint8_elems", P_SCAL, "uint8_elems", 32, (arr(32), arr(32, dtype="uint8", kind="int:0:255"),
                                                          out(32))),
    simt("annot_uint32_elems", P_SCAL, "uint32_elems", 32, (arr(32), arr(32, dtype="uint32", kind="int:0:100000"),
                                                            out(32))),
    simt("annot_bf16_cast", P_SCAL, "bf16_cast", 32, (arr(32), out(32)), rtol=0, atol=0, fd=False),
    simt("annot_bf16_arith", P_SCAL, "bf16_arith", 32, (arr(32), out(32)), rtol=0, atol=0, fd=False),
    simt("annot_f16_arith", P_SCAL, "f16_arith", 32, (arr(32), out(32)), rtol=0, atol=0, fd=False),
    simt("annot_f16_array", P_SCAL, "f16_array", 32, (arr(32, dtype="float16"), out(32)), grad=False),
    simt("annot_uint64_param", P_SCAL, "uint64_param", 32, (arr(32), out(32), Scal(2**63 + 11, "uint64"))),
    simt("annot_int16_param", P_SCAL, "int16_param", 32, (arr(32), out(32), Scal(-7, "int16"))),
    simt("annot_uint16_param", P_SCAL, "uint16_param", 32, (arr(32), out(32), Scal(300, "uint16"))),
    simt("annot_alias_cast", P_SCAL, "alias_cast", 32, (arr(32), out(32, dtype=F64))),
    simt("annot_alias_int", P_SCAL, "alias_int", 32, (arr(32), out(32))),
    simt("annot_float_to_index", P_SCAL, "float_to_index", 32, (arr(32), arr(4), out(32))),
    Case("annot_elem2d", P_SCAL, "elem2d", dim=(4, 8), args=(arr(4, 8), out(4, 8)), launch="simt"),
    Case("annot_elem3d", P_SCAL, "elem3d", dim=(2, 3, 4), args=(arr(2, 3, 4), out(2, 3, 4)), launch="simt"),
    simt("annot_func_ret64", P_SCAL, "func_ret64", 32, (arr(32), out(32, dtype=F64))),
    simt("annot_func_ret_bool", P_SCAL, "func_ret_bool", 32, (arr(32), out(32))),
    simt("annot_annotated_locals", P_SCAL, "annotated_locals", 32, (arr(32), out(32, dtype=F64))),
    simt("annot_bf16_func", P_SCAL, "bf16_func", 32, (arr(32), out(32)), rtol=0, atol=0, fd=False),
    # ------------------------------------------------ statements
    simt("annot_assert_simt", P_STMT, "assert_simt", 32, (arr(32), out(32))),
    tiled("annot_assert_tile", P_STMT, "assert_tile", (2,), (arr(V), out(V))),
    simt("annot_assert_in_func", P_STMT, "assert_in_func", 32, (arr(32), out(32))),
    simt("annot_and_update", P_STMT, "and_update", 32, (inout(32), arr(32), out(32))),
    simt("annot_or_update", P_STMT, "or_update", 32, (inout(32), arr(32), out(32))),
    simt("annot_xor_update", P_STMT, "xor_update", 32, (inout(32), arr(32), out(32))),
    simt("annot_shl_update", P_STMT, "shl_update", 32, (inout(32, kind="int:-100:100"), arr(32), out(32))),
    simt("annot_shr_update", P_STMT, "shr_update", 32, (inout(32, kind="int:-100:100"), arr(32), out(32))),
    simt("annot_uint64_xor", P_STMT, "uint64_xor", 32, (inout(32, dtype="uint64", kind="int:0:100000"), arr(32),
                                                        out(32))),
    simt("annot_int16_shift", P_STMT, "int16_shift", 32, (inout(32, dtype="int16", kind="int:-3000:3000"), arr(32),
                                                          out(32))),
    simt("annot_uint32_bits", P_STMT, "uint32_bits", 32, (inout(32, dtype="uint32", kind="int:0:1000"), arr(32),
                                                          out(32))),
    simt("annot_scalar_bits", P_STMT, "scalar_bits", 32, (arr(32), out(32))),
    simt("annot_func_bits", P_STMT, "func_bits", 32, (arr(32), out(32))),
    tiled("annot_static_shape", P_STMT, "static_shape", (2,), (arr(V), out(V))),
    simt("annot_static_range", P_STMT, "static_range", 8, (arr(8, 4), out(8))),
    simt("annot_static_value", P_STMT, "static_value", 32, (arr(32), out(32))),
    tiled("annot_static_matmul", P_STMT, "static_matmul", (2,), (arr(16, 8), arr(8, 8), out(16, 8)),
          rtol=1e-4, atol=1e-4),
    tiled("annot_constant_scale", P_STMT, "constant_scale", (2,), (arr(V), out(V))),
    simt("annot_expect_shape", P_STMT, "expect_shape", 32, (arr(32), out(32))),
    simt("annot_expect_identity", P_STMT, "expect_identity", 32, (arr(32), out(32))),
    tiled("annot_expect_tile", P_STMT, "expect_tile", (2,), (arr(V), out(V))),
    simt("annot_forward_only_mul", P_STMT, "forward_only_mul", 32, (arr(32), out(32)), grad=False),
    simt("annot_flag_mask", P_STMT, "flag_mask", 32, (arr(32), out(32), Scal(0xA5A5F00F, "uint32"))),
]
