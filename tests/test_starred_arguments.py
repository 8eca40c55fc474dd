"""`*` in a call's arguments (frontend/starred_args.py) where Warp 1.19 has no say: tilec also unpacks
tuples (`f(*t)`, `range(*bounds)`), and a computed value is evaluated once (a random draw in it is one
draw). Warp's own forms (vectors, matrices, quaternions, their slices, constant slices of 1-d arrays):
tests/conformance/cases_warp_language.py (wl_starred_arguments)."""
from __future__ import annotations

import numpy as np

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

SOURCE = '''
import warp as wp


@wp.func
def pair(a: wp.float64, b: wp.float64):
    return a + b, a * b


@wp.func
def cubic(a: wp.float64, b: wp.float64, c: wp.float64) -> wp.float64:
    return a * b * c + a


@wp.kernel
def tuples(a: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = (a[i], wp.float64(2.0), a[i] * a[i])
    s, p = pair(*t[1:])
    bounds = (1, 4)
    total = cubic(*t) + s * p
    for k in range(*bounds):
        total += wp.float64(k) * cubic(*(a[i], *wp.vec2d(t[0], wp.float64(k))))
    y[i] = total


@wp.kernel
def drawn_once(seed: int, y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    # each computed value once, the nested one before the one holding it, siblings in order
    v = wp.vec4(*wp.vec2(wp.randf(state), 0.0), *wp.vec2(*wp.vec2(wp.randf(state), 1.0)))
    y[i] = v[0] + 10.0 * v[2]
    z[i] = wp.randf(state)


@wp.kernel
def drawn_plainly(seed: int, y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    first = wp.randf(state)
    second = wp.randf(state)
    y[i] = first + 10.0 * second
    z[i] = wp.randf(state)
'''


def expected(a: np.ndarray) -> np.ndarray:
    def pair(x, z):
        return x + z, x * z

    def cubic(x, z, w):
        return x * z * w + x

    out = np.zeros_like(a)
    for i, x in enumerate(a):
        t = (x, 2.0, x * x)
        s, p = pair(*t[1:])
        total = cubic(*t) + s * p
        for k in range(*(1, 4)):
            total += k * cubic(*(x, *(t[0], float(k))))
        out[i] = total
    return out


@needs_cxx
def test_tuples_and_ranges_unpacked_with_their_gradients():
    m = build(SOURCE, "starred_tuples", block_dim=32)
    a = np.random.default_rng(7).standard_normal(16)
    y = np.zeros(16)
    m.tuples.launch(dim=16, inputs=[a, y])
    np.testing.assert_allclose(y, expected(a), rtol=1e-13)
    check_gradients(m.tuples, 16, [a, np.zeros(16)], outputs=[1], wrt=[0], tiled=False)


@needs_cxx
def test_a_computed_value_is_evaluated_once():
    m = build(SOURCE, "starred_tuples", block_dim=32)
    y, z = np.zeros(64, np.float32), np.zeros(64, np.float32)
    m.drawn_once.launch(dim=64, inputs=[3, y, z])
    y_plain, z_plain = np.zeros(64, np.float32), np.zeros(64, np.float32)
    m.drawn_plainly.launch(dim=64, inputs=[3, y_plain, z_plain])
    # two draws before the third: evaluated per item, the unpacked values would have drawn more
    np.testing.assert_array_equal(y, y_plain)
    np.testing.assert_array_equal(z, z_plain)
    assert len(set(z.tolist())) == 64
