"""Nested kernels whose constants a factory sets path by path (if/elif/else, with) or with
min/int of constants, generic kernels whose overloads are declared in loops over literal kernels
and dtypes or read from the file's launches, and a @wp.func overloaded by redefinition (issue
#13 items 4, 5)."""
import contextlib
from typing import Any

import numpy as np
import warp as wp

TILE = 8


def make_spread(wide: bool):
    if wide:
        LANES = 8
    else:
        LANES = 4
    ROWS = min(6, int(LANES * 1.5))

    @wp.kernel
    def spread(a: wp.array2d[float], b: wp.array2d[float]):
        i = wp.tid()
        t = wp.tile_load(a, shape=(ROWS, LANES), offset=(0, i * LANES))
        wp.tile_store(b, wp.tile_map(wp.sin, t) * 2.0, offset=(0, i * LANES))

    return spread


spread_wide = make_spread(True)
spread_narrow = make_spread(False)


def make_window(kind: int):
    if kind == 0:
        WIDTH = 2
    elif kind == 1:
        WIDTH = 3
    else:
        WIDTH = max(4, TILE // 2)
    with contextlib.nullcontext():
        SCALE = float(WIDTH) * 0.5

    @wp.kernel
    def window(a: wp.array[float], b: wp.array[float]):
        i = wp.tid()
        t = wp.tile_load(a, shape=WIDTH, offset=i * WIDTH)
        wp.tile_store(b, wp.tile_map(wp.tanh, t * SCALE), offset=i * WIDTH)

    return window


window_two = make_window(0)
window_three = make_window(1)
window_four = make_window(2)


@wp.func
def bump(x: wp.float32):
    return x * x + wp.float32(1.0)


@wp.func
def bump(x: wp.float64):  # noqa: F811 - Warp overloads a func by redefinition
    return x * x * wp.float64(0.5) - x


@wp.kernel
def bumped(a: wp.array[Any], b: wp.array[Any]):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(b, wp.tile_map(bump, t), offset=i * TILE)


@wp.kernel
def rowcube(a: wp.array2d[Any], b: wp.array[Any]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(1, TILE), offset=(i, 0))
    wp.tile_store(b, wp.tile_sum(t * t * t, axis=1), offset=i)


@wp.kernel
def doubled(a: wp.array[Any], b: wp.array[Any]):
    i = wp.tid()
    t = wp.tile_load(a, shape=TILE, offset=i * TILE)
    wp.tile_store(b, wp.tile_map(wp.exp, t) + t, offset=i * TILE)


for _kernel in (bumped, doubled):
    for _dtype in (wp.float32, wp.float64):
        wp.overload(_kernel, [wp.array[_dtype], wp.array[_dtype]])

for _ndim, _dtype in ((2, wp.float32), (2, wp.float64)):
    wp.overload(rowcube, {"a": wp.array(dtype=_dtype, ndim=_ndim), "b": wp.array[_dtype]})


def make_features(on_cpu: bool):
    if on_cpu:
        THREADS = 4
    else:
        THREADS = 8
    FEATURES = 3

    @wp.kernel
    def features(x: wp.array[float], w: wp.array2d[float], out: wp.array2d[float]):
        i = wp.tid()
        local = wp.vector(length=FEATURES, dtype=float)
        local[0] = x[i]
        local[1] = x[i] * x[i]
        local[2] = wp.sin(x[i])
        f = wp.tile(local)
        o = wp.tile_matmul(wp.tile_load(w, shape=(2, FEATURES)), f)
        wp.tile_store(out, o, offset=(0, (i // THREADS) * THREADS))

    def run(x, w, out):
        wp.launch(features, dim=x.shape[0], inputs=[x, w, out], block_dim=THREADS)

    return features


features_cpu = make_features(True)
features_gpu = make_features(False)


@wp.kernel
def launched_pair(src: wp.array2d[Any], dst: wp.array2d[Any]):
    i = wp.tid()
    t = wp.tile_load(src, shape=(2, TILE), offset=(i * 2, 0))
    wp.tile_store(dst, wp.tile_map(wp.cos, t) * t, offset=(i * 2, 0))


def run_launched_pair(rows):
    for dtype in (np.float32, np.float64):
        host = np.asarray(rows, dtype=dtype)
        src = wp.array(host)
        dst = wp.zeros_like(src)
        wp.launch_tiled(launched_pair, dim=len(rows) // 2, inputs=[src, dst], block_dim=64)
    half = wp.zeros((2, TILE), dtype=wp.float16)
    wp.launch_tiled(launched_pair, dim=1, inputs=[half, wp.empty_like(half)], block_dim=64)


@wp.kernel
def launched_fill(a: wp.array[Any], b: wp.array[Any], value: Any):
    i = wp.tid()
    b[i] = a[i] * value + value


def run_launched_fill(n):
    # `value: Any` from the launch's argument, as Warp infers it: 3 an int32, 1.5 a float32, wp.float64(...) itself
    ints = wp.zeros(n, dtype=int)
    wp.launch(launched_fill, dim=n, inputs=[ints, wp.zeros_like(ints), 3])
    floats = wp.ones(n, dtype=float)
    wp.launch(launched_fill, dim=n, inputs=[floats, wp.zeros_like(floats), 1.5])
    doubles = wp.zeros(n, dtype=wp.float64)
    wp.launch(launched_fill, dim=n, inputs=[doubles, wp.zeros_like(doubles), wp.float64(0.25)])


@wp.kernel
def value_overloads(a: wp.array[Any], b: wp.array[Any]):
    i = wp.tid()
    b[i] = a[i] * 2.0 + a[i]


# overloads in a loop over value types (not only scalar dtypes), their list repeated
for _value_type in (wp.vec3, wp.mat22):
    wp.overload(value_overloads, [wp.array[_value_type]] * 2)
