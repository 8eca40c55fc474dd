import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), IDX: wp.array1d(dtype=int), B: wp.array2d(dtype=float)):
    idx = wp.tile_load(IDX, shape=(4,))
    g = wp.tile_load_indexed(A, idx, shape=(4, 8), axis=0)
    wp.tile_store_indexed(B, idx, g, axis=0)
    wp.tile_atomic_add_indexed(B, idx, g, axis=0)
    old = wp.tile_atomic_add(B, g)
