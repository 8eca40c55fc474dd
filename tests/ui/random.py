import warp as wp


@wp.kernel
def rnd(F: wp.array1d(dtype=float), seed: int):
    rng = wp.rand_init(seed)
    a = wp.tile_randf(8, seed)  # ERROR TC0203: tile_randf: `rng` must be a generator state (a uint32 from wp.rand_init), got an int32 scalar
    b = wp.tile_randf(8, rng, min=0.5)  # ERROR TC0303: give both `min` and `max`, or neither
    c = wp.tile_randi(8, rng, 0.5, 2.0)  # ERROR TC0203: `min` must be an int32, got a float32 scalar
    d = wp.rand_init(1.5)  # ERROR TC0203: rand_init: `seed` must be an integer
    x = wp.randf(rng)  # scalar draws are supported
    wp.tile_store(F, wp.tile_randf(8, rng))
