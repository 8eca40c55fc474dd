import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float), C: wp.array1d(dtype=int)):
    i = wp.tid()
    wp.atomic_add(C, 0, 1)
    wp.atomic_max(A, 0, float(i))
    wp.atomic_min(A, 1, float(i))
    A[2] += 1.0
    A[3] -= 1.0
