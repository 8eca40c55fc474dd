"""Conformance cases for the tile op set (issue #14's leftovers), written in Warp's idioms."""
from cases import Arr, Case, Scal, arr, out

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

R = "ops_random.py"
CASES += [
    Case("ops_random_every_draw", R, "every_draw", dim=(37,), launch="simt", grad=False, fd=False,
         args=(Scal(1234, "int32"), out(37), out(37), out(37, dtype="int32"), out(37, dtype="int32"), out(37),
               out(37, dtype="uint32"))),
    Case("ops_random_walk", R, "walk", dim=(9,), launch="simt", args=(arr(9), out(9), out(9, dtype="int32")),
         rtol=1e-4, atol=1e-5),
    Case("ops_random_scaled_draws", R, "scaled_draws", dim=(11,), launch="simt", args=(arr(11), out(11)),
         warp_wrong="Warp's randf is not differentiable: no gradient reaches low/high of randf(state, low, high)"),
    Case("ops_random_lanes_draw", R, "lanes_draw", dim=(3,), block_dim=16, grad=False, fd=False,
         args=(Scal(99, "int32"), out(3, 24))),
]

K = "ops_stack.py"
CASES += [
    Case("ops_stack_compact_b4", K, "compact", dim=(1,), block_dim=4, grad=False, fd=False,
         args=(Arr((21,), "int32", "in", "int:0:16"), out(16, dtype="int32"), out(3, dtype="int32"))),
    Case("ops_stack_compact_b16", K, "compact", dim=(2,), block_dim=16, grad=False, fd=False,
         args=(Arr((21,), "int32", "in", "int:0:16"), out(16, dtype="int32"), out(3, dtype="int32"))),
    # every value kept: 21 pushes into 16 slots, 5 dropped (equal values: the histogram cannot depend on which)
    Case("ops_stack_overflow", K, "compact", dim=(1,), block_dim=8, grad=False, fd=False,
         args=(Arr((21,), "int32", "in", "int:7:8"), out(16, dtype="int32"), out(3, dtype="int32"))),
    Case("ops_stack_through_a_func", K, "through_a_func", dim=(1,), block_dim=8, grad=False, fd=False,
         args=(arr(8), out(1), out(8), out(3, dtype="int32"))),
    # the SIMT launch form of a kernel whose only shared value is a stack: one stack per block
    Case("ops_stack_simt_count_b8", K, "flagged_per_block", dim=(24,), block_dim=8, launch="simt", grad=False,
         fd=False, args=(Arr((24,), "int32", "in", "int:0:2"), out(24, dtype="int32"))),
]

H = "ops_half_gemm.py"
CASES += [
    # half accumulator over 5 K steps: tilec within a few half ulps of Warp (see the program's
    # docstring); the gradients' sums of signed seeds cancel, so they get an absolute bound too
    Case("ops_half_gemm_k40", H, "gemm_steps", dim=(3, 4), block_dim=32, fd=False, rtol=4e-3, atol=1e-2,
         args=(arr(24, 40, dtype="float16", kind="rand"), arr(40, 16, dtype="float16", kind="rand"),
               out(24, 16, dtype="float16"))),
]
