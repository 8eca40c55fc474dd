"""Tiles of @wp.struct elements: every form Warp 1.19 takes that tilec lowers leaf by leaf."""
import warp as wp

N = 8


@wp.struct
class Sample:
    weight: float
    pos: wp.vec3


@wp.func
def norm2(s: Sample) -> float:
    return s.weight * wp.dot(s.pos, s.pos)


@wp.func
def shifted(s: Sample, d: wp.vec3) -> Sample:
    out = Sample()
    out.weight = s.weight
    out.pos = s.pos + d
    return out


@wp.kernel
def struct_tiles(src: wp.array[Sample], keys: wp.array[int], dst: wp.array[Sample], total: wp.array[Sample],
                 sq: wp.array[float], grid: wp.array2d[Sample]):
    _b, lane = wp.tid()
    t = wp.tile_load(src, shape=N, storage="shared")
    moved = wp.tile_map(shifted, t, wp.vec3(1.0, 0.0, 0.0))
    wp.tile_store(sq, wp.tile_map(norm2, moved))
    acc = wp.tile_zeros(shape=N, dtype=Sample)
    acc += t + moved
    acc -= t
    acc[0] = t[N - 1]
    wp.tile_store(dst, acc)
    wp.tile_atomic_add(total, wp.tile_sum(t))
    k = wp.tile_load(keys, shape=N)
    values = wp.tile_load(src, shape=N)
    wp.tile_sort(k, values)
    g = wp.tile_reshape(values, shape=(2, 4))
    wp.tile_store(grid, wp.tile_transpose(g))
    first = wp.tile_extract(t, 0)
    filled = wp.tile_full(N, value=first, dtype=Sample)
    wp.tile_store(dst, filled, offset=N)
    one = wp.tile_view(t, offset=(2,), shape=(1,))
    wp.tile_store(dst, wp.tile_broadcast(one, shape=(N,)), offset=2 * N)
    if lane == 0:
        sq[N] = t[3].weight
