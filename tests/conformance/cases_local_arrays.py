"""Conformance cases for local arrays: `a = wp.zeros(shape=..., dtype=T)` in a kernel or func (Warp's
fixed-size arrays): element reads and writes (`a[i][j] = v` too), views and slices, `.shape`, passing
one to a func, vector elements, and a fresh zero-filled array on every trip of a loop. No adjoint
(tilec builds the kernel without one, with a warning)."""
from cases import Arr, Case, arr, out, varr

P = "local_arrays.py"
N = 8

CASES = [
    Case("local_arrays", P, "local_arrays", dim=(N,),
         args=(arr(N), Arr((N, 2), "int32", "out", "zeros"), out(N), varr(N, "vec3", "out")), grad=False,
         launch="simt", block_dim=32),
]
