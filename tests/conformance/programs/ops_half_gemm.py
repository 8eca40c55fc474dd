"""A half-precision GEMM in Warp's idiom: one generic kernel (array2d[Any]) with a half overload,
the accumulator a half tile of the operands' dtype, K walked in steps of BK. Warp's CPU rounds to
half after every multiply-add; tilec sums each step's products in float32 and rounds once, so the
results agree to a few half ulps (the cases' tolerance), not bit for bit."""
from typing import Any

import warp as wp

BM = wp.constant(8)
BN = wp.constant(4)
BK = wp.constant(8)


@wp.kernel
def gemm_steps(a: wp.array2d[Any], b: wp.array2d[Any], c: wp.array2d[Any]):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(BM, BN), dtype=a.dtype)
    for k in range(a.shape[1] // BK):
        ta = wp.tile_load(a, shape=(BM, BK), offset=(i * BM, k * BK))
        tb = wp.tile_load(b, shape=(BK, BN), offset=(k * BK, j * BN))
        wp.tile_matmul(ta, tb, acc)
    wp.tile_store(c, acc, offset=(i * BM, j * BN))


wp.overload(gemm_steps, {"a": wp.array2d[wp.float16], "b": wp.array2d[wp.float16], "c": wp.array2d[wp.float16]})
