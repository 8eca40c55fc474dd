"""Scalar random draws wp.randf / randi / randu / randn: each advances its state variable as Warp's
do (in Python's evaluation order within a statement, by value into funcs), bit for bit Warp's
values on the CPU and the CUDA emulation against an independent numpy model of the PCG hash and
against Warp 1.19 itself; randf(state, low, high)'s adjoint against float64 finite differences
(Warp gives low/high no gradient); the static checks at exact line:col. A random tile drawn with
a per-lane rng uses each thread's own rng, as Warp's threads do."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build, import_under_warp
from tilec.diagnostics import CompileError
from tilec.pipeline import compile_source

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.func
def pair(rng: wp.uint32):
    a = wp.randf(rng)
    return a + wp.randf(rng)  # the func's own copy: the caller's state does not move


@wp.kernel
def draws(seed: int, f: wp.array2d(dtype=float), i: wp.array2d(dtype=int), u: wp.array1d(dtype=wp.uint32)):
    k = wp.tid()
    rng = wp.rand_init(seed, k)
    f[k, 0] = wp.randf(rng)
    f[k, 1] = wp.randf(rng, -2.0, 3.0)
    f[k, 2] = wp.randn(rng)
    f[k, 3] = wp.randf(rng) - 2.0 * wp.randf(rng)
    f[k, 4] = pair(rng)
    f[k, 5] = wp.randf(rng)
    i[k, 0] = wp.randi(rng)
    i[k, 1] = wp.randi(rng, -5, 9)
    if wp.randi(rng, 0, 2) == 0:
        i[k, 2] = wp.randi(rng)
    elif wp.randf(rng) < 0.5:
        i[k, 2] = -1
    i[k, 3] = wp.randi(rng, 0, 1000)
    u[k] = wp.randu(rng, wp.uint32(7), wp.uint32(4000000000))
    rng = wp.rand_init(wp.randi(rng))  # the assignment wins over the draw's advance
    f[k, 6] = wp.randf(rng)


@wp.kernel
def spread(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    k = wp.tid()
    rng = wp.rand_init(3, k)
    x = X[k]
    Y[k] = wp.randf(rng, x * x, 2.0 * x + 3.0) + wp.randf(rng, -x, x)


@wp.kernel
def lane_tiles(seed: int, out: wp.array2d(dtype=float), ints: wp.array2d(dtype=int)):
    b, lane = wp.tid()
    rng = wp.rand_init(seed, lane)
    wp.tile_store(out[b], wp.tile_randf(shape=12, rng=rng, min=-1.0, max=1.0))
    wp.tile_store(ints[b], wp.tile_randi(shape=12, rng=wp.rand_init(seed, lane * 7)))
'''
M = 0xFFFFFFFF
N = 9


def pcg(state: int) -> int:
    b = (state * 747796405 + 2891336453) & M
    c = (((b >> ((b >> 28) + 4)) ^ b) * 277803737) & M
    return ((c >> 22) ^ c) & M


class Stream:
    """A Warp generator state advanced draw by draw (an independent model of runtime random.h)."""

    def __init__(self, state: int):
        self.state = state

    def next(self) -> int:
        self.state = pcg(self.state)
        return self.state

    def randf(self, lo=None, hi=None):
        u = np.float32(self.next() >> 8) * np.float32(2.0 ** -24)
        return u if lo is None else np.float32(np.float32(hi) - np.float32(lo)) * u + np.float32(lo)

    def randi(self, lo=None, hi=None):
        d = self.next()
        if lo is not None:
            d = (d % ((hi - lo) & M) + lo) & M
        return np.uint32(d).view(np.int32)

    def randn(self):
        u1, u2 = self.randf(), self.randf()
        return np.float32(np.sqrt(np.float32(-2.0) * np.log(u1 + np.float32(5.96e-8)))
                          * np.cos(np.float32(2.0 * np.pi) * u2))


def model(seed: int):
    f, i, u = np.zeros((N, 7), np.float32), np.zeros((N, 4), np.int32), np.zeros(N, np.uint32)
    for k in range(N):
        s = Stream(pcg((seed + pcg(k)) & M))
        f[k, 0], f[k, 1], f[k, 2] = s.randf(), s.randf(-2.0, 3.0), s.randn()
        a = s.randf()
        f[k, 3] = a - np.float32(2.0) * s.randf()
        inner = Stream(s.state)
        f[k, 4] = inner.randf() + inner.randf()
        f[k, 5] = s.randf()
        i[k, 0], i[k, 1] = s.randi(), s.randi(-5, 9)
        if s.randi(0, 2) == 0:
            i[k, 2] = s.randi()
        elif s.randf() < 0.5:
            i[k, 2] = -1
        i[k, 3] = s.randi(0, 1000)
        u[k] = np.uint32(s.randi(7, 4000000000 - (1 << 32)).view(np.uint32))
        f[k, 6] = Stream(pcg(int(s.randi()) & M)).randf()
    return f, i, u


def outputs():
    return [np.zeros((N, 7), np.float32), np.zeros((N, 4), np.int32), np.zeros(N, np.uint32)]


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_draws_against_a_numpy_model(device):
    outs = outputs()
    build(SOURCE, "scalar_random", block_dim=1, target=device).draws.launch(dim=N, inputs=[77, *outs], device=device)
    want = model(77)
    # randn goes through logf/cosf: the model's float32 numpy may differ from libm by an ulp
    np.testing.assert_allclose(outs[0][:, 2], want[0][:, 2], rtol=2e-6)
    for got, ref in zip(outs, want):
        got, ref = np.delete(got, 2, axis=1) if got.ndim == 2 and got.shape[1] == 7 else got, (
            np.delete(ref, 2, axis=1) if ref.ndim == 2 and ref.shape[1] == 7 else ref)
        np.testing.assert_array_equal(got, ref)


def test_draws_match_warp_bit_for_bit(tmp_path, monkeypatch):
    wp, warp_mod = import_under_warp(SOURCE, "warp_scalar_random", tmp_path, monkeypatch)
    theirs = [wp.array(x, device="cpu") for x in outputs()]
    wp.launch(warp_mod.draws, dim=N, inputs=[5, *theirs], device="cpu")
    mod = build(SOURCE, "scalar_random", block_dim=1)
    mine = outputs()
    mod.draws.launch(dim=N, inputs=[5, *mine])
    for t, m in zip(theirs, mine):
        np.testing.assert_array_equal(t.numpy(), m)
    for block_dim in (4, 16):  # a tile drawn with each lane's own rng, per thread as in Warp
        theirs = [wp.zeros((2, 12), dtype=float, device="cpu"), wp.zeros((2, 12), dtype=int, device="cpu")]
        wp.launch_tiled(warp_mod.lane_tiles, dim=2, inputs=[11, *theirs], block_dim=block_dim, device="cpu")
        for device in ("cpu", "cuda-emu"):
            mine = [np.zeros((2, 12), np.float32), np.zeros((2, 12), np.int32)]
            lanes = build(SOURCE, "scalar_random", block_dim=block_dim, target=device)
            lanes.lane_tiles.launch_tiled(dim=2, inputs=[11, *mine], block_dim=block_dim, device=device)
            for t, m in zip(theirs, mine):
                np.testing.assert_array_equal(t.numpy(), m, err_msg=f"{device}, block_dim {block_dim}")
    sys.modules.pop("warp_scalar_random", None)


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_draw_between_bounds_differentiates_through_them(device):
    mod = build(SOURCE, "scalar_random", block_dim=1, target=device)
    X = np.random.default_rng(3).uniform(0.5, 2.0, N).astype(np.float32)
    kernel = mod.spread if device == "cpu" else OnEmulator(mod.spread)
    # float32 bounds (as Warp types them): a wide step, exact for this quadratic up to rounding
    check_gradients(kernel, N, [X, np.zeros(N, np.float32)], outputs=[1], wrt=[0], tiled=False, h=1e-2,
                    rtol=2e-3, atol=2e-3)


HEAD = """import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float), seed: int):
    rng = wp.rand_init(seed)
"""


@pytest.mark.parametrize("line, code, col, message", [
    ("while wp.randf(rng) < 0.5:\n        A[0] = 1.0", "TC0401", 11, "a random draw in a loop header"),
    ("for i in range(wp.randi(rng, 1, 4)):\n        A[i] = 1.0", "TC0401", 14, "a random draw in a loop header"),
    ("x = wp.randf(A[0])", "TC0203", 18, "`state` must be a generator state"),
    ("x = wp.randf(rng, 1.0)", "TC0303", 23, "give both `low` and `high`"),
    ("x = wp.randi(rng, 0.5, 2.0)", "TC0203", 23, "`low` must be an int32"),
    ("x = wp.randn(rng, 0.0, 1.0)", "TC0303", 23, "randn"),
])
def test_static_checks(line, code, col, message):
    with pytest.raises(CompileError) as err:
        compile_source(HEAD + "    " + line + "\n", "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.line, diag.span.col) == (code, 7, col)
    assert message in diag.message
