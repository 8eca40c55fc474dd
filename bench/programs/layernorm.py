"""Benchmark LayerNorm of a (rows, 256) matrix, one row per block."""
import numpy as np
import warp as wp

COLS = 256
EPS = 1.0e-5


@wp.func
def std(v: float):
    return wp.sqrt(v + EPS)  # in a func: Warp 1.19 has no tile + scalar


@wp.kernel
def layernorm(X: wp.array2d(dtype=float), gamma: wp.array2d(dtype=float), beta: wp.array2d(dtype=float),
              Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, COLS), offset=(i, 0))
    mean = wp.tile_broadcast(wp.tile_sum(x) / float(COLS), shape=(1, COLS))
    xc = x - mean
    var = wp.tile_sum(xc * xc) / float(COLS)
    rstd = wp.tile_broadcast(wp.tile_map(std, var), shape=(1, COLS))
    wp.tile_store(Y, xc / rstd * wp.tile_load(gamma, shape=(1, COLS)) + wp.tile_load(beta, shape=(1, COLS)),
                  offset=(i, 0))


def reference(X, gamma, beta):
    mean = X.mean(axis=1, keepdims=True)
    var = ((X - mean) ** 2).mean(axis=1, keepdims=True)
    return (X - mean) / np.sqrt(var + EPS) * gamma + beta
