import warp as wp


@wp.struct
class Pair:
    a: float
    b: float


@wp.func
def add(x: Pair, y: Pair) -> Pair:
    return Pair(x.a + y.a, x.b + y.b)


@wp.kernel
def bare(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = tid()  # ERROR TC0301: unknown function `tid`
    p = Pair(x[0], 1.0)
    q = p * p  # ERROR TC0201: a `Pair` struct cannot be used here
    y[0] = sqrt(x[0]) * pi  # ERROR TC0301: unknown name `pi`
    p += p
    v = tile_load(x, shape=(4,))  # ERROR TC0301: unknown function `tile_load`
