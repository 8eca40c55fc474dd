"""Benchmark fused elementwise map over a flat array: y = tanh(x) * x + 0.5 * x * x - 1."""
import warp as wp

N = 4096


@wp.func
def f(x: float):
    return wp.tanh(x) * x + 0.5 * x * x - 1.0


@wp.kernel
def fused(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    wp.tile_store(Y, wp.tile_map(f, x), offset=(i * N,))
