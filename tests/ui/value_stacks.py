import warp as wp


@wp.kernel
def stacks(a: wp.array[wp.vec3], d: wp.array[wp.vec3d]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=8, dtype=wp.vec3)
    wp.tile_stack_push(s, 1.0, True)  # ERROR TC0201: `value` must be a vec3f for a stack of vec3f, got a float32
    wp.tile_stack_push(s, d[lane], True)  # ERROR TC0201: got a vec3d
    wp.tile_stack_push(s, a[lane], lane)  # ERROR TC0203: `has_value` must be a bool
    t = wp.tile_stack(capacity=8, dtype=wp.array)  # ERROR TC0303: `dtype` is not a dtype
