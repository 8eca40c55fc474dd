"""Conformance cases for the tile op set (issue #14's leftovers), written in Warp's idioms."""
from cases import Arr, Case, arr, out

S = "ops_slice_indexed.py"


def ints(n, lo, hi):
    return Arr((n,), "int32", "in", f"int:{lo}:{hi}")


CASES = [
    Case("ops_slice_rows_by_index", S, "rows_by_index", dim=(1,), args=(arr(4, 6), ints(5, -4, 4), out(5, 6)),
         block_dim=8),
    Case("ops_slice_columns_by_index", S, "columns_by_index", dim=(1,), args=(arr(4, 6), ints(3, -6, 6), out(4, 3))),
    Case("ops_slice_middle_axis", S, "middle_axis", dim=(1,), args=(arr(2, 3, 4), ints(4, -3, 3), out(2, 4, 4)),
         block_dim=16),
    Case("ops_slice_edge_blocks", S, "edge_blocks", dim=(3,), args=(arr(5, 6), ints(3, -6, 6), out(5, 3))),
]
