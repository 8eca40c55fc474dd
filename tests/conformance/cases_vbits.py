"""Conformance cases for Warp's component-wise builtins on vector and matrix elements of tiles:
the bitwise operators on integer vectors and matrices (values, tile-wise operators, tile_map and
the lanes' element updates `t[i] &= v`), and abs / sign of float vectors in tile_map (issue #13)."""
from cases import Arr, Case, arr, out

B = "vtiles_bits.py"
N = 16


def bits(n, value, components, dtype="uint32", role="in"):
    """n integer vectors or matrices: random words (any bit pattern of the dtype), or zeros (out)."""
    hi = {"uint32": 1 << 32, "int32": 1 << 31}[dtype]
    return Arr((n, *components), dtype, role, "zeros" if role == "out" else f"int:0:{hi}", value)


def fvec(n, value, components, role="in", kind="halfint:-3:3"):
    """n float vectors of halves (-2.5 ... 2.5): no component within a finite-difference step of the
    kink of abs (where Warp's gradient is +1 and tilec's 0, the subgradient of the scalar abs)."""
    return Arr((n, *components), "float32", role, "zeros" if role == "out" else kind, value)


CASES = [
    Case("vbits_lane_masks", B, "lane_masks", dim=(4,),
         args=(bits(4, "vec3ui", (3,)), bits(4, "vec3ui", (3,)), bits(4, "vec3ui", (3,), role="out"),
               bits(4, "vec3ui", (3,), role="out")), block_dim=32),
    Case("vbits_mat_tiles", B, "mat_bit_tiles", dim=(2,),
         args=(bits(2 * N, "mat22ui", (2, 2)), bits(2 * N, "mat22ui", (2, 2)),
               bits(2 * N, "mat22ui", (2, 2), role="out"), bits(2 * N, "mat22ui", (2, 2), role="out")),
         block_dim=32),
    Case("vbits_vec_map", B, "vec_bit_map", dim=(1,),
         args=(bits(N, "vec3i", (3,), "int32"), bits(N, "vec3i", (3,), "int32"),
               bits(N, "vec3i", (3,), "int32", role="out"), bits(N, "vec3i", (3,), "int32", role="out")),
         block_dim=32),
    Case("vbits_vec_abs", B, "vec_abs", dim=(1,),
         args=(fvec(N, "vec3", (3,)), fvec(N, "vec5", (5,)), fvec(N, "vec5", (5,)), fvec(N, "vec3", (3,), "out"),
               fvec(N, "vec5", (5,), "out")), block_dim=32),
    Case("vbits_operator_builtins_mapped", B, "operator_builtins_mapped", dim=(1,),
         args=(fvec(N, "mat33", (3, 3)), fvec(N, "vec3", (3,)), arr(N, kind="rand"), fvec(N, "mat33", (3, 3), "out"),
               fvec(N, "vec3", (3,), "out"), out(N)), block_dim=32),
]
