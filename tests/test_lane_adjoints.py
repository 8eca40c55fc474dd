"""Per-lane seeds into a block's tile: `t[i]` with i from wp.tid() (launch_tiled's lane index, or
launch()'s global thread index) gives each lane its own partial adjoint of the tile. The CPU used
to run such a kernel's adjoint in its one-lane form, which keeps only the leader's partial:
dx came back [1, 0, ..., 0] where every element is 1 (found by Warp's own tile tests). Those
kernels keep the lanes form on the CPU; kernels whose partials agree keep the one-lane form."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build, compile_ir

PROGRAM = '''\
import warp as wp


@wp.kernel
def pick(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _b, i = wp.tid()
    t = wp.tile_load(x, shape=8)
    y[i] = t[i] * t[i]


@wp.kernel
def pick_global(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=8)
    y[i] = t[i % 8] * 3.0


@wp.kernel
def rows(A: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A[i], shape=16)
    wp.tile_store(out[i], wp.tile_map(wp.sin, a))
'''


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_lane_indexed_element_read_gets_every_lanes_seed(device):
    mod = build(PROGRAM, "lane_seeds", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    x = np.linspace(0.5, 2.0, 8).astype(np.float32)
    seed = np.cos(np.arange(8)).astype(np.float32)
    y, adj_x = np.zeros(8, np.float32), np.zeros(8, np.float32)
    mod.pick.launch_tiled(dim=1, inputs=[x, y], adj_inputs=[adj_x, seed.copy()], adjoint=True, device=device)
    np.testing.assert_allclose(adj_x, 2 * x * seed, rtol=1e-6)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_the_simt_launch_form_sums_every_threads_seed(device):
    mod = build(PROGRAM, "lane_seeds", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    x = np.linspace(0.5, 2.0, 8).astype(np.float32)
    seed = (1.0 + np.arange(16)).astype(np.float32)
    y, adj_x = np.zeros(16, np.float32), np.zeros(8, np.float32)
    mod.pick_global.launch(dim=16, inputs=[x, y], block_dim=8, device=device)
    np.testing.assert_allclose(y, 3 * np.tile(x, 2), rtol=1e-6)
    mod.pick_global.launch(dim=16, inputs=[x, y], adj_inputs=[adj_x, seed.copy()], adjoint=True, block_dim=8,
                           device=device)
    np.testing.assert_allclose(adj_x, 3 * (seed[:8] + seed[8:]), rtol=1e-6)  # two blocks, each thread its own


def test_only_kernels_with_per_lane_partials_keep_the_lanes_form():
    from tilec.codegen.sources import plan_kernels
    from tilec.passes.autodiff import adjoint_kernel
    from tilec.passes.one_lane import lanes_may_differ

    module = compile_ir(PROGRAM, "lane_seeds", block_dim=8)
    derived = {k.name: adjoint_kernel(k, module, True, lane_takes=set()) for k in module.kernels}
    assert lanes_may_differ(derived["pick"]) and lanes_may_differ(derived["pick_global"])
    assert not lanes_may_differ(derived["rows"])  # a row loaded at i: the same in every lane by contract
    plans = {p.forward.name: p for p in plan_kernels(module)}
    assert plans["pick"].adjoint is not None and {"lane_sum", "leader_only"} & _ops(plans["pick"].adjoint)  # lanes form
    assert not {"lane_sum", "leader_only"} & _ops(plans["rows"].adjoint)  # the one-lane form (the GPU's too)


def _ops(fn) -> set:
    from tilec import ir

    return {x.op for s in ir.walk_stmts(fn.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.OpCall)}
