import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=int), B: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(16,))
    b = (a & 7) | (a ^ 2)
    wp.tile_store(B, wp.tile_astype(b, dtype=float) * 0.5)
    wp.tile_store(A, wp.tile_arange(16, dtype=int) + wp.tile_arange(0, 32, 2, dtype=int))
