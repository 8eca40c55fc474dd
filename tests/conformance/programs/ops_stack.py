"""Block stacks (wp.tile_stack): every thread pushes and pops together. Which thread gets which slot
is unspecified (Warp's CPU blocks and tilec assign them in different orders), so these kernels
report what does not depend on it: counts, dropped pushes, sums and histograms of what came out."""
import warp as wp

CAP = wp.constant(16)
ITEMS = wp.constant(21)


@wp.kernel
def compact(data: wp.array(dtype=int), hist: wp.array(dtype=int), num: wp.array(dtype=int)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=int)
    for base in range(0, ITEMS, wp.block_dim()):
        i = base + lane
        value = int(-1)
        keep = False
        if i < ITEMS:
            value = data[i]
            keep = value > 5
        slot = wp.tile_stack_push(s, value, keep)
        if keep and slot < 0:
            wp.atomic_add(num, 1, 1)  # dropped: the stack was full
    if lane == 0:
        num[0] = wp.tile_stack_count(s)
    while wp.tile_stack_count(s) > 0:
        value, slot = wp.tile_stack_pop(s)
        if slot >= 0:
            wp.atomic_add(hist, value, 1)
    num[2] = wp.tile_stack_count(s)


@wp.func
def push_scaled(s: wp.tile_stack(dtype=float, capacity=32), v: float):
    wp.tile_stack_push(s, v, True)
    wp.tile_stack_push(s, v * 2.0, v > 0.0)


@wp.kernel
def through_a_func(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float),
                   n: wp.array(dtype=int)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=32, dtype=float)
    v = x[lane]
    push_scaled(s, v)
    n[0] = wp.tile_stack_count(s)
    while wp.tile_stack_count(s) > 0:
        w, slot = wp.tile_stack_pop(s)
        if slot >= 0:
            wp.atomic_add(y, 0, wp.abs(w))
    wp.tile_stack_clear(s)
    n[1] = wp.tile_stack_count(s)
    # a pop of an empty stack is harmless: slot -1 everywhere
    w, slot = wp.tile_stack_pop(s)
    if slot < 0:
        wp.atomic_add(n, 2, 1)
    z[lane] = v * v  # the adjoint of the rest of the kernel is unaffected by the stack


@wp.kernel
def flagged_per_block(flags: wp.array(dtype=int), counts: wp.array(dtype=int)):
    # a kernel whose only block-shared value is a stack: launched as wp.launch(dim, block_dim=B),
    # each run of B threads shares one stack (not one stack per thread)
    t = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=int)
    wp.tile_stack_push(s, t, flags[t] > 0)
    counts[t] = wp.tile_stack_count(s)
