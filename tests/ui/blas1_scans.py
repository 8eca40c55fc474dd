import warp as wp


@wp.kernel
def blas1(A: wp.array2d(dtype=float), B: wp.array2d(dtype=wp.float64), I: wp.array1d(dtype=int)):
    a = wp.tile_load(A, shape=(4, 8))
    c = wp.tile_load(A, shape=(8, 4))
    d = wp.tile_load(B, shape=(4, 8))
    x = wp.tile_dot(a, c)  # ERROR TC0101: tile_dot: shapes differ: a is (4, 8), b is (8, 4)
    y = wp.tile_dot(a, d)  # ERROR TC0201: tile_dot: dtypes differ: a is float32, b is float64
    wp.tile_axpy(2.0, a, d)  # ERROR TC0201: tile_axpy: dtypes differ: src is float32, dest is float64
    wp.tile_axpy(wp.float64(2.0), a, a)  # ERROR TC0201: tile_axpy: cannot mix float32 and float64
    wp.tile_axpy(2.0, a, a * 2.0)  # ERROR TC0408: tile_axpy: `dest` must be a variable
    s = wp.tile_scan_max_inclusive(I)  # ERROR TC0303: `a` must be a tile, got
    m = wp.tile_scan_min_inclusive(wp.tile_zeros(shape=(4,), dtype=bool))  # ERROR TC0203: tile_scan_min_inclusive: is not defined on bool tiles
