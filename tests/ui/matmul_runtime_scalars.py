import warp as wp


@wp.kernel
def bad(A: wp.array2d(dtype=float), C: wp.array2d(dtype=float), k: int, s: float):
    a = wp.tile_load(A, shape=(4, 4))
    c = wp.tile_load(C, shape=(4, 4))
    wp.tile_matmul(a, a, c, alpha=s, beta=k)  # ERROR TC0201: `beta` must be a float scalar, got an int32 scalar
    wp.tile_matmul(a, a, c, alpha=a, beta=s)  # ERROR TC0201: `alpha` must be a float scalar
    d = wp.tile_matmul(a, a, c, beta=s)  # ERROR TC0408: tile_matmul: updates its argument in place
    wp.tile_store(C, c + d)
