import warp as wp


@wp.struct
class Body:
    mass: float
    vel: wp.vec3


@wp.func
def bump(t: wp.tile(dtype=float, shape=(3, 4))):
    t += wp.tile_ones(shape=(3, 4), dtype=float)


@wp.kernel
def accumulate(a: wp.array[float], x: wp.array2d[float], out: wp.array2d[float]):
    b = wp.tile_broadcast(wp.tile_load(a, shape=4), shape=(3, 4))
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    b += wp.tile_load(x, shape=(3, 4))  # ERROR TC0401: `b` is a broadcast of `ta` (wp.tile_broadcast at line 19)
    wp.tile_store(out, b)


@wp.kernel
def subtract(a: wp.array[float], x: wp.array2d[float], out: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    b -= wp.tile_load(x, shape=(3, 4))  # ERROR TC0401: tilec does not write through broadcasts
    wp.tile_store(out, b)


@wp.kernel
def element_writes(a: wp.array[float], out: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    b[2, 3] = 7.0  # ERROR TC0401: so this write changes `ta`
    c = wp.tile_broadcast(ta, shape=(3, 4))
    c[0, 1] += 1.0  # ERROR TC0401: `c` is a broadcast of `ta`
    wp.tile_store(out, b)


@wp.kernel
def through_a_view(a: wp.array[float], out: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    v = wp.tile_view(b, offset=(1, 0), shape=(1, 4))
    v[0, 0] = 1.0  # ERROR TC0401: `b` is a broadcast of `ta`
    wp.tile_store(out, b)


@wp.kernel
def by_reference(a: wp.array[float], out: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    bump(b)  # ERROR TC0401: `b` is a broadcast of `ta`
    bump(wp.tile_broadcast(ta, shape=(3, 4)))  # ERROR TC0401: in Warp a view passes its parent by reference
    wp.tile_store(out, b)


@wp.kernel
def assigned_into(a: wp.array[float], out: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    wp.tile_assign(b, wp.tile_ones(shape=(1, 4), dtype=float), offset=(0, 0))  # ERROR TC0401: `b` is a broadcast
    wp.tile_store(out, b)


@wp.kernel
def struct_tiles(a: wp.array[Body], x: wp.array2d[Body], out: wp.array2d[Body]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    b += wp.tile_load(x, shape=(3, 4))  # ERROR TC0401: `b` is a broadcast of `ta`
    wp.tile_store(out, b)
