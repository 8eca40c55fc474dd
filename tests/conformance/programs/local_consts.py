"""Locals assigned once from a literal are compile-time constants where Warp folds them: tile_arange
bounds and tile shapes; a local shadowing a module constant stands for its own value."""
import warp as wp

WIDTH = wp.constant(5)


@wp.kernel
def ramps(src: wp.array(dtype=float), out: wp.array(dtype=float), n: wp.array(dtype=int)):
    start = 2
    stop = 10
    count = 8
    WIDTH = 8  # shadows the module constant: 8 here
    r = wp.tile_arange(start, stop, dtype=float)
    x = wp.tile_load(src, shape=count)
    y = wp.tile_load(src, shape=WIDTH, offset=stop - start)
    wp.tile_store(out, r * x + y)
    n[0] = stop * 100 + count
