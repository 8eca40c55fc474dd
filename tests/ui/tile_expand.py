import warp as wp


@wp.kernel
def bad(x: wp.array(dtype=wp.vec3), y: wp.array2d(dtype=float), keep: bool):
    i = wp.tid()
    t = wp.tile(x[i], preserve_type=keep)  # ERROR TC0305: `preserve_type` must be a compile-time constant
    u = wp.tile(x[i])
    wp.tile_store(y, u + wp.tile(x[i], preserve_type=True))  # ERROR TC0101: left is (3, 256), right is (256,)


@wp.kernel
def drawn(y: wp.array2d(dtype=float), seed: int):
    rng = wp.rand_init(seed, wp.tid())
    wp.tile_store(y, wp.tile(wp.vec2(wp.randf(rng), 1.0)))  # ERROR TC0401: argument once per component
