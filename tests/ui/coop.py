import warp as wp


@wp.kernel
def coop(D: wp.array1d(dtype=float)):
    blk, i = wp.tid()
    bins = wp.tile_zeros(shape=(4, 2), dtype=float, storage="shared")
    wp.tile_scatter_add(bins, i, D[i], True)  # ERROR TC0303: tile_scatter_add: needs 2 index(es), then `value` and `has_value`
    wp.tile_scatter_add(bins, i, 0, D[i], 1)  # ERROR TC0203: `has_value` must be a bool, got an int32 scalar
    wp.tile_scatter_masked(bins, i, 0.5, 1, True, True)  # ERROR TC0303: tile_scatter_masked: too many arguments
    wp.tile_scatter_add(bins, i, 0, D[i], True, atomic=2)  # ERROR TC0303: `atomic` must be True or False, got 2
    f = wp.tile_from_thread(shape=(3,), value=D[i], thread_idx=0.5)  # ERROR TC0203: `thread_idx` must be an integer
    k = wp.tile_zeros(shape=(4,), dtype=int)
    wp.tile_bit_or_inplace(k, 1)  # ERROR TC0303: tile_bit_or_inplace: needs 1 index(es), then `value`
    wp.tile_store(D, wp.tile_view(bins, offset=(0, 0), shape=(2,)))
