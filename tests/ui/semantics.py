import warp as wp


@wp.func
def rec(x: float) -> float:
    return rec(x)  # ERROR TC0402: recursive call of `rec`


@wp.func
def two_returns(x: float, t: wp.tile(dtype=float, shape=(4,))):
    if x > 0.0:
        return x
    return t  # ERROR TC0410: returns a float32 tile of shape (4,) here but a float32 scalar before


@wp.func
def no_annotation(x):  # ERROR TC0404: parameter `x` of `no_annotation` needs a type annotation
    return x


@wp.kernel
def kernel_returns(A: wp.array1d(dtype=float)):
    return 1.0  # ERROR TC0403: a kernel cannot return a value


@wp.kernel
def missing(A):  # ERROR TC0404: parameter `A` of `missing` needs a type annotation
    pass


@wp.kernel
def bad_annotation(A: list):  # ERROR TC0409: unsupported type annotation
    pass


@wp.kernel
def rebinding(A: wp.array1d(dtype=float)):
    x = 1.0
    x = wp.tile_zeros(shape=(4,), dtype=float)  # ERROR TC0405: `x` was a float32 scalar and cannot become a float32 tile of shape (4,)
    t = wp.tile_zeros(shape=(4,), dtype=float)
    if wp.tile_sum(t):  # ERROR TC0406: a tile cannot be a condition
        pass
    while t:  # ERROR TC0406: a tile cannot be a condition
        pass
    if A[0] > 0.0:
        u = wp.tile_zeros(shape=(4,), dtype=float)
    else:
        u = wp.tile_zeros(shape=(8,), dtype=float)  # ERROR TC0110: `u` is a float32 tile of shape (4,) in one branch but a float32 tile of shape (8,) in another
    y = rec(1.0)
    z = two_returns(1.0, t)
    n = 1
    n = 2.5  # ERROR TC0405: `n` was an int32 scalar and cannot become a float32 scalar
    break  # ERROR TC0401: `break`/`continue` outside a loop


@wp.kernel
def map_funcs(A: wp.array1d(dtype=float)):
    t = wp.tile_load(A, shape=(8,))
    a = wp.tile_map(wp.tile_sum, t)  # ERROR TC0407: cannot be mapped over a tile
    b = wp.tile_map(wp.add, t)  # ERROR TC0407: takes 2 argument(s), given 1
    c = wp.tile_map(returns_tile, t)  # ERROR TC0407: must return a scalar
    d = wp.tile_reduce(to_int, t)  # ERROR TC0407: must return float32 for float32 tiles
    e = wp.tile_map(wp.sqrt, wp.tile_astype(t, dtype=int))  # ERROR TC0407: not defined for int32 operands
    wp.tile_sort(t, t)
    s = wp.tile_zeros(shape=(4, 4), dtype=float)
    f = wp.tile_matmul(s, s, s)  # ERROR TC0408: updates its argument in place; call it as a statement


@wp.func
def returns_tile(x: float):
    return wp.tile_zeros(shape=(2,), dtype=float)


@wp.func
def to_int(a: float, b: float):
    return int(a)


@wp.kernel
def rebinding_views(A: wp.array2d(dtype=float)):
    row = A[0]
    row = A[:, 1:]  # a new shape in the block that bound it: a new symbol, as in Warp
    for i in range(2):
        row = A[i]  # ERROR TC0405: `row` was a 2-d float32 array and cannot become a 1-d float32 array
    t = wp.tile_zeros(shape=(4,), dtype=float)
    if A[0, 0] > 0.0:
        t = wp.tile_zeros(shape=(8,), dtype=float)  # ERROR TC0405: `t` was a float32 tile of shape (4,) and cannot become a float32 tile of shape (8,)
