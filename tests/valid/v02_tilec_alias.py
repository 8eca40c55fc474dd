import tilec as tl


@tl.kernel(block_dim=64)
def double(A: tl.array1d(dtype=tl.float32)):
    t = tl.tile_load(A, shape=(64,))
    tl.tile_store(A, t * 2.0)
