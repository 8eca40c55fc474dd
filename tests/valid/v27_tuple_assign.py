import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a, b = A[i, j], A[j, i]
    a, b = b, a
    A[i, j] = a - b
