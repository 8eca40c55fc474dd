import warp as wp


@wp.kernel
def bounds(out: wp.array(dtype=float), n: int):
    once = 4
    twice = 4
    twice = 6
    stepped = 2
    stepped += 1
    a = wp.tile_arange(once, dtype=float)
    b = wp.tile_arange(twice, dtype=float)  # ERROR TC0108: start, stop and step must be compile-time constants
    c = wp.tile_arange(n, dtype=float)  # ERROR TC0108: start, stop and step must be compile-time constants
    d = wp.tile_arange(0, 8, stepped, dtype=float)  # ERROR TC0108: start, stop and step must be compile-time constants
    for k in range(3):
        e = wp.tile_arange(k, dtype=float)  # ERROR TC0108: start, stop and step must be compile-time constants
    wp.tile_store(out, a)
