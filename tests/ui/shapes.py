import warp as wp

N = 16
M = wp.constant(8)


@wp.kernel
def elementwise(A: wp.array2d(dtype=float), B: wp.array2d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(8, 16))
    b = wp.tile_load(A, shape=(16, 8))
    c = a + b  # ERROR TC0101: shapes differ: left is (8, 16), right is (16, 8)
    d = wp.tile_load(B, shape=(8, 16))
    e = a * d  # ERROR TC0201: cannot mix float32 and float64 (`left` and `right`)
    f = wp.tile_map(wp.add, a, b)  # ERROR TC0101: shapes differ
    g = a - 1.5
    h = 2.0 * a


@wp.kernel
def matmuls(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(32, 16))
    b = wp.tile_load(A, shape=(32, 32))
    c = wp.tile_matmul(a, b)  # ERROR TC0102: inner dimensions differ: a is (32, 16), b is (32, 32)
    v = wp.tile_zeros(shape=(16,), dtype=float)
    d = wp.tile_matmul(v, a)  # ERROR TC0107: must be a 2-d tile
    out = wp.tile_zeros(shape=(8, 8), dtype=float)
    wp.tile_matmul(a, wp.tile_transpose(a), out)  # ERROR TC0102: out is (8, 8) but a @ b is (32, 32)
    t = wp.tile_transpose(v)  # ERROR TC0107: must be a 2-d tile


@wp.kernel
def views(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 8))
    b = wp.tile_broadcast(a, shape=(4, 8))  # ERROR TC0103: cannot broadcast (8, 8) to (4, 8)
    r = wp.tile_reshape(a, shape=(5, 13))  # ERROR TC0105: cannot reshape (8, 8) (64 elements)
    s = wp.tile_view(a, offset=(4, 4), shape=(8, 8))  # ERROR TC0104: exceeds the tile
    x = a[8, 0]  # ERROR TC0104: index 8 is out of range for axis 0 of the tile (8, 8)
    y = a[1, 2, 3]  # ERROR TC0304: 3 indices for a tile of shape (8, 8)
    big = wp.tile_zeros(shape=(4, 4), dtype=float)
    wp.tile_assign(big, a, offset=(0, 0))  # ERROR TC0104: exceeds dst
    q = wp.tile_squeeze(a, axis=0)  # ERROR TC0111: cannot squeeze axis 0 of extent 8
    k = wp.tile_reshape(a, shape=(-1, 3))  # ERROR TC0105: cannot reshape 64 elements


@wp.kernel
def reductions(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(8, N))
    s = wp.tile_sum(a, axis=2)  # ERROR TC0106: axis 2 is out of range for a 2-d tile
    m = wp.tile_max(a, axis=-3)  # ERROR TC0106: axis -3 is out of range
    neg = wp.tile_sum(a, axis=-1)  # ERROR TC0106: axis -1 is out of range for a 2-d tile: a reduction's axis counts from 0
    red = wp.tile_reduce(wp.add, a, axis=-2)  # ERROR TC0106: axis -2 is out of range for a 2-d tile: a reduction's
    c = wp.tile_scan_inclusive(a)  # a 2-d tile scans in row-major order, as in Warp
    z = wp.tile_scan_exclusive(wp.tile_zeros(shape=(4,), dtype=bool))  # ERROR TC0203: is not defined on bool tiles


@wp.kernel
def linalg(A: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 4))
    L = wp.tile_cholesky(a)  # ERROR TC0101: must be square
    sq = wp.tile_load(A, shape=(8, 8))
    y = wp.tile_zeros(shape=(4,), dtype=float)
    x = wp.tile_cholesky_solve(sq, y)  # ERROR TC0101: `y` has 4 rows
    d = wp.tile_zeros(shape=(5,), dtype=float)
    e = wp.tile_diag_add(sq, d)  # ERROR TC0101: `d` has 5 entries
    i = wp.tile_zeros(shape=(8, 8), dtype=int)
    f = wp.tile_cholesky(i)  # ERROR TC0203: needs a float tile


@wp.kernel
def creation(A: wp.array1d(dtype=float), n: int):
    z = wp.tile_zeros(shape=(n,), dtype=float)  # ERROR TC0108: must be a compile-time constant shape
    r = wp.tile_arange(0, 0, 1)  # ERROR TC0111: is empty
    t = wp.tile_ones(shape=(0, 4), dtype=float)  # ERROR TC0111: must be positive
    u = wp.tile_full(shape=(4,), value=1.5, dtype=int)  # ERROR TC0201: float value cannot fill
    w = wp.tile_zeros(shape=(2, 2, 2, 2, 2), dtype=float)  # ERROR TC0111: 1 to 4 dimensions
    v = wp.tile_full(shape=(2 * N,), value=0.0, dtype=float)


@wp.kernel
def folded_constants(A: wp.array1d(dtype=wp.float64)):
    i = wp.tid()
    A[i] = A[i] / (wp.abs(-0.5) + wp.sin(0.0) + 1.0)
    A[i] = wp.max(A[i], wp.sqrt(4.0))
