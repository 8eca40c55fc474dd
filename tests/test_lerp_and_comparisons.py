"""Two builtins Warp's example_fluid uses as written: `wp.lerp(a, b, t)` of floats and vectors
(Warp's `a * (1 - t) + b * t`), and comparisons of scalars of two dtypes (`d < radius`, a float and
an int), which Warp compiles with C++'s conversions (measured on Warp 1.19's CPU: the cases below
give what numpy's same conversions give); mixed arithmetic stays an error, as in Warp."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, first_error

LERP = '''import warp as wp


@wp.kernel
def k(a: wp.array(dtype=FT), b: wp.array(dtype=FT), t: wp.array(dtype=FT), out: wp.array(dtype=FT),
      va: wp.array(dtype=VT), vb: wp.array(dtype=VT), vout: wp.array(dtype=VT)):
    i = wp.tid()
    out[i] = wp.lerp(a[i], b[i], t[i])
    vout[i] = wp.lerp(va[i], vb[i], t=t[i])
'''


@pytest.mark.build
@needs_cxx
def test_lerp_of_floats_and_vectors_forward_and_adjoint():
    mod = build(LERP.replace("FT", "float").replace("VT", "wp.vec2"), "lerp32")
    rng = np.random.default_rng(2)
    a, b, t = (rng.standard_normal(6).astype(np.float32) for _ in range(3))
    va, vb = (rng.standard_normal((6, 2)).astype(np.float32) for _ in range(2))
    out, vout = np.zeros(6, np.float32), np.zeros((6, 2), np.float32)
    mod.k.launch(dim=6, inputs=[a, b, t, out, va, vb, vout])
    one = np.float32(1)
    np.testing.assert_array_equal(out, a * (one - t) + b * t)  # the same operations, in float32
    np.testing.assert_array_equal(vout, va * (one - t)[:, None] + vb * t[:, None])
    mod64 = build(LERP.replace("FT", "wp.float64").replace("VT", "wp.vec2d"), "lerp64")
    args = [x.astype(np.float64) for x in (a, b, t)] + [np.zeros(6)] + [va.astype(np.float64), vb.astype(np.float64),
                                                                        np.zeros((6, 2))]
    check_gradients(mod64.k, 6, args, outputs=[3, 6], wrt=[0, 1, 2, 4, 5], tiled=False)


def test_lerp_takes_one_float_type():
    source = LERP.replace("FT", "float").replace("VT", "wp.vec2d")
    assert first_error(source).startswith("9:15: TC0201: lerp(a, b, t): a and b must be floats, vectors, "
                                          "matrices or quaternions of one type and t a float scalar of their dtype")


COMPARE = '''import warp as wp


@wp.kernel
def k(r: int, u: wp.uint32, out: wp.array(dtype=int), x: wp.array(dtype=float)):
    d = x[0]
    out[0] = int(d < r) + int(d == r) * 10 + int(r <= d) * 100
    out[1] = int(r < u)
    out[2] = int(r < wp.int64(5)) + int(wp.float64(d) < x[0]) * 10 + int(d < wp.uint8(2)) * 100
'''


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("d, r, u", [(2.5, 3, 7), (3.0, 3, 7), (3.5, -2, 4000000000), (-1.0, -2, 1)])
def test_comparisons_of_two_dtypes_convert_as_cpp_and_warp_do(d, r, u):
    mod = build(COMPARE, "mixed_compare")
    out = np.zeros(3, np.int32)
    mod.k.launch(dim=1, inputs=[r, u, out, np.array([d], np.float32)])
    f, i = np.float32(d), np.float32(r)  # float32 against int32: the int converted to float32
    assert out[0] == int(f < i) + int(f == i) * 10 + int(i <= f) * 100
    assert out[1] == int(np.uint32(r % 2**32) < np.uint32(u))  # int32 against uint32: both unsigned (-2 is 2**32 - 2)
    assert out[2] == int(r < 5) + int(np.float64(f) < np.float64(f)) * 10 + int(f < np.float32(2)) * 100


def test_arithmetic_of_two_dtypes_stays_an_error():
    source = COMPARE.replace("out[1] = int(r < u)", "out[1] = int(d + r)")
    assert first_error(source) == ("8:22: TC0201: add: cannot mix float32 and int32 (`left` and `right`); convert one "
                                   "explicitly")
