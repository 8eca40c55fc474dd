import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    acc = wp.tile_zeros(shape=(4, 4), dtype=float)
    for i in range(3):
        for j in range(2):
            acc += wp.tile_load(A, shape=(4, 4), offset=(i * 4, j * 4))
    wp.tile_store(B, acc)
