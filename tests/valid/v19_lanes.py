import warp as wp


@wp.kernel(block_dim=32)
def k(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile(A[i * 32 + lane])
    B[i * 32 + lane] = wp.untile(wp.tile_scan_inclusive(t))
    n = wp.block_dim()
