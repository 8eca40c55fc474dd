"""The loader's side of value types: arrays of vectors/matrices are numpy arrays with trailing
component axes (a 1-d wp.array(dtype=wp.vec3) of n elements is (n, 3), mat22 is (n, 2, 2)),
vector/matrix arguments are sequences or arrays of that shape; every misfit is a Python
exception naming the argument, never a native crash."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness import build

pytestmark = [pytest.mark.build]

SOURCE = '''
import warp as wp


@wp.kernel
def affine(x: wp.array(dtype=wp.vec3), m: wp.mat22, shift: wp.vec3, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = x[i]
    r = m @ wp.vec2(v.x, v.y)
    y[i] = wp.vec3(r.x, r.y, v.z) + shift
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "values_loader")


def expected(x, m, shift):
    y = x.copy()
    y[:, :2] = x[:, :2] @ np.asarray(m, np.float32).reshape(2, 2).T
    return y + np.asarray(shift, np.float32)


def test_manifest_describes_value_parameters(mod):
    meta = json.loads((Path(mod.__path__[0]) / "manifest.json").read_text())
    params = {p["name"]: p for p in meta["kernels"]["affine"]["params"]}
    assert params["x"] == {"name": "x", "kind": "array", "dtype": "float32", "ndim": 1, "element_shape": [3],
                           "value_type": "vec3f"}
    assert params["m"] == {"name": "m", "kind": "scalar", "dtype": "float32", "element_shape": [2, 2],
                           "value_type": "mat22f"}


@pytest.mark.parametrize("m, shift", [
    ([[1.0, 2.0], [3.0, 4.0]], (0.5, -1.0, 2.0)),
    (np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0])),  # a flat matrix, float64 values
], ids=["nested", "flat"])
def test_values_and_trailing_axes(mod, m, shift):
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    y = np.zeros_like(x)
    mod.affine.launch(5, inputs=[x, m, shift, y])
    np.testing.assert_allclose(y, expected(x, m, shift), rtol=1e-6)


def test_strided_element_axis(mod):
    """A view every other element keeps each vector contiguous: accepted, no copy."""
    x = np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32)
    y = np.zeros((8, 3), np.float32)
    mod.affine.launch(4, inputs=[x[::2], np.eye(2), (0, 0, 0), y[1::2]])
    np.testing.assert_allclose(y[1::2], x[::2], rtol=1e-6)
    assert not y[::2].any()


@pytest.mark.parametrize("change, error, message", [
    (dict(x=np.zeros((5, 4), np.float32)), ValueError, "argument `x` must have shape (..1 axes.., 3)"),
    (dict(x=np.zeros(15, np.float32)), ValueError, "argument `x` must have shape"),
    (dict(x=np.zeros((5, 3), np.float64)), TypeError, "argument `x` must have dtype float32"),
    (dict(x=np.zeros((5, 6), np.float32)[:, ::2]), ValueError, "argument `x`: the vec3f components must be contiguous"),
    (dict(shift=(1.0, 2.0)), ValueError, "argument `shift` must be a vec3f of shape (3,), got shape (2,)"),
    (dict(shift="abc"), TypeError, "argument `shift` must be a vec3f (numbers)"),
    (dict(m=np.eye(3)), ValueError, "argument `m` must be a mat22f of shape (2, 2)"),
], ids=["components", "flat", "dtype", "gapped", "short", "text", "matrix"])
def test_misfits_name_the_argument(mod, change, error, message):
    args = dict(x=np.zeros((5, 3), np.float32), m=np.eye(2), shift=(0.0, 0.0, 0.0), y=np.zeros((5, 3), np.float32))
    args.update(change)
    with pytest.raises(error) as info:
        mod.affine.launch(5, inputs=[args["x"], args["m"], args["shift"], args["y"]])
    assert message in str(info.value)
