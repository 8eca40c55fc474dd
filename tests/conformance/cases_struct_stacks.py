"""Conformance cases for block stacks (wp.tile_stack) of `@wp.struct` values (issue #13): one stack
per field in tilec, the first field's push and pop choosing the slots of all."""
from cases import Arr, Case, StructArr

S = "struct_stacks.py"
FIELDS = (("mass", "float32"), ("vel", "float32:3"), ("tag", "int32", "int:0:9"))

CASES = [
    Case("struct_stacks_sift", S, "sift", dim=(1,), block_dim=32, grad=False, fd=False,
         args=(StructArr("Particle", (32,), FIELDS), Arr((1, 3), "float32", "out", "zeros", "vec3"),
               Arr((1,), "float32", "out", "zeros"), Arr((3,), "int32", "out", "zeros"))),
    Case("struct_stacks_first_of_block", S, "first_of_block", dim=(2,), block_dim=8, grad=False, fd=False,
         args=(StructArr("Particle", (16,), FIELDS), StructArr("Particle", (2,), FIELDS, role="out", kind="zeros"),
               Arr((2,), "int32", "out", "zeros"))),
    Case("struct_stacks_taken_slots", S, "taken_slots", dim=(1,), block_dim=32, grad=False, fd=False,
         args=(StructArr("Particle", (32,), FIELDS), Arr((2,), "int32", "out", "zeros"),
               Arr((9,), "int32", "out", "zeros"))),
]
