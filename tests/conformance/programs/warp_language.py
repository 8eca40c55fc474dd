import warp as wp


@wp.kernel
def rebound_views(x: wp.array2d(dtype=float), w: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    row = x[i]
    y[i] = row[0] * w[0]
    row = row[1:]  # a view of the view: another symbol, so the adjoint follows both
    y[i] += row[0] * row[2]
    x = x[:, 1]  # a parameter rebound to a 1-d column
    y[i] += x[i] * 3.0 + w[x.shape[0] - 1]


@wp.kernel
def rebound_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), total: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, 8))
    t = wp.tile_transpose(t)  # (8, 4): Warp's tiles compare by dtype, not shape
    t = t * 2.0 + wp.tile_ones(shape=(8, 4), dtype=float)
    wp.tile_store(out, t)
    t = wp.tile_sum(t)  # (1,)
    wp.tile_atomic_add(total, t)
