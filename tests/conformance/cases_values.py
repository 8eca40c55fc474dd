"""Conformance cases of Warp's value types in SIMT kernels (issue #15): particles with vec3
positions, springs and atomics on vector arrays, batched 3x3 solves (inverse and Cramer's rule
with determinants), a St. Venant-Kirchhoff energy on mat22, and rigid transforms/quaternions."""
from cases import Arr, Case, Scal, arr, out, varr

N = 16
SIMT = dict(launch="simt", block_dim=32)

CASES = [
    Case("values_integrate", "values_particles.py", "integrate", dim=(N,),
         args=(varr(N, "vec3"), varr(N, "vec3"), varr(N, "vec3"), arr(N, kind="rand"), Scal(0.05),
               varr(N, "vec3", "out"), varr(N, "vec3", "out")), **SIMT),
    Case("values_springs", "values_particles.py", "spring_forces", dim=(2 * N,),
         args=(varr(N, "vec3"), Arr((2 * N,), "int32", "in", "int:0:14"), arr(2 * N, kind="rand"), Scal(3.0),
               varr(N, "vec3", "out")), rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_energy_momentum", "values_particles.py", "energy_momentum", dim=(N,),
         args=(varr(N, "vec3"), arr(N, kind="rand"), out(1), varr(2, "vec3", "out")), rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_solve3_inverse", "values_solve.py", "solve3", dim=(N,),
         args=(varr(N, "mat33"), varr(N, "vec3"), varr(N, "vec3", "out")), rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_solve3_cramer", "values_solve.py", "solve3_cramer", dim=(N,),
         args=(varr(N, "mat33d"), varr(N, "vec3d"), varr(N, "vec3d", "out"), out(N, dtype="float64")),
         rtol=1e-9, atol=1e-9, **SIMT),
    Case("values_stvk", "values_solve.py", "stvk_energy", dim=(N,),
         args=(varr(N, "mat22"), Scal(2.0), Scal(5.0), out(N), varr(N, "mat22", "out")), rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_transform_points", "values_rigid.py", "transform_points", dim=(N,),
         args=(varr(4, "transform"), Arr((N,), "int32", "in", "int:0:4"), varr(N, "vec3"), varr(N, "vec3", "out")),
         rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_rotate", "values_rigid.py", "rotate", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3"), varr(N, "vec3", "out"), varr(N, "vec3", "out")),
         rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_quat_to_matrix", "values_rigid.py", "frames", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3"), varr(N, "mat33", "out"), varr(N, "vec3", "out")),
         rtol=1e-4, atol=1e-4, **SIMT),
    Case("values_compose", "values_rigid.py", "compose", dim=(N,),
         args=(varr(N, "transform"), varr(N, "transform"), arr(N), varr(N, "transform", "out"),
               varr(N, "vec3", "out")), rtol=1e-4, atol=1e-4, **SIMT),
]
