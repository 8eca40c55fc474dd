import warp as wp


@wp.kernel
def broken(A: wp.array1d(dtype=float)):
    x = (1 +  # ERROR TC0001: syntax error: '(' was never closed
