"""Negative forms of Warp spellings (issue #13 items 2-5) not pinned elsewhere: views stored into and passed
to funcs, tile gathers, reversed-slice assignment, kernels in classes and literal loops, `typing.Any`,
`@wp.overload` stubs."""
import typing

import warp as wp

TILE = 4


@wp.func
def row_total(r: wp.array2d(dtype=float)) -> float:
    return r[0, 0]


@wp.kernel
def views(A: wp.array2d(dtype=float), B: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(A, shape=(TILE, TILE))
    wp.tile_store(B[i, j], t)  # ERROR TC0107: a 2-d tile cannot be stored into a 1-d array
    out[i] = row_total(A[i])  # ERROR TC0201: parameter `r` expects a 2-d float32 array, got a 1-d float32 array
    u = wp.tile_load(out[i], shape=TILE)  # ERROR TC0303: `a` must be an array, got a float32 scalar


@wp.kernel
def gathers(A: wp.array2d(dtype=float), f: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(TILE, TILE))
    fidx = wp.tile_load(f, shape=TILE)
    g = t[fidx]  # ERROR TC0203: a tile can be indexed by a 1-d int tile, got a float32 tile
    idx2 = wp.tile_zeros(shape=(2, 2), dtype=int)
    h = t[idx2]  # ERROR TC0203: a tile can be indexed by a 1-d int tile, got an int32 tile of shape (2, 2)
    t[::-1] = t  # ERROR TC0401: assignment to a strided tile slice
    wp.tile_store(out, t)


class Holder:
    @wp.kernel
    def in_class(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=TILE)
        wp.tile_store(a, wp.tile_reshape(t, shape=(3,)))  # ERROR TC0105: cannot reshape (4,) (4 elements) into (3,)


for width in [2, 3]:

    @wp.kernel
    def per_width(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=TILE)
        wp.tile_store(a, wp.tile_reshape(t, shape=(width * 2,)))  # ERROR TC0105: into (6,) (6 elements)


@wp.kernel
def generic_attr(a: wp.array(dtype=typing.Any)):  # warning TC0436: no overload, not compiled
    a[0] = a[1]


@wp.kernel
def stubbed(a: wp.array(dtype=typing.Any), n: int):
    a[n] = a[0]


@wp.overload
def stubbed(a: wp.array(dtype=float), n: float):  # ERROR TC0201: parameter `n` is declared an int32 scalar, the overload gives a float32
    ...


@wp.kernel
def array_forms(a: wp.array2d(dtype=float, ndim=3),  # ERROR TC0409: `array2d(...)` takes `dtype=` only
                b: wp.array(float, 2)):  # ERROR TC0409: `array(...)` takes `dtype=` and `ndim=` only
    a[0, 0] = b[0, 0]
