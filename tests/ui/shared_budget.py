import warp as wp


@wp.kernel(enable_backward=False)
def too_much_memory(A: wp.array1d(dtype=wp.float64)):  # ERROR TC0109: (forward) needs 1.5 GiB of memory per block on the GPU for tiles that do not fit the 163 KiB a block may use on sm_80 (tried: the largest in global scratch, at most 1 GiB per block)
    a = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    b = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    c = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    wp.tile_store(A, a + b + c)


@wp.kernel(enable_backward=False)
def past_shared_in_global_scratch(A: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(128, 64), storage="shared")
    b = wp.tile_load(A, shape=(128, 64), storage="shared")
    c = wp.tile_load(A, shape=(128, 64), storage="shared")
    d = wp.tile_load(A, shape=(128, 64))
    wp.tile_store(A, a + b + c + d)


@wp.kernel
def fits(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(64, 64), storage="shared")
    wp.tile_store(A, a)
