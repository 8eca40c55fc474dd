"""The one-lane (CPU) adjoint adds a tile_view's gradient in place (passes/view_adds.py): no zero
tile the size of the viewed tile, no full-tile add per view. Gradients against float64 finite
differences, with the view read in a loop (the MLP's pattern) and once outside one."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build
from tilec import ir
from tilec.ir.types import TileT
from tilec.passes.autodiff import adjoint_kernel
from tilec.passes.one_lane import one_lane
from tilec.pipeline import compile_source

BENCH = Path(__file__).resolve().parent.parent / "bench" / "programs"

SOURCE = '''
import warp as wp


@wp.kernel
def chunks(R: wp.array2d(dtype=wp.float64), W: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64),
           Z: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    r = wp.tile_load(R, shape=(4, 16), offset=(i * 4, 0))
    s = wp.tile_map(wp.sin, r)
    y = wp.tile_zeros(shape=(4, 8), dtype=wp.float64)
    for k in range(2):
        part = wp.tile_view(s, offset=(0, k * 8), shape=(4, 8))
        wp.tile_matmul(part, wp.tile_load(W, shape=(8, 8), offset=(k * 8, 0)), y)
    tail = wp.tile_view(s, offset=(1, 4), shape=(2, 8))
    wp.tile_store(Y, y * wp.tile_load(W, shape=(4, 8), offset=(0, 0)), offset=(i * 4, 0))
    wp.tile_store(Z, tail * tail, offset=(i * 2, 0))
'''


def _ops(fn: ir.Function) -> list:
    return [x.op for s in ir.walk_stmts(fn.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
            if isinstance(x, ir.OpCall)]


def test_the_mlp_adjoint_adds_view_gradients_in_place():
    path = BENCH / "mlp256.py"
    module = compile_source(path.read_text(), str(path)).module
    lanes_form = adjoint_kernel(module.kernels[0], module, lanes=True)
    cpu = one_lane(lanes_form)
    assert _ops(lanes_form).count("tile_view_add") == 1  # spread into a zero tile for the lanes
    loop = [s for s in ir.walk_stmts(cpu.body) if isinstance(s, ir.For) and any(
        isinstance(t, ir.Assign) and isinstance(t.value, ir.OpCall) and t.value.op == "tile_view_add" for t in s.body)]
    assert len(loop) == 1
    hidden = [t.value.op for t in loop[0].body if isinstance(t, ir.Assign) and isinstance(t.value, ir.OpCall)
              and isinstance(t.target.type, TileT) and t.target.type.shape == (16, 256)]
    assert hidden == ["tile_view_add"]  # no 16x256 zero fill, no full-tile add: the 16x32 gradient added in place


@pytest.mark.build
@needs_cxx
def test_view_gradients_in_place_match_finite_differences():
    m = build(SOURCE, "viewadds")
    rng = np.random.default_rng(3)
    R, W = rng.standard_normal((8, 16)), rng.standard_normal((16, 8))
    check_gradients(m.chunks, 2, [R, W, np.zeros((8, 8)), np.zeros((4, 8))], outputs=[2, 3], wrt=[0, 1])


EDGES = '''
import warp as wp


@wp.kernel
def edges(R: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64), Z: wp.array2d(dtype=wp.float64),
          Q: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    s = wp.tile_map(wp.sin, wp.tile_load(R, shape=(4, 16)))
    row = wp.tile_view(s, offset=(i + 1,))
    part = wp.tile_view(s, offset=(i, i * 9 - 4), shape=(2, 8))
    q = wp.tile_view(wp.tile_reshape(s, shape=(2, 2, 16)), offset=(0, i, 0), shape=(2, 2, 16))
    wp.tile_store(Y, wp.tile_reshape(row * row, shape=(1, 16)), offset=(i, 0))
    wp.tile_store(Z, part * part + part, offset=(i * 2, 0))
    wp.tile_store(Q, wp.tile_reshape(q * q + q, shape=(4, 16)), offset=(i * 4, 0))
'''


@pytest.mark.build
@needs_cxx
def test_view_gradients_of_a_dropped_axis_and_of_columns_past_the_tile_match_finite_differences():
    """tile_view_add row by row (grads.h): a view of one row (its leading axis dropped); views of
    2 x 8 reaching past a 4 x 16 tile's columns on either side (columns -4..3 in block 0, 14..21 in
    block 2: only the columns inside receive gradient); views of a 2 x 2 x 16 tile reaching past its
    middle axis in blocks 1 and 2 (only the rows inside do). The views read zeros outside, whose
    gradient through x * x + x is not 0."""
    m = build(EDGES, "viewedges")
    R = np.random.default_rng(5).standard_normal((4, 16))
    check_gradients(m.edges, 3, [R, np.zeros((3, 16)), np.zeros((6, 8)), np.zeros((12, 16))], outputs=[1, 2, 3],
                    wrt=[0])
