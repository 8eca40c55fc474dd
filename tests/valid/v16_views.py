import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), B: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 8))
    v = wp.tile_view(a, offset=(2, 2), shape=(4, 4))
    row = wp.tile_view(a, offset=(3,))
    r = wp.tile_reshape(v, shape=(16,))
    s = wp.tile_squeeze(wp.tile_reshape(row, shape=(1, 8)))
    b = wp.tile_broadcast(wp.tile_reshape(s, shape=(1, 8)), shape=(8, 8))
    wp.tile_store(B, r * 2.0)
    wp.tile_store(A, b + a)
