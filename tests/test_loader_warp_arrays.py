"""The loader takes Warp's own CPU `wp.array` objects of value types (#15): a `wp.array` of vec3 is
the (n, 3) memory a numpy array would be, passed without a copy, and its element type is checked
against the parameter's as Warp checks it (a float32 (n, 3) array is not an array of vec3)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

wp = pytest.importorskip("warp")
pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

N = 8


@wp.kernel
def centroid(pos: wp.array(dtype=wp.vec3), center: wp.array(dtype=wp.vec3), frames: wp.array2d(dtype=wp.mat22)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=N, offset=i * N)
    wp.tile_store(center, wp.tile_sum(p) / float(N), offset=i)


@wp.kernel
def rows(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.tile_store(out, wp.tile_sum(wp.tile_load(a, shape=(1, 3), offset=(i, 0))), offset=i)
'''


@pytest.fixture(scope="module")
def mod():
    wp.config.quiet = True
    return build(SOURCE, "warp_arrays", block_dim=32)


def warp_args(pos):
    return [wp.array(pos, dtype=wp.vec3, device="cpu"), wp.zeros(2, dtype=wp.vec3, device="cpu"),
            wp.zeros((2, 2), dtype=wp.mat22, device="cpu")]


def test_warp_arrays_of_vec3_are_passed_in_place(mod):
    pos = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)
    args = warp_args(pos)
    mod.centroid.launch_tiled(dim=2, inputs=args, block_dim=32)
    np.testing.assert_allclose(args[1].numpy(), pos.reshape(2, 8, 3).mean(1), rtol=1e-6, atol=1e-6)


def test_warp_array_gradients(mod):
    pos = np.random.default_rng(1).standard_normal((16, 3)).astype(np.float32)
    args = warp_args(pos)
    seeds = [wp.zeros(16, dtype=wp.vec3, device="cpu"), wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3),
             None]
    mod.centroid.launch_tiled(dim=2, inputs=args, adj_inputs=seeds, adjoint=True, block_dim=32)
    np.testing.assert_allclose(seeds[0].numpy(), np.full((16, 3), 1 / 8), rtol=1e-6)


@pytest.mark.parametrize("k, value, message", [
    (0, lambda: wp.zeros((16, 3), dtype=float, device="cpu"),
     "argument `pos` must be an array of vec3f, got a Warp array of float32"),
    (0, lambda: wp.zeros(16, dtype=wp.vec3d, device="cpu"),
     "argument `pos` must be an array of vec3f, got a Warp array of vec3d"),
    (0, lambda: wp.zeros(16, dtype=wp.vec4, device="cpu"),
     "argument `pos` must be an array of vec3f, got a Warp array of vec4f"),
    (2, lambda: wp.zeros((2, 2), dtype=wp.mat33, device="cpu"),
     "argument `frames` must be an array of mat22f, got a Warp array of mat33f"),
    (2, lambda: wp.zeros(4, dtype=wp.mat22, device="cpu"),
     "argument `frames` must have 2 dimension(s), got 1"),
])
def test_warp_arrays_of_another_element_type_are_refused(mod, k, value, message):
    args = warp_args(np.zeros((16, 3), np.float32))
    args[k] = value()
    with pytest.raises((TypeError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)")):
        mod.centroid.launch_tiled(dim=2, inputs=args, block_dim=32)


def test_a_warp_array_of_vec3_is_not_a_2d_float_array(mod):
    with pytest.raises(TypeError, match=r"argument `a` must be an array of float32, got a Warp array of vec3f"):
        mod.rows.launch_tiled(dim=2, inputs=[wp.zeros(2, dtype=wp.vec3, device="cpu"), np.zeros(2, np.float32)],
                              block_dim=32)
