"""A SIMT launch of a tile kernel whose last block is partial (issue #13 item 8): `launch(dim=n,
block_dim=B)` with n not a multiple of B. Warp 1.19 runs the last block with its n % B threads
only; tile element e belongs to thread e % B, and the missing threads' elements are inactive: not
stored, left out of reductions and scans (an empty group gets the operator's identity). tilec's
CPU runtime follows that rule (runtime_headers/tilec/lanes.h, Ctx::live), and so does the .cu code
on cuda and cuda-emu (the last block runs whole, the missing threads as stand-ins whose own
effects are masked: ctx_cuda.h); ops that read elements at other positions (matmul, transpose,
t[i] ...) are refused unless their tiles fit in the last block's threads. Each program runs under
Warp 1.19 (CPU blocks) and through tilec, on the CPU and on the CUDA emulation."""
from __future__ import annotations

import functools
import types

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build, import_under_warp

pytestmark = [needs_cxx, pytest.mark.build]

PROGRAM = '''\
import warp as wp


@wp.kernel
def lane_sum(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    s = wp.tile_sum(wp.tile(v * v))
    wp.tile_atomic_add(out, s)


@wp.kernel
def lane_map(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v) * 3.0
    y[i] = wp.untile(wp.tile_map(wp.sin, t))


@wp.kernel
def axis_folds(x: wp.array2d(dtype=float), s: wp.array(dtype=float), p: wp.array(dtype=float),
               lo: wp.array(dtype=float), hi: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(32, 8))
    wp.tile_store(s, wp.tile_sum(t, axis=1))
    wp.tile_store(p, wp.tile_reduce(wp.mul, t, axis=1))
    wp.tile_store(lo, wp.tile_reduce(wp.min, t, axis=1))
    wp.tile_store(hi, wp.tile_reduce(wp.max, t, axis=1))


@wp.kernel
def scans(x: wp.array(dtype=float), inc: wp.array(dtype=float), exc: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=128)
    wp.tile_store(inc, wp.tile_scan_inclusive(t))
    wp.tile_store(exc, wp.tile_scan_exclusive(t))


@wp.kernel
def lane_writes(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_zeros(shape=(16,), dtype=float)
    lane = i % 64
    if lane < 16:
        t[lane] = x[i] * 2.0
    wp.tile_atomic_add(y, t)


@wp.func
def plus_one(a: float, b: float):
    return a + b + 1.0


@wp.kernel
def odd_fold(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(16, 8))
    wp.tile_store(y, wp.tile_reduce(plus_one, t, axis=1))


@wp.func
def plus(a: float, b: float):
    return a + b


@wp.kernel
def user_sum_fold(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(16, 8))
    wp.tile_store(y, wp.tile_reduce(plus, t, axis=1))


@wp.kernel
def square(a: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(8, 8))
    wp.tile_store(c, wp.tile_matmul(t, t))
'''

B = 64


class OnDevice:
    """A built module whose kernels launch (and _run) on one device: "cpu", or "cuda-emu", where
    the .cu code runs the partial last block whole, its missing threads as stand-ins
    (runtime_headers/tilec/ctx_cuda.h)."""

    def __init__(self, module, device):
        self.module, self.device = module, device

    def __getattr__(self, name):
        kernel = getattr(self.module, name)
        run = kernel._run
        return types.SimpleNamespace(
            launch=functools.partial(kernel.launch, device=self.device),
            _run=lambda grid, tid, inputs, *rest: run(grid, tid, inputs, *rest[:4], self.device, *rest[5:]))


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def tl_mod(request):
    return OnDevice(build(PROGRAM, "partial_blocks", block_dim=B, target=request.param), request.param)


def _warp(tmp_path, monkeypatch):
    return import_under_warp(PROGRAM, "partial_blocks_warp", tmp_path, monkeypatch)


def _both(wp, warp_kernel, tl_kernel, n, arrays, num_threads=0):
    """The arrays after Warp's launch and after tilec's, from the same inputs."""
    w = [wp.array(a, device="cpu") for a in arrays]
    wp.launch(warp_kernel, dim=n, inputs=w, block_dim=B, device="cpu")
    t = [a.copy() for a in arrays]
    tl_kernel.launch(dim=n, inputs=t, block_dim=B, num_threads=num_threads)
    return [a.numpy() for a in w], t


def active(size, n):
    """Warp's rule in the last block of n % B threads: element e is active if e % B < n % B."""
    return np.arange(size) % B < n % B


