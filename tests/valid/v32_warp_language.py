"""The Warp language of the 2026-12-06 session: functions as values, wp.static tables and arms,
string and func arguments of kernel factories, tuples, rebinding to new shapes, Perlin noise."""
from typing import Any

import warp as wp

MODE = "smooth"
TABLE = {"wave": wp.sin, "gain": 1.5}


@wp.func
def softened(x: float):
    return x / (1.0 + wp.abs(x))


@wp.func
def apply(g: wp.Function, x: Any):
    return g(x)


@wp.func
def split(x: float):
    return x * 0.5, wp.vec2(x, 1.0)


@wp.kernel
def language(a: wp.array2d(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    i = wp.tid()
    row = a[i]
    row = row[1:]
    f = softened
    t = (row[0], wp.static(TABLE["gain"]), v[i])
    h, p = split(t[0])
    y[i] = f(t[0]) * t[1] + apply(wp.static(TABLE["wave"]), h) + p[0] + wp.length(t[2]) * float(len(t))
    if wp.static(MODE == "smooth"):
        y[i] += wp.noise(wp.rand_init(5, i), v[i]) + wp.pnoise(wp.uint32(9), h, 4)
    else:
        y[i] += wp.undefined_in_this_arm(h)


def make_scaled(act: str, func):
    @wp.kernel
    def scaled(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        if wp.static(act == "twice"):
            y[i] = func(x[i]) * 2.0
        else:
            y[i] = apply(func, x[i])

    return scaled


scaled_twice = make_scaled("twice", softened)
scaled_once = make_scaled("once", wp.tanh)


@wp.kernel
def tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 8))
    t = wp.tile_transpose(t)
    c = wp.curlnoise(wp.uint32(3), wp.vec2(1.5, 2.5))
    wp.tile_store(out, t * c[0])
