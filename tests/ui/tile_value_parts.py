import warp as wp


@wp.kernel
def parts(x: wp.array[wp.vec3], y: wp.array[wp.vec3]):
    i = wp.tid()
    t = wp.tile_zeros(shape=8, dtype=wp.vec3)
    t[i][1] = 2.0
    (x[i] + x[i])[1] = 2.0  # ERROR TC0401: a component write into a temporary value
    wp.tile_store(y, t)