@pytest.mark.parametrize("n", [133, 5, 64 * 2 + 63])
def test_lane_tiles_sum_only_the_threads_that_run(tl_mod, tmp_path, monkeypatch, n):
    wp, prog = _warp(tmp_path, monkeypatch)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    (_, want), (_, got) = _both(wp, prog.lane_sum, tl_mod.lane_sum, n, [x, np.zeros(1, np.float32)])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got, [np.sum(x.astype(np.float64) ** 2)], rtol=1e-5)
    dx = np.zeros_like(x)
    tl_mod.lane_sum.launch(dim=n, inputs=[x, np.zeros(1, np.float32)], adj_inputs=[dx, np.full(1, 0.5, np.float32)],
                           adjoint=True, block_dim=B)
    np.testing.assert_allclose(dx, x, rtol=1e-6)  # d(0.5 sum x^2)/dx


def test_untile_gives_each_thread_its_element(tl_mod, tmp_path, monkeypatch):
    wp, prog = _warp(tmp_path, monkeypatch)
    n = 70
    x = np.linspace(-1, 1, n).astype(np.float32)
    (_, want), (_, got) = _both(wp, prog.lane_map, tl_mod.lane_map, n, [x, np.zeros(n, np.float32)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    dx = np.zeros_like(x)
    tl_mod.lane_map.launch(dim=n, inputs=[x, np.zeros(n, np.float32)], adj_inputs=[dx, g.copy()], adjoint=True,
                           block_dim=B)
    np.testing.assert_allclose(dx, 3 * np.cos(3 * x.astype(np.float64)) * g, rtol=1e-5, atol=1e-6)


def test_axis_folds_leave_inactive_elements_out_and_empty_rows_get_the_identity(tl_mod, tmp_path, monkeypatch):
    """dim=32, block_dim=64: rows 0-3 of the (32, 8) tile are active (elements 0-31), rows 4-7
    not, and so on: the sums, products, minima and maxima of rows 4-7, 12-15 ... are 0, 1, +inf and
    -inf, as in Warp."""
    wp, prog = _warp(tmp_path, monkeypatch)
    n = 32
    x = (1 + np.random.default_rng(3).random((32, 8))).astype(np.float32)
    outs = [np.zeros(32, np.float32) for _ in range(4)]
    want, got = _both(wp, prog.axis_folds, tl_mod.axis_folds, n, [x, *outs])
    for w, g in zip(want[1:], got[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-5)
    rows = active(256, n).reshape(32, 8).all(axis=1)
    np.testing.assert_allclose(got[1], np.where(rows, x.astype(np.float64).sum(axis=1), 0), rtol=1e-5)
    np.testing.assert_array_equal(got[3][~rows], np.inf)
    np.testing.assert_array_equal(got[4][~rows], -np.inf)
    # the adjoint of the row sums and products: the active elements only (float64 reference)
    gs, gp = np.ones(32, np.float32), np.full(32, 0.25, np.float32)
    dx = np.zeros_like(x)
    tl_mod.axis_folds.launch(dim=n, inputs=[x, *[np.zeros(32, np.float32) for _ in range(4)]],
                             adj_inputs=[dx, gs, gp, np.zeros(32, np.float32), np.zeros(32, np.float32)],
                             adjoint=True, block_dim=B)
    xd = x.astype(np.float64)
    want_dx = np.where(rows[:, None], 1 + 0.25 * xd.prod(axis=1, keepdims=True) / xd, 0)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-5)


def test_scans_run_over_the_active_elements(tl_mod, tmp_path, monkeypatch):
    """dim=96, block_dim=64: the second block has 32 threads; its 128-element scans run over
    elements 0-31 and 64-95 only, and store only those (Warp's own test_tile_scan_partial_block)."""
    wp, prog = _warp(tmp_path, monkeypatch)
    n = 96
    x = np.random.default_rng(4).random(128).astype(np.float32)
    # both blocks store elements 0-31 and 64-95: the block that stores last wins. Warp's CPU runs
    # the blocks in order, and so does tilec on one thread (on two, the result is a race)
    want, got = _both(wp, prog.scans, tl_mod.scans, n, [x, np.full(128, -7, np.float32), np.full(128, -7, np.float32)],
                      num_threads=1)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5)
    # the adjoint in a launch of one partial block (dim=32): dx_k = sum of g_j over active j >= k,
    # for active k; the seeds of the active (stored) elements are consumed, the others kept
    g = np.random.default_rng(5).standard_normal(128).astype(np.float32)
    dx, seed = np.zeros_like(x), g.copy()
    tl_mod.scans.launch(dim=32, inputs=[x, np.zeros(128, np.float32), np.zeros(128, np.float32)],
                        adj_inputs=[dx, seed, np.zeros(128, np.float32)], adjoint=True, block_dim=B)
    live = active(128, 32)
    want = np.where(live, np.cumsum(np.where(live, g, 0)[::-1].astype(np.float64))[::-1], 0)
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(seed, np.where(live, 0, g))


def test_an_op_reading_other_positions_needs_its_tile_active(tl_mod):
    a, c = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match=r"square: launch\(dim=70, block_dim=64\) of a tile kernel: dim is not a "
                                         r"multiple of block_dim=64, so its last block has only 6 of 64 threads; an "
                                         r"operation of this kernel reads a tile of 64 elements at other positions"):
        tl_mod.square.launch(dim=70, inputs=[a, c], block_dim=B)
    assert not c.any()


