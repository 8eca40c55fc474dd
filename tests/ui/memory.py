import warp as wp


@wp.kernel
def loads(A: wp.array2d(dtype=float), B: wp.array1d(dtype=int), C: wp.array3d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(8,))  # ERROR TC0107: has 1 dimension(s) but the array has 2
    b = wp.tile_load(A, shape=(8, 8), offset=(i,))  # ERROR TC0304: offset has 1 coordinate(s) but the array has 2
    c = wp.tile_load(B, shape=(8,))
    wp.tile_store(A, c, offset=(0, 0))  # ERROR TC0202: tile dtype int32 does not match the array dtype float32
    d = wp.tile_load(A, shape=(8, 8), offset=(0.5, 0))  # ERROR TC0203: offset coordinates must be integers
    e = wp.tile_load(C, shape=(2, 2, 2), offset=(0, 0, 0))
    wp.tile_store(C, wp.tile_load(A, shape=(2, 2)), offset=(0, 0, 0))  # ERROR TC0107: a 2-d tile cannot be stored into a 3-d array
    f = wp.tile_load(A, shape=(4, 4), storage="global")  # ERROR TC0303: storage must be
    g = wp.tile_load(A, (4, 4), (0, 0), "register", True, False, 7)  # ERROR TC0303: takes at most 6 positional


@wp.kernel
def indexed(A: wp.array2d(dtype=float)):
    idx = wp.tile_arange(4, dtype=int)
    a = wp.tile_load_indexed(A, idx, shape=(8, 8), axis=0)  # ERROR TC0101: indices has 4 entries
    fidx = wp.tile_zeros(shape=(8,), dtype=float)
    b = wp.tile_load_indexed(A, fidx, shape=(8, 8))  # ERROR TC0303: `indices` must be a 1-d int32 tile
    c = wp.tile_load_indexed(A, idx, shape=(4, 4), axis=3)  # ERROR TC0106: axis 3 is out of range


@wp.kernel
def arrays(A: wp.array2d(dtype=float), I: wp.array1d(dtype=int)):
    i = wp.tid()
    x = A[i, 0, 1]  # ERROR TC0304: 3 indices for a 2-d array
    A[i, 0] = 1  # int literal adapts to float: fine
    I[i] = 2.5  # ERROR TC0202: cannot store a float into an int32 array
    A[i, 0] = I[i]  # ERROR TC0202: cannot store int32 into a float32 array
    y = A[i, 1.0]  # ERROR TC0203: indices must be integers
    n = A.shape[4]  # ERROR TC0106: axis 4 is out of range for a 2-d array
    m = A.shape[2]  # a warning: 0, as in Warp (its arrays hold 4 extents)
    wp.atomic_add(A, i, 1.0)  # ERROR TC0304: needs 2 index(es) and a value
