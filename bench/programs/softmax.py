"""Benchmark row softmax of a (rows, 256) matrix, one row per block (Warp 1.19 has no axis max)."""
import numpy as np
import warp as wp

COLS = 256


@wp.kernel
def softmax(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, COLS), offset=(i, 0))
    e = wp.tile_map(wp.exp, x - wp.tile_broadcast(wp.tile_max(x), shape=(1, COLS)))
    s = wp.tile_broadcast(wp.tile_sum(e), shape=(1, COLS))
    wp.tile_store(Y, e / s, offset=(i, 0))


def reference(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
