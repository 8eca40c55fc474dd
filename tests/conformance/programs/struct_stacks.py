"""Block stacks of structs: every field of a struct must come out of the stack with the others. Which
thread gets which slot is unspecified, so the kernels report sums that do not depend on it, and one
(`coherent`) that mixes the fields of each popped struct: it changes if fields of different structs
came out together."""
import warp as wp

CAP = 16


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3
    tag: int


@wp.kernel(enable_backward=False)
def sift(parts: wp.array[Particle], sums: wp.array[wp.vec3], coherent: wp.array[float], counts: wp.array[int]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=Particle)
    p = parts[lane]
    wp.tile_stack_push(s, p, p.tag % 2 == 0)
    if lane == 0:
        counts[0] = wp.tile_stack_count(s)
    while wp.tile_stack_count(s) > 0:
        got, slot = wp.tile_stack_pop(s)
        if slot >= 0:
            wp.atomic_add(sums, 0, got.vel)
            wp.atomic_add(coherent, 0, got.mass * float(got.tag) + got.vel[1] * float(got.tag * got.tag))
            wp.atomic_add(counts, 1, 1)
    wp.tile_stack_clear(s)
    if lane == 0:
        counts[2] = wp.tile_stack_count(s)


@wp.kernel(enable_backward=False)
def first_of_block(parts: wp.array[Particle], out: wp.array[Particle], slots: wp.array[int]):
    b, lane = wp.tid()
    s = wp.tile_stack(capacity=4, dtype=Particle)
    wp.tile_stack_push(s, parts[b * 8 + lane], lane == 3)
    got, slot = wp.tile_stack_pop(s)
    if slot != -1:  # (which lane gets it is unspecified: Warp's CPU gives it to the last, tilec to the first)
        out[b] = got
        slots[b] = slot


@wp.kernel(enable_backward=False)
def taken_slots(parts: wp.array[Particle], stored: wp.array[int], tags: wp.array[int]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=Particle)
    if wp.tile_stack_push(s, parts[lane], parts[lane].mass > 0.0) >= 0:
        wp.atomic_add(stored, 0, 1)
    slot = wp.tile_stack_push(s, parts[lane], lane < 4)
    if slot >= 0:
        wp.atomic_add(stored, 1, 1)
    while wp.tile_stack_count(s) > 0:
        got, taken = wp.tile_stack_pop(s)
        if taken >= 0:
            wp.atomic_add(tags, got.tag, 1)
