import tilec as tl


@tl.func
def rowsum(a: tl.Tile[tl.float32, "M", "K"], b: tl.Tile[tl.float32, "K", "N"]) -> tl.Tile[tl.float32, "M"]:
    return tl.tile_sum(tl.tile_matmul(a, b), axis=1)


@tl.func
def bad_generic(a: tl.Tile[tl.float32, "M", "K"], b: tl.Tile[tl.float32, "M", "K"]):
    return tl.tile_matmul(a, b)  # ERROR TC0102: inner dimensions differ: a is (M, K), b is (M, K)


@tl.func
def add_any(a: tl.Tile[tl.float32, "M"], b: tl.Tile[tl.float32, "M"]):
    return a + b


@tl.kernel(block_dim=64)
def use_generic(A: tl.array2d(dtype=float)):
    a = tl.tile_load(A, shape=(8, 4))
    b = tl.tile_load(A, shape=(4, 2))
    r = rowsum(a, b)
    s = rowsum(a, a)  # ERROR TC0101: rowsum: shape variable K is 4 for `a` but 8 for `b`
    t = bad_generic(a, a)
    u = add_any(tl.tile_zeros(shape=(3,), dtype=float), tl.tile_zeros(shape=(5,), dtype=float))  # ERROR TC0101: shape variable M is 3
    v = rowsum(a, tl.tile_zeros(shape=(4, 2), dtype=tl.float64))  # ERROR TC0201: parameter `b` expects a float32 tile of shape (K, N)


@tl.kernel(block_dim=0)  # ERROR TC0305: block_dim must be a positive compile-time integer
def bad_block(A: tl.array1d(dtype=float)):
    pass
