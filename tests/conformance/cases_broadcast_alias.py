"""Conformance cases of broadcast tiles aliasing their source (area prefix `broadcast_alias`): what
Warp 1.19's wp.tile_broadcast reads after its source changes. Writes through a broadcast are refused
(tests/ui/broadcast_alias.py)."""
from cases import Case, StructArr, arr, out

P = "broadcast_alias.py"
PARTICLE = (("mass", "float32", "rand"), ("vel", "float32:3"))


def particles(*shape, role="in"):
    return StructArr("Particle", shape, PARTICLE, role=role, kind="randn" if role == "in" else "zeros")


CASES = [
    Case("broadcast_alias_source_element_written", P, "source_element_written", dim=(1,), block_dim=4,
         args=(arr(4), arr(3, 4), out(4), out(3, 4))),
    Case("broadcast_alias_source_accumulated", P, "source_accumulated", dim=(1,), block_dim=4,
         args=(arr(4), arr(3, 4), arr(2, 4), out(2, 4))),
    Case("broadcast_alias_row_view", P, "row_view_broadcast", dim=(1,), block_dim=4,
         args=(arr(3, 4), out(3, 4), out(3, 4))),
    Case("broadcast_alias_struct_source", P, "struct_source_accumulated", dim=(1,), block_dim=4,
         args=(particles(4), particles(3, 4), particles(3, 4, role="out"))),
    # a write into a view of a view reaches the tile at the root, and the broadcast of the middle one
    Case("broadcast_alias_view_of_view", P, "view_of_view_written", dim=(1,), block_dim=4,
         args=(arr(3, 4), out(3, 4), out(2, 4))),
]
