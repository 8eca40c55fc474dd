"""Funcs returning several values (`return a, b`, `-> tuple[float, float]`), unpacked by the caller:
Warp's multiple return values (Warp's example_fdtd_3d: `def loss_coeffs(gamma: float) ->
tuple[float, float]`). tilec checks one instance of the func per value (frontend/tuple_returns.py);
forward and adjoint are compared with numpy and float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, first_error

SOURCE = '''import warp as wp


@wp.func
def coeffs(g: float) -> tuple[float, float]:
    half = 0.5 * g
    return (1.0 - half) / (1.0 + half), 1.0 / (1.0 + half)


@wp.func
def polar(v: wp.vec2):
    r = wp.length(v)
    if r > 2.0:
        return r, wp.vec2(v[1], v[0])
    return r * 2.0, v * 3.0


@wp.kernel
def k(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), out: wp.array(dtype=float), w: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a, b = coeffs(x[i])
    r, u = polar(v[i])
    out[i] = a * b + r
    w[i] = u * a
'''


def reference(x, v):
    half = 0.5 * x
    a, b = (1 - half) / (1 + half), 1 / (1 + half)
    r = np.linalg.norm(v, axis=1)
    far = r > 2
    r2 = np.where(far, r, 2 * r)
    u = np.where(far[:, None], v[:, ::-1], 3 * v)
    return a * b + r2, u * a[:, None]


@pytest.mark.build
@needs_cxx
def test_several_values_forward_and_adjoint():
    mod = build(SOURCE, "tuple_returns")
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.5, 0.5, 8).astype(np.float32)
    v = rng.uniform(-2.0, 2.0, (8, 2)).astype(np.float32)
    out, w = np.zeros(8, np.float32), np.zeros((8, 2), np.float32)
    mod.k.launch(dim=8, inputs=[x, v, out, w])
    want_out, want_w = reference(x.astype(np.float64), v.astype(np.float64))
    np.testing.assert_allclose(out, want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, want_w, rtol=1e-5, atol=1e-6)
    # the adjoint, in float64, against central finite differences
    source64 = (SOURCE.replace("float", "wp.float64").replace("wp.vec2", "wp.vec2d")
                .replace("v * 3.0", "v * wp.float64(3.0)"))  # (a float64 vector takes float64 scalars, as in Warp)
    mod64 = build(source64, "tuple_returns64")
    args = [x.astype(np.float64), v.astype(np.float64), np.zeros(8), np.zeros((8, 2))]
    check_gradients(mod64.k, 8, args, outputs=[2, 3], wrt=[0, 1], tiled=False)


@pytest.mark.parametrize("body, message", [
    ("    x[i] = coeffs(x[i]) * 2.0\n", "12:12: TC0303: `coeffs` returns 2 values; unpack them where it is called "
                                       "(`a, b = coeffs(...)`)"),  # (`t = coeffs(...)` binds a tuple: test_tuple_values.py)
    ("    a, b, c = coeffs(x[i])\n", "12:5: TC0303: cannot unpack the 2 values `coeffs` returns into 3 names"),
])
def test_a_call_that_does_not_unpack_every_value_is_refused(body, message):
    source = ("import warp as wp\n\n\n@wp.func\ndef coeffs(g: float):\n    return g, 2.0 * g\n\n\n"
              "@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    i = wp.tid()\n" + body)
    assert first_error(source) == message


EFFECTS = '''import warp as wp


@wp.func
def counted(a: wp.array(dtype=float), g: float):
    wp.atomic_add(a, 0, 1.0)
    if g > 0.0:
        a[1] = g
    return g, 2.0 * g


@wp.kernel
def k(counter: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    p, q = counted(counter, x[i])
    y[i] = p * q
    r, _ = counted(counter, x[i])
    t = counted(counter, y[i])
    y[i] += r + t[0]
'''


@needs_cxx
def test_a_func_with_effects_makes_them_once_per_call():
    # one instance per value: the last makes the effects, the others are the values only
    mod = build(EFFECTS, "tuple_effects")
    x = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    counter, y = np.zeros(2, np.float32), np.zeros(4, np.float32)
    mod.k.launch(dim=4, inputs=[counter, x, y])
    assert counter[0] == 3 * 4  # three calls a thread, each adding once (twice per call before)
    p = x * 2 * x
    np.testing.assert_allclose(y, p + x + p, rtol=1e-6)


@pytest.mark.parametrize("body, line", [
    ("    a[0] = g\n    return a[0], 2.0 * g\n", 7),  # a value reads the array the func writes
    ("    old = wp.atomic_add(a, 0, g)\n    return old, g\n", 6),  # a value is an atomic's old value
])
def test_a_value_that_depends_on_an_effect_is_refused(body, line):
    source = ("import warp as wp\n\n\n@wp.func\ndef logged(a: wp.array(dtype=float), g: float):\n" + body +
              "\n\n@wp.kernel\ndef k(x: wp.array(dtype=float)):\n    i = wp.tid()\n    p, q = logged(x, x[i])\n")
    assert first_error(source) == (
        f"13:12: TC0401: unsupported syntax: `logged` returns several values and has effects, and line {line} "
        "depends on one (an array it writes, or an effect's result); tilec evaluates such a func once per value, "
        "making its effects in one of them only")


def test_every_return_of_such_a_func_returns_every_value():
    source = '''import warp as wp


@wp.func
def two(g: float) -> tuple[float, float]:
    if g > 0.0:
        return g
    return g, g


@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    p, q = two(x[i])
'''
    assert first_error(source) == ("7:16: TC0410: a func returning several values returns them all at every "
                                   "`return` (`return a, b`)")


def test_a_return_giving_more_values_than_the_annotation_says_is_refused():
    source = '''import warp as wp


@wp.func
def two(g: float) -> tuple[float, float]:
    return g, g, g


@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    p, q = two(x[i])
'''
    assert first_error(source) == ("6:12: TC0410: a func returning several values returns them all at every "
                                   "`return` (`return a, b`)")
