import warp as wp


@wp.kernel
def broken(A: wp.array1d(dtype=float):  # ERROR TC0001: invalid syntax
    pass
