import warp as wp


@wp.func
def gelu(x: float):
    return 0.5 * x * (1.0 + wp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@wp.func
def axpb(a: float, b: float):
    return 2.0 * a + b


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    t = wp.tile_load(A, shape=(32,))
    wp.tile_store(A, wp.tile_map(gelu, t) + wp.tile_map(axpb, t, t) + wp.tile_map(wp.exp, t))
