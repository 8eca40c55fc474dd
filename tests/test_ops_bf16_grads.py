"""Gradients of tile_matmul with bfloat16 operands (#14 item 5; Warp 1.19 refuses this backward
pass). The adjoint products accumulate in float32 (Warp has no bfloat16 accumulator) and round to
bfloat16 once. Checked against float64 central finite differences taken on the bfloat16 values
themselves: an element steps to its bfloat16 neighbours above and below (the loss is linear in
each operand, so the quotient is exact up to the float32 output's rounding), at a tolerance of a
few bfloat16 ulps (2^-8 relative); float32 operands step by h as usual. CPU and CUDA emulation,
with a tile overhanging its array."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from test_annotations import from_bf16, to_bf16

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''import warp as wp

BF = wp.bfloat16


@wp.kernel
def both(a: wp.array2d(dtype=BF), b: wp.array2d(dtype=BF), d: wp.array2d(dtype=float)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=(4, 8), offset=(i * 4, 0))
    tb = wp.tile_load(b, shape=(8, 4))
    acc = wp.tile_zeros(shape=(4, 4), dtype=float)
    wp.tile_matmul(ta, tb, acc)
    wp.tile_store(d, acc, offset=(i * 4, 0))


@wp.kernel
def mixed(a: wp.array2d(dtype=BF), b: wp.array2d(dtype=float), d: wp.array2d(dtype=float)):
    ta = wp.tile_load(a, shape=(4, 8))
    tb = wp.tile_load(b, shape=(8, 4))
    acc = wp.tile_ones(shape=(4, 4), dtype=float)
    wp.tile_matmul(ta, tb, acc, alpha=0.5)
    wp.tile_store(d, wp.tile_map(wp.sin, acc))
'''

DEVICES = ["cpu", "cuda-emu"]


def loss(kernel, dim, args, out, weight, device):
    args[out][...] = 0
    kernel.launch_tiled(dim=dim, inputs=args, device=device)
    return float(np.sum(weight.astype(np.float64) * args[out].astype(np.float64)))


def finite_differences(kernel, dim, args, out, weight, k, device):
    """d loss / d args[k] per element, in float64; bfloat16 elements step to their neighbours."""
    x = args[k].reshape(-1)
    grad = np.zeros(x.size)
    for i in range(x.size):
        old = x[i]
        if x.dtype == np.uint16:
            up, down = old + np.uint16(1), old - np.uint16(1)  # neighbours (no sign or exponent edge here)
            step = float(from_bf16(up)) - float(from_bf16(down))
        else:
            h = np.float32(1e-2)
            up, down = old + h, old - h
            step = float(up) - float(down)
        x[i] = up
        hi = loss(kernel, dim, args, out, weight, device)
        x[i] = down
        lo = loss(kernel, dim, args, out, weight, device)
        x[i] = old
        grad[i] = (hi - lo) / step
    return grad.reshape(args[k].shape)


def adjoint(kernel, dim, args, out, weight, device):
    adj = [np.zeros_like(a) for a in args]
    adj[out] = weight.copy()
    args[out][...] = 0
    kernel.launch_tiled(dim=dim, inputs=args, adj_inputs=adj, adjoint=True, device=device)
    return [from_bf16(g).astype(np.float64) if g.dtype == np.uint16 else g.astype(np.float64) for g in adj]


def away_from_edges(x):
    """bfloat16 values of magnitude 0.5 to 2 (a step of one ulp stays far above the float32 output's
    rounding) whose neighbours keep the exponent (mantissa not at either end)."""
    bits = to_bf16(np.sign(x) * (0.5 + np.minimum(np.abs(x), 1.5)))
    mantissa = bits & 0x7F
    bits = np.where(mantissa == 0, bits + np.uint16(3), bits)
    return np.where(mantissa == 0x7F, bits - np.uint16(3), bits).astype(np.uint16)


@pytest.mark.parametrize("device", DEVICES)
def test_bfloat16_operands_get_float64_fd_gradients(device):
    mod = build(SOURCE, "bf16grads" + ("_emu" if device != "cpu" else ""), block_dim=16, target=device)
    rng = np.random.default_rng(21)
    A = away_from_edges(rng.standard_normal((7, 8)).astype(np.float32))  # two blocks: the second overhangs
    B = away_from_edges(rng.standard_normal((8, 4)).astype(np.float32))
    D = np.zeros((7, 4), np.float32)
    W = rng.standard_normal(D.shape).astype(np.float32)
    dA, dB, _ = adjoint(mod.both, 2, [A.copy(), B.copy(), D], 2, W, device)
    a, b = from_bf16(A).astype(np.float64), from_bf16(B).astype(np.float64)
    np.testing.assert_allclose(dA, W @ b.T, rtol=1e-2, atol=1e-2)  # the mathematics, rounded to bfloat16
    np.testing.assert_allclose(dB, a.T @ W, rtol=1e-2, atol=1e-2)
    for k, got in ((0, dA), (1, dB)):
        fd = finite_differences(mod.both, 2, [A.copy(), B.copy(), D], 2, W, k, device)
        np.testing.assert_allclose(got, fd, rtol=1e-2, atol=1e-2, err_msg=f"gradient of argument {k}")


@pytest.mark.parametrize("device", DEVICES)
def test_mixed_bfloat16_float32_operands(device):
    mod = build(SOURCE, "bf16grads" + ("_emu" if device != "cpu" else ""), block_dim=16, target=device)
    rng = np.random.default_rng(22)
    A = away_from_edges(rng.standard_normal((4, 8)).astype(np.float32))
    B = rng.standard_normal((8, 4)).astype(np.float32)
    D = np.zeros((4, 4), np.float32)
    W = rng.standard_normal(D.shape).astype(np.float32)
    dA, dB, _ = adjoint(mod.mixed, 1, [A.copy(), B.copy(), D], 2, W, device)
    for k, got in ((0, dA), (1, dB)):
        fd = finite_differences(mod.mixed, 1, [A.copy(), B.copy(), D], 2, W, k, device)
        np.testing.assert_allclose(got, fd, rtol=2e-2, atol=2e-2, err_msg=f"gradient of argument {k}")
    assert np.abs(dA).max() > 0.1 and np.abs(dB).max() > 0.1  # not vacuous
