from typing import Literal

import warp as wp

N = 8


@wp.kernel
def too_deep(a: wp.array[float, Literal[5]]):  # ERROR TC0409: N must be Literal[n] or an integer n from 1 to 4
    pass


@wp.kernel
def three_params(a: wp.array[float, Literal[2], Literal[2]]):  # ERROR TC0409: or a dtype and Literal[ndim]
    pass


@wp.kernel
def fixed_rank(a: wp.array2d[float, Literal[2]]):  # ERROR TC0409: `array2d[...]` takes one dtype, e.g. array2d[float]
    pass


@wp.kernel
def array_len(a: wp.array[float]):
    a[0] = float(wp.static(len(a)))  # ERROR TC0305: and len() of a tile, vector, matrix or constant tuple


@wp.kernel
def sized_at_run_time(a: wp.array[int]):
    v = wp.vector(length=a[0], dtype=float)  # ERROR TC0303: vector: a vector length must be a positive integer constant
