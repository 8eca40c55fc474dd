"""The CPU forward's folds (passes/fuse_tiles.py fold_forward): a tile value assigned once and read
once is computed inside the elementwise statement that reads it, only where that is the same value."""
from __future__ import annotations

import numpy as np

from conftest import needs_cxx
from harness import build, compile_ir
from tilec import ir
from tilec.cli import build_flags
from tilec.driver import generate
from tilec.passes.fuse_tiles import fold_forward

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
