import tilec as tl


@tl.func
def affine(x: tl.Tile[tl.float32, "B", "I"], w: tl.Tile[tl.float32, "I", "O"], b: tl.Tile[tl.float32, "O"]):
    return tl.tile_matmul(x, w) + tl.tile_broadcast(b, shape=(x.shape[0], w.shape[1]))


@tl.kernel
def k(X: tl.array2d(dtype=float), W: tl.array2d(dtype=float), Bv: tl.array1d(dtype=float), Y: tl.array2d(dtype=float)):
    y = affine(tl.tile_load(X, shape=(8, 16)), tl.tile_load(W, shape=(16, 4)), tl.tile_load(Bv, shape=(4,)))
    z = affine(tl.tile_load(X, shape=(2, 3)), tl.tile_load(W, shape=(3, 5)), tl.tile_load(Bv, shape=(5,)))
    tl.tile_store(Y, y)
