import warp as wp
TINY = wp.constant(wp.float32(1.0e-46))


@wp.kernel
def bad(out: wp.array(dtype=float)):
    a = wp.tile_arange(0.0, TINY, TINY, dtype=wp.float32)  # ERROR TC0111: step 1e-46 is zero in float32
    b = wp.tile_arange(0, 1099511627776, dtype=wp.int32)  # ERROR TC0201: stop=1099511627776 is out of range of int32
    c = wp.tile_arange(-1, 4, dtype=wp.uint8)  # ERROR TC0201: start=-1 is out of range of uint8
