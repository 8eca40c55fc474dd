"""Block semantics of tile writes from many threads (issue #13): where several lanes of a block
write one tile element (`t[i] = x`), tilec keeps the leader's value (the lowest lane still
running), on the CPU and on the CUDA emulation alike; Warp 1.19 has no defined order there
(docs/language.md). Each write is reached by every lane (a write under a lane-dependent branch
is a barrier only some threads reach: undefined on a GPU, in Warp as in tilec). A lane that
returned early leaves no stale value behind, and its tile(x)
element and adjoint count as nothing, in full blocks and in a SIMT launch's partial last block."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build

pytestmark = [needs_cxx, pytest.mark.build]

PROGRAM = '''\
import warp as wp


@wp.kernel
def many_writers(y: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(4,), dtype=float)
    t[1] = float(lane) + 1.0
    t[lane % 2 + 2] = float(lane) + 200.0
    wp.tile_store(y, t)


@wp.kernel
def after_the_leader_returned(y: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(4,), dtype=float)
    t[2] = float(lane) + 1.0
    if lane == 0:
        return
    t[2] = float(lane) + 50.0
    wp.tile_store(y, t)


@wp.kernel
def early_return(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    s = wp.tile_sum(wp.tile(v * v))
    if i % 8 == 3:
        return
    y[i] = s[0] * v
'''

DEVICES = ["cpu", "cuda-emu"]


def _module(device, block_dim):
    return build(PROGRAM, "block_writes", block_dim=block_dim, target="cpu" if device == "cpu" else "cuda-emu")


@pytest.mark.parametrize("device", DEVICES)
def test_the_leaders_value_lands_where_lanes_write_one_element(device):
    """Every lane writes t[1]: lane 0's value, on both targets. t[2] from the even lanes: lane 0's.
    t[3] from the odd lanes: on the CPU the lowest writer's (lane 1); the GPU model lets the leader
    write last, and the other writers race as in Warp (not checked there)."""
    y = np.full(4, -1, np.float32)
    _module(device, 16).many_writers.launch_tiled(dim=1, inputs=[y], block_dim=16, device=device)
    np.testing.assert_array_equal(y[:3], [0, 1, 200])
    if device == "cpu":
        assert y[3] == 201
    else:
        assert y[3] in 200 + np.arange(1, 16, 2)


def test_a_returned_leader_leaves_no_stale_write():
    """Lane 0 wrote t[2] = 1 and returned; lanes 1-15 write 51..65: lane 1 is the leader now. (The
    .cu code's cooperative store needs every thread, so this is a CPU case: on a GPU a thread that
    returned before a barrier is undefined, in Warp as in tilec.)"""
    y = np.full(4, -1, np.float32)
    _module("cpu", 16).after_the_leader_returned.launch_tiled(dim=1, inputs=[y], block_dim=16)
    np.testing.assert_array_equal(y, [0, 0, 51, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_lanes_returning_after_a_tile_op_in_full_and_partial_blocks(device):
    """y_i = S_b x_i but for the lanes that return (i % 8 == 3); S_b sums the squares of every
    thread of block b that runs (36 threads in blocks of 8: the last has 4). The gradient of
    sum(g * y) in float64: dx_i = g_i S_b [i writes] + 2 x_i sum over the block's writers of g_j x_j."""
    n, bd = 36, 8
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    xd = x.astype(np.float64)
    writes = np.arange(n) % 8 != 3
    sums = np.repeat([np.sum(xd[b:b + bd] ** 2) for b in range(0, n, bd)], bd)[:n]
    gx = np.where(writes, g * xd, 0)
    block_gx = np.repeat([gx[b:b + bd].sum() for b in range(0, n, bd)], bd)[:n]
    kernel = _module(device, bd).early_return
    y = np.full(n, 7, np.float32)
    kernel.launch(dim=n, inputs=[x, y], block_dim=bd, device=device)
    np.testing.assert_allclose(y, np.where(writes, sums * xd, 7), rtol=1e-5, atol=1e-6)
    dx = np.zeros(n, np.float32)
    kernel.launch(dim=n, inputs=[x, np.zeros(n, np.float32)], adj_inputs=[dx, g.copy()], adjoint=True,
                  block_dim=bd, device=device)
    np.testing.assert_allclose(dx, np.where(writes, g * sums, 0) + 2 * xd * block_gx, rtol=1e-4, atol=1e-5)
