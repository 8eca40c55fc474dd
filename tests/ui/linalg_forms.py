import warp as wp


@wp.kernel
def forms(S: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    s = wp.tile_load(S, shape=(4, 4))
    y = wp.tile_load(Y, shape=(4, 2))
    u = wp.tile_cholesky(s, fill_mode="middle")  # ERROR TC0303: tile_cholesky: fill_mode must be "lower" or "upper", got 'middle'
    x = wp.tile_cholesky_solve(s, y, fill_mode=2)  # ERROR TC0303: fill_mode must be "lower" or "upper", got 2
    wp.tile_lower_solve_inplace(s, y * 2.0)  # ERROR TC0408: tile_lower_solve_inplace: `y` must be a variable
    r = wp.tile_load(Y, shape=(3, 2))
    wp.tile_upper_solve_inplace(s, r)  # ERROR TC0101: `z` has 3 rows but `U` is (4, 4)
    wp.tile_cholesky_inplace(y)  # ERROR TC0101: tile_cholesky_inplace: `A` must be square, got (4, 2)
    wp.tile_store(Y, y)
