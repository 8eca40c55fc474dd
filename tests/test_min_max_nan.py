"""min, max and clamp of floats as Warp 1.19 computes them (its builtin.h: C's fmin/fmax, the operand
that is not NaN; clamp(x, lo, hi) = min(max(lo, x), hi)). Before, a NaN operand won (min(NaN, 1) was NaN
where Warp gives 1) and clamp(-0.0, 0.0, hi) kept -0.0 where Warp gives 0.0. Compared bitwise with the
C expressions written in numpy; one-off against Warp on the CPU: bitwise equal on these inputs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

SOURCE = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float), lo: wp.array(dtype=float), hi: wp.array(dtype=float),
      out: wp.array(dtype=float), big: wp.array(dtype=float), inside: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.min(x[i], y[i])
    big[i] = wp.max(x[i], y[i])
    inside[i] = wp.clamp(x[i], lo[i], hi[i])
'''


def fmin(a, b):
    return np.where((a <= b) | (b != b), a, b)


def fmax(a, b):
    return np.where((a >= b) | (b != b), a, b)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_nan_and_signed_zeros(device):
    mod = build(SOURCE, "min_max_nan", target="cpu" if device == "cpu" else "cuda-emu")
    nan, inf = np.nan, np.inf
    x = np.array([nan, 1.0, nan, -0.0, 0.0, 3.0, inf, -inf, 2.0, nan, -0.0], np.float32)
    y = np.array([1.0, nan, nan, 0.0, -0.0, 3.0, nan, 1.0, -7.0, -inf, 0.5], np.float32)
    lo = np.array([0.0, nan, 0.0, 0.0, -0.0, 1.0, 0.0, -1.0, -1.0, 0.0, 0.0], np.float32)
    hi = np.full(11, 5.0, np.float32)
    out, big, inside = (np.zeros(11, np.float32) for _ in range(3))
    mod.k.launch(dim=11, inputs=[x, y, lo, hi, out, big, inside], device=device)
    bits = lambda a: a.view(np.int32)  # noqa: E731 - compares NaNs and signed zeros exactly
    np.testing.assert_array_equal(bits(out), bits(fmin(x, y)))
    np.testing.assert_array_equal(bits(big), bits(fmax(x, y)))
    np.testing.assert_array_equal(bits(inside), bits(fmin(fmax(lo, x), hi)))
    assert out[0] == 1.0 and inside[3] == 0.0 and not np.signbit(inside[3])  # Warp's values
