import warp as wp


@wp.func
def normalize(t: wp.tile(dtype=float, shape=(4, 8))):
    s = wp.tile_sum(t)
    return t / s[0]


@wp.kernel
def k(A: wp.array2d(dtype=float)):
    wp.tile_store(A, normalize(wp.tile_load(A, shape=(4, 8))))
