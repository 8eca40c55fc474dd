import warp as wp


@wp.func
def clipped(x: float):
    if x > 1.0:
        return 1.0
    if x < -1.0:
        return -1.0
    return x


@wp.kernel
def k(A: wp.array1d(dtype=float), n: int):
    i = wp.tid()
    if i >= n:
        return
    A[i] = clipped(A[i])
