"""Kernel factories calling kernel factories with their own parameters: each kernel is compiled
for the constants the outermost calls pass down (through one, two and three factories, with
dtypes, funcs and arithmetic on the way)."""
import warp as wp


def make_blend(TILE: int, w: float, dtype):
    @wp.kernel
    def blend(a: wp.array(dtype=dtype), b: wp.array(dtype=dtype), out: wp.array(dtype=dtype)):
        i = wp.tid()
        x = wp.tile_load(a, shape=TILE, offset=i * TILE)
        y = wp.tile_load(b, shape=TILE, offset=i * TILE)
        wp.tile_store(out, x * dtype(w) + y * y * (dtype(1.0) - dtype(w)), offset=i * TILE)

    return blend


def make_mapped(TILE: int, fn):
    @wp.kernel
    def mapped(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a[i], shape=TILE)
        wp.tile_store(out[i], wp.tile_map(fn, t))

    return mapped


def half_blend(n: int):
    return make_blend(n, 0.5, float)


def wide_blend(n: int, dtype):
    return make_blend(2 * n, 0.25, dtype)


def blend_family(base: int):
    return wide_blend(base, wp.float64), half_blend(base + 4)


def activation(n, smooth: bool):
    if smooth:
        return make_mapped(n, wp.tanh)
    return make_mapped(n, wp.abs)


half8 = half_blend(8)
wide_f64, half12 = blend_family(8)
smooth16 = activation(16, True)
sharp8 = activation(8, False)
