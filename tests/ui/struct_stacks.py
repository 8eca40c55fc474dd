import warp as wp


@wp.struct
class Item:
    x: float
    k: int


@wp.struct
class Other:
    x: float


@wp.kernel(enable_backward=False)
def stacks(items: wp.array[Item], others: wp.array[Other], out: wp.array[Item]):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=8, dtype=Item)
    wp.tile_stack_push(s, others[lane], True)  # ERROR TC0201: operands hold different structs
    wp.tile_stack_push(s, 1.0, True)  # ERROR TC0201: `value` must be a `Item` struct, got a float32
    out[0] = wp.tile_stack_pop(s)[0]  # ERROR TC0401: a pop from a stack of structs used as a value
    a, b, c = wp.tile_stack_pop(s)  # ERROR TC0303: cannot unpack a pop from a stack of structs


@wp.func
def count_items(s: wp.tile_stack(dtype=Item, capacity=8)) -> int:  # ERROR TC0409: a tile stack parameter holds scalars, vectors or matrices, not a `Item` struct
    return wp.tile_stack_count(s)
