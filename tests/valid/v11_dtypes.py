import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=wp.float16), B: wp.array1d(dtype=wp.float64), C: wp.array1d(dtype=wp.int64),
      D: wp.array1d(dtype=wp.uint8), E: wp.array1d(dtype=wp.int8), F: wp.array1d(dtype=wp.uint32)):
    i = wp.tid()
    B[i] = wp.float64(A[i]) * 2.0
    C[i] = wp.int64(i) * wp.int64(3)
    D[i] = wp.uint8(7)
    E[i] = wp.int8(-3)
    F[i] = wp.uint32(i)
