import warp as wp


@wp.kernel(enable_backward=False)
def too_much_shared(A: wp.array2d(dtype=wp.float64)):  # ERROR TC0109: (forward) needs 192 KiB of shared memory per block on the GPU, more than the 163 KiB a block may use on sm_80
    a = wp.tile_load(A, shape=(128, 64), storage="shared")
    b = wp.tile_load(A, shape=(128, 64), storage="shared")
    c = wp.tile_load(A, shape=(128, 64), storage="shared")
    d = wp.tile_load(A, shape=(128, 64))
    wp.tile_store(A, a + b + c + d)


@wp.kernel
def fits(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(64, 64), storage="shared")
    wp.tile_store(A, a)
