"""`wp.min(a, b)` / `wp.max(a, b)` of two vectors (component by component), `wp.min(v)` / `wp.max(v)` of one vector (Warp's reduction overloads: the smallest / largest component,
NaN components skipped as by fmin / fmax), Python's `min(v)` / `max(v)` on a vector, the scalar min / max
gradient beside a NaN operand, and `wp.transform(p=...)` with Warp's default (identity) rotation.
Checked against numpy and float64 finite differences; Warp's own outputs: tests/conformance
(wl_vector_reductions)."""
from __future__ import annotations

import numpy as np

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, first_error

REDUCTIONS = '''
import warp as wp


@wp.kernel
def reduce(v: wp.array(dtype=wp.vec3d), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
           z: wp.array(dtype=wp.float64), n: wp.array(dtype=wp.int32)):
    i = wp.tid()
    nan = wp.float64(wp.nan)
    y[i] = wp.min(v[i]) * x[i] + max(v[i] * x[i])
    z[i] = wp.max(x[i], nan) + wp.min(nan, x[i] * x[i]) + wp.max(wp.vec3d(nan, x[i], nan))
    n[i] = wp.min(wp.vec3i(i, 3, -i)) + max(wp.vec2i(i, 2))


@wp.kernel
def pairs(f: wp.array(dtype=wp.vec3d), g: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d),
          n: wp.array(dtype=wp.vec2i)):
    i = wp.tid()
    nan = wp.float64(wp.nan)
    v[i] = wp.min(f[i], g[i]) * wp.float64(2.0) + wp.max(f[i], wp.vec3d(nan, g[i][1], nan)) + max(g[i], f[i])
    n[i] = wp.max(wp.vec2i(i, 3), wp.vec2i(2, -i))


@wp.kernel
def place(p: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.transform_point(wp.transform(p=p[i]), p[i]) + wp.transform_vector(wp.transform(p[i]), p[i])
'''


@needs_cxx
def test_vector_min_and_max_and_their_gradients():
    m = build(REDUCTIONS, "vreduce", block_dim=32)
    rng = np.random.default_rng(5)
    v = rng.standard_normal((16, 3))
    x = rng.standard_normal(16)
    y, z, n = np.zeros(16), np.zeros(16), np.zeros(16, np.int32)
    m.reduce.launch(dim=16, inputs=[v, x, y, z, n])
    np.testing.assert_allclose(y, v.min(axis=1) * x + (v * x[:, None]).max(axis=1), rtol=1e-15)
    np.testing.assert_allclose(z, x + x * x + x, rtol=1e-15)  # the NaN operands skipped
    i = np.arange(16)
    np.testing.assert_array_equal(n, np.minimum(-i, np.minimum(i, 3)) + np.maximum(i, 2))
    check_gradients(m.reduce, 16, [v, x, y, z, n], outputs=[2, 3], wrt=[0, 1], tiled=False)


@needs_cxx
def test_min_and_max_of_two_vectors_go_component_by_component():
    m = build(REDUCTIONS, "vreduce", block_dim=32)
    rng = np.random.default_rng(7)
    f, g = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    v, n = np.zeros((8, 3)), np.zeros((8, 2), np.int32)
    m.pairs.launch(dim=8, inputs=[f, g, v, n])
    holes = g.copy()
    holes[:, [0, 2]] = np.nan
    np.testing.assert_array_equal(v, np.minimum(f, g) * 2 + np.fmax(f, holes) + np.maximum(g, f))
    i = np.arange(8)
    np.testing.assert_array_equal(n, np.stack([np.maximum(i, 2), np.maximum(3, -i)], axis=1))
    check_gradients(m.pairs, 8, [f, g, v, n], outputs=[2], wrt=[0, 1], tiled=False)


@needs_cxx
def test_transform_of_a_translation_has_the_identity_rotation():
    m = build(REDUCTIONS, "vreduce", block_dim=32)
    p = np.random.default_rng(6).standard_normal((8, 3)).astype(np.float32)
    y = np.zeros_like(p)
    m.place.launch(dim=8, inputs=[p, y])
    np.testing.assert_allclose(y, 3 * p, rtol=1e-6)


def test_one_argument_min_takes_a_vector():
    src = '''
import warp as wp


@wp.kernel
def k(a: wp.array(dtype=float), q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    a[i] = wp.min(a[i])
'''
    assert first_error(src) == "8:19: TC0201: min: takes a vector, got a float32 scalar"
    assert first_error(src.replace("wp.min(a[i])", "max(q[i])")) == "8:16: TC0201: max: takes a vector, got a quatf"


def test_min_of_two_matrices_is_refused_as_by_warp():
    src = '''
import warp as wp


@wp.kernel
def k(a: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    a[i] = wp.min(a[i], a[i])
'''
    assert first_error(src) == "8:19: TC0203: min: is defined on scalars and vectors, not on a mat22f"


def test_a_transform_needs_its_translation():
    src = '''
import warp as wp


@wp.kernel
def k(a: wp.array(dtype=wp.transform)):
    i = wp.tid()
    a[i] = wp.transform(q=wp.quat_identity())
'''
    assert first_error(src).startswith("8:12: TC0303: transformf: takes positional components only")
