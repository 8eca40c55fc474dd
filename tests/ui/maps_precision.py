import warp as wp


@wp.func
def twice(x: float) -> float:
    return x * 2.0


@wp.kernel
def maps(A: wp.array2d(dtype=float), I: wp.array2d(dtype=int), s: float):
    a = wp.tile_load(A, shape=(4, 4), aligned=True)
    m = wp.tile_map(wp.mul, s, 2.0)  # ERROR TC0303: tile_map: needs at least one tile after the function
    n = wp.tile_map(twice, a, s)  # ERROR TC0408: twice: expects 1 argument(s), got 2
    b = wp.tile_load(A, shape=(4, 4), aligned=1)  # ERROR TC0303: `aligned` must be True or False, got 1
    r = wp.tile_arange(0.5, 4, dtype=int)  # ERROR TC0201: 0.5 has a fractional part, which int32 cannot represent
    q = wp.tile_arange(4, dtype=bool)  # ERROR TC0203: tile_arange: needs a numeric dtype, got bool
    i = wp.tile_load(I, shape=(4, 4))
    c = wp.tile_matmul(a, i)  # ERROR TC0203: tile_matmul: needs float tiles, got int32 for `b`
    d = wp.tile_matmul(a, a, precision="fast")  # ERROR TC0303: precision must be "default" or "tf32"
    e = wp.tile_arange(0.0, 1.0e300, dtype=wp.float32)  # ERROR TC0201: tile_arange: stop=1e+300 is out of range of float32
    f = wp.tile_arange(0.0, 1.0, 5.0e-324, dtype=wp.float64)  # ERROR TC0111: spans more elements than can be counted
    wp.tile_store(A, a, aligned=True)
