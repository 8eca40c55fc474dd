"""A Warp program ported to tilec by changing one line: `import warp as wp` became
`import tilec as wp`. The kernels are written as Warp's users write them: subscript array
annotations, a dtype alias, a @wp.func with a return annotation, wp.static, assert, and bitwise
updates of array elements. tests/test_annotations.py checks that the Warp spelling of the import
compiles to the same code, and tests/conformance runs the same idioms against Warp itself."""
import numpy as np

import tilec as wp  # the one change: was `import warp as wp`

ROWS = 8
COLS = 64
dt = wp.float32
KEEP = 0xF0


@wp.func
def gelu(x: dt) -> dt:
    return 0.5 * x * (1.0 + wp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@wp.kernel
def gelu_rows(a: wp.array2d[dt], out: wp.array[dt]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(ROWS, wp.static(COLS)), offset=(i * ROWS, 0))
    wp.tile_store(out, wp.tile_sum(wp.tile_map(gelu, t) * t, axis=1), offset=i * ROWS)


@wp.kernel
def masked_scale(flags: wp.array[wp.uint32], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    assert i < x.shape[0]
    flags[i] &= wp.uint32(KEEP)
    flags[i] |= wp.uint32(1)
    y[i] = x[i] * float(flags[i] >> wp.uint32(4))


def gelu_reference(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


if __name__ == "__main__":
    import os

    import tilec

    mod = tilec.load(os.path.join(os.environ.get("TILEC_BUILD", "build"), "warp_port"))
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4 * ROWS, COLS)).astype(np.float32)
    out = np.zeros(4 * ROWS, np.float32)
    mod.gelu_rows.launch_tiled(dim=4, inputs=[A, out])  # as wp.launch_tiled(gelu_rows, dim=4, ...)
    assert np.allclose(out, (gelu_reference(A) * A).sum(axis=1), rtol=1e-4, atol=1e-4), "gelu_rows mismatch"
    flags = rng.integers(0, 2**32, 100, dtype=np.uint32)
    x = rng.standard_normal(100).astype(np.float32)
    y = np.zeros_like(x)
    mod.masked_scale.launch(dim=100, inputs=[flags.copy(), x, y])  # as wp.launch(masked_scale, dim=100, ...)
    assert np.allclose(y, x * (((flags & 0xF0) | 1) >> 4)), "masked_scale mismatch"
    print("warp_port ok")
