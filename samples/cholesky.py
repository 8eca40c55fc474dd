"""A batch of SPD systems A x = y solved by Cholesky factorisation, one system per block."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

N = 8


@wp.kernel
def cholesky_solve(A: wp.array3d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64),
                   X: wp.array2d(dtype=wp.float64)):
    b = wp.tid()
    a = wp.tile_reshape(wp.tile_load(A, shape=(1, N, N), offset=(b, 0, 0)), shape=(N, N))
    y = wp.tile_reshape(wp.tile_load(Y, shape=(1, N), offset=(b, 0)), shape=(N,))
    L = wp.tile_cholesky(a)
    x = wp.tile_cholesky_solve(L, y)
    wp.tile_store(X, wp.tile_reshape(x, shape=(1, N)), offset=(b, 0))


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "cholesky"))
    rng = np.random.default_rng(0)
    M = rng.standard_normal((20, N, N))
    A = M @ M.transpose(0, 2, 1) + N * np.eye(N)
    Y = rng.standard_normal((20, N))
    X = np.zeros_like(Y)
    mod.cholesky_solve.launch_tiled(dim=20, inputs=[A, Y, X])
    assert np.allclose(X, np.linalg.solve(A, Y[..., None])[..., 0], rtol=1e-10), "cholesky mismatch"
    print("cholesky ok")
