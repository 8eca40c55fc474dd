"""Slices of vector and matrix values (issue #13 item 3): `v[a:b]`, `v[::2]`, `v[::-1]`, negative
bounds, `m[a:b, c:d]`, `m[:, j]`, `m[i, a:]` on vec4, vec3d, mat33 and quat arrays, forward and
adjoint against Warp 1.19."""
from cases import Case, out, varr

N = 12
SIMT = dict(launch="simt", block_dim=32)

WRITES = ("Warp 1.19 keeps the gradient of the components a slice write overwrote (x.grad is 1 where "
          "v[1:3] = ... replaced v); the reference is float64 finite differences")

CASES = [
    Case("vslice_planar", "value_slices.py", "planar", dim=(N,),
         args=(varr(N, "vec4"), varr(N, "vec2", "out"), varr(N, "vec2", "out"), out(N)), rtol=1e-4, atol=1e-4, **SIMT),
    Case("vslice_reversed_tail", "value_slices.py", "reversed_tail", dim=(N,),
         args=(varr(N, "vec3d"), varr(N, "vec3d", "out")), rtol=1e-9, atol=1e-9, **SIMT),
    Case("vslice_blocks", "value_slices.py", "blocks", dim=(N,),
         args=(varr(N, "mat33"), varr(N, "mat22", "out"), varr(N, "vec3", "out"), varr(N, "vec2", "out"), out(N)),
         rtol=1e-4, atol=1e-4, **SIMT),
    Case("vslice_quat_parts", "value_slices.py", "quat_parts", dim=(N,),
         args=(varr(N, "quat"), varr(N, "vec3", "out"), out(N)), rtol=1e-4, atol=1e-4, **SIMT),
    Case("vslice_writes", "value_slices.py", "slice_writes", dim=(N,),
         args=(varr(N, "vec4"), varr(N, "mat33"), varr(N, "vec4", "out"), varr(N, "mat33", "out")),
         rtol=1e-4, atol=1e-4, warp_wrong=WRITES, **SIMT),
]
