import warp as wp


@wp.kernel
def too_much_shared(A: wp.array2d(dtype=wp.float64)):  # ERROR TC0109: needs 64 KiB of shared memory, more than the 48 KiB budget
    a = wp.tile_load(A, shape=(64, 64), storage="shared")
    b = wp.tile_load(A, shape=(64, 64), storage="shared")
    c = wp.tile_load(A, shape=(64, 64))
    wp.tile_store(A, a + b + c)


@wp.kernel
def fits(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(64, 64), storage="shared")
    wp.tile_store(A, a)
