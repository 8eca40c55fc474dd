"""Warp's rint, frac, copysign and bit_count (op table: ops/elementwise.py): values against numpy's
(numpy.rint, x - numpy.trunc(x), numpy.copysign, the set bits of the two's complement), on the CPU and
the CUDA emulation, scalars and tiles (one-off against Warp 1.19 on the CPU, with NaN, inf, signed
zeros and negative integers: bitwise equal). Gradients against float64 finite differences: copysign's,
rint's zero, frac's one (Warp gives frac no gradient, 0: wrong almost everywhere, so tilec differs)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

SOURCE = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float), r: wp.array(dtype=float), f: wp.array(dtype=float),
      s: wp.array(dtype=float), n: wp.array(dtype=wp.int64), c: wp.array(dtype=int)):
    i = wp.tid()
    r[i] = wp.rint(x[i])
    f[i] = wp.frac(x[i])
    s[i] = wp.copysign(x[i], y[i])
    c[i] = wp.bit_count(n[i])


@wp.kernel
def tiles(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    u = wp.tile_load(y, shape=8)
    wp.tile_store(out, wp.tile_map(wp.rint, t) + wp.copysign(wp.tile_map(wp.frac, t), u))
'''


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_values(device):
    mod = build(SOURCE, "rint_frac_copysign", target="cpu" if device == "cpu" else "cuda-emu")
    x = np.array([2.5, 3.5, -2.5, -0.7, 1.25, -0.0, 7.9, np.nan, np.inf, 0.5], np.float32)
    y = np.array([-1.0, 2.0, -0.0, 0.0, -3.0, 1.0, np.nan, 1.0, -1.0, -0.0], np.float32)
    n = np.array([0, 1, -1, 255, -128, 2**31 - 1, -2**63, 12345, 7, -3], np.int64)
    r, f, s, c = np.zeros(10, np.float32), np.zeros(10, np.float32), np.zeros(10, np.float32), np.zeros(10, np.int32)
    mod.k.launch(dim=10, inputs=[x, y, r, f, s, n, c], device=device)
    bits = lambda a: a.view(np.int32)  # noqa: E731 - NaNs and signed zeros exactly
    np.testing.assert_array_equal(bits(r), bits(np.rint(x)))  # 2.5 -> 2, 3.5 -> 4: halfway to even
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as the kernel's
        np.testing.assert_array_equal(bits(f), bits(x - np.trunc(x)))
    np.testing.assert_array_equal(bits(s), bits(np.copysign(x, y)))
    np.testing.assert_array_equal(c, np.bitwise_count(n.view(np.uint64)))  # -1 has 64 set bits
    out = np.zeros(8, np.float32)
    mod.tiles.launch_tiled(dim=1, inputs=[x[:8], y[:8], out], device=device)
    with np.errstate(invalid="ignore"):
        want = np.rint(x[:8]) + np.copysign(x[:8] - np.trunc(x[:8]), y[:8])
    np.testing.assert_array_equal(bits(out), bits(want))


GRADIENTS = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.copysign(x[i], y[i]) * x[i] + wp.rint(x[i]) + wp.frac(y[i])
'''


@pytest.mark.build
@needs_cxx
def test_gradients():
    mod = build(GRADIENTS, "copysign_grad")
    x = np.array([1.2, -0.7, 2.4, -3.1, 0.3, -1.6])
    y = np.array([-1.4, 2.2, 0.4, -0.2, 1.3, 3.3])  # away from rint's steps and frac's jumps
    check_gradients(mod.k, 6, [x, y, np.zeros(6)], outputs=[2], wrt=[0, 1], tiled=False)
