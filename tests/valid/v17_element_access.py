import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 4))
    x = t[1, 2] + wp.tile_extract(t, 0, 0)
    t[i % 4, 0] = x
    t[0, 0] += 1.0
    t[3, 3] -= 2.0
    big = wp.tile_zeros(shape=(8, 8), dtype=float)
    wp.tile_assign(big, t, offset=(2, 2))
    wp.tile_store(A, big)
