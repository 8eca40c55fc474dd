"""Tuples as local values (frontend/tuple_values.py) where Warp 1.19 refuses or gets them wrong: a
tuple rebound in a branch and in a loop is one set of variables (Warp refuses rebinding a tuple), and
its items' gradients are right (Warp's adjoint gives them none). Warp's forward values:
tests/conformance/cases_warp_language.py (wl_tuple_values)."""
from __future__ import annotations

import numpy as np

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

SOURCE = '''
import warp as wp


@wp.kernel
def rebound(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = (a[i], b[i] * b[i])
    if a[i] > wp.float64(0.0):
        t = (b[i], a[i] * wp.float64(3.0))
    for k in range(3):
        t = (t[1], t[0] + wp.float64(k))
    y[i] = t[0] * wp.float64(2.0) + t[1]
'''


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    for i, (x, z) in enumerate(zip(a, b)):
        t = (x, z * z) if x <= 0 else (z, x * 3.0)
        for k in range(3):
            t = (t[1], t[0] + k)
        out[i] = t[0] * 2.0 + t[1]
    return out


@needs_cxx
def test_a_tuple_rebound_in_branches_and_loops():
    m = build(SOURCE, "tuple_rebound", block_dim=32)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(16), rng.standard_normal(16)
    y = np.zeros(16)
    m.rebound.launch(dim=16, inputs=[a, b, y])
    np.testing.assert_allclose(y, expected(a, b), rtol=1e-14)
    check_gradients(m.rebound, 16, [a, b, np.zeros(16)], outputs=[2], wrt=[0, 1], tiled=False)
