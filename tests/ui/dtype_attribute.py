import warp as wp


@wp.kernel
def zeros(A: wp.array2d[float]):
    i = wp.tid()
    z = wp.tile_zeros(shape=4, dtype=i.dtype)  # ERROR TC0303: tile_zeros: `dtype` is not a dtype
    t = wp.tile_zeros(shape=(2, 2), dtype=A.dtype)
    wp.tile_store(A, t)
