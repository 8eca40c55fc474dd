import warp as wp

# wp.tile_reshape of a transposed tile builds with warning TC0437 (Warp reads it in memory order);
# a copy, or a unit extent, makes Warp's order and tilec's one: no warning.


@wp.kernel
def reshapes(X: wp.array2d(dtype=float), O: wp.array2d(dtype=float), P: wp.array2d(dtype=float)):
    x = wp.tile_load(X, shape=(2, 4))
    t = wp.tile_transpose(x)
    wp.tile_store(O, wp.tile_reshape(t, shape=(2, 4)))
    wp.tile_store(P, wp.tile_reshape(wp.tile_transpose(x), shape=(8, 1)))
    wp.tile_store(O, wp.tile_reshape(t * 1.0, shape=(2, 4)))
    t = t * 1.0
    wp.tile_store(O, wp.tile_reshape(t, shape=(2, 4)))
    r = wp.tile_load(X, shape=(1, 4))
    wp.tile_store(O, wp.tile_reshape(wp.tile_transpose(r), shape=(1, 4)))
