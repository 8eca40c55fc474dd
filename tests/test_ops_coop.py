"""Per-thread cooperative ops: tile_scatter_add, tile_scatter_masked and tile_from_thread take
each lane's own operands, so their results depend on block_dim as Warp's do with
`enable_cpu_blocks` (CPU) and on CUDA (here the CUDA emulation). Forward against numpy (and
against Warp 1.19 itself when it is installed), adjoints against float64 finite differences;
the result tiles overhang their arrays."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build, import_under_warp

pytestmark = [pytest.mark.build, needs_cxx]

BLOCK = 16
FORWARD = '''
import warp as wp


@wp.kernel
def coop(D: wp.array1d(dtype=float), H: wp.array1d(dtype=float), R: wp.array2d(dtype=int),
         F: wp.array1d(dtype=float)):
    blk, i = wp.tid()
    bins = wp.tile_zeros(shape=4, dtype=float, storage="shared")
    b = int(D[i] / 2.0)
    wp.tile_scatter_add(bins, b, D[i], b < 4)
    wp.tile_store(H, bins)
    t = wp.tile_zeros(shape=(2, 8), dtype=int)
    wp.tile_scatter_masked(t, i % 2, 7 - i // 2, i * 10 + blk, i != 3)
    wp.tile_store(R, t)
    wp.tile_store(F, wp.tile_from_thread(shape=(3,), value=D[i] * 2.0, thread_idx=5))
'''
GRADS = '''

@wp.kernel
def grads(X: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64), Z: wp.array1d(dtype=wp.float64)):
    blk, i = wp.tid()
    x = X[i]
    acc = wp.tile_full(shape=(4,), value=wp.float64(0.5), dtype=wp.float64)
    wp.tile_scatter_add(acc, i % 4, x * x, i < 12, atomic=True)
    put = wp.tile_load(X, shape=(16,)) * 2.0  # the masked write overwrites some of it: no gradient there
    wp.tile_scatter_masked(put, 15 - i, wp.sin(x), i % 3 != 0)
    wp.tile_store(Y, acc * wp.tile_from_thread(shape=(4,), value=x, thread_idx=2))
    wp.tile_store(Z, put * 3.0)
'''
SOURCE = FORWARD + GRADS


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def target(request):
    device = request.param
    return build(SOURCE, "coop" + ("_emu" if device != "cpu" else ""), block_dim=BLOCK, target=device), device


def expected(D):
    lanes = np.arange(BLOCK)
    b = (D / 2.0).astype(np.int32)
    H = np.zeros(4, np.float32)
    np.add.at(H, b[b < 4], D[b < 4])
    R = np.zeros((2, 8), np.int32)
    for i in lanes[lanes != 3]:
        R[i % 2, 7 - i // 2] = i * 10
    return H, R, np.full(3, D[5] * 2.0, np.float32)


def launch(mod, device, D):
    H, R, F = np.zeros(3, np.float32), np.zeros((2, 7), np.int32), np.zeros(2, np.float32)  # overhanging tiles
    mod.coop.launch_tiled(dim=1, inputs=[D, H, R, F], block_dim=BLOCK, device=device)
    return H, R, F


def test_forward_against_numpy(target):
    mod, device = target
    D = np.random.default_rng(41).uniform(0, 9.5, BLOCK).astype(np.float32)
    H, R, F = launch(mod, device, D)
    want = expected(D)
    np.testing.assert_allclose(H, want[0][:3], rtol=1e-6)
    np.testing.assert_array_equal(R, want[1][:, :7])
    np.testing.assert_array_equal(F, want[2][:2])


def test_gradients_against_finite_differences(target):
    mod, device = target
    kernel = mod.grads if device == "cpu" else OnEmulator(mod.grads)
    X = np.random.default_rng(42).standard_normal(BLOCK)
    check_gradients(kernel, 1, [X, np.zeros(3), np.zeros(15)], outputs=[1, 2], wrt=[0])


def test_forward_matches_warp_with_cpu_blocks(tmp_path, monkeypatch):
    """The same program through Warp 1.19 on the CPU with enable_cpu_blocks."""
    wp, warp_coop = import_under_warp(FORWARD, "warp_coop", tmp_path, monkeypatch)

    D = np.random.default_rng(43).uniform(0, 9.5, BLOCK).astype(np.float32)
    arrays = [wp.array(x, device="cpu") for x in (D, np.zeros(3, np.float32), np.zeros((2, 7), np.int32),
                                                     np.zeros(2, np.float32))]
    wp.launch_tiled(warp_coop.coop, dim=1, inputs=arrays, block_dim=BLOCK, device="cpu")
    ours = launch(build(SOURCE, "coop", block_dim=BLOCK), "cpu", D)
    # colliding adds land in an unspecified order (Warp's documentation): float sums to rounding
    np.testing.assert_allclose(ours[0], arrays[1].numpy(), rtol=1e-6)
    np.testing.assert_array_equal(ours[1], arrays[2].numpy())
    np.testing.assert_array_equal(ours[2], arrays[3].numpy())
    sys.modules.pop("warp_coop", None)


UPDATES = '''
import warp as wp


@wp.kernel
def updates(O: wp.array1d(dtype=int), P: wp.array2d(dtype=int)):
    blk, i = wp.tid()
    t = wp.tile_zeros(shape=5, dtype=int)
    t[1] += 1
    t[2] ^= 5
    t[3] |= 6 + i
    wp.tile_add_inplace(t, 0, 10)
    wp.tile_sub_inplace(t, 4, i)
    wp.tile_store(O, t)
    p = wp.tile_full(shape=(2, 3), value=7, dtype=int)
    p[1, 2] &= 12 - i
    wp.tile_bit_xor_inplace(p, 0, 1, i)
    wp.tile_bit_or_inplace(p, 1, 0, 16)
    wp.tile_bit_and_inplace(p, 0, 0, 3)
    wp.tile_store(P, p)
'''


def updates_expected(block_dim):
    lanes = np.arange(block_dim)
    O = np.array([10 * block_dim, block_dim, 5 * (block_dim % 2), np.bitwise_or.reduce(6 + lanes), -lanes.sum()])
    P = np.full((2, 3), 7)
    P[1, 2] = np.bitwise_and.reduce(np.concatenate([[7], 12 - lanes]))
    P[0, 1] = np.bitwise_xor.reduce(np.concatenate([[7], lanes]))
    P[1, 0] = 7 | 16
    P[0, 0] = 7 & 3
    return O.astype(np.int32), P.astype(np.int32)


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
@pytest.mark.parametrize("block_dim", [1, 3, 4])
def test_element_updates_apply_once_per_lane_as_in_warp(device, block_dim):
    """`t[i] op= v` and Warp's tile_*_inplace run in every lane: an add counts block_dim times and
    an xor cancels in pairs (measured on Warp 1.19 with enable_cpu_blocks)."""
    mod = build(UPDATES, "updates" + ("_emu" if device != "cpu" else ""), block_dim=block_dim, target=device)
    O, P = np.zeros(4, np.int32), np.zeros((2, 3), np.int32)  # O is one short: the tile overhangs
    mod.updates.launch_tiled(dim=1, inputs=[O, P], block_dim=block_dim, device=device)
    want_o, want_p = updates_expected(block_dim)
    np.testing.assert_array_equal(O, want_o[:4])
    np.testing.assert_array_equal(P, want_p)


def test_element_updates_match_warp_with_cpu_blocks(tmp_path, monkeypatch):
    wp, warp_updates = import_under_warp(UPDATES, "warp_updates", tmp_path, monkeypatch)

    mod = build(UPDATES, "updates", block_dim=3)
    O, P = wp.zeros(4, dtype=int, device="cpu"), wp.zeros((2, 3), dtype=int, device="cpu")
    wp.launch_tiled(warp_updates.updates, dim=1, inputs=[O, P], block_dim=3, device="cpu")
    mine = [np.zeros(4, np.int32), np.zeros((2, 3), np.int32)]
    mod.updates.launch_tiled(dim=1, inputs=mine, block_dim=3)
    np.testing.assert_array_equal(mine[0], O.numpy())
    np.testing.assert_array_equal(mine[1], P.numpy())
    sys.modules.pop("warp_updates", None)
