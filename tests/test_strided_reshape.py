"""wp.tile_reshape of a transposed tile: tilec reshapes the transposed elements in row-major order,
as numpy.reshape does, and warns (TC0437, tests/ui/strided_reshape.py) that Warp 1.19 reads such a
view in memory order instead (its docs require a contiguous tile there)."""
from __future__ import annotations

import numpy as np
import pytest

from harness import OnEmulatorModule, build

SOURCE = '''
import warp as wp


@wp.kernel
def reshaped(X: wp.array2d(dtype=float), O: wp.array2d(dtype=float), P: wp.array2d(dtype=float)):
    t = wp.tile_transpose(wp.tile_load(X, shape=(3, 4)))
    wp.tile_store(O, wp.tile_reshape(t, shape=(2, 6)))
    wp.tile_store(P, wp.tile_reshape(wp.tile_transpose(wp.tile_load(X, shape=(3, 4))), shape=(12, 1)))
'''


@pytest.mark.parametrize("target", ["cpu", "cuda-emu"])
def test_reshape_of_a_transpose_is_numpys(target):
    mod = build(SOURCE, f"strided_reshape_{target.replace('-', '_')}", target=target)
    mod = OnEmulatorModule(mod) if target == "cuda-emu" else mod
    X = np.arange(12, dtype=np.float32).reshape(3, 4)
    O, P = np.zeros((2, 6), np.float32), np.zeros((12, 1), np.float32)
    mod.reshaped.launch_tiled(dim=1, inputs=[X, O, P])
    np.testing.assert_array_equal(O, X.T.reshape(2, 6))
    np.testing.assert_array_equal(P, X.T.reshape(12, 1))
    assert not np.array_equal(O, X.reshape(2, 6))  # Warp's memory-order result would be this one
