"""Both launch forms of a tile kernel (issue #13 item 8) and block_dim per kernel: from the
decorator, else the `block_dim=` constants of the file's launches (one instance each), else
--block-dim; the loader runs the instance matching the launch."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build, compile_ir, import_under_warp

PROGRAM = '''\
import tilec as tl
import warp as wp


@wp.kernel
def block_sums(x: wp.array(dtype=float), y: wp.array(dtype=float), sums: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v * v)
    s = wp.tile_sum(t)
    y[i] = v * s[0]
    wp.tile_store(sums, s, offset=i // 16)


@wp.kernel
def grid2(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    r, c = wp.tid()
    v = x[r, c]
    t = wp.tile(v)
    y[r, c] = wp.untile(t * 2.0) + wp.tile_sum(t)[0]


@tl.kernel(block_dim=8)
def pinned(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel
def unlaunched(x: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=4)
    wp.tile_store(x, t * 2.0)


@wp.kernel
def plain(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0


def host(x, y, s, x2, y2):
    wp.launch(plain, dim=4, inputs=[x], block_dim=64)
    wp.launch(plain, dim=4, inputs=[x], block_dim=128)
    wp.launch(block_sums, dim=64, inputs=[x, y, s], block_dim=16)
    wp.launch(block_sums, dim=64, inputs=[x, y, s], block_dim=32)
    for bd in (8, 16):
        wp.launch(grid2, dim=(3, 16), inputs=[x2, y2], block_dim=bd)
    wp.launch(pinned, dim=4, inputs=[x], block_dim=64)
'''


def test_block_dims_come_from_decorator_launches_then_command_line():
    module = compile_ir(PROGRAM, "forms", block_dim=64)
    got = sorted((k.name, k.launch_name, k.block_dim) for k in module.kernels)
    assert got == [
        ("block_sums__block_dim_16", "block_sums", 16), ("block_sums__block_dim_32", "block_sums", 32),
        ("grid2__block_dim_16", "grid2", 16), ("grid2__block_dim_8", "grid2", 8),
        ("pinned", "", 8), ("plain__block_dim_128", "plain", 128), ("plain__block_dim_64", "plain", 64),
        ("unlaunched", "", 64),
    ]


def reference_block_sums(x, block_dim):
    sums = (x.reshape(-1, block_dim) ** 2).sum(axis=1)
    return x * np.repeat(sums, block_dim), sums


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_simt_launch_of_a_tile_kernel(device):
    mod = build(PROGRAM, "forms", block_dim=64, target="cpu" if device == "cpu" else "cuda-emu")
    x = np.linspace(-1, 1, 64).astype(np.float32)
    for bd in (16, 32):
        y, sums = np.zeros(64, np.float32), np.zeros(4, np.float32)
        mod.block_sums.launch(dim=64, inputs=[x, y, sums], block_dim=bd, device=device)
        want_y, want_sums = reference_block_sums(x.astype(np.float64), bd)
        np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
        if bd == 16:  # block b stores its sum at offset (16 b) // 16 = b
            np.testing.assert_allclose(sums, want_sums, rtol=1e-5)
        # adjoint of sum(seed * y): d/dx_i = seed_i * s_b + 2 x_i * sum_{j in b} seed_j x_j
        seed = np.cos(np.arange(64)).astype(np.float32)
        adj_x = np.zeros(64, np.float32)
        mod.block_sums.launch(dim=64, inputs=[x, y, sums], adj_inputs=[adj_x, seed.copy(), np.zeros(4, np.float32)],
                              adjoint=True, block_dim=bd, device=device)
        xd = x.astype(np.float64)
        blocks = (seed * xd).reshape(-1, bd).sum(axis=1)
        want = seed * np.repeat(want_sums, bd) + 2 * xd * np.repeat(blocks, bd)
        np.testing.assert_allclose(adj_x, want, rtol=1e-4, atol=1e-5)


@needs_cxx
@pytest.mark.build
def test_simt_launch_with_two_dimensions_runs_blocks_along_the_last():
    mod = build(PROGRAM, "forms", block_dim=64)
    x = np.arange(48, dtype=np.float32).reshape(3, 16) / 10
    for bd in (8, 16):
        y = np.zeros_like(x)
        mod.grid2.launch(dim=(3, 16), inputs=[x, y], block_dim=bd)
        blocks = x.reshape(3, 16 // bd, bd).sum(axis=2)
        np.testing.assert_allclose(y, 2 * x + np.repeat(blocks, bd, axis=1), rtol=1e-5)


@needs_cxx
@pytest.mark.build
def test_the_loader_picks_the_instance_or_names_the_ones_there_are():
    mod = build(PROGRAM, "forms", block_dim=64)
    x, y, s = np.zeros(64, np.float32), np.zeros(64, np.float32), np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"block_sums: no instance for block_dim=64; compiled for block_dim 16, 32"):
        mod.block_sums.launch(dim=64, inputs=[x, y, s], block_dim=64)
    with pytest.raises(ValueError, match=r"pinned: block_dim=64 differs from the compiled block_dim 8"):
        mod.pinned.launch_tiled(dim=1, inputs=[x], block_dim=64)
    mod.unlaunched.launch_tiled(dim=1, inputs=[x])  # --block-dim: one instance, under its own name
    assert mod.unlaunched.block_dim == 64
    x[:4] = [1, 2, 3, 4]
    mod.plain.launch(dim=4, inputs=[x])  # a plain kernel does not depend on block_dim: any instance
    assert list(x[:4]) == [2, 4, 6, 8]


def test_launches_of_a_factory_kernel_count_for_its_instances():
    source = '''\
import warp as wp


def make(T: int):
    @wp.kernel
    def k(a: wp.array(dtype=float)):
        i = wp.tid()
        v = a[i]
        a[i] = wp.tile_sum(wp.tile(v))[0] * float(T)

    return k


def host(a):
    wp.launch(make(2), dim=64, inputs=[a], block_dim=32)
    k3 = make(3)
    wp.launch(k3, dim=64, inputs=[a], block_dim=16)
'''
    module = compile_ir(source, "factory_launches")
    assert sorted((k.name, k.launch_name) for k in module.kernels) == [
        ("k__T_2__block_dim_16", "k__T_2"), ("k__T_2__block_dim_32", "k__T_2"),
        ("k__T_3__block_dim_16", "k__T_3"), ("k__T_3__block_dim_32", "k__T_3")]


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_partial_last_block_runs_as_in_warp(device):
    """block_sums with dim=40, block_dim=16: the last block has threads 32-39 only; its tile holds
    their squares (the missing threads' elements are inactive: left out of the sum) and y_i =
    x_i * S_b. The gradient of L = sum(g * y) + sum(h * sums): dL/dx_i = g_i S_b + 2 x_i (sum over
    the block of g_j x_j + h_b), checked in float64. On cuda-emu the .cu code runs the last block
    whole, threads 40-47 as stand-ins whose stores and tile elements are masked: y[40:] and
    sums[3] stay 0 though the arrays have room."""
    mod = build(PROGRAM, "forms", block_dim=64, target="cpu" if device == "cpu" else "cuda-emu")
    launch = {"device": device}
    rng = np.random.default_rng(7)
    n, bd = 40, 16
    x = rng.standard_normal(64).astype(np.float32)
    y, s = np.zeros(64, np.float32), np.zeros(4, np.float32)
    mod.block_sums.launch(dim=n, inputs=[x, y, s], block_dim=bd, **launch)
    xd = x.astype(np.float64)
    sums = np.array([np.sum(xd[b:min(n, b + bd)] ** 2) for b in range(0, n, bd)])
    np.testing.assert_allclose(s[:3], sums, rtol=1e-5)
    assert s[3] == 0
    np.testing.assert_allclose(y[:n], xd[:n] * np.repeat(sums, bd)[:n], rtol=1e-5, atol=1e-6)
    assert not y[n:].any()
    g, h = rng.standard_normal(64).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    dx = np.zeros(64, np.float32)
    mod.block_sums.launch(dim=n, inputs=[x, np.zeros(64, np.float32), np.zeros(4, np.float32)],
                          adj_inputs=[dx, g.copy(), h.copy()], adjoint=True, block_dim=bd, **launch)
    want = np.zeros(64)
    for k, b in enumerate(range(0, n, bd)):
        blk = slice(b, min(n, b + bd))
        want[blk] = g[blk] * sums[k] + 2 * xd[blk] * (np.dot(g[blk], xd[blk]) + h[k])
    np.testing.assert_allclose(dx, want, rtol=1e-4, atol=1e-5)
    x2 = rng.standard_normal((3, 16)).astype(np.float32)
    y2 = np.zeros((3, 16), np.float32)
    mod.grid2.launch(dim=(3, 12), inputs=[x2, y2], block_dim=8, **launch)  # 36 points: blocks of 8, the last of 4
    flat = x2[:, :12].reshape(-1).astype(np.float64)
    block_sum = np.repeat([flat[b:b + 8].sum() for b in range(0, 36, 8)], 8)[:36]
    np.testing.assert_allclose(y2[:, :12].reshape(-1), 2 * flat + block_sum, rtol=1e-5, atol=1e-5)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_whole_blocks_spanning_rows_of_dim_run(device):
    """dim=(2, 8) with block_dim=16: one block of both rows, threads in row-major order (Warp's
    numbering; tests/conformance/cases_rows.py compares with Warp and finite differences)."""
    mod = build(PROGRAM, "forms", block_dim=64, target="cpu" if device == "cpu" else "cuda-emu")
    x2 = np.random.default_rng(3).standard_normal((3, 16)).astype(np.float32)
    y2 = np.zeros((3, 16), np.float32)
    mod.grid2.launch(dim=(2, 8), inputs=[x2, y2], block_dim=16, device=device)
    part = x2[:2, :8]
    np.testing.assert_allclose(y2[:2, :8], 2 * part + part.sum(), rtol=1e-5, atol=1e-5)
    assert not y2[2:].any() and not y2[:, 8:].any()


WARP_PARTIAL = '''\
import warp as wp


@wp.kernel
def lane_sums(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    y[i] = wp.tile_sum(wp.tile(v))[0]


@wp.kernel
def copy16(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    wp.tile_store(y, wp.tile_load(x, shape=16) * 2.0)
'''


def warp_partial_block_model(x, n, block_dim):
    """Warp 1.19 on the CPU for launch(dim=n, block_dim): blocks of block_dim threads, the last of
    n % block_dim; a tile op's element e is handled by thread e % block_dim, so elements of
    missing threads are not loaded (a sum leaves them out) nor stored."""
    sums = np.array([x[b:min(n, b + block_dim)].sum() for b in range(0, n, block_dim)])
    lane_sums = np.zeros_like(x)
    lane_sums[:n] = np.repeat(sums, block_dim)[:n]
    first = min(n, block_dim)  # copy16: every block stores the elements its present threads own
    copy = np.zeros(16, x.dtype)
    copy[:first] = 2 * x[:first]
    return lane_sums, copy


def test_warp_runs_a_partial_last_block_without_its_missing_threads(tmp_path, monkeypatch):
    """The rule tilec's CPU runtime follows in a partial block, checked on Warp 1.19 itself (CPU
    blocks)."""
    wp, prog = import_under_warp(WARP_PARTIAL, "warp_partial_block", tmp_path, monkeypatch)
    x = np.linspace(0.5, 2.0, 48).astype(np.float32)
    for n in (40, 5):
        y = wp.zeros(48, dtype=float, device="cpu")
        wp.launch(prog.lane_sums, dim=n, inputs=[wp.array(x, device="cpu"), y], block_dim=16, device="cpu")
        c = wp.zeros(16, dtype=float, device="cpu")
        wp.launch(prog.copy16, dim=n, inputs=[wp.array(x[:16], device="cpu"), c], block_dim=16, device="cpu")
        want_sums, want_copy = warp_partial_block_model(x.astype(np.float64), n, 16)
        np.testing.assert_allclose(y.numpy(), want_sums, rtol=1e-5)
        np.testing.assert_allclose(c.numpy(), want_copy, rtol=1e-6)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_tape_replays_a_launch_whose_blocks_span_rows(device):
    """y = 2 x + (sum of x over the block): dL/dx = 2 g + (sum of g over the same block). With
    dim=(4, 6) and block_dim=8 the blocks are threads 0-7, 8-15, 16-23 in row-major order."""
    mod = build(PROGRAM, "forms", block_dim=64, target="cpu" if device == "cpu" else "cuda-emu")
    rng = np.random.default_rng(5)
    x2, y2 = rng.standard_normal((4, 6)).astype(np.float32), np.zeros((4, 6), np.float32)
    g = rng.standard_normal((4, 6)).astype(np.float32)
    with mod.Tape() as tape:
        mod.grid2.launch(dim=(4, 6), inputs=[x2, y2], block_dim=8, device=device)
    blocks = x2.reshape(3, 8)
    np.testing.assert_allclose(y2.reshape(3, 8), 2 * blocks + blocks.sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-5)
    tape.backward(grads=[(y2, g.copy())])
    want = 2 * g.reshape(3, 8) + g.reshape(3, 8).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(tape.gradient(x2).reshape(3, 8), want, rtol=1e-5, atol=1e-5)
