from typing import Any

import warp as wp


@wp.func
def twice(x: Any):
    return x + x


@wp.kernel
def k(A: wp.array1d(dtype=float), B: wp.array1d(dtype=int)):
    i = wp.tid()
    A[i] = twice(A[i])
    B[i] = twice(B[i])
    t = twice(wp.tile_load(A, shape=(8,)))
