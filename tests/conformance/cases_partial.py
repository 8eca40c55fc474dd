"""SIMT launches whose last block is partial (issue #13 item 8): Warp 1.19 runs it with the
threads left, and the missing threads' tile elements take no part in stores, reductions and
scans. tilec runs these on the CPU and on the CUDA emulation (test_conformance.py takes every one
there: the .cu code runs the last block whole, the missing threads as stand-ins, ctx_cuda.h)."""
from cases import Case, arr, out

P = "launch_partial.py"
EXTREMES = "Warp 1.19 gives tile_max a zero gradient; the gradient is one-hot at the first extreme"
REDUCE = "Warp 1.19's tile_reduce has a zero adjoint (DESIGN section 6)"
SCAN = "Warp 1.19's tile_scan_inclusive has a zero adjoint (DESIGN section 6)"


def lanes(id_, kernel, n, block_dim, args, **kw):
    return Case(id_, P, kernel, dim=n, args=args, block_dim=block_dim, launch="simt", tags=("partial",), **kw)


CASES = [
    lanes("partial_energy_20_of_16", "lane_energy", (20,), 16, (arr(20), out(20))),
    lanes("partial_energy_5_of_16", "lane_energy", (5,), 16, (arr(5), out(5))),
    lanes("partial_energy_47_of_16", "lane_energy", (47,), 16, (arr(47), out(47))),
    lanes("partial_squash_21_of_8", "lane_squash", (21,), 8, (arr(21), out(21))),
    lanes("partial_peak_11_of_8", "lane_peak", (11,), 8, (arr(11), out(11)), warp_wrong=EXTREMES),
    lanes("partial_accumulate_13_of_16", "lane_accumulate", (13,), 16, (arr(13), out(16))),
    lanes("partial_grid_energy_3x5_of_8", "grid_energy", (3, 5), 8, (arr(3, 5), out(3, 5))),
    lanes("partial_grid_energy_2x7_of_16", "grid_energy", (2, 7), 16, (arr(2, 7), out(2, 7))),
    # a loaded (16, 8) tile: with 16 threads of 32 the elements 0-15, 32-47 ... are active
    lanes("partial_column_sums_16_of_32", "column_sums", (16,), 32, (arr(16, 8), out(8))),
    lanes("partial_column_sums_25_of_32", "column_sums", (25,), 32, (arr(16, 8), out(8))),
    # rows 2-3, 6-7 ... of the tile have no active element: 1, +inf and -inf there, as in Warp
    # (forward only: a loss over infinities has no finite differences)
    lanes("partial_row_folds_empty_rows", "row_folds", (16,), 32, (arr(16, 8, kind="rand"), out(16), out(16), out(16)),
          grad=False),
    # 20 of 32 threads: every 16-wide row keeps an active element
    lanes("partial_wide_row_folds_20_of_32", "wide_row_folds", (20,), 32,
          (arr(8, 16, kind="rand"), out(8), out(8), out(8)), warp_wrong=REDUCE),
    lanes("partial_running_total_20_of_32", "running_total", (20,), 32, (arr(64), out(64)), warp_wrong=SCAN),
    lanes("partial_scaled_copy_10_of_32", "scaled_copy", (10,), 32, (arr(48), out(48))),
]
