"""Conformance cases for Warp builtins a Warp user calls as written: the operators spelled as builtins
(`wp.mod`, `wp.bit_and`, `wp.lshift`, `wp.unot`, `wp.pos`, `wp.div_approx`), the atomics beside
atomic_add (`wp.atomic_sub/and/or/xor`), `wp.erfc/erfinv/erfcinv`, the Python-written builtins tilec
provides from its own source (vector norms, spatial vectors, quaternion and transform helpers:
tilec/library/warp_math.py), `wp.vector` / `wp.matrix` with the type from their components, a func's
default parameters and `len()`."""
from cases import Arr, Case, Scal, arr, out, varr

B = "warp_builtins.py"
N = 16
SIMT = dict(launch="simt", block_dim=32)


def ints(n, lo, hi, role="in"):
    return Arr((n,), "int32", role, "zeros" if role == "out" else f"int:{lo}:{hi}")


CASES = [
    Case("wb_int_operators", B, "int_operators", dim=(N,),
         args=(ints(N, -50, 50), ints(N, 1, 9), Arr((N, 6), "int32", "out", "zeros")), grad=False, **SIMT),
    # wp.mod's gradient for its divisor: Warp 1.19 gives none (0); d(a mod b)/db = -trunc(a / b)
    Case("wb_float_operators", B, "float_operators", dim=(N,),
         args=(arr(N, kind="halfint:-6:6"), Arr((N,), "float32", "in", "halfint:1:3"), out(N)),
         warp_wrong="wp.mod gives its divisor no gradient (d/db = -trunc(a / b)): checked by finite differences",
         **SIMT),
    Case("wb_mod_by_constant", B, "mod_by_constant", dim=(N,), args=(arr(N), out(N), out(N)),
         **SIMT),
    Case("wb_atomics", B, "atomics", dim=(N,),
         args=(arr(N), varr(N, "vec3"), ints(N, 0, 1 << 20), Arr((3,), "float32", "inout", "randn"),
               varr(1, "vec3", "inout"), Arr((3,), "int32", "inout", "int:0:1048576")), **SIMT),
    Case("wb_erf_family", B, "erf_family", dim=(N,),
         args=(arr(N), arr(N, kind="rand"), out(N), out(N), out(N)), rtol=2e-5, atol=1e-6, **SIMT),
    Case("wb_norms", B, "norms", dim=(N,),
         args=(varr(N, "vec3"), out(N), out(N), out(N), out(N), varr(N, "vec3", "out")), rtol=1e-5, atol=1e-5,
         **SIMT),
    Case("wb_spatial", B, "spatial", dim=(N,),
         args=(varr(N, "spatial_vector"), varr(N, "spatial_vector"), varr(N, "vec3"), out(N),
               varr(N, "spatial_vector", "out"), varr(N, "spatial_vector", "out"), varr(N, "vec3", "out")),
         rtol=1e-5, atol=1e-5, **SIMT),
    Case("wb_rotations", B, "rotations", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3"), varr(N, "vec3"), varr(N, "quat", "out"), out(N), out(N),
               varr(N, "vec3", "out"), varr(N, "quat", "out"), varr(N, "quat", "out")),
         rtol=1e-4, atol=1e-5, **SIMT),
    Case("wb_transforms", B, "transforms", dim=(N,),
         args=(varr(N, "transform"), varr(N, "spatial_vector"), varr(N, "vec3"), varr(N, "quat"),
               varr(N, "spatial_vector", "out"), varr(N, "spatial_vector", "out"), varr(N, "mat44", "out"),
               varr(N, "mat44", "out")), rtol=1e-4, atol=1e-5, **SIMT),
    Case("wb_spatial_adjoint", B, "spatial_matrices", dim=(N,),
         args=(varr(N, "mat33"), varr(N, "mat33"), varr(N, "spatial_vector"), varr(N, "spatial_vector", "out")),
         rtol=1e-5, atol=1e-5, **SIMT),
    Case("wb_generic_constructors", B, "generic_constructors", dim=(N,),
         args=(arr(N, dtype="float64"), varr(N, "vec3d", "out"), varr(N, "mat22d", "out"), Arr((N, 2), "int32", "out", "zeros", "vec2i"),
               varr(N, "vec2", "out")), rtol=1e-6, atol=1e-6, **SIMT),
    Case("wb_axis_angles", B, "axis_angles", dim=(N,), args=(varr(N, "quat"), varr(N, "vec3", "out"), out(N)),
         rtol=1e-5, atol=1e-5, **SIMT),
    Case("wb_from_matrices", B, "from_matrices", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3"), varr(N, "quat", "out"), varr(N, "transform", "out"),
               varr(N, "vec3", "out"), varr(N, "vec3", "out"), varr(N, "quat", "out")), rtol=1e-4, atol=1e-5, **SIMT),
    Case("wb_transforms64", B, "transforms64", dim=(N,),
         args=(varr(N, "transformd"), varr(N, "vec3d"), varr(N, "quatd"), varr(N, "mat44d", "out"),
               varr(N, "mat44d", "out"), varr(N, "transformd", "out"), varr(N, "vec3d", "out"),
               varr(N, "quatd", "out"), varr(N, "vec3d", "out")), rtol=1e-10, atol=1e-12, **SIMT),
    # bit for bit: rtol and atol 0 (the points and the state after them are Warp's exactly)
    Case("wb_samplers", B, "samplers", dim=(N,),
         args=(Scal(1234, "int32"), Arr((8,), "float32", "in", "rand"), Arr((N, 4, 2), "float32", "out", "zeros", "vec2"),
               Arr((N, 5, 3), "float32", "out", "zeros", "vec3"), ints(N, 0, 1, "out"), out(N)),
         grad=False, rtol=0.0, atol=0.0, **SIMT),
    Case("wb_euler_angles", B, "euler_angles", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3", "out"), varr(N, "vec3", "out"), varr(N, "vec3", "out"),
               varr(N, "vec3", "out")), rtol=1e-4, atol=1e-5, **SIMT),
    Case("wb_slerps", B, "slerps", dim=(N,),
         args=(varr(N, "quat"), varr(N, "quat"), arr(N, kind="rand"), varr(N, "quat", "out")), rtol=1e-4, atol=1e-5,
         **SIMT),
    # both parts of t are replaced before any output reads them, so t has no gradient (Warp gives it one)
    Case("wb_set_parts", B, "set_parts", dim=(N,),
         args=(varr(N, "transform"), varr(N, "vec3"), varr(N, "quat"), varr(N, "transform", "out"),
               varr(N, "transform", "out")),
         warp_wrong="Warp 1.19's adjoint of transform_set_translation/rotation gives the transform whose parts it "
         "replaced a nonzero gradient; checked by finite differences", **SIMT),
    Case("wb_generic_types", B, "generic_types", dim=(N,),
         args=(varr(N, "vec3d"), varr(N, "mat22"), varr(N, "vec3d", "out"), varr(N, "mat22", "out"), out(N)), **SIMT),
    Case("wb_enum_members", B, "enum_members", dim=(N,), args=(ints(N, 0, 8), ints(N, 0, 1, "out")), grad=False,
         **SIMT),
    Case("wb_assign_parts", B, "assign_parts", dim=(N,),
         args=(varr(N, "transform"), varr(N, "vec3"), varr(N, "quat"), varr(N, "transform", "out")),
         warp_wrong="Warp 1.19 gives the transform whose .p and .q were both assigned a nonzero gradient; checked by "
         "finite differences", **SIMT),
    Case("wb_rotation_constructors", B, "rotation_constructors", dim=(N,),
         args=(arr(N), varr(N, "mat33"), varr(N, "quat", "out"), varr(N, "transform", "out"), varr(N, "mat33", "out")),
         rtol=1e-5, atol=1e-5, **SIMT),
    # piecewise (clamps, three regimes): a float32 finite difference of step 1e-2 over 16 random segment pairs
    # crosses kinks, so the adjoint is checked against Warp's only (it matches: no pair is near-parallel)
    Case("wb_edge_edge", B, "edge_edge", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "vec3"), varr(N, "vec3"), varr(N, "vec3"), varr(N, "vec3", "out")),
         rtol=1e-4, atol=1e-5, fd=False, **SIMT),
    Case("wb_defaults_and_len", B, "defaults_and_len", dim=(N,),
         args=(varr(N, "vec3"), Arr((3, 5), "float32", "in", "zeros"), out(N), ints(1, 0, 1, "out")), **SIMT),
    Case("wb_decompositions", B, "decompositions", dim=(N,),
         args=(varr(N, "mat33"), varr(N, "mat22"), varr(N, "mat33", "out"), varr(N, "mat33", "out"),
               varr(N, "mat33", "out"), varr(N, "vec2", "out"), varr(N, "vec2", "out"), varr(N, "mat22", "out")),
         rtol=1e-4, atol=1e-5, **SIMT),
    # in float64 (Warp 1.19's float32 svd3, a fixed 4 sweeps of approximate rotations, leaves U V^T up to 3e-3
    # from LAPACK's, measured; its float64 one to 6e-15, and tilec's float32 one to 2e-7)
    Case("wb_svd3", B, "svd3_factors", dim=(N,),
         args=(varr(N, "mat33d"), varr(N, "vec3d", "out"), varr(N, "mat33d", "out")), rtol=1e-9, atol=1e-10, **SIMT),
    # wp.quat_between_vectors (Warp writes it as a @wp.func in warp.utils and exports it as wp.<name>)
    Case("wb_quat_between_vectors", B, "arcs", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "vec3"), varr(N, "quat", "out"), varr(N, "vec3", "out")),
         rtol=1e-4, atol=1e-5, **SIMT),
]
