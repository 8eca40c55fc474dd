import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(8, 8))
    spd = wp.tile_diag_add(wp.tile_matmul(a, wp.tile_transpose(a)), 8.0)
    L = wp.tile_cholesky(spd)
    y = wp.tile_load(Y, shape=(8,))
    x = wp.tile_cholesky_solve(L, y) + wp.tile_lower_solve(L, y) + wp.tile_upper_solve(wp.tile_transpose(L), y)
    wp.tile_store(Y, x)
