import warp as wp


@wp.struct
class Pair:
    x: wp.float32
    y: wp.vec3


@wp.kernel
def ranged(out: wp.array[float]):
    t = wp.tile_arange(8, dtype=Pair)  # ERROR TC0203: tile_arange: needs a numeric dtype, got a `Pair` struct
    wp.tile_store(out, wp.tile_arange(8, dtype=float))
