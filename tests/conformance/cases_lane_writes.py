"""Conformance cases: tile elements written per thread at thread-dependent indices, forward and
adjoint (the adjoint was refused, TC0501, before)."""
from cases import Case, arr, out, varr

P = "lane_writes.py"
B = 16

CASES = [
    Case("lanes_write_tiled", P, "lane_store", dim=(1,), args=(arr(B), out(B)), block_dim=B),
    Case("lanes_write_rotated", P, "rotated_overwrite", dim=(B,), args=(arr(B), arr(B), out(B)), block_dim=B,
         launch="simt"),
    Case("lanes_write_component", P, "component_write", dim=(B,), args=(arr(B), varr(B, "vec3"), varr(B, "vec3", "out")),
         block_dim=B, launch="simt"),
    Case("lanes_write_row_of_2d", P, "row_of_2d", dim=(B,), args=(arr(B), out(B, 3)), block_dim=B, launch="simt"),
]
