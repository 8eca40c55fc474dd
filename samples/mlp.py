"""A two-layer MLP, Y = relu(X @ W1 + b1) @ W2 + b2, TB rows of the batch per block."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

TB = 16
DIN = 64
HID = 64
DOUT = 32


@wp.func
def relu(x: float):
    return wp.max(x, 0.0)


@wp.kernel
def mlp(X: wp.array2d(dtype=float), W1: wp.array2d(dtype=float), b1: wp.array1d(dtype=float),
        W2: wp.array2d(dtype=float), b2: wp.array1d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(TB, DIN), offset=(i * TB, 0))
    h = wp.tile_matmul(x, wp.tile_load(W1, shape=(DIN, HID)))
    h = wp.tile_map(relu, h + wp.tile_broadcast(wp.tile_load(b1, shape=(HID,)), shape=(TB, HID)))
    y = wp.tile_matmul(h, wp.tile_load(W2, shape=(HID, DOUT)))
    y = y + wp.tile_broadcast(wp.tile_load(b2, shape=(DOUT,)), shape=(TB, DOUT))
    wp.tile_store(Y, y, offset=(i * TB, 0))


def reference(X, W1, b1, W2, b2):
    return np.maximum(X @ W1 + b1, 0) @ W2 + b2


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "mlp"))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, DIN)).astype(np.float32)
    W1 = (rng.standard_normal((DIN, HID)) / 8).astype(np.float32)
    b1 = rng.standard_normal(HID).astype(np.float32)
    W2 = (rng.standard_normal((HID, DOUT)) / 8).astype(np.float32)
    b2 = rng.standard_normal(DOUT).astype(np.float32)
    Y = np.zeros((100, DOUT), np.float32)
    mod.mlp.launch_tiled(dim=(100 + TB - 1) // TB, inputs=[X, W1, b1, W2, b2, Y])
    assert np.allclose(Y, reference(X, W1, b1, W2, b2), rtol=1e-4, atol=1e-4), "mlp mismatch"
    print("mlp ok")
