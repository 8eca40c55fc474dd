"""Conformance cases of tiles whose elements are @wp.struct values (area prefix `struct_tiles`):
loads and stores of arrays of structs, tile_map over struct funcs, field-wise sums, + and -,
element reads and writes, layout ops."""
from cases import Case, StructArr, out

S = "struct_tiles.py"
REDUCE_ADJOINT = "Warp 1.19's tile_reduce has no adjoint (a zero gradient); the reference is finite differences"
PARTICLE = (("mass", "float32", "rand"), ("vel", "float32:3"))
TAGGED = (("flag", "bool", "int:0:2"), ("small", "int8", "int:-9:9"), ("count", "int32", "int:0:50"),
          ("value", "float32"))
CELL = (("body.mass", "float32", "rand"), ("body.vel", "float32:3"), ("weight", "float32"))


def particles(*shape, role="in"):
    return StructArr("Particle", shape, PARTICLE, role=role, kind="randn" if role == "in" else "zeros")


CASES = [
    Case("struct_tiles_copy_twice", S, "copy_twice", dim=(3,), block_dim=8, args=(particles(24), particles(24, role="out"))),
    Case("struct_tiles_energies", S, "energies", dim=(2,), block_dim=8, args=(particles(16), out(16))),
    # drag builds its result field by field: the adjoint substitutes the straight-line body
    Case("struct_tiles_dragged", S, "dragged", dim=(2,), block_dim=8,
         args=(particles(16), particles(16, role="out"))),
    Case("struct_tiles_totals", S, "totals", dim=(1,), block_dim=8, args=(particles(8), particles(1, role="out"))),
    Case("struct_tiles_row_totals", S, "row_totals", dim=(1,), block_dim=8,
         args=(particles(2, 8), particles(2, role="out"))),
    Case("struct_tiles_picked", S, "picked", dim=(1,), block_dim=8, args=(particles(8), out(1))),
    Case("struct_tiles_nested_weights", S, "nested_weights", dim=(1,), block_dim=8,
         args=(StructArr("Cell", (8,), CELL), out(8))),
    Case("struct_tiles_difference", S, "difference", dim=(1,), block_dim=8,
         args=(particles(8), particles(8), particles(8, role="out"))),
    Case("struct_tiles_transposed", S, "reversed_rows", dim=(1,), block_dim=8,
         args=(particles(2, 4), particles(4, 2, role="out"))),
    Case("struct_tiles_filled", S, "filled", dim=(1,), block_dim=8, args=(particles(2), particles(8, role="out")),
         warp_wrong="Warp 1.19 gives tile_full's fill value a zero gradient (DESIGN §6), struct fields too"),
    Case("struct_tiles_scattered", S, "scattered", dim=(1,), block_dim=8, args=(particles(8), particles(4, role="out"))),
    Case("struct_tiles_from_lane", S, "from_lane", dim=(1,), block_dim=8, args=(particles(8), particles(8, role="out")),
         warp_wrong="Warp 1.19's adjoint of tile_from_thread gives the chosen lane's value none of the "
                    "filled tile's gradient (measured on vec3 fields); the reference is finite differences"),
    # bool and 8/16-bit integer fields are not accumulated by Warp: atomic adds leave them, sums give the
    # first element's, a + b gives a's (forward only: integer fields have no gradient)
    Case("struct_tiles_tagged_totals", S, "tagged_totals", dim=(1,), block_dim=8, grad=False,
         args=(StructArr("Tagged", (8,), TAGGED),
               *(StructArr("Tagged", shape, TAGGED, role="out", kind="int:1:3") for shape in ((8,), (1,), (8,))))),
    # funcs calling funcs inside tile_map: the adjoint inlines the straight-line callees
    Case("struct_tiles_cell_energies", S, "cell_energies", dim=(1,), block_dim=8,
         args=(StructArr("Cell", (8,), CELL), out(8))),
    # an axis sum carries those fields as Warp does: the first slice along the axis (the float field is summed)
    Case("struct_tiles_tagged_axis_totals", S, "tagged_axis_totals", dim=(1,), block_dim=8,
         args=(StructArr("Tagged", (2, 8), TAGGED), *(StructArr("Tagged", (n,), TAGGED, role="out") for n in (2, 8)))),
    Case("struct_tiles_tagged_middle_axis", S, "tagged_middle_axis", dim=(1,), block_dim=8,
         args=(StructArr("Tagged", (2, 3, 4), TAGGED), StructArr("Tagged", (2, 4), TAGGED, role="out"))),
    # tile_reduce with a func of structs: Warp 1.19 has no adjoint for it (MISSINGADJOINT in tile_reduce.h,
    # a zero gradient); tilec's comes from the tree of tile_maps it lowers to, checked by finite differences
    Case("struct_tiles_reduced_heaviest", S, "reduced_heaviest", dim=(1,), block_dim=8, grad=False,
         args=(particles(8), particles(1, role="out"))),
    Case("struct_tiles_reduced_grid", S, "reduced_grid", dim=(2,), block_dim=8,
         args=(particles(2, 3, 5), particles(2, role="out"), out(2)), warp_wrong=REDUCE_ADJOINT),
    Case("struct_tiles_reduced_cells", S, "reduced_cells", dim=(1,), block_dim=8,
         args=(StructArr("Cell", (6,), CELL), StructArr("Cell", (1,), CELL, role="out")), warp_wrong=REDUCE_ADJOINT),
]
