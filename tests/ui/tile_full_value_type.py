import warp as wp


@wp.kernel
def fills(f: wp.array[float], i: wp.array[int]):
    wp.tile_store(i, wp.tile_full(4, value=wp.int32(7)))
    wp.tile_store(f, wp.tile_full(shape=(4,), value=7))  # ERROR TC0202: tile dtype int32 does not match the array dtype float32
