import warp as wp


@wp.func
def square(x: float) -> float:
    return x * x


@wp.kernel
def first(A: wp.array1d(dtype=float)):
    i = wp.tid()
    A[i] = square(A[i])


@wp.kernel
def second(A: wp.array1d(dtype=float)):
    t = wp.tile_load(A, shape=(4,))
    wp.tile_store(A, wp.tile_map(square, t))
