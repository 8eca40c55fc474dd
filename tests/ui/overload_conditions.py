from typing import Any

import warp as wp

N = 16


@wp.kernel
def scale(x: wp.array[Any], y: wp.array[Any]):
    t = wp.tile_load(x, shape=N)
    wp.tile_store(y, t + t)


wp.overload(scale, [wp.array[wp.float32], wp.array[wp.float32]])


def declare(device):
    if device.is_cpu and N > 8:  # ERROR TC0436: wp.overload under `if device.is_cpu and N > 8`
        wp.overload(scale, [wp.array[wp.float64], wp.array[wp.float64]])


if wp.get_device().is_cuda:  # ERROR TC0436: tilec cannot evaluate this condition from constants
    pass
elif N > 4:
    wp.overload(scale, [wp.array[wp.int32], wp.array[wp.int32]])
