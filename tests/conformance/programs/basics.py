import warp as wp

TILE = 64
ROWS = 8
T = 16


@wp.kernel
def tile_scale(x: wp.array(dtype=float), y: wp.array(dtype=float), s: float):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.sin, t) * s, offset=i * TILE)


@wp.kernel
def rowsum(a: wp.array2d(dtype=float), r: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(ROWS, 16), offset=(i * ROWS, 0))
    s = wp.tile_sum(t * t, axis=1)
    wp.tile_store(r, s, offset=i * ROWS)


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range(2):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * T, j * T))
