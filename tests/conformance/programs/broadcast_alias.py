"""Broadcast tiles alias their source, as in Warp: a change to the source after wp.tile_broadcast
(an element write, an in-place += in a loop, a write into the row a broadcast view was taken from)
is seen through the broadcast, for tiles of scalars and of structs."""
import warp as wp


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3


@wp.kernel
def source_element_written(a: wp.array[float], x: wp.array2d[float], out_a: wp.array[float],
                           out_b: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    ta[1] = 2.5 * ta[2]
    wp.tile_store(out_a, ta)
    wp.tile_store(out_b, wp.tile_map(wp.mul, b, wp.tile_load(x, shape=(3, 4))))


@wp.kernel
def source_accumulated(a: wp.array[float], y: wp.array2d[float], x: wp.array2d[float], out_b: wp.array2d[float]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(2, 4))
    for k in range(3):
        ta += wp.tile_load(y[k], shape=4)
    c = b + wp.tile_load(x, shape=(2, 4))
    wp.tile_store(out_b, c * c)


@wp.kernel
def row_view_broadcast(t_in: wp.array2d[float], out_t: wp.array2d[float], out_b: wp.array2d[float]):
    t = wp.tile_load(t_in, shape=(3, 4))
    row = wp.tile_view(t, offset=(1, 0), shape=(1, 4))
    b = wp.tile_broadcast(row, shape=(3, 4))
    t[1, 2] = t[0, 0] * t[2, 3]
    wp.tile_store(out_t, t)
    wp.tile_store(out_b, b)


@wp.kernel
def struct_source_accumulated(a: wp.array[Particle], x: wp.array2d[Particle], out_b: wp.array2d[Particle]):
    ta = wp.tile_load(a, shape=4)
    b = wp.tile_broadcast(ta, shape=(3, 4))
    ta += wp.tile_load(a, shape=4)
    wp.tile_store(out_b, b + wp.tile_load(x, shape=(3, 4)))


@wp.kernel
def view_of_view_written(t_in: wp.array2d[float], out_t: wp.array2d[float], out_b: wp.array2d[float]):
    t = wp.tile_load(t_in, shape=(3, 4))
    row = t[1]
    pair = row[1:3]
    b = wp.tile_broadcast(row, shape=(2, 4))
    pair[0] = pair[1] * 3.0
    wp.tile_store(out_t, t)
    wp.tile_store(out_b, b)
