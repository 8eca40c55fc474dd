"""Both launch forms of tile kernels, several block_dims: launch_tiled(dim, B), and launch(dim, B)
where wp.tid() is the global thread index and each B consecutive threads share their tiles."""
import numpy as np
import warp as wp

TILE = 16


@wp.kernel
def block_normalize(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    s = wp.tile_sum(t * t)
    y[i] = v / wp.sqrt(s[0] + 1.0)


@wp.kernel
def untile_poly(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    u = wp.untile(t * t + t * 0.5)
    y[i] = u


@wp.kernel
def block_max_shift(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    m = wp.tile_sum(wp.tile_map(wp.exp, t))
    y[i] = v - wp.log(m[0])


@wp.kernel
def rows_exp(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i, _lane = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.exp, t) * 0.5, offset=i * TILE)


@wp.kernel
def rows_dot(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=(2, TILE), offset=(i * 2, 0))
    tb = wp.tile_load(b, shape=(2, TILE), offset=(i * 2, 0))
    wp.tile_store(out, wp.tile_sum(ta * tb, axis=1), offset=i * 2)


@wp.kernel
def lane_gather(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    row, lane = wp.tid()
    v = x[row, lane]
    t = wp.tile(v)
    total = wp.tile_sum(t)
    y[row, lane] = v * total[0]


@wp.kernel
def lane_softmax_scale(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i, lane = wp.tid()
    v = x[i, lane]
    t = wp.tile(v)
    s = wp.tile_sum(t)
    u = wp.untile(wp.tile_map(wp.exp, t))
    y[i, lane] = u * s[0]


@wp.kernel
def lane_scan(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v * v)
    y[i] = wp.untile(wp.tile_scan_inclusive(t))


@wp.kernel
def grid_blocks(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i, j, _lane = wp.tid()
    t = wp.tile_load(a, shape=(4, 4), offset=(i * 4, j * 4))
    wp.tile_store(b, wp.tile_map(wp.tanh, t) * t, offset=(i * 4, j * 4))


def run(n: int):
    """Host code: the launches tilec reads for block_dims (one instance per value)."""
    x = wp.array(np.ones(n, dtype=np.float32))
    y = wp.zeros(n, dtype=float)
    x2 = wp.array(np.ones((4, 64), dtype=np.float32))
    y2 = wp.zeros((4, 64), dtype=float)
    for bd in [16, 32, 64]:
        wp.launch(block_normalize, dim=n, inputs=[x, y], block_dim=bd)
        wp.launch(block_max_shift, dim=n, inputs=[x, y], block_dim=bd)
    wp.launch(untile_poly, dim=n, inputs=[x, y], block_dim=32)
    wp.launch(untile_poly, dim=n, inputs=[x, y], block_dim=8)
    wp.launch_tiled(rows_exp, dim=[n // TILE], inputs=[x, y], block_dim=32)
    wp.launch(rows_exp, dim=[n // TILE, 64], inputs=[x, y], block_dim=64)
    wp.launch_tiled(rows_dot, dim=4, inputs=[x2, x2, y], block_dim=16)
    wp.launch_tiled(rows_dot, dim=4, inputs=[x2, x2, y], block_dim=128)
    wp.launch(lane_gather, dim=(4, 64), inputs=[x2, y2], block_dim=64)
    wp.launch(lane_gather, dim=(4, 64), inputs=[x2, y2], block_dim=16)
    wp.launch_tiled(lane_softmax_scale, dim=4, inputs=[x2, y2], block_dim=16)
    wp.launch_tiled(lane_softmax_scale, dim=4, inputs=[x2, y2], block_dim=32)
    wp.launch(lane_scan, dim=n, inputs=[x, y], block_dim=8)
    wp.launch(lane_scan, dim=n, inputs=[x, y], block_dim=32)
    wp.launch_tiled(grid_blocks, dim=(2, 3), inputs=[x2, y2], block_dim=16)
    wp.launch_tiled(grid_blocks, dim=(2, 3), inputs=[x2, y2], block_dim=64)
