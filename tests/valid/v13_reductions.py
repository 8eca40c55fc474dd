import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), S: wp.array1d(dtype=float), I: wp.array1d(dtype=int)):
    a = wp.tile_load(A, shape=(8, 8))
    wp.tile_store(S, wp.tile_sum(a, axis=0) + wp.tile_max(a, axis=0) + wp.tile_min(a, axis=1))
    wp.tile_store(I, wp.tile_argmax(a, axis=1) + wp.tile_argmin(a, axis=0))
    s = wp.tile_reduce(wp.add, a)
    m = wp.tile_reduce(wp.max, a, axis=1)
