"""rand_init, tile_randf and tile_randi: bit for bit Warp's streams (its PCG hash, element e drawn
by thread e % block_dim), on the CPU and the CUDA emulation at two block sizes, against an
independent numpy model of the generator and against Warp 1.19 itself (enable_cpu_blocks) when it
is installed. Random tiles are constants to the adjoint."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, import_under_warp

pytestmark = [pytest.mark.build, needs_cxx]

FORWARD = '''
import warp as wp


@wp.kernel
def rnd(F: wp.array2d(dtype=float), G: wp.array1d(dtype=float), I: wp.array1d(dtype=int),
        J: wp.array1d(dtype=int), S: wp.array1d(dtype=wp.uint32), seed: int):
    b = wp.tid()
    rng = wp.rand_init(seed, b)
    wp.tile_store(F, wp.tile_randf(shape=(3, 5), rng=rng), offset=(b * 3, 0))
    wp.tile_store(G, wp.tile_randf(7, rng, -2.0, 3.0), offset=b * 7)
    wp.tile_store(I, wp.tile_randi(6, rng), offset=b * 6)
    wp.tile_store(J, wp.tile_randi(shape=(6,), rng=wp.rand_init(seed + 1), min=-5, max=9), offset=b * 6)
    S[b] = wp.rand_init(seed)
'''
GRADS = '''

@wp.kernel
def noisy(X: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64)):
    x = wp.tile_load(X, shape=(8,))
    wp.tile_store(Y, x * wp.tile_astype(wp.tile_randf(8, wp.rand_init(7), 0.5, 1.5), wp.float64))
'''
SOURCE = FORWARD + GRADS
M = 0xFFFFFFFF


def pcg(state):
    """The hash, vectorised over uint32 arrays (Jarzynski and Olano 2020)."""
    s = np.asarray(state, np.uint64)
    b = (s * 747796405 + 2891336453) & M
    c = (((b >> ((b >> 28) + 4)) ^ b) * 277803737) & M
    return ((c >> 22) ^ c) & M


def draws(rng, size, block_dim):
    out = np.zeros(size, np.uint64)
    for t in range(min(block_dim, size)):
        state = pcg((t + rng) & M)
        for e in range(t, size, block_dim):
            state = pcg(state)
            out[e] = state
    return out


def model(seed, blocks, block_dim):
    F, G = np.zeros((3 * blocks, 5), np.float32), np.zeros(7 * blocks, np.float32)
    I, J = np.zeros(6 * blocks, np.int32), np.zeros(6 * blocks, np.int32)
    for b in range(blocks):
        rng = int(pcg((seed + int(pcg(b))) & M))
        unit = lambda n: (draws(rng, n, block_dim) >> 8).astype(np.float32) * np.float32(2.0 ** -24)  # noqa: E731
        F[3 * b:3 * b + 3] = unit(15).reshape(3, 5)
        G[7 * b:7 * b + 7] = np.float32(5.0) * unit(7) + np.float32(-2.0)  # rounded product, then the add
        I[6 * b:6 * b + 6] = draws(rng, 6, block_dim).astype(np.uint32).view(np.int32)
        J[6 * b:6 * b + 6] = (draws(int(pcg(seed + 1)), 6, block_dim) % 14 - 5).astype(np.int32)
    return F, G, I, J, np.full(blocks, pcg(seed), np.uint32)


def outputs(blocks, short=0):
    return [np.zeros((3 * blocks - short, 5), np.float32), np.zeros(7 * blocks - short, np.float32),
            np.zeros(6 * blocks - short, np.int32), np.zeros(6 * blocks - short, np.int32),
            np.zeros(blocks, np.uint32)]


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
@pytest.mark.parametrize("block_dim", [4, 32])
def test_streams_against_a_numpy_model(device, block_dim):
    mod = build(SOURCE, "random" + ("_emu" if device != "cpu" else ""), block_dim=block_dim, target=device)
    outs = outputs(3, short=1)  # the last block's tiles overhang every array but S
    mod.rnd.launch_tiled(dim=3, inputs=outs + [np.int32(42)], block_dim=block_dim, device=device)
    for got, want in zip(outs, model(42, 3, block_dim)):
        np.testing.assert_array_equal(got, want[: len(got)])
    assert len(np.unique(outs[0])) == outs[0].size  # three blocks, three streams


def test_streams_match_warp_bit_for_bit(tmp_path, monkeypatch):
    wp, warp_random = import_under_warp(FORWARD, "warp_random", tmp_path, monkeypatch)

    theirs = [wp.array(x, device="cpu") for x in outputs(2)]
    wp.launch_tiled(warp_random.rnd, dim=2, inputs=theirs + [1234], block_dim=4, device="cpu")
    mine = outputs(2)
    build(SOURCE, "random", block_dim=4).rnd.launch_tiled(dim=2, inputs=mine + [np.int32(1234)], block_dim=4)
    for t, m in zip(theirs, mine):
        np.testing.assert_array_equal(t.numpy(), m)
    sys.modules.pop("warp_random", None)


def test_random_tiles_are_constants_to_the_adjoint():
    mod = build(SOURCE, "random", block_dim=4)
    X = np.random.default_rng(51).standard_normal(7)  # the (8,) tile overhangs
    check_gradients(mod.noisy, 1, [X, np.zeros(7)], outputs=[1], wrt=[0])
