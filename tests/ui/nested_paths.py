from typing import Any

import warp as wp

SIZES = [4, 8]


def looped_local():
    for n in (4, 8):
        WIDTH = n

    @wp.kernel
    def after_loop(a: wp.array[float]):  # ERROR TC0433: `WIDTH` is bound in `looped_local` in a way tilec cannot evaluate
        wp.tile_store(a, wp.tile_load(a, shape=WIDTH))

    return after_loop


def folded(a):
    WIDTH = min(len(a), 8)

    @wp.kernel
    def from_len(a: wp.array[float]):  # ERROR TC0433: `WIDTH = min(len(a), 8)` is not a compile-time constant
        wp.tile_store(a, wp.tile_load(a, shape=WIDTH))

    return from_len


def per_device(device):
    if device.is_cpu:
        WIDTH = 4
    else:
        WIDTH = device.warp_size

    @wp.kernel
    def half_known(a: wp.array[float]):  # a warning: compiled for WIDTH = 4 only
        wp.tile_store(a, wp.tile_load(a, shape=WIDTH))

    return half_known


def native_beside():
    @wp.func_native("out[0] = wp::vec3(1.0f);")
    def poke(out: wp.indexedarray(dtype=wp.vec3)): ...

    @wp.kernel
    def calls_native(a: wp.array[wp.vec3]):
        poke(a)  # ERROR TC0401: `poke` is a @wp.func_native

    return calls_native


@wp.func
def twice(x: wp.float32):
    return x * wp.float32(2.0)


@wp.func
def twice(x: wp.float64):
    return x * wp.float64(2.0)


@wp.kernel
def twice_int(a: wp.array[int]):
    i = wp.tid()
    a[i] = twice(a[i])  # ERROR TC0408: no overload of `twice` takes (int32)


@wp.kernel
def generic(a: wp.array[Any]):
    t = wp.tile_load(a, shape=4)
    wp.tile_store(a, t)


for _dtype in SIZES:
    wp.overload(generic, [wp.array[_dtype]])  # ERROR TC0409: overload of `generic`, parameter `a`


@wp.kernel
def launched_unknown(a: wp.array[Any]):  # warning TC0436: no overload, not compiled
    t = wp.tile_load(a, shape=4)
    wp.tile_store(a, t)


def run_unknown(data):
    arr = wp.array(data)  # its dtype is data's, which tilec cannot see
    wp.launch_tiled(launched_unknown, dim=1, inputs=[arr], block_dim=32)
