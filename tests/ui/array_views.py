import warp as wp


@wp.kernel
def views(A: wp.array2d(dtype=float), out: wp.array(dtype=float), s: int, f: float):
    i = wp.tid()
    a = A[i, ::f]  # ERROR TC0203: indices must be integers
    b = A[i, ::0]  # ERROR TC0303: slice step must not be zero
    c = A[i, 0, 1:]  # ERROR TC0304: 3 indices for a 2-d array
    d = A[1.5]  # ERROR TC0203: indices must be integers
    e = A[i:2.0]  # ERROR TC0203: indices must be integers
    t = wp.tile_load(A[i], shape=(4, 4))  # ERROR TC0107: shape (4, 4) has 2 dimension(s) but the array has 1
    wp.tile_store(A[i, 1:], t)
    out[i] = A[i]  # ERROR TC0303: `value` must be a scalar, got a 1-d float32 array
    g = A[i, ::s]  # a step known when it runs
