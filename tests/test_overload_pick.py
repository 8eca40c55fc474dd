"""The loader picks a generic kernel's overload by the arguments' element types: a (n, 3) float32
array is a vec3 overload's argument even where a float overload is declared first (it took the
float one and refused x as 2-d)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build

PROGRAM = '''\
from typing import Any

import warp as wp


@wp.kernel
def twice_through_tile(x: wp.array[Any], y: wp.array[Any]):
    i = wp.tid()
    t = wp.tile(x[i] * 2.0)
    y[i] = wp.untile(t)


wp.overload(twice_through_tile, {"x": wp.array[float], "y": wp.array[float]})
wp.overload(twice_through_tile, {"x": wp.array[wp.vec3], "y": wp.array[wp.vec3]})
wp.overload(twice_through_tile, {"x": wp.array[wp.mat33], "y": wp.array[wp.mat33]})
'''


@needs_cxx
@pytest.mark.parametrize("element", [(), (3,), (3, 3)], ids=["float", "vec3", "mat33"])
def test_overload_by_element_shape(element):
    mod = build(PROGRAM, "overload_pick", block_dim=16)
    x = np.random.default_rng(5).standard_normal((32,) + element).astype(np.float32)
    y = np.zeros_like(x)
    mod.twice_through_tile.launch(dim=(32,), inputs=[x, y], block_dim=16, device="cpu")
    np.testing.assert_allclose(y, 2.0 * x, rtol=1e-6)
    gx = np.zeros_like(x)
    seed = np.random.default_rng(6).standard_normal(x.shape).astype(np.float32)
    expected = 2.0 * seed  # before the launch: the adjoint consumes y's seed (zeroes it), as Warp's does
    mod.twice_through_tile.launch(dim=(32,), inputs=[x, y], adj_inputs=[gx, seed], adjoint=True, block_dim=16,
                                  device="cpu")
    np.testing.assert_allclose(gx, expected, rtol=1e-6)
