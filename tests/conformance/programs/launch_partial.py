"""SIMT launches (wp.launch) of tile kernels whose last block is partial: the number of threads is
not a multiple of block_dim, so the last block runs with the threads left. Tile element e belongs
to thread e % block_dim; the missing threads' elements take no part in stores, reductions and scans."""
import warp as wp


@wp.kernel
def lane_energy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    energy = wp.tile_sum(wp.tile(v * v))
    y[i] = wp.sin(v) * energy[0]


@wp.kernel
def lane_squash(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile_map(wp.tanh, wp.tile(v) * 2.0)
    y[i] = wp.untile(t) + 0.5 * v


@wp.kernel
def lane_peak(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    peak = wp.tile_max(wp.tile(v))
    y[i] = v - peak[0]


@wp.kernel
def lane_accumulate(x: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    wp.tile_atomic_add(acc, wp.tile(v * 3.0))


@wp.kernel
def grid_energy(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    r, c = wp.tid()
    v = x[r, c]
    energy = wp.tile_sum(wp.tile(v * v))
    y[r, c] = v * energy[0] + wp.float(r * 10 + c)


@wp.kernel
def column_sums(x: wp.array2d(dtype=float), s: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(16, 8))
    wp.tile_store(s, wp.tile_sum(t * t, axis=0))


@wp.kernel
def row_folds(x: wp.array2d(dtype=float), p: wp.array(dtype=float), lo: wp.array(dtype=float),
              hi: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(16, 8))
    wp.tile_store(p, wp.tile_reduce(wp.mul, t, axis=1))
    wp.tile_store(lo, wp.tile_reduce(wp.min, t, axis=1))
    wp.tile_store(hi, wp.tile_reduce(wp.max, t, axis=1))


@wp.kernel
def wide_row_folds(x: wp.array2d(dtype=float), p: wp.array(dtype=float), lo: wp.array(dtype=float),
                   hi: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(8, 16))
    wp.tile_store(p, wp.tile_reduce(wp.mul, t, axis=1))
    wp.tile_store(lo, wp.tile_reduce(wp.min, t, axis=1))
    wp.tile_store(hi, wp.tile_reduce(wp.max, t, axis=1))


@wp.kernel
def running_total(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=64)
    wp.tile_store(y, wp.tile_scan_inclusive(wp.tile_map(wp.exp, t)))


@wp.kernel
def scaled_copy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=48)
    wp.tile_store(y, wp.tile_map(wp.sin, t) * 2.0)
