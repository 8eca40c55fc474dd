"""Tile subscripts with Warp's meaning: rows t[i], slices t[a:b, ::k], t[::-1], t[-1, :], negative
constant indices, slice() offsets in tile_view, gathers t[idx], row and sub-tile assignment. CPU and
the CUDA emulation against numpy; gradients against float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

pytestmark = [pytest.mark.build, needs_cxx]
DEVICES = ["cpu", "cuda-emu"]

SOURCE = '''
import warp as wp



@wp.kernel
def subscripts(A: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64), v: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(4, 6))
    wp.tile_store(v[0], t[1])
    wp.tile_store(v[1], t[-1, :])
    wp.tile_store(v[2], t[:, 2])
    wp.tile_store(v[3], wp.tile_view(t, offset=(1, slice(0, 6, 2))))
    idx = wp.tile_arange(5, -1, -2, dtype=int)
    r = t[i + 1]
    wp.tile_store(v[4], r[idx] * r[idx])
    wp.tile_store(out[0:2], t[1:3, ::2])
    wp.tile_store(out[2:], t[::-1][:2, 3:])
    t[2] = wp.tile_ones(shape=6, dtype=wp.float64)
    t[0, 1:3] = wp.tile_full(shape=2, value=wp.float64(7.0), dtype=wp.float64) * t[3, 4:]
    wp.tile_store(v[6:], t[0:3, ::-1])
    rows = t[wp.tile_arange(0, 4, 3, dtype=int)]
    wp.tile_store(v[5], wp.tile_sum(rows, axis=0))


@wp.kernel
def element(A: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    t = wp.tile_load(A, shape=(4, 6))
    out[0] = t[-1, -2] * t[0, -6]
'''


def _reference(A):
    t = A.copy()
    out = np.zeros((4, 6))
    v = np.zeros((9, 6))
    v[0], v[1], v[2, :4], v[3, :3] = t[1], t[-1], t[:, 2], t[1, 0:6:2]
    r = t[1]
    v[4, :3] = r[[5, 3, 1]] ** 2
    out[0:2, :3] = t[1:3, ::2]
    out[2:, :3] = t[::-1][:2, 3:]
    t[2] = 1
    t[0, 1:3] = 7 * t[3, 4:]
    v[6:] = t[0:3, ::-1]
    v[5] = t[0] + t[3]
    return out, v


@pytest.mark.parametrize("device", DEVICES)
def test_tile_subscripts_as_in_warp(device):
    m = build(SOURCE, "tilesub", block_dim=32, target=device)
    rng = np.random.default_rng(4)
    A = rng.standard_normal((4, 6))
    out, v = np.zeros((4, 6)), np.zeros((9, 6))
    m.subscripts.launch_tiled(dim=(1,), inputs=[A, out, v], device=device)
    ref_out, ref_v = _reference(A)
    np.testing.assert_allclose(out, ref_out)
    np.testing.assert_allclose(v, ref_v)
    kernel = m.subscripts if device == "cpu" else OnEmulator(m.subscripts)
    check_gradients(kernel, (1,), [A, out, v], outputs=[1, 2], wrt=[0])


def test_negative_constant_indices_count_from_the_end():
    m = build(SOURCE, "tilesub", block_dim=32)
    A = np.arange(24, dtype=np.float64).reshape(4, 6)
    out = np.zeros(1)
    m.element.launch_tiled(dim=(1,), inputs=[A, out])
    assert out[0] == A[-1, -2] * A[0, 0]
    check_gradients(m.element, (1,), [A + 0.5, out], outputs=[1], wrt=[0])


ALIASING = '''
import warp as wp


@wp.func
def add_one(t: wp.tile(dtype=wp.float64, shape=(6,))):
    t += wp.tile_ones(shape=6, dtype=wp.float64)


@wp.kernel
def alias(A: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=wp.float64), v: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(A, shape=(4, 6))
    r = t[1]
    r[0] = wp.float64(2.0) * r[1]
    s = wp.tile_view(t, offset=(2,))
    t[2, 0] = t[0, 3] * t[0, 4]
    wp.tile_store(v[0], s * s)
    q = t[3]
    add_one(q)
    c = t[:, 1]
    c += t[:, 2] * t[:, 0]
    wp.tile_store(v[1], r)
    wp.tile_store(y, t * t)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_views_alias_their_parent_as_in_warp(device):
    m = build(ALIASING, "aliasing", block_dim=32, target=device)
    A = np.random.default_rng(5).standard_normal((4, 6))
    y, v = np.zeros((4, 6)), np.zeros((2, 6))
    m.alias.launch_tiled(dim=(1,), inputs=[A, y, v], device=device)
    t = A.copy()
    t[1, 0] = 2 * t[1, 1]
    t[2, 0] = t[0, 3] * t[0, 4]
    v0 = t[2] ** 2
    t[3] += 1
    t[:, 1] += t[:, 2] * t[:, 0]
    np.testing.assert_allclose(v, np.stack([v0, t[1]]))
    np.testing.assert_allclose(y, t * t)
    kernel = m.alias if device == "cpu" else OnEmulator(m.alias)
    check_gradients(kernel, (1,), [A, y, v], outputs=[1, 2], wrt=[0])
