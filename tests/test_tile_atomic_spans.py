"""Whole-tile atomic adds on the CPU (memory.h takes every span lock of the tile, then adds; the only
worker running in the process takes none): many blocks on several threads, tiles overlapping each
other and element atomics on the same spans, the old values a tile add returns, and one-thread
launches from several Python threads at once onto the same array."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel(block_dim=8)
def overlapping(OUT: wp.array2d(dtype=float)):
    i = wp.tid()
    wp.tile_atomic_add(OUT, wp.tile_ones(shape=(64, 64), dtype=float), offset=((i % 3) * 32, (i % 2) * 40))
    wp.atomic_add(OUT, 40, 50, 1.0)
    wp.atomic_add(OUT, 70, 3, 2.0)


@wp.kernel
def olds(OUT: wp.array2d(dtype=float), OLD: wp.array2d(dtype=float)):
    i = wp.tid()
    old = wp.tile_atomic_add(OUT, wp.tile_ones(shape=(48, 40), dtype=float), offset=(1, 3))
    wp.tile_atomic_add(OLD, old)
'''

BLOCKS, LANES = 4000, 8  # an element atomic in a tile kernel runs once per lane (block_dim=8)


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "tile_atomic_spans")


def test_overlapping_tile_adds_and_element_atomics_on_many_threads(mod):
    OUT = np.zeros((160, 203), np.float32)  # 812-byte rows: a tile's rows start anywhere in a lock span
    mod.overlapping.launch_tiled(dim=BLOCKS, inputs=[OUT], num_threads=4)
    want = np.zeros_like(OUT)
    for i in range(BLOCKS):
        r, c = (i % 3) * 32, (i % 2) * 40
        want[r:r + 64, c:c + 64] += 1
    want[40, 50] += BLOCKS * LANES
    want[70, 3] += 2 * BLOCKS * LANES
    np.testing.assert_array_equal(OUT, want)


def test_old_values_of_concurrent_tile_adds(mod):
    OUT = np.zeros((64, 50), np.float32)
    OLD = np.zeros((48, 40), np.float32)
    mod.olds.launch_tiled(dim=BLOCKS, inputs=[OUT, OLD], num_threads=4)
    want = np.zeros_like(OUT)
    want[1:49, 3:43] = BLOCKS
    np.testing.assert_array_equal(OUT, want)
    # each element's old values are 0, 1, ..., BLOCKS - 1 in some order
    np.testing.assert_array_equal(OLD, np.full_like(OLD, BLOCKS * (BLOCKS - 1) / 2))


def test_one_thread_launches_running_at_once_lock_against_each_other(mod):
    OUT = np.zeros((160, 203), np.float32)
    launches, callers = 6, 3
    errors = []

    def caller():
        try:
            for _ in range(launches):
                mod.overlapping.launch_tiled(dim=BLOCKS, inputs=[OUT], num_threads=1)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    want = np.zeros_like(OUT)
    for i in range(BLOCKS):
        r, c = (i % 3) * 32, (i % 2) * 40
        want[r:r + 64, c:c + 64] += 1
    want[40, 50] += BLOCKS * LANES
    want[70, 3] += 2 * BLOCKS * LANES
    np.testing.assert_array_equal(OUT, want * launches * callers)


def test_a_lone_one_thread_launch_adds_exactly(mod):
    OUT = np.zeros((64, 50), np.float32)
    OLD = np.zeros((48, 40), np.float32)
    mod.olds.launch_tiled(dim=BLOCKS, inputs=[OUT, OLD], num_threads=1)
    want = np.zeros_like(OUT)
    want[1:49, 3:43] = BLOCKS
    np.testing.assert_array_equal(OUT, want)
    np.testing.assert_array_equal(OLD, np.full_like(OLD, BLOCKS * (BLOCKS - 1) / 2))
