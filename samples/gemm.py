"""Tiled GEMM, C = A @ B, looping over K in TILE_K steps (Warp tile API)."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

TILE_M = wp.constant(32)
TILE_N = wp.constant(32)
TILE_K = wp.constant(32)


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE_M, TILE_N), dtype=float)
    count = (A.shape[1] + TILE_K - 1) // TILE_K
    for k in range(count):
        a = wp.tile_load(A, shape=(TILE_M, TILE_K), offset=(i * TILE_M, k * TILE_K))
        b = wp.tile_load(B, shape=(TILE_K, TILE_N), offset=(k * TILE_K, j * TILE_N))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE_M, j * TILE_N))


if __name__ == "__main__":
    M, N, K = 100, 70, 90
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "gemm"))

    mod.gemm.launch_tiled(dim=((M + 31) // 32, (N + 31) // 32), inputs=[A, B, C], device="cpu")
    assert np.allclose(C, A @ B, atol=1e-4), "gemm mismatch"
    print("gemm ok")
