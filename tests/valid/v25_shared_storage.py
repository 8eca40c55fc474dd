import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(64, 64), storage="shared")
    b = wp.tile_load(B, shape=(64, 32), storage="register")
    wp.tile_store(B, wp.tile_matmul(a, b))
