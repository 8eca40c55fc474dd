"""Single-head attention, O = softmax(Q K^T * scale) V, TQ query rows per block."""
import numpy as np

try:
    import warp as wp
except ImportError:  # run as a script without Warp: tilec's inert API
    import tilec as wp

TQ = 16
S = 64
D = 32
SCALE = 0.17677669529663687  # 1 / sqrt(D)


@wp.kernel
def attention(Q: wp.array2d(dtype=float), K: wp.array2d(dtype=float), V: wp.array2d(dtype=float),
              O: wp.array2d(dtype=float)):
    i = wp.tid()
    q = wp.tile_load(Q, shape=(TQ, D), offset=(i * TQ, 0))
    k = wp.tile_load(K, shape=(S, D))
    scores = wp.tile_matmul(q, wp.tile_transpose(k)) * SCALE
    m = wp.tile_broadcast(wp.tile_reshape(wp.tile_max(scores, axis=1), shape=(TQ, 1)), shape=(TQ, S))
    p = wp.tile_map(wp.exp, scores - m)
    denom = wp.tile_broadcast(wp.tile_reshape(wp.tile_sum(p, axis=1), shape=(TQ, 1)), shape=(TQ, S))
    out = wp.tile_matmul(p / denom, wp.tile_load(V, shape=(S, D)))
    wp.tile_store(O, out, offset=(i * TQ, 0))


def reference(Q, K, V):
    s = Q @ K.T * SCALE
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ V


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "attention"))
    rng = np.random.default_rng(0)
    Q, K, V = (rng.standard_normal((n, D)).astype(np.float32) for n in (50, S, S))
    O = np.zeros_like(Q)
    mod.attention.launch_tiled(dim=(50 + TQ - 1) // TQ, inputs=[Q, K, V, O])
    assert np.allclose(O, reference(Q, K, V), rtol=1e-4, atol=1e-5), "attention mismatch"
    print("attention ok")
