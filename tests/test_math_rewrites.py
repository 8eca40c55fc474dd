"""Warp's scalar builtins lowered as other ops (frontend/lower_math_rewrites.py): smoothstep, step,
nonzero, isnan, isinf, isfinite, degrees, radians (and lerp, tests/test_lerp_and_comparisons.py).
Their values are Warp's operation for operation (Warp 1.19's builtin.h: smoothstep clamps
(x - a) / (b - a) to [0, 1] and returns t * t * (3 - 2 * t); degrees multiplies by a double
constant), written here with numpy in the same dtypes; adjoints against float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, first_error

SOURCE = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=FT), out: wp.array2d(dtype=FT), flags: wp.array2d(dtype=int)):
    i = wp.tid()
    v = x[i]
    out[i, 0] = wp.smoothstep(FT(-1.0), FT(2.0), v)
    out[i, 1] = wp.step(v)
    out[i, 2] = wp.nonzero(v)
    out[i, 3] = wp.degrees(v)
    out[i, 4] = wp.radians(v * FT(3.0))
    flags[i, 0] = int(wp.isnan(v)) + 2 * int(wp.isinf(v)) + 4 * int(wp.isfinite(v))
'''

RAD_TO_DEG, DEG_TO_RAD = 57.29577951308232, 0.017453292519943295


@pytest.mark.build
@needs_cxx
def test_values_are_warps_operation_for_operation():
    mod = build(SOURCE.replace("FT", "wp.float32"), "math_rewrites32")
    x = np.array([-3.0, -1.0, -0.25, 0.0, -0.0, 0.5, 1.7, 2.0, 9.0, 1e-30], np.float32)
    out, flags = np.zeros((10, 5), np.float32), np.zeros((10, 1), np.int32)
    mod.k.launch(dim=10, inputs=[x, out, flags])
    f = np.float32
    t = np.minimum(np.maximum((x - f(-1)) / (f(2) - f(-1)), f(0)), f(1))
    np.testing.assert_array_equal(out[:, 0], t * t * (f(3) - f(2) * t))
    np.testing.assert_array_equal(out[:, 1], (x < 0).astype(np.float32))  # -0.0 is not below 0
    np.testing.assert_array_equal(out[:, 2], (x != 0).astype(np.float32))
    np.testing.assert_array_equal(out[:, 3], (x.astype(np.float64) * RAD_TO_DEG).astype(np.float32))
    np.testing.assert_array_equal(out[:, 4], ((x * f(3)).astype(np.float64) * DEG_TO_RAD).astype(np.float32))
    specials = np.array([np.nan, np.inf, -np.inf, 1.0, -2.5, 0.0, 3e38, np.nan, -np.inf, 7.0], np.float32)
    mod.k.launch(dim=10, inputs=[specials, out, flags])
    want = np.isnan(specials) + 2 * np.isinf(specials) + 4 * np.isfinite(specials)
    np.testing.assert_array_equal(flags[:, 0], want)


GRADIENTS = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64),
      smooth: wp.array(dtype=wp.float64), angles: wp.array(dtype=wp.float64), flat: wp.array(dtype=wp.float64)):
    i = wp.tid()
    smooth[i] = wp.smoothstep(a[i], b[i], x[i])
    angles[i] = wp.degrees(x[i]) * wp.radians(x[i] * a[i])
    flat[i] = wp.step(x[i]) + wp.nonzero(x[i]) * x[i]
'''


@pytest.mark.build
@needs_cxx
def test_adjoints_against_finite_differences():
    mod = build(GRADIENTS, "math_rewrites64")
    x = np.array([-0.9, -0.3, 0.4, 1.1, 1.8, -2.5, 3.0, 0.05])  # inside and outside smoothstep's ramp, off its ends
    a, b = np.full(8, -1.0), np.array([2.0, 1.5, 2.5, 3.0, 2.2, 1.0, 2.0, 0.5])
    check_gradients(mod.k, 8, [x, a, b, np.zeros(8), np.zeros(8), np.zeros(8)], outputs=[3, 4, 5], wrt=[0, 1, 2],
                    tiled=False)


def test_they_take_the_arguments_warp_names():
    source = SOURCE.replace("FT", "float").replace("wp.smoothstep(float(-1.0), float(2.0), v)",
                                                    "wp.smoothstep(float(-1.0), float(2.0), v, 1.0)")
    assert first_error(source) == "8:59: TC0303: smoothstep(a, b, x): takes the arguments a, b, x"
