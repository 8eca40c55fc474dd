import warp as wp
from warp import tile_load as load

K = 4


@wp.func
def helper(x: float):
    return x * 2.0


@wp.kernel
def names(A: wp.array1d(dtype=float)):
    a = load(A, shape=(K,))
    b = wp.tile_lod(A, shape=(4,))  # ERROR TC0302: unknown tile API operation `tile_lod`
    c = undefined_thing + 1  # ERROR TC0301: unknown name `undefined_thing`
    d = wp.tile_zeros(shape=(4,), dtype=float, stoarge="shared")  # ERROR TC0303: unknown keyword argument `stoarge`
    e = wp.tile_zeros(dtype=float)  # ERROR TC0303: missing argument `shape`
    f = nothing(3)  # ERROR TC0301: unknown function `nothing`
    g = helper(1.0, 2.0)  # ERROR TC0408: helper: expects 1 argument(s), got 2
    h = helper + 1.0  # ERROR TC0408: is a function
    s = wp.tile_sum(a, axis=K - 6)  # ERROR TC0106: axis -2 is out of range
    j = wp.tile_zeros(shape=(4,), dtype=wp.float128)  # ERROR TC0303: is not a dtype
    k = wp  # ERROR TC0401: the module `wp` used as a value
    wp.tile_store(A, a, offset=0)
