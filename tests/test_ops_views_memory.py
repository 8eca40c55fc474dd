"""Views, element access, indexed memory ops, atomics and per-lane ops: against numpy, on the CPU and
the CUDA emulation."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import OnEmulatorModule, build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def views(A: wp.array2d(dtype=float), R: wp.array1d(dtype=float), BC: wp.array2d(dtype=float),
          BR: wp.array2d(dtype=float), V: wp.array2d(dtype=float), ROW: wp.array1d(dtype=float),
          SQ: wp.array1d(dtype=float), RS: wp.array2d(dtype=float), AI: wp.array2d(dtype=int),
          EL: wp.array1d(dtype=float), ST: wp.array2d(dtype=float), AS: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 16))
    r = wp.tile_load(R, shape=(16,))
    col = wp.tile_load(A, shape=(8, 1))
    wp.tile_store(BC, wp.tile_broadcast(col, shape=(8, 16)))
    wp.tile_store(BR, wp.tile_broadcast(r, shape=(8, 16)) * a)
    wp.tile_store(V, wp.tile_view(a, offset=(2, 4), shape=(4, 4)))
    wp.tile_store(ROW, wp.tile_view(a, offset=(3,)))
    one = wp.tile_load(A, shape=(1, 16))
    wp.tile_store(SQ, wp.tile_squeeze(one))
    wp.tile_store(RS, wp.tile_reshape(a, shape=(16, -1)))
    wp.tile_store(AI, wp.tile_astype(a * 10.0, dtype=int))
    EL[0] = a[2, 3]
    EL[1] = wp.tile_extract(a, 7, 15)
    b = wp.tile_zeros(shape=(4, 4), dtype=float)
    b[1, 2] = 5.0
    b[3, 3] = a[0, 0] + 1.0
    wp.tile_store(ST, b)
    big = wp.tile_zeros(shape=(8, 8), dtype=float)
    wp.tile_assign(big, wp.tile_ones(shape=(2, 3), dtype=float), offset=(5, 4))
    wp.tile_store(AS, big)


@wp.kernel
def indexed(A: wp.array2d(dtype=float), IDX: wp.array1d(dtype=int), G: wp.array2d(dtype=float),
            S: wp.array2d(dtype=float), ACC: wp.array2d(dtype=float)):
    idx = wp.tile_load(IDX, shape=(4,))
    g = wp.tile_load_indexed(A, idx, shape=(4, 6), axis=0)
    wp.tile_store(G, g)
    wp.tile_store_indexed(S, idx, g * 2.0, axis=0)
    wp.tile_atomic_add_indexed(ACC, idx, wp.tile_ones(shape=(4, 6), dtype=float), axis=0)


@wp.kernel
def atomics(OUT: wp.array2d(dtype=float), COUNT: wp.array1d(dtype=int)):
    i = wp.tid()
    wp.tile_atomic_add(OUT, wp.tile_ones(shape=(4, 4), dtype=float), offset=(0, 0))
    wp.tile_atomic_add(OUT, wp.tile_full(shape=(4, 4), value=2.0, dtype=float), offset=(2, 2))


@wp.kernel
def simt_atomics(COUNT: wp.array1d(dtype=int), MX: wp.array1d(dtype=float), X: wp.array1d(dtype=float)):
    i = wp.tid()
    wp.atomic_add(COUNT, 0, 1)
    COUNT[1] += i
    wp.atomic_max(MX, 0, X[i])
    wp.atomic_min(MX, 1, X[i])


@wp.kernel(block_dim=32)
def lanes(A: wp.array1d(dtype=float), SUMS: wp.array1d(dtype=float), SCAN: wp.array1d(dtype=float),
          BUCKETS: wp.array2d(dtype=float), HITS: wp.array1d(dtype=int)):
    i, lane = wp.tid()
    x = A[i * 32 + lane]
    t = wp.tile(x * 2.0)
    s = wp.tile_sum(t)
    SCAN[i * 32 + lane] = wp.untile(wp.tile_scan_inclusive(t))
    if lane == 0:
        SUMS[i] = s[0]
    acc = wp.tile_zeros(shape=(4,), dtype=float)
    acc[lane % 4] += x
    wp.tile_store(BUCKETS, wp.tile_reshape(acc, shape=(1, 4)), offset=(i, 0))
    wp.atomic_add(HITS, i, 1)
'''


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def mod(request):
    """The module built for the CPU, or for the CUDA emulation with every launch sent there."""
    if request.param == "cpu":
        return build(SOURCE, "views_memory")
    return OnEmulatorModule(build(SOURCE, "views_memory_emu", target="cuda-emu"))


def test_views_and_element_access(mod):
    rng = np.random.default_rng(8)
    A = rng.standard_normal((8, 16)).astype(np.float32)
    R = rng.standard_normal(16).astype(np.float32)
    outs = dict(BC=np.zeros((8, 16), np.float32), BR=np.zeros((8, 16), np.float32), V=np.zeros((4, 4), np.float32),
                ROW=np.zeros(16, np.float32), SQ=np.zeros(16, np.float32), RS=np.zeros((16, 8), np.float32),
                AI=np.zeros((8, 16), np.int32), EL=np.zeros(2, np.float32), ST=np.zeros((4, 4), np.float32),
                AS=np.zeros((8, 8), np.float32))
    mod.views.launch_tiled(dim=1, inputs=[A, R] + list(outs.values()))
    np.testing.assert_array_equal(outs["BC"], np.broadcast_to(A[:, :1], (8, 16)))
    np.testing.assert_allclose(outs["BR"], R[None, :] * A)
    np.testing.assert_array_equal(outs["V"], A[2:6, 4:8])
    np.testing.assert_array_equal(outs["ROW"], A[3])
    np.testing.assert_array_equal(outs["SQ"], A[0])
    np.testing.assert_array_equal(outs["RS"], A.reshape(16, 8))
    np.testing.assert_array_equal(outs["AI"], (A * 10).astype(np.int32))
    np.testing.assert_array_equal(outs["EL"], [A[2, 3], A[7, 15]])
    want = np.zeros((4, 4), np.float32)
    want[1, 2], want[3, 3] = 5, A[0, 0] + 1
    np.testing.assert_allclose(outs["ST"], want)
    big = np.zeros((8, 8), np.float32)
    big[5:7, 4:7] = 1
    np.testing.assert_array_equal(outs["AS"], big)


def test_indexed_gather_scatter_and_atomic(mod):
    A = np.arange(7 * 6, dtype=np.float32).reshape(7, 6)
    IDX = np.array([5, 0, 9, 5], np.int32)  # 9 is out of bounds: reads 0, writes dropped
    G, S, ACC = np.zeros((4, 6), np.float32), np.zeros((7, 6), np.float32), np.zeros((7, 6), np.float32)
    mod.indexed.launch_tiled(dim=1, inputs=[A, IDX, G, S, ACC])
    np.testing.assert_array_equal(G, np.stack([A[5], A[0], np.zeros(6), A[5]]))
    want = np.zeros((7, 6), np.float32)
    want[5], want[0] = 2 * A[5], 2 * A[0]
    np.testing.assert_array_equal(S, want)
    acc = np.zeros((7, 6), np.float32)
    acc[5], acc[0] = 2, 1  # duplicate index 5 adds twice
    np.testing.assert_array_equal(ACC, acc)


def test_tile_atomic_add_from_many_blocks(mod):
    OUT = np.zeros((6, 6), np.float32)
    COUNT = np.zeros(1, np.int32)
    mod.atomics.launch_tiled(dim=200, inputs=[OUT, COUNT], num_threads=2)
    want = np.zeros((6, 6), np.float32)
    want[:4, :4] += 200
    want[2:6, 2:6] += 400
    np.testing.assert_array_equal(OUT, want)


def test_scalar_atomics_in_a_simt_launch(mod):
    n = 1000
    X = np.random.default_rng(9).standard_normal(n).astype(np.float32)
    COUNT = np.zeros(2, np.int32)
    MX = np.array([-np.inf, np.inf], np.float32)
    mod.simt_atomics.launch(dim=n, inputs=[COUNT, MX, X])
    assert list(COUNT) == [n, n * (n - 1) // 2]
    assert MX[0] == X.max() and MX[1] == X.min()


def test_lanes_tile_untile_and_per_lane_updates(mod):
    blocks = 3
    A = np.random.default_rng(10).standard_normal(32 * blocks).astype(np.float32)
    SUMS, SCAN = np.zeros(blocks, np.float32), np.zeros_like(A)
    BUCKETS, HITS = np.zeros((blocks, 4), np.float32), np.zeros(blocks, np.int32)
    mod.lanes.launch_tiled(dim=blocks, inputs=[A, SUMS, SCAN, BUCKETS, HITS])
    per_block = A.reshape(blocks, 32)
    np.testing.assert_allclose(SUMS, 2 * per_block.sum(1), rtol=1e-5)
    np.testing.assert_allclose(SCAN, np.cumsum(2 * per_block, axis=1).ravel(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(BUCKETS, per_block.reshape(blocks, 8, 4).sum(1), rtol=1e-5, atol=1e-6)
    assert list(HITS) == [32] * blocks, "a scalar atomic in a tiled kernel runs once per lane, as in Warp"
