from typing import Any

import warp as wp


@wp.kernel
def never_overloaded(a: wp.array(dtype=Any)):  # warning TC0436: no overload, not compiled
    a[0] = a[1]


@wp.kernel
def scaled(a: wp.array(dtype=Any), b: wp.array(dtype=Any), s: float):
    i = wp.tid()
    t = wp.tile_load(a, shape=8, offset=i * 8)
    wp.tile_store(b, t * s, offset=i * 8)  # ERROR TC0201: cannot mix float64 and float32


wp.overload(scaled, [wp.array(dtype=float), wp.array(dtype=float), float])
wp.overload(scaled, [wp.array(dtype=wp.float64), wp.array(dtype=wp.float64), float])
wp.overload(scaled, [wp.array2d(dtype=float), wp.array(dtype=float), float])  # ERROR TC0201: parameter `a` is declared array1d(Any), the overload gives a 2-d float32 array
wp.overload(scaled, {"c": wp.array(dtype=float)})  # ERROR TC0436: the kernel has no parameter `c`
wp.overload(scaled, {"a": wp.array(dtype=float)})  # ERROR TC0436: leaves parameter `b` generic
wp.overload(scaled, [wp.array(dtype=float)] * 3)  # ERROR TC0201: parameter `s` is declared a float32 scalar, the overload gives a 1-d float32 array
wp.overload(scaled, [wp.array(dtype=float)] * 2 + [float])  # ERROR TC0436: tilec reads the types from a literal list or dict


@wp.func
def root(x: Any):
    return wp.sqrt(x)  # ERROR TC0203: sqrt


@wp.kernel
def roots(a: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = root(a[i])
    n[i] = root(n[i])


@wp.func
def halved(x: wp.Float):
    return x * x


@wp.func
def ints(v: wp.types.vector(3, wp.Int)):
    return v[0]


@wp.func
def sized(v: wp.types.vector(length=0, dtype=wp.Float)):  # ERROR TC0409: `vector`: the length must be a positive compile-time integer
    return v[0]


@wp.kernel
def kinds(a: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    a[i] = halved(n[i])  # ERROR TC0201: halved: parameter `x` expects wp.Float, got an int32 scalar
    n[i] = ints(wp.vec3(1.0, 2.0, 3.0))  # ERROR TC0201: ints: parameter `v` expects a vector of shape (3,) of wp.Int, got a vec3f


@wp.func
def any_shape(t: wp.tile[float]) -> wp.tile[float]:
    return t * 2.0


@wp.kernel
def tiles_of_any_shape(a: wp.array(dtype=int)):
    t = wp.tile_load(a, shape=8)
    u = any_shape(t)  # ERROR TC0201: any_shape: parameter `t` expects a float32 tile of any shape, got an int32 tile of shape (8,)
