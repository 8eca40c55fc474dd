import warp as wp


@wp.kernel
def converts(a: wp.array2d[wp.float64], y: wp.array2d[float]):
    t = wp.tile_load(a, shape=(2, 3))
    dest = wp.tile_zeros(shape=(4, 3), dtype=float)
    wp.tile_assign(dest, t, offset=(1, 0))
    wp.tile_store(y, dest)


@wp.kernel
def vectors(a: wp.array[wp.vec3d], y: wp.array[wp.vec3f]):
    t = wp.tile_load(a, shape=4)
    dest = wp.tile_zeros(shape=4, dtype=wp.vec3f)
    wp.tile_assign(dest, t)  # ERROR TC0201: only scalar elements are converted
    wp.tile_store(y, dest)
