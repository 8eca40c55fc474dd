"""The GPU's adjoint without tile lane ops (passes/lane_ops.py): on the GPU a tile is the block's,
so `lane_sum` / `leader_only` of a tile are copies; they are taken out and the temporaries bound
for them folded into their readers. Where nothing else only lanes need is left, the GPU runs the
CPU's tidied one-lane form (one_lane.tidy_one_lane): an elementwise statement's adjoint is one loop
instead of computing each partial, copying it and adding the copy."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import needs_cxx
from harness import EMULATIONS, build, build_emulated, build_flags, compile_ir, emulation_id

from tilec import ir
from tilec.driver import generate
from tilec.ir.types import TileT

CHAIN = '''\
import warp as wp


@wp.kernel
def chain(A: wp.array(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    t0 = wp.tile_load(A, shape=8, offset=i * 8)
    t1 = t0 * 1.5 + wp.sin(t0)
    t2 = t1 * 0.5 + wp.sin(t1)
    wp.tile_store(B, t2, offset=i * 8)
'''

ROWS = '''\
import warp as wp


@wp.kernel
def rows(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1, 32), offset=(i, 0))
    u = t * 1.5 + wp.sin(t)
    s = wp.tile_broadcast(wp.tile_sum(u), shape=(1, 32))
    wp.tile_store(B, u * s, offset=(i, 0))
'''


def _tile_lane_ops(fn: ir.Function) -> list[str]:
    return [x.op for s in ir.walk_stmts(fn.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.OpCall) and x.op in ("lane_sum", "leader_only") and isinstance(x.args[0].type, TileT)]


def _backward(cu: str) -> str:
    start = cu.index("static void k_chain_backward(")
    return cu[start:cu.index("\n}\n", start)]


def test_the_gpu_adjoint_takes_out_tile_lane_ops_and_their_copies():
    from tilec.codegen.sources import plan_kernels
    from tilec.passes.autodiff import adjoint_kernel

    module = compile_ir(CHAIN, "chain", 64)
    assert _tile_lane_ops(adjoint_kernel(module.kernels[0], module, True, lane_takes=set()))  # the derivation's
    plan = plan_kernels(module)[0]
    assert plan.lanes_adjoint is not None and _tile_lane_ops(plan.lanes_adjoint) == []
    assert plan.adjoint is plan.lanes_adjoint  # nothing only lanes need is left: one tidied form for both
    flags = build_flags(64, target="all", emit_only=True)
    backward = _backward(generate(module, CHAIN, flags)["chain.cu"])
    # No register copy of a temporary (`x = _tmp;`), no take of a partial adjoint (`_g = adj; adj = 0`):
    # the tidied one-lane form, which the GPU runs too. One loop per elementwise statement: t1's
    # adjoint (t1 replayed inside it) and t0's.
    assert not re.search(r"= v\d+__(tmp|g)\.v\[_s\];", backward)
    assert backward.count("for (int _s") == 2, backward
    assert re.search(r"v\d+_adj_t1\.v\[_s\] = \(\(v\d+__v\.v\[_s\] \* 0\.5f\) \+ ", backward)
    assert re.search(r"v\d+_adj_t0\.v\[_s\] = \(\(v\d+_adj_t1\.v\[_s\] \* 1\.5f\) \+ ", backward)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("variant", EMULATIONS, ids=emulation_id)
def test_folded_gpu_adjoints_match_the_analytic_gradient(variant, monkeypatch):
    """Register tiles (CHAIN) and shared ones (ROWS: a reduction and a broadcast) on the CUDA
    emulation, against the float64 gradient, and against the CPU's one-lane adjoint."""
    rng = np.random.default_rng(7)
    a = rng.uniform(-1.0, 1.0, 16).astype(np.float32)
    seed = rng.uniform(-1.0, 1.0, 16).astype(np.float32)
    t0 = a.astype(np.float64)
    t1 = t0 * 1.5 + np.sin(t0)
    expect = seed * (0.5 + np.cos(t1)) * (1.5 + np.cos(t0))
    for device, adj in _adjoints(CHAIN, "chain", variant, monkeypatch, a, seed, rows=2).items():
        np.testing.assert_allclose(adj, expect, rtol=2e-5, atol=1e-6, err_msg=device)

    x = rng.uniform(-1.0, 1.0, (3, 32)).astype(np.float32)
    g = rng.uniform(-1.0, 1.0, (3, 32)).astype(np.float32)
    t = x.astype(np.float64)
    u = t * 1.5 + np.sin(t)
    total = u.sum(axis=1, keepdims=True)
    adj_u = g * total + (g * u).sum(axis=1, keepdims=True)  # B = u * sum(u)
    expect = adj_u * (1.5 + np.cos(t))
    for device, adj in _adjoints(ROWS, "rows", variant, monkeypatch, x, g, rows=3).items():
        np.testing.assert_allclose(adj, expect, rtol=1e-4, atol=1e-5, err_msg=device)


def _adjoints(source, name, variant, monkeypatch, x, seed, rows):
    """The adjoint of x for the output seed, from the CUDA emulation and from the CPU."""
    out = {}
    for device, mod in (("cuda-emu", build_emulated(source, name, variant, monkeypatch)),
                        ("cpu", build(source, name, block_dim=variant[0]))):
        adj = np.zeros_like(x)
        getattr(mod, name).launch_tiled(dim=rows, inputs=[x, np.zeros_like(x)], adj_inputs=[adj, seed.copy()],
                                        adjoint=True, device=device)
        out[device] = adj
    return out
