"""Row softmax of a (rows, 256) matrix, ROWS rows per block, numerically stable."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

ROWS = 4
COLS = 256


@wp.kernel
def softmax(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(ROWS, COLS), offset=(i * ROWS, 0))
    m = wp.tile_broadcast(wp.tile_reshape(wp.tile_max(x, axis=1), shape=(ROWS, 1)), shape=(ROWS, COLS))
    e = wp.tile_map(wp.exp, x - m)
    s = wp.tile_broadcast(wp.tile_reshape(wp.tile_sum(e, axis=1), shape=(ROWS, 1)), shape=(ROWS, COLS))
    wp.tile_store(Y, e / s, offset=(i * ROWS, 0))


def reference(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "softmax"))
    X = np.random.default_rng(0).standard_normal((1001, COLS)).astype(np.float32) * 4
    Y = np.zeros_like(X)
    mod.softmax.launch_tiled(dim=(X.shape[0] + ROWS - 1) // ROWS, inputs=[X, Y])
    assert np.allclose(Y, reference(X), rtol=1e-5, atol=1e-6), "softmax mismatch"
    print("softmax ok")
