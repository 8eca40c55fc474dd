"""Conformance cases for block stacks (wp.tile_stack) of vectors and matrices (issue #13): pushes
with some lanes holding back, pops until empty, clear; the kernels report only what does not
depend on which lane takes which slot."""
from cases import Arr, Case, varr

S = "vtiles_stacks.py"

CASES = [
    Case("vstacks_keep_positive", S, "keep_positive", dim=(1,), block_dim=32, grad=False, fd=False,
         args=(varr(32, "vec3"), varr(1, "vec3", role="out"), Arr((3,), "int32", "out", "zeros"))),
    Case("vstacks_matrix_rounds", S, "matrix_rounds", dim=(2,), block_dim=32, grad=False, fd=False,
         args=(varr(64, "mat22"), varr(2, "mat22", role="out"), Arr((2, 2), "int32", "out", "zeros", "vec2i"))),
    Case("vstacks_drained_by_func", S, "drained_by_func", dim=(1,), block_dim=32, grad=False, fd=False,
         args=(varr(32, "vec3"), varr(1, "vec3", role="out"))),
]
