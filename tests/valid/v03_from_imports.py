from warp import kernel, tid, tile_load, tile_store, tile_sum, array2d, array1d


@kernel
def rowsums(A: array2d(dtype=float), out: array1d(dtype=float)):
    i = tid()
    t = tile_load(A, shape=(1, 32), offset=(i, 0))
    tile_store(out, tile_sum(t), offset=i)
