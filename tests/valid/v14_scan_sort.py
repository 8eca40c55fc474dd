import warp as wp


@wp.kernel
def k(K: wp.array1d(dtype=float), V: wp.array1d(dtype=int)):
    keys = wp.tile_load(K, shape=(16,))
    vals = wp.tile_load(V, shape=(16,))
    wp.tile_sort(keys, vals)
    wp.tile_store(K, wp.tile_scan_inclusive(keys) + wp.tile_scan_exclusive(keys))
    wp.tile_store(V, vals)
