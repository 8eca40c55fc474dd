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


PASSED = '''
from typing import Any

import warp as wp


@wp.func
def weighted(values: tuple[wp.float64, ...]):
    out = wp.float64(0.0)
    for k in range(len(values) - 1, -1, -1):  # a constant range run backwards: k picks item k
        out = out * wp.float64(0.5) + values[k] * wp.float64(k + 1)
    return out


@wp.func
def passed_on(values: tuple):  # a bare `tuple`: any tuple
    return weighted(values) + values[-1] * values[0]


@wp.kernel
def passed(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = (a[i], b[i] * b[i], a[i] * b[i])
    y[i] = passed_on(t) + passed_on((b[i], a[i]))
'''


def _weighted(values):
    out = 0.0
    for k in range(len(values) - 1, -1, -1):
        out = out * 0.5 + values[k] * (k + 1)
    return out


@needs_cxx
def test_tuples_passed_on_to_funcs_indexed_from_the_end_and_by_a_backward_loop():
    """What Warp 1.19 fails to build (a tuple parameter passed on to another func, `values[-1]` of an
    `Any` one; measured: a C++ error in its tuple.h) and refuses (a constant range whose bound is not
    a bare len()), against Python's own evaluation, with gradients by finite differences; the
    parameter annotated with a bare `tuple`."""
    m = build(PASSED, "tuples_passed", block_dim=32)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(16), rng.standard_normal(16)
    y = np.zeros(16)
    m.passed.launch(dim=16, inputs=[a, b, y])
    want = [_weighted((x, z * z, x * z)) + x * z * x + _weighted((z, x)) + x * z for x, z in zip(a, b)]
    np.testing.assert_allclose(y, want, rtol=1e-14)
    check_gradients(m.passed, 16, [a, b, np.zeros(16)], outputs=[2], wrt=[0, 1], tiled=False)
