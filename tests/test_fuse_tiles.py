"""The CPU forward's folds (passes/fuse_tiles.py fold_forward): a tile value assigned once and read
once is computed inside the elementwise statement that reads it, only where that is the same value."""
from __future__ import annotations

import numpy as np

from conftest import needs_cxx
from harness import build, compile_ir
from tilec import ir
from tilec.cli import build_flags
from tilec.driver import generate
from tilec.passes.fuse_tiles import fold_forward, spread_broadcasts

SOURCE = '''
import warp as wp

N = 32


@wp.kernel
def scaled(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    s = wp.tile_broadcast(wp.tile_sum(x), shape=(1, N))
    wp.tile_store(Y, x / s, offset=(i, 0))


@wp.kernel
def rewritten(X: wp.array2d(dtype=float), Z: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    b = a * 2.0
    a = wp.tile_load(Z, shape=(1, N), offset=(i, 0))
    wp.tile_store(Y, b + a, offset=(i, 0))


@wp.kernel
def spread(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), Z: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    s = wp.tile_broadcast(wp.tile_sum(x), shape=(1, N))
    wp.tile_store(Y, x / s, offset=(i, 0))
    wp.tile_store(Z, x * s, offset=(i, 0))


@wp.kernel
def spread_then_sum(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), Z: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    s = wp.tile_broadcast(wp.tile_sum(x), shape=(1, N))
    wp.tile_store(Y, x / s, offset=(i, 0))
    wp.tile_store(Z, wp.tile_sum(s), offset=i)


@wp.kernel
def twice(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    y = wp.tile_map(wp.exp, x)
    wp.tile_store(Y, y * y, offset=(i, 0))
'''


def _kernel(name):
    return next(k for k in compile_ir(SOURCE, "folds").kernels if k.name == name)


def _assigned(fn):
    return [s.target.name for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign)]


def test_a_broadcast_read_once_is_no_tile_of_its_own():
    folded = fold_forward(_kernel("scaled"))
    assert "s" in _assigned(_kernel("scaled")) and "s" not in _assigned(folded)
    cpp = generate(compile_ir(SOURCE, "folds"), SOURCE, build_flags(256))["folds.cpp"]
    forward = cpp[cpp.index("k_scaled_forward"):cpp.index("k_scaled_backward")]
    assert "v_s" not in forward  # no tile declared, no fill loop


def test_values_whose_operands_change_or_that_are_read_twice_stay():
    assert "b" in _assigned(fold_forward(_kernel("rewritten")))  # `a` is assigned again before b is read
    assert "y" in _assigned(fold_forward(_kernel("twice")))  # read twice: exp once per element, not twice


@needs_cxx
def test_folded_forwards_compute_what_numpy_does():
    mod = build(SOURCE, "folds")
    rng = np.random.default_rng(3)
    X, Z = rng.random((4, 32), dtype=np.float32) + 0.5, rng.random((4, 32), dtype=np.float32)
    Y = np.zeros_like(X)
    mod.scaled.launch_tiled(dim=4, inputs=[X, Y])
    np.testing.assert_allclose(Y, X / X.sum(axis=1, keepdims=True), rtol=1e-6)
    mod.rewritten.launch_tiled(dim=4, inputs=[X, Z, Y])
    np.testing.assert_array_equal(Y, X * 2.0 + Z)
    mod.twice.launch_tiled(dim=4, inputs=[X, Y])
    np.testing.assert_allclose(Y, np.exp(X) ** 2, rtol=1e-5)


def test_a_broadcast_read_by_several_elementwise_statements_is_put_into_each():
    spread = fold_forward(_kernel("spread"))
    assert "s" in _assigned(_kernel("spread")) and "s" not in _assigned(spread)
    broadcasts = [x for s in ir.walk_stmts(spread.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
                  if isinstance(x, ir.OpCall) and x.op == "tile_broadcast"]
    assert len(broadcasts) == 2  # one index map in each reader's loop
    # Read by a reduction as well (no loop of its own computes it there): the tile stays.
    assert "s" in _assigned(fold_forward(_kernel("spread_then_sum")))


def test_a_broadcast_whose_operand_changes_between_its_readers_stays():
    from dataclasses import replace

    kernel = _kernel("spread")
    body = list(kernel.body)
    at = next(k for k, s in enumerate(body) if isinstance(s, ir.Assign) and s.target.name == "s")
    operand = body[at].value.args[0].sym
    readers = [k for k, s in enumerate(body) if k > at and isinstance(s, ir.Assign) and "s" in
               {v.name for v in ir.read_syms(s.value)}]
    assert len(readers) == 2
    rewrite = ir.Assign(operand, ir.OpCall("tile_zeros", (), (), operand.type, body[at].span), body[at].span)
    body.insert(readers[1], rewrite)  # the broadcast's operand written between the two readers
    assert "s" in _assigned(replace(kernel, body=spread_broadcasts(tuple(body))))
    assert "s" not in _assigned(replace(kernel, body=spread_broadcasts(kernel.body)))


@needs_cxx
def test_spread_broadcasts_compute_what_numpy_does_forward_and_backward():
    mod = build(SOURCE, "folds")
    rng = np.random.default_rng(5)
    X = rng.random((4, 32), dtype=np.float32) + 0.5
    gY, gZ = rng.random((4, 32), dtype=np.float32) - 0.5, rng.random((4, 32), dtype=np.float32) - 0.5
    Y, Z = np.zeros_like(X), np.zeros_like(X)
    mod.spread.launch_tiled(dim=4, inputs=[X, Y, Z])
    S = X.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(Y, X / S, rtol=1e-6)
    np.testing.assert_allclose(Z, X * S, rtol=1e-6)
    dX = np.zeros_like(X)
    mod.spread.launch_tiled(dim=4, inputs=[X, Y, Z], adj_inputs=[dX, gY.copy(), gZ.copy()], adjoint=True)
    x, gy, gz, s = (a.astype(np.float64) for a in (X, gY, gZ, S))
    expect = gy / s - (gy * x).sum(axis=1, keepdims=True) / s**2 + gz * s + (gz * x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(dX, expect, rtol=1e-4, atol=1e-5)
