"""SIMT launches of tile kernels whose blocks span rows of a multi-dimensional dim (issue #13
item 8): Warp numbers dim's threads in row-major order, a block is block_dim consecutive ones."""
from cases import Case, arr, out

P = "launch_rows.py"
SCAN = "Warp 1.19's tile_scan_inclusive has a zero adjoint (DESIGN section 6); the forward checks the thread order"
EXTREMES = "Warp 1.19 gives tile_max a zero gradient; the gradient is one-hot at the first extreme"


def rows(id_, kernel, dim, **kw):
    return Case(id_, P, kernel, dim=dim, args=(arr(*dim), out(*dim)), block_dim=8, launch="simt", **kw)


CASES = [
    # the gradient crosses threads of a block: a block made of the wrong threads fails it
    rows("rows_energy_2x4_one_block", "block_energy", (2, 4)),
    rows("rows_energy_4x6_three_blocks", "block_energy", (4, 6)),
    rows("rows_energy_3x8_row_aligned", "block_energy", (3, 8)),
    rows("rows_energy_2x3x4", "block_energy_3d", (2, 3, 4)),
    rows("rows_energy_6x4x1", "block_energy_3d", (6, 4, 1)),
    # a running sum over the block shows the order of its threads
    rows("rows_2x4_one_block", "rows_share_a_block", (2, 4), warp_wrong=SCAN),
    rows("rows_4x6_three_blocks", "rows_share_a_block", (4, 6), warp_wrong=SCAN),
    rows("rows_3x8_row_aligned", "rows_share_a_block", (3, 8), warp_wrong=SCAN),
    rows("rows_2x3x4_three_blocks", "rows_share_a_block_3d", (2, 3, 4), warp_wrong=SCAN),
    rows("rows_6x4x1_six_rows", "rows_share_a_block_3d", (6, 4, 1), warp_wrong=SCAN),
    # tile_max's adjoint goes to one element: the random inputs have no ties
    rows("rows_max_5x8", "block_max_per_row_pair", (5, 8), warp_wrong=EXTREMES),
    rows("rows_max_4x2", "block_max_per_row_pair", (4, 2), warp_wrong=EXTREMES),
]
