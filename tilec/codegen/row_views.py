"""One-row tiles an element-wise loop reads from, or writes to, their array in place (CPU).

A plain emission copies every loaded row into a stack tile before the element-wise loop reads it,
and every computed row from a stack tile into the array after the loop: a fused map over a long
array passes over memory three times where one would do, and the copies do not overlap the
arithmetic. Two patterns skip the copy:

`rows_read_in_place`: a tile of one row (every extent but the last 1) of a scalar dtype, assigned
once from a `tile_load` of an array of its dtype, read exactly once, directly (not through a
broadcast) by the fused element-wise assignment of a tile of its shape in the very next statement.
The emitter asks `tl::tile_load_row` for the row: the array's own elements when the row lies
inside the array with contiguous elements, else the tile, loaded as `tile_load` loads it; the loop
reads through that pointer. Nothing runs between the load and the loop, so the array cannot change
in between.

`rows_written_in_place`: a one-row tile of a scalar dtype assigned once by a fused element-wise
expression that reads no array (other than a row read in place from a different array) and whose
offsets call no function, read exactly once, by the `tile_store` into an array of its dtype in the
very next statement. The emitter asks `tl::tile_store_row` for the destination before the loop:
the array's row when the store would write it whole (inside the array, contiguous, the block's
leader, not a partial block), else the tile, which the store then writes as before. Arrays a
kernel writes never overlap its other arrays (the loader refuses such launches), so writing the
row early changes nothing another read sees.
"""
from __future__ import annotations

from .. import ir
from ..ir.types import ArrayT, Scalar, TileT
from ..passes.normalize import is_fusible
from .element_loops import element_reads, split_extent
from .operand_views import bodies, read_write_counts


def rows_read_in_place(fn: ir.Function) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: its tile_load} for every one-row load the next statement's element loop reads in place."""
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for first, second in zip(body, body[1:]):
            if not (isinstance(first, ir.Assign) and isinstance(first.value, ir.OpCall)
                    and first.value.op == "tile_load" and _one_row(first.target.type, first.value.args[0].type)):
                continue
            if reads.get(first.target, 0) != 1 or writes.get(first.target, 0) != 1:
                continue
            if (isinstance(second, ir.Assign) and is_fusible(second.value) and second.target != first.target
                    and _same_shape(second.target.type, first.target.type)
                    and first.target in element_reads(second.value)[0]):
                found[first.target] = first.value
    return found


def rows_written_in_place(fn: ir.Function, read_in_place: dict[ir.Sym, ir.OpCall]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: the tile_store of the next statement} for every one-row element loop that can
    write the store's array row in place. `read_in_place` is rows_read_in_place(fn)."""
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for first, second in zip(body, body[1:]):
            if not (isinstance(first, ir.Assign) and is_fusible(first.value)
                    and isinstance(second, ir.ExprStmt) and isinstance(second.expr, ir.OpCall)
                    and second.expr.op == "tile_store"):
                continue
            store, target = second.expr, first.target
            tile = store.args[1]
            if not (isinstance(tile, ir.Var) and tile.sym == target and _one_row(target.type, store.args[0].type)):
                continue
            if reads.get(target, 0) != 1 or writes.get(target, 0) != 1:
                continue
            assert isinstance(target.type, TileT)  # _one_row
            if split_extent(first.value, target.type) is not None or not _reads_no_array(first.value):
                continue
            if any(isinstance(x, ir.Call) for a in store.args for x in ir.walk_expr(a)):
                continue  # offsets evaluated before the loop: only without calls
            rows = [read_in_place[x.sym].args[0] for x in ir.walk_expr(first.value)
                    if isinstance(x, ir.Var) and x.sym in read_in_place]
            if any(not isinstance(a, ir.Var) or not isinstance(store.args[0], ir.Var) or a.sym == store.args[0].sym
                   for a in rows):
                continue  # a row read in place from the array being written: keep the copy
            found[target] = store
    return found


def _one_row(tile: object, array: object) -> bool:
    return (isinstance(tile, TileT) and tile.is_concrete and isinstance(tile.dtype, Scalar)
            and tile.size == tile.shape[-1] and isinstance(array, ArrayT) and array.dtype == tile.dtype)


def _same_shape(a: object, b: object) -> bool:
    return isinstance(a, TileT) and isinstance(b, TileT) and a.shape == b.shape


def _reads_no_array(e: ir.Expr) -> bool:
    return not any(isinstance(x, ir.Var) and isinstance(x.type, ArrayT) for x in ir.walk_expr(e))
