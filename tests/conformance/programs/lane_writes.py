"""Tile elements written by every thread at an index that differs between threads (`t[i] = v`,
`t[j][1] = v`): each thread's value lands in its own element, and the adjoint gives each thread
the gradient of the element it wrote (the overwritten elements' gradient is cleared)."""
import warp as wp

B = 16
SHIFT = 5


@wp.kernel
def lane_store(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _b, j = wp.tid()
    a = wp.tile_zeros(shape=(B,), dtype=float)
    a[j] = x[j] * x[j]
    wp.tile_atomic_add(y, a, offset=(0,))


@wp.kernel
def rotated_overwrite(inp: wp.array(dtype=float), src: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    base = wp.tile_load(inp, shape=(B,))
    j = (i + SHIFT) % B
    base[j] = wp.sin(src[i]) * inp[j]
    sq = base * base
    y[i] = sq[i]


@wp.kernel
def component_write(x: wp.array(dtype=float), t0: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a = wp.tile_load(t0, shape=(B,))
    a[i][1] = x[i] * 3.0
    wp.tile_atomic_add(y, a)


@wp.kernel
def row_of_2d(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_ones(shape=(B, 3), dtype=float)
    a[B - 1 - i, 2] = x[i] * x[i]
    wp.tile_atomic_add(y, a * 2.0)
