import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    i: int = wp.tid()
    x: float = A[i]
    y: wp.float32 = x * 2.0
    A[i] = y
