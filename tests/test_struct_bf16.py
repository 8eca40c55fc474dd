"""Structs holding a bfloat16 vector field (Warp has no named bfloat16 vector type: it is
`wp.types.vector(length=3, dtype=wp.bfloat16)`): an array of them read element-wise and written
whole, and loaded and stored as a tile, on the CPU and the CUDA emulation, forward bit for bit
against numpy with bfloat16 rounding modelled, and the adjoint of the float32 parts against float64
finite differences (Warp 1.19's results: conformance cases structs_bf16_*). bfloat16 fields are
their raw bits (uint16) in numpy, as Warp's structured .numpy()."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from test_annotations import from_bf16, to_bf16

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''import warp as wp

vec3bf = wp.types.vector(length=3, dtype=wp.bfloat16)


@wp.struct
class Sample:
    v: vec3bf
    w: float


@wp.kernel
def mix(src: wp.array(dtype=Sample), x: wp.array(dtype=float), dst: wp.array(dtype=Sample),
        y: wp.array(dtype=float)):
    i = wp.tid()
    s = src[i]
    r = Sample()
    r.v = s.v * wp.bfloat16(2.0)
    r.w = s.w + 1.0
    dst[i] = r
    y[i] = float(s.v[0]) * x[i] * s.w + float(s.v[2])


@wp.kernel(enable_backward=False)
def copy_tiles(src: wp.array(dtype=Sample), dst: wp.array(dtype=Sample)):
    i = wp.tid()
    t = wp.tile_load(src, shape=8, offset=i * 8)
    wp.tile_store(dst, t, offset=i * 8)
'''
N = 16


def inputs(dtype):
    rng = np.random.default_rng(13)
    src = np.zeros(N, dtype)
    src["v"] = to_bf16(rng.standard_normal((N, 3)) * 3.0)
    src["w"] = rng.standard_normal(N).astype(np.float32)
    return src, rng.standard_normal(N).astype(np.float32)


def model(src, x):
    """(dst.v bits, dst.w, y) in float64 from the stored bfloat16 values; y rounds as float32 does."""
    v = from_bf16(src["v"]).astype(np.float64)
    w, x = src["w"].astype(np.float64), np.asarray(x, np.float64)
    return to_bf16(v * 2.0), w + 1.0, v[:, 0] * x * w + v[:, 2]


@pytest.fixture(scope="module")
def layout():
    return build(SOURCE, "struct_bf16", block_dim=8).Sample.numpy_dtype()


def test_layout_is_warps(layout):
    assert layout == np.dtype({"names": ["v", "w"], "formats": [("<u2", (3,)), "<f4"], "offsets": [0, 8],
                               "itemsize": 12})


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_forward_and_adjoint(device):
    mod = build(SOURCE, "struct_bf16", block_dim=8, target=device)
    src, x = inputs(mod.Sample.numpy_dtype())
    dst, y = mod.Sample.zeros(N), np.zeros(N, np.float32)
    mod.mix.launch(dim=N, inputs=[src, x, dst, y], device=device)
    v_bits, w, ref_y = model(src, x)
    np.testing.assert_array_equal(dst["v"], v_bits)  # times 2 is exact in bfloat16
    np.testing.assert_allclose(dst["w"], w, rtol=1e-6)
    np.testing.assert_allclose(y, ref_y, rtol=1e-5, atol=1e-5)

    seed = np.linspace(0.5, 2.0, N).astype(np.float32)
    g_src, g_x = mod.Sample.zeros(N), np.zeros(N, np.float32)
    mod.mix.launch(dim=N, inputs=[src, x, dst, y], adj_inputs=[g_src, g_x, mod.Sample.zeros(N), seed.copy()],
                   adjoint=True, device=device)
    eps = 1e-3  # y is linear in x and in w: central differences are exact up to rounding
    x64 = x.astype(np.float64)
    fd_x = (model(src, x64 + eps)[2] - model(src, x64 - eps)[2]) / (2 * eps)
    np.testing.assert_allclose(g_x, seed * fd_x, rtol=1e-5, atol=1e-5)
    hi, lo = src.copy(), src.copy()
    hi["w"] += eps
    lo["w"] -= eps
    fd_w = (model(hi, x)[2] - model(lo, x)[2]) / (hi["w"] - lo["w"]).astype(np.float64)
    np.testing.assert_allclose(g_src["w"], seed * fd_w, rtol=1e-4, atol=1e-4)

    copied = mod.Sample.zeros(N)
    mod.copy_tiles.launch_tiled(dim=N // 8, inputs=[src, copied], block_dim=8, device=device)
    assert copied.tobytes() == src.tobytes()