STACKS = '''\
import warp as wp


@wp.kernel
def survivors(out_count: wp.array(dtype=int)):
    tid = wp.tid()
    lane = tid % 32
    if lane == 0 or lane % 3 == 0:
        return
    s = wp.tile_stack(capacity=64, dtype=int)
    wp.tile_stack_push(s, lane, True)
    out_count[tid] = wp.tile_stack_count(s)
'''


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
@pytest.mark.parametrize("n", [59, 64])
def test_a_block_whose_lane_0_returned_still_makes_its_tile_effects(n, device):
    """Lane 0 returns before the stack exists: the lowest lane still running resets it (Warp elects
    the same), so each block counts its own pushes, in a full and in a partial last block. On
    cuda-emu the partial block's stand-ins (threads 59-63, whose tid wraps to 0-4) push nothing."""
    mod = build(STACKS, "partial_stacks", block_dim=32, target="cpu" if device == "cpu" else "cuda-emu")
    out = np.full(n, -1, np.int32)
    mod.survivors.launch(dim=n, inputs=[out], block_dim=32, device=device)
    for start in range(0, n, 32):
        lanes = [k for k in range(min(32, n - start)) if k != 0 and k % 3 != 0]
        assert (out[[start + k for k in lanes]] == len(lanes)).all(), out


def test_an_empty_group_of_an_operator_without_identity_fails_the_launch(tl_mod):
    """dim=16, block_dim=64: rows 2-7 of the (16, 8) tile have no active element; a + b + 1 has no
    identity, so there is no value for them (Warp 1.19 fails such a launch too)."""
    x = np.ones((16, 8), np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(RuntimeError, match=r"odd_fold: a tile_reduce/argmax/argmin group of the partial last block "
                                           r"has no active element and its operator no identity"):
        tl_mod.odd_fold.launch(dim=16, inputs=[x, y], block_dim=B)
    tl_mod.odd_fold.launch(dim=64, inputs=[x, y], block_dim=B)  # whole blocks: every row folds
    np.testing.assert_array_equal(y, np.full(16, 8 + 7, np.float32))


def test_an_empty_group_of_a_user_operator_fails_even_when_zero_would_do(tl_mod):
    """Warp declares identities for wp.add, wp.mul, wp.min and wp.max only: a user func that adds
    (0 would serve) fails the launch all the same, rather than tilec guessing an identity."""
    x = np.ones((16, 8), np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(RuntimeError, match=r"user_sum_fold: a tile_reduce/argmax/argmin group"):
        tl_mod.user_sum_fold.launch(dim=16, inputs=[x, y], block_dim=B)
    tl_mod.user_sum_fold.launch(dim=64, inputs=[x, y], block_dim=B)
    np.testing.assert_array_equal(y, np.full(16, 8, np.float32))


def test_the_c_entry_refuses_an_undefined_partial_block_itself(tl_mod):
    """A program calling the C entry directly (not through the loader) gets status 6, not a result
    that depends on unset elements."""
    a, c = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    with pytest.raises(ValueError, match=r"square: this build cannot run a partial last block of this launch"):
        tl_mod.square._run((70,), 3, [a, c], (), None, None, False, "cpu", B, 0)  # 3: the loader's _ROWS_TID
    assert not c.any()
    tl_mod.square._run((128,), 3, [a, c], (), None, None, False, "cpu", B, 0)  # whole blocks run
    np.testing.assert_allclose(c, np.full((8, 8), 8.0, np.float32))


def test_a_per_thread_tile_write_needs_its_tile_active(tl_mod, tmp_path, monkeypatch):
    """t[i] = x writes where the thread says: in a last block of fewer threads than the tile has
    elements it may write an element of a missing thread (refused); with at least as many threads
    every element is active, and the result is Warp's."""
    x = np.arange(1, 81, dtype=np.float32)
    y = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match=r"lane_writes: launch\(dim=70, block_dim=64\).*only 6 of 64 threads; an "
                                         r"operation of this kernel reads a tile of 16 elements"):
        tl_mod.lane_writes.launch(dim=70, inputs=[x, y], block_dim=B)
    wp, prog = _warp(tmp_path, monkeypatch)
    (_, want), (_, got) = _both(wp, prog.lane_writes, tl_mod.lane_writes, 80, [x, y])
    np.testing.assert_allclose(got, want)
