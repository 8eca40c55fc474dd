"""Benchmark MLP 1024 x 256 -> 256 -> 256 with ReLU: 16 batch rows per block, weights read in
32-row chunks (Warp's CPU tile arena is 256 KiB; a whole 256x256 weight tile does not fit)."""
import warp as wp

TB = 16
D = 256
KC = 32


@wp.func
def relu(x: float):
    return wp.max(x, 0.0)


@wp.kernel
def mlp(X: wp.array2d(dtype=float), W1: wp.array2d(dtype=float), b1: wp.array2d(dtype=float),
        W2: wp.array2d(dtype=float), b2: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    h = wp.tile_zeros(shape=(TB, D), dtype=float)
    for k in range(D // KC):
        x = wp.tile_load(X, shape=(TB, KC), offset=(i * TB, k * KC))
        wp.tile_matmul(x, wp.tile_load(W1, shape=(KC, D), offset=(k * KC, 0)), h)
    r = wp.tile_map(relu, h + wp.tile_broadcast(wp.tile_load(b1, shape=(1, D)), shape=(TB, D)))
    y = wp.tile_zeros(shape=(TB, D), dtype=float)
    for k in range(D // KC):
        part = wp.tile_view(r, offset=(0, k * KC), shape=(TB, KC))
        wp.tile_matmul(part, wp.tile_load(W2, shape=(KC, D), offset=(k * KC, 0)), y)
    wp.tile_store(Y, y + wp.tile_broadcast(wp.tile_load(b2, shape=(1, D)), shape=(TB, D)), offset=(i * TB, 0))
