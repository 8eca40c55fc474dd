"""SIMT launches (wp.launch) of tile kernels over a multi-dimensional dim whose blocks span rows:
dim's points are numbered in row-major order and each block is block_dim consecutive ones."""
import warp as wp


@wp.kernel
def rows_share_a_block(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    r, c = wp.tid()
    v = x[r, c]
    t = wp.tile(v)
    total = wp.tile_sum(t * t)
    y[r, c] = v * total[0] + wp.untile(wp.tile_scan_inclusive(t))


@wp.kernel
def rows_share_a_block_3d(x: wp.array3d(dtype=float), y: wp.array3d(dtype=float)):
    a, b, c = wp.tid()
    v = wp.sin(x[a, b, c])
    running = wp.untile(wp.tile_scan_inclusive(wp.tile(v * 2.0)))
    y[a, b, c] = running * v


@wp.kernel
def block_max_per_row_pair(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    r, c = wp.tid()
    v = x[r, c]
    peak = wp.tile_max(wp.tile(v))
    y[r, c] = v - peak[0] + wp.float(r) * 0.5 + wp.float(c)


@wp.kernel
def block_energy(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    r, c = wp.tid()
    v = x[r, c]
    energy = wp.tile_sum(wp.tile(v * v))
    y[r, c] = wp.sin(v) * energy[0]


@wp.kernel
def block_energy_3d(x: wp.array3d(dtype=float), y: wp.array3d(dtype=float)):
    a, b, c = wp.tid()
    v = x[a, b, c]
    energy = wp.tile_sum(wp.tile(v * v))
    y[a, b, c] = v * energy[0] + wp.float(a * 100 + b * 10 + c)
