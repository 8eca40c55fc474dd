"""Generic kernels and funcs: Any dtypes, wp.overload declarations and @wp.overload stubs."""
import typing
from typing import Any

import numpy as np
import warp as wp

T = 8


@wp.kernel
def gscale(a: wp.array(dtype=Any), b: wp.array(dtype=Any), s: Any):
    i = wp.tid()
    t = wp.tile_load(a, shape=T, offset=i * T)
    wp.tile_store(b, wp.tile_map(wp.sin, t) * s, offset=i * T)


wp.overload(gscale, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32), wp.float32])
wp.overload(gscale, {"a": wp.array(dtype=wp.float64), "b": wp.array(dtype=wp.float64), "s": wp.float64})


@wp.kernel
def growsum(a: wp.array2d(dtype=typing.Any), out: wp.array(dtype=typing.Any)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(2, T), offset=(i * 2, 0))
    wp.tile_store(out, wp.tile_sum(t * t, axis=1), offset=i * 2)


@wp.overload
def growsum(a: wp.array2d(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    ...


@wp.overload
def growsum(a: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    ...


@wp.func
def mad(x: Any, y: Any):
    return x * y + x


@wp.func
def cube(x: Any):
    return x * x * x


@wp.kernel
def mad32(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32), c: wp.array(dtype=wp.float32)):
    i = wp.tid()
    c[i] = mad(a[i], b[i])


@wp.kernel
def mad64(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), c: wp.array(dtype=wp.float64)):
    i = wp.tid()
    c[i] = mad(a[i], b[i]) * mad(b[i], a[i])


@wp.kernel
def energy32(a: wp.array(dtype=wp.float32), e: wp.array(dtype=wp.float32)):
    i = wp.tid()
    t = wp.tile_load(a, shape=T, offset=i * T)
    wp.tile_store(e, wp.tile_sum(wp.tile_map(cube, t)), offset=i)


@wp.kernel
def energy64(a: wp.array2d(dtype=wp.float64), e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(2, 4), offset=(i * 2, 0))
    wp.tile_store(e, wp.tile_sum(wp.tile_map(cube, t)), offset=i)


@wp.kernel
def gnorm(x: wp.array(dtype=Any), y: wp.array(dtype=Any)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    s = wp.tile_sum(t * t)
    y[i] = v * s[0]


wp.overload(gnorm, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32)])
wp.overload(gnorm, [wp.array(dtype=wp.float64), wp.array(dtype=wp.float64)])


@wp.kernel
def gmatmul(a: wp.array2d(dtype=Any), b: wp.array2d(dtype=Any), c: wp.array2d(dtype=Any)):
    i, j = wp.tid()
    ta = wp.tile_load(a, shape=(4, 8), offset=(i * 4, 0))
    tb = wp.tile_load(b, shape=(8, 4), offset=(0, j * 4))
    wp.tile_store(c, wp.tile_matmul(ta, tb), offset=(i * 4, j * 4))


wp.overload(gmatmul, [wp.array2d(dtype=wp.float32), wp.array2d(dtype=wp.float32), wp.array2d(dtype=wp.float32)])
wp.overload(gmatmul, [wp.array2d(dtype=wp.float64), wp.array2d(dtype=wp.float64), wp.array2d(dtype=wp.float64)])


def make_gshift(WIDTH: int):
    @wp.kernel
    def gshift(x: wp.array(dtype=Any), y: wp.array(dtype=Any)):
        i = wp.tid()
        t = wp.tile_load(x, shape=WIDTH, offset=i * WIDTH)
        wp.tile_store(y, t * t - t, offset=i * WIDTH)

    wp.overload(gshift, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32)])
    wp.overload(gshift, [wp.array(dtype=wp.float64), wp.array(dtype=wp.float64)])
    return gshift


gshift4 = make_gshift(4)
gshift16 = make_gshift(16)


def run(n: int):
    """Host code: the launches tilec reads for block_dims."""
    x = wp.array(np.ones(n, dtype=np.float32))
    for bd in (16, 32):
        wp.launch(gnorm, dim=n, inputs=[x, x], block_dim=bd)
