"""tile_axpy onto a broadcast tile (issue #13, Warp's test_tile_fused_ops `axpy_broadcast_dest`):
Warp 1.19 adds through the broadcast with atomics, so each element of the source tile gains the
sum of the additions made to the elements aliasing it, and the broadcast reads the new source.
tilec does the same (frontend/lower_views.py accumulate_back) and differentiates it; the result
is compared with Warp's on the CPU and the CUDA emulation, the gradient with the float64 rule.
`b += x` onto a broadcast stays a diagnostic (tests/ui/broadcast_alias.py): Warp 1.19 does not
add atomically there (measured: the last row's addition wins), a race on a GPU."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, import_under_warp

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def bias_axpy(bias_in: wp.array(dtype=float), src_in: wp.array2d(dtype=float), out: wp.array2d(dtype=float),
              bias_out: wp.array(dtype=float)):
    bias = wp.tile_load(bias_in, shape=4, storage="shared")
    dest = wp.tile_broadcast(bias, shape=(3, 4))
    src = wp.tile_load(src_in, shape=(3, 4))
    wp.tile_axpy(2.0, src, dest)
    wp.tile_store(out, dest)
    wp.tile_store(bias_out, bias)


@wp.kernel
def column_axpy(col_in: wp.array2d(dtype=float), src_in: wp.array3d(dtype=float), out: wp.array3d(dtype=float)):
    col = wp.tile_load(col_in, shape=(2, 1))
    dest = wp.tile_broadcast(col, shape=(3, 2, 5))
    wp.tile_axpy(0.5, wp.tile_load(src_in, shape=(3, 2, 5)), dest)
    wp.tile_store(out, dest)
'''


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_axpy_through_a_broadcast_adds_into_its_source_as_in_warp(device, tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    bias, src = rng.standard_normal(4).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    col, src3 = rng.standard_normal((2, 1)).astype(np.float32), rng.standard_normal((3, 2, 5)).astype(np.float32)
    wp, prog = import_under_warp(SOURCE, "broadcast_axpy", tmp_path, monkeypatch)
    w = [wp.array(a, device="cpu") for a in (bias, src, np.zeros((3, 4), np.float32), np.zeros(4, np.float32))]
    wp.launch_tiled(prog.bias_axpy, dim=1, inputs=w, block_dim=16, device="cpu")
    w3 = [wp.array(a, device="cpu") for a in (col, src3, np.zeros((3, 2, 5), np.float32))]
    wp.launch_tiled(prog.column_axpy, dim=1, inputs=w3, block_dim=16, device="cpu")
    want = bias.astype(np.float64) + 2 * src.astype(np.float64).sum(axis=0)
    np.testing.assert_allclose(w[3].numpy(), want, rtol=1e-5)  # Warp's: atomics into the source
    m = build(SOURCE, "broadcast_axpy", block_dim=16, target="cpu" if device == "cpu" else "cuda-emu")
    out, bias_out = np.zeros((3, 4), np.float32), np.zeros(4, np.float32)
    m.bias_axpy.launch_tiled(dim=1, inputs=[bias, src, out, bias_out], block_dim=16, device=device)
    np.testing.assert_allclose(bias_out, w[3].numpy(), rtol=1e-5)
    np.testing.assert_allclose(out, w[2].numpy(), rtol=1e-5)
    out3 = np.zeros((3, 2, 5), np.float32)
    m.column_axpy.launch_tiled(dim=1, inputs=[col, src3, out3], block_dim=16, device=device)
    np.testing.assert_allclose(out3, w3[2].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out3[0, :, 0], col[:, 0] + 0.5 * src3.astype(np.float64).sum(axis=(0, 2)), rtol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_its_gradient_follows_the_sum(device):
    """L = sum(g * out) + sum(h * bias_out) with out[i, j] = bias_out[j] = bias[j] + 2 sum_r src[r, j]:
    dL/dbias[j] = sum_i g[i, j] + h[j], dL/dsrc[r, j] = 2 (sum_i g[i, j] + h[j])."""
    rng = np.random.default_rng(4)
    bias, src = rng.standard_normal(4).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    g, h = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    m = build(SOURCE, "broadcast_axpy", block_dim=16, target="cpu" if device == "cpu" else "cuda-emu")
    dbias, dsrc = np.zeros(4, np.float32), np.zeros((3, 4), np.float32)
    m.bias_axpy.launch_tiled(dim=1, inputs=[bias, src, np.zeros((3, 4), np.float32), np.zeros(4, np.float32)],
                             adj_inputs=[dbias, dsrc, g.copy(), h.copy()], adjoint=True, block_dim=16, device=device)
    per_column = g.astype(np.float64).sum(axis=0) + h
    np.testing.assert_allclose(dbias, per_column, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dsrc, np.broadcast_to(2 * per_column, (3, 4)), rtol=1e-5, atol=1e-6)
