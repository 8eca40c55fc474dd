"""The CPU launch's kept helper threads (runtime_headers/tilec/thread_pool.h): launches on several
threads from several Python threads at once (each takes its own helpers), many short launches in a
row (helpers handed work and taken back before they begin), more threads than the pool keeps, a
forked child's launches, the per-thread gradient sums on reused helpers, and fibers a thread keeps
from one launch to the next."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

T = 16


@wp.kernel
def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range(A.shape[1] // T):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * T, j * T))


@wp.kernel(block_dim=64)
def lanes64(X: wp.array(dtype=float), Y: wp.array(dtype=float)):
    # each lane's element gathered into a tile: the block's lanes run as fibers
    i, lane = wp.tid()
    t = wp.tile(X[i * 64 + lane])
    wp.tile_store(Y, wp.tile_sum(t), offset=i)


@wp.kernel(block_dim=32)
def lanes32(X: wp.array(dtype=float), Y: wp.array(dtype=float)):
    i, lane = wp.tid()
    t = wp.tile(X[i * 64 + lane])
    wp.tile_store(Y, wp.tile_sum(t), offset=i)


@wp.kernel
def count(OUT: wp.array(dtype=float)):
    i = wp.tid()
    wp.tile_atomic_add(OUT, wp.tile_ones(shape=4, dtype=float), offset=(i % 3) * 4)
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "thread_pool")


def _gemm_case(seed: int, n: int = 128):
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    return A, B, A.astype(np.float64) @ B


def test_launches_on_several_threads_from_several_python_threads_at_once(mod):
    callers, launches = 4, 5
    errors: list = []

    def caller(seed):
        try:
            A, B, want = _gemm_case(seed)
            for k in range(launches):
                C = np.zeros_like(A)
                mod.gemm.launch_tiled(dim=(8, 8), inputs=[A, B, C], num_threads=2 + k % 3)
                np.testing.assert_allclose(C, want, rtol=1e-4, atol=1e-3)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=caller, args=(s,)) for s in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_many_short_launches_run_every_block_once(mod):
    # 1-7 blocks on up to 8 threads, 300 times: helpers are often taken back before they begin
    OUT = np.zeros(12, np.float32)
    want = np.zeros(12, np.float64)
    for k in range(300):
        blocks = 1 + k % 7
        mod.count.launch_tiled(dim=blocks, inputs=[OUT], num_threads=8)
        for i in range(blocks):
            want[(i % 3) * 4:(i % 3) * 4 + 4] += 1
    np.testing.assert_array_equal(OUT, want)


def test_more_threads_than_the_pool_keeps(mod):
    # 300 threads: 256 kept helpers, the caller, and threads started for the launch
    OUT = np.zeros(12, np.float32)
    mod.count.launch_tiled(dim=3000, inputs=[OUT], num_threads=300)
    np.testing.assert_array_equal(OUT, np.full(12, 1000, np.float32))


def test_gradient_sums_on_reused_helpers(mod):
    # each launch sums per thread on the same kept helpers; the sums start afresh every launch
    A, B, _ = _gemm_case(3)
    dC = np.random.default_rng(4).standard_normal(A.shape).astype(np.float32)
    dA, dB = np.zeros_like(A), np.zeros_like(B)
    for _ in range(3):
        mod.gemm.launch_tiled(dim=(8, 8), inputs=[A, B, np.zeros_like(A)], adj_inputs=[dA, dB, dC.copy()],
                              adjoint=True, num_threads=2)
    np.testing.assert_allclose(dA, 3 * (dC.astype(np.float64) @ B.T), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(dB, 3 * (A.T.astype(np.float64) @ dC), rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_launches_on_several_threads(mod):
    A, B, want = _gemm_case(5)
    mod.gemm.launch_tiled(dim=(8, 8), inputs=[A, B, np.zeros_like(A)], num_threads=2)  # the parent's helpers
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own pool (the parent's helpers do not exist here)
        ok = 0
        try:
            C = np.zeros_like(A)
            for _ in range(3):
                mod.gemm.launch_tiled(dim=(8, 8), inputs=[A, B, C], num_threads=2)
            ok = int(np.allclose(C, want, rtol=1e-4, atol=1e-3))
        finally:
            os.write(write, bytes([ok]))
            os._exit(0)
    os.close(write)
    got = os.read(read, 1)
    os.waitpid(pid, 0)
    assert got == b"\x01"


def test_fibers_kept_between_launches_of_one_and_other_block_dims(mod):
    # a thread keeps its fibers for the next launch of the same block_dim, and makes new ones for another
    rng = np.random.default_rng(9)
    for block_dim, threads in ((64, 1), (64, 1), (32, 1), (64, 1), (64, 2), (32, 2), (64, 2)):
        X = rng.standard_normal(20 * 64).astype(np.float32)
        Y = np.zeros(20, np.float32)
        kernel = mod.lanes64 if block_dim == 64 else mod.lanes32
        kernel.launch_tiled(dim=20, inputs=[X, Y], num_threads=threads)
        want = X.reshape(20, 64)[:, :block_dim].astype(np.float64).sum(axis=1)
        np.testing.assert_allclose(Y, want, rtol=1e-5, atol=1e-5)
