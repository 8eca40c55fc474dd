"""Block stacks of vectors and matrices. Which thread gets which slot is unspecified, so these
kernels report what does not depend on it: counts and sums of what came out."""
import warp as wp

CAP = 24


@wp.kernel
def keep_positive(points: wp.array[wp.vec3], total: wp.array[wp.vec3], counts: wp.array[int]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=wp.vec3)
    p = points[lane]
    slot = wp.tile_stack_push(s, p * 2.0, p[0] > 0.0)
    if slot >= 0:
        wp.atomic_add(counts, 0, 1)
    while wp.tile_stack_count(s) > 0:
        v, taken = wp.tile_stack_pop(s)
        if taken >= 0:
            wp.atomic_add(total, 0, v)
            wp.atomic_add(counts, 1, 1)
    counts[2] = wp.tile_stack_count(s)


@wp.kernel
def matrix_rounds(mats: wp.array[wp.mat22], out: wp.array[wp.mat22], counts: wp.array[wp.vec2i]):
    b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=wp.mat22)
    for r in range(2):
        m = mats[b * 32 + lane]
        wp.tile_stack_push(s, m * float(r + 1), lane % (r + 2) == 0)
    m, slot = wp.tile_stack_pop(s)
    if slot >= 0:
        wp.atomic_add(out, b, m)
    wp.tile_stack_clear(s)
    if lane == 0:
        counts[b] = wp.vec2i(wp.tile_stack_count(s), CAP)


@wp.func
def drain(s: wp.tile_stack(dtype=wp.vec3, capacity=CAP)) -> wp.vec3:
    total = wp.vec3()
    while wp.tile_stack_count(s) > 0:
        v, slot = wp.tile_stack_pop(s)
        if slot >= 0:
            total += v
    return total


@wp.kernel
def drained_by_func(points: wp.array[wp.vec3], total: wp.array[wp.vec3]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=wp.vec3)
    wp.tile_stack_push(s, points[lane], lane < 20)
    wp.atomic_add(total, 0, drain(s))
