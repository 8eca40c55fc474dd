"""A tile row picked by a run-time index: a negative one counts from the end, as numpy's does (and
so does its gradient)."""
import warp as wp

ROWS = wp.constant(6)
COLS = wp.constant(8)


@wp.kernel
def pick_row(src: wp.array2d(dtype=float), which: int, dst: wp.array(dtype=float)):
    t = wp.tile_load(src, shape=(ROWS, COLS))
    r = which
    wp.tile_store(dst, wp.tile_map(wp.sin, t[r, :]) * 2.0)
