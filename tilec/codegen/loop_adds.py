"""Tiles an element loop computes, added into arrays by the loop as it goes (CPU).

An adjoint's loop is often followed by tile_atomic_adds of the tiles it has just computed or read
(a layernorm adjoint adds `dy` into beta's gradient and `dy * x_hat` into gamma's, both summed per
thread, tile_sums.py): each add passes over its tile again. `loop_adds` finds, right after a fused
element-wise run (fused_loops.py), the tile_atomic_adds whose old values nobody reads of a tile the
run writes or takes (row_views.py rows_taken) into an array variable, at offsets that call no
function, of a float or double dtype, every row the run reads in place or takes from another
parameter array (row_views.py arrays_apart). The emitter
asks `tl::loop_add_row` before the loop where to add (the thread's sums of the tile, or the array's
row while the launch's only worker holds the lock-free add; else a tile of the add's own, cleared
to -0), adds each element there as the loop computes it, and leaves the add itself, of that tile,
only for the last case. The sums are the same additions in the same order (x + -0 is x).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from .. import ir
from ..ir.types import ArrayT, Scalar, TileT
from .fused_loops import FusedLoop
from .operand_views import bodies
from .row_views import arrays_apart, calls_no_func


def loop_adds(fn: ir.Function, fused: dict[int, FusedLoop], taken_rows: dict[ir.Sym, tuple[int, ir.OpCall]],
              read_rows: dict[ir.Sym, ir.OpCall], in_place: Collection[ir.Sym]) -> dict[int, list[ir.ExprStmt]]:
    """{id of a run's first member: the adds its loop makes, in order}. `taken_rows`: the rows a
    loop takes {tile: (id of that loop's first statement, the tile's load)}; `read_rows`: the rows
    read in place {tile: its load}; `in_place`: tiles written or added in place elsewhere."""
    run_of_last = {id(run.members[-1]): run for run in fused.values()}
    found: dict[int, list[ir.ExprStmt]] = {}
    for body in bodies(fn.body):
        for j, s in enumerate(body):
            run = run_of_last.get(id(s))
            if run is None:
                continue
            first = id(run.members[0])
            tiles = {m.target for m in run.members} - run.elements
            taken = {t: load for t, (loop, load) in taken_rows.items() if loop == first}
            tiles |= taken.keys()
            rows = [read_rows[x].args[0] for m in run.members for x in ir.read_syms(m.value) if x in read_rows]
            rows += [load.args[0] for load in taken.values()]  # (the loop zeroes those rows)
            adds: list[ir.ExprStmt] = []
            for later in body[j + 1:]:
                if not _addable(later, tiles, rows, in_place, fn.params):
                    break
                assert isinstance(later, ir.ExprStmt)  # _addable
                adds.append(later)
            if adds:
                found[first] = adds
    return found


def _addable(s: ir.Stmt, tiles: set[ir.Sym], rows: list[ir.Expr], in_place: Collection[ir.Sym],
             params: Sequence[ir.Sym]) -> bool:
    if not (isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tile_atomic_add"):
        return False
    array, tile = s.expr.args[0], s.expr.args[1]
    if not (isinstance(array, ir.Var) and isinstance(tile, ir.Var) and tile.sym in tiles and tile.sym not in in_place):
        return False
    t = tile.sym.type
    if not (isinstance(t, TileT) and isinstance(t.dtype, Scalar) and t.dtype.is_float and not t.dtype.storage_only
            and isinstance(array.type, ArrayT) and array.type.dtype == t.dtype):
        return False
    if not all(arrays_apart(row, array, params) for row in rows):
        return False  # the loop reads a row of that array (or maybe of it) in place: its adds stay after it
    return calls_no_func(s.expr)
