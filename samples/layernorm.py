"""LayerNorm over rows of a (rows, 256) matrix with learned scale and shift."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

ROWS = 4
COLS = 256
EPS = 1.0e-5


@wp.func
def rsqrt_eps(v: float):
    return 1.0 / wp.sqrt(v + EPS)


@wp.kernel
def layernorm(X: wp.array2d(dtype=float), gamma: wp.array1d(dtype=float), beta: wp.array1d(dtype=float),
              Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(ROWS, COLS), offset=(i * ROWS, 0))
    mean = wp.tile_sum(x, axis=1) / float(COLS)
    xc = x - wp.tile_broadcast(wp.tile_reshape(mean, shape=(ROWS, 1)), shape=(ROWS, COLS))
    var = wp.tile_sum(xc * xc, axis=1) / float(COLS)
    rstd = wp.tile_broadcast(wp.tile_reshape(wp.tile_map(rsqrt_eps, var), shape=(ROWS, 1)), shape=(ROWS, COLS))
    g = wp.tile_broadcast(wp.tile_load(gamma, shape=(COLS,)), shape=(ROWS, COLS))
    b = wp.tile_broadcast(wp.tile_load(beta, shape=(COLS,)), shape=(ROWS, COLS))
    wp.tile_store(Y, xc * rstd * g + b, offset=(i * ROWS, 0))


def reference(X, gamma, beta):
    mean = X.mean(axis=1, keepdims=True)
    var = ((X - mean) ** 2).mean(axis=1, keepdims=True)
    return (X - mean) / np.sqrt(var + EPS) * gamma + beta


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "layernorm"))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((999, COLS)).astype(np.float32) * 3 + 1
    gamma = rng.standard_normal(COLS).astype(np.float32)
    beta = rng.standard_normal(COLS).astype(np.float32)
    Y = np.zeros_like(X)
    mod.layernorm.launch_tiled(dim=(X.shape[0] + ROWS - 1) // ROWS, inputs=[X, gamma, beta, Y])
    assert np.allclose(Y, reference(X, gamma, beta), rtol=1e-4, atol=1e-4), "layernorm mismatch"
    print("layernorm ok")
