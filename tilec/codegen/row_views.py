"""One-row tiles an element-wise loop reads from, writes to or adds into their array in place (CPU).

A plain emission copies every loaded row into a stack tile before the element-wise loop reads it,
and every computed row from a stack tile into the array after the loop: a fused map over a long
array passes over memory three times where one would do, and the copies do not overlap the
arithmetic. These patterns skip the copies:

`rows_read_in_place`: a tile of one row (every extent but the last 1) of a scalar dtype, assigned
once from a `tile_load` of an array of its dtype, whose every read comes in the statements right
after the load: element-wise assignments of tiles of its shape reading it at their own element
(at least one), tile_sum / tile_max / tile_min of it and the adjoint of those two, with only
computing statements in between (no user func), or stores and atomic adds into other parameter
arrays (the loader keeps a written array apart from every other argument). The emitter asks `tl::tile_load_row` for the row:
the array's own elements when the row lies inside the array with contiguous elements, else the
tile, loaded as `tile_load` loads it; the loops read through that pointer and the reductions
through a `tl::RowRef` of it. Nothing that could write the array runs before the last read.

`rows_written_in_place`: a one-row tile of a scalar dtype assigned once by a fused element-wise
expression that reads no array (other than a row read in place from another parameter array than
the one written: `arrays_apart`) and whose
offsets call no function, read exactly once, by the `tile_store` into an array of its dtype in the
very next statement. The emitter asks `tl::tile_store_row` for the destination before the loop:
the array's row when the store would write it whole (inside the array, contiguous, the block's
leader, not a partial block), else the tile, which the store then writes as before. Arrays a
kernel writes never overlap its other arrays (the loader refuses such launches), so writing the
row early changes nothing another read sees.

`rows_added_in_place`: the same for a loop of builtins only whose tile the next statement adds
into an array with `tile_atomic_add` (an adjoint's gradient row, `adj_x`), unless the kernel adds
into that array through per-thread sums (tile_sums.py). The emitter makes a `tl::RowAdd` before
the loop: the array's row, under the add's exclusion until the add's statement (its `finish`),
when the add would go there whole, else the tile; the loop adds its values into it (no user func
runs meanwhile: it could take the same locks).

`rows_taken`: a one-row tile loaded from an array whose row the adjoint of a store then zeroes
(`tile_store` of tile_zeros, zero_stores.py, with the same array, offsets and bounds rule), read
at its own elements by the fused element-wise assignment right after. The emitter asks
`tl::tile_take_row` for the row: the array's row when the zeroing store would write it whole, and
the loop reads each element into the tile and zeroes it; else the tile, loaded and the row zeroed
as before, which the loop copies onto itself. One pass over the row instead of three.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from .. import ir
from ..ir.types import ArrayT, Scalar, TileT
from ..ops import OPS
from ..passes.fuse_tiles import reads_of, writes_of
from ..passes.normalize import is_fusible
from ..passes.views import array_base
from .element_loops import builtin_only, element_reads, split_extent
from .fused_loops import FusedLoop
from .operand_views import bodies, read_write_counts


def rows_read_in_place(fn: ir.Function) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: its tile_load} for every one-row load that element loops (and reductions) read in
    place: every read of the tile, in the statements right after the load, is an element loop's
    read at its own element or the first operand of one of _ROW_READERS, and every statement up to
    the last of them only computes (no user func), or stores or adds into another parameter array:
    nothing can write the array before the tile's last read. At least one loop reads it."""
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for j, first in enumerate(body):
            if not _row_load(first):
                continue
            assert isinstance(first, ir.Assign) and isinstance(first.value, ir.OpCall)  # _row_load
            tile, array = first.target, array_base(first.value.args[0])
            wanted, seen, looped = reads.get(tile, 0), 0, False
            if writes.get(tile, 0) != 1 or not wanted:
                continue
            for later in body[j + 1:]:
                if seen == wanted:
                    break
                if not isinstance(later, ir.Assign):
                    if _writes_elsewhere(later, array, fn.params) or _tape_check(later):
                        continue
                    break
                if not _computes(later):
                    break
                n = sum(1 for x in ir.walk_expr(later.value) if isinstance(x, ir.Var) and x.sym == tile)
                if not n:
                    continue
                if _reduces(later.value, tile):
                    seen += n
                elif (is_fusible(later.value) and later.target != tile and _same_shape(later.target.type, tile.type)
                      and tile not in element_reads(later.value)[1]):
                    seen, looped = seen + n, True
                else:
                    break
            if seen == wanted and looped:
                found[tile] = first.value
    return found


# Ops that read a one-row tile, their first operand, through its pointer (memory.h RowRef) as
# well as its copy: reductions, and the adjoint of tile_max / tile_min.
_ROW_READERS = frozenset({"tile_sum", "tile_max", "tile_min", "tile_extreme_grad"})


def _reduces(value: ir.Expr, tile: ir.Sym) -> bool:
    """`value` is such an op reading `tile` as its first operand, and only there."""
    return (isinstance(value, ir.OpCall) and value.op in _ROW_READERS and isinstance(value.args[0], ir.Var)
            and value.args[0].sym == tile and not any(tile in ir.read_syms(a) for a in value.args[1:]))


def _tape_check(s: ir.Stmt) -> bool:
    """An adjoint's tape check: it writes nothing (and the CPU emits none)."""
    return isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tape_ready"


def _writes_elsewhere(s: ir.Stmt, array: ir.Expr, params: Sequence[ir.Sym]) -> bool:
    """s is a tile store or atomic add into an array apart from `array` (arrays_apart), so it
    cannot change `array`'s elements (an adjoint's zeroing of a stored row's adjoint, its adds)."""
    if not (isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op in ("tile_store", "tile_atomic_add")):
        return False
    return arrays_apart(s.expr.args[0], array, params) and calls_no_func(s.expr)


def calls_no_func(call: ir.OpCall) -> bool:
    """No operand of `call` (an array, offsets) calls a user func, which could write memory or
    print: such an op's operands may be evaluated earlier than where it stands."""
    return not any(isinstance(x, ir.Call) for a in call.args for x in ir.walk_expr(a))


def arrays_apart(a: ir.Expr, b: ir.Expr, params: Sequence[ir.Sym]) -> bool:
    """Arrays a and b (or views of them) are two different parameters: the loader refuses launches
    whose written arrays overlap any other argument, so writing one never changes the other. A
    local array variable (a view of any parameter, the same one included) is never apart."""
    x, y = array_base(a), array_base(b)
    return (isinstance(x, ir.Var) and isinstance(y, ir.Var) and x.sym in params and y.sym in params
            and x.sym != y.sym)


def _computes(s: ir.Stmt) -> bool:
    """An assignment that writes no memory: no effect op, no user func (which may store or print)."""
    if not isinstance(s, ir.Assign):
        return False
    for x in ir.walk_expr(s.value):
        if isinstance(x, ir.Call) or (isinstance(x, ir.OpCall) and x.op in OPS and OPS[x.op].effect):
            return False
    return True


def rows_written_in_place(fn: ir.Function, read_in_place: dict[ir.Sym, ir.OpCall]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: the tile_store of the next statement} for every one-row element loop that can
    write the store's array row in place. `read_in_place` is rows_read_in_place(fn)."""
    return _loops_into_rows(fn, read_in_place, "tile_store", lambda loop, array: True)


def rows_added_in_place(fn: ir.Function, read_in_place: dict[ir.Sym, ir.OpCall], sums: Collection[ir.Sym],
                        taken: Collection[int]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: the tile_atomic_add of the next statement} for every one-row element loop of
    builtins that can add into the add's array row in place. `sums`: the arrays the kernel adds
    into through per-thread sums (tile_sums.py), which keep their adds; `taken`: ids of loops
    another pattern emits (extreme_adds.py: the add is the gradient's own)."""
    def addable(loop: ir.Assign, array: ir.Expr) -> bool:
        dtype = array.type.dtype if isinstance(array.type, ArrayT) else None
        return (isinstance(array, ir.Var) and array.sym not in sums and id(loop) not in taken and builtin_only(loop.value)
                and isinstance(dtype, Scalar) and dtype.kind != "bool" and not dtype.storage_only)
    return _loops_into_rows(fn, read_in_place, "tile_atomic_add", addable)


def rows_taken(fn: ir.Function, zero_stores: dict[int, ir.Assign], taken: Collection[int]) -> dict[ir.Sym, RowTake]:
    """{tile Sym: its RowTake} for every one-row tile loaded, its array row then zeroed by a store
    of zeros (zero_stores.py: {id of the store: the zeros}), and followed by a fused element-wise
    assignment of its shape that no other pattern emits (`taken`: their statement ids). Candidates:
    `taken_by_loops` keeps those whose loop reads the tile."""
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, RowTake] = {}
    zeros = {id(z) for z in zero_stores.values()}
    for body in bodies(fn.body):
        for j, first in enumerate(body):
            if not _row_load(first):
                continue
            assert isinstance(first, ir.Assign) and isinstance(first.value, ir.OpCall)  # _row_load
            tile = first.target
            if writes.get(tile, 0) != 1 or not reads.get(tile, 0):
                continue
            k = j + 1
            while k < len(body) and id(body[k]) in zeros:
                k += 1
            if k + 1 >= len(body) or id(body[k]) not in zero_stores:
                continue
            store, start = body[k], body[k + 1]
            assert isinstance(store, ir.ExprStmt) and isinstance(store.expr, ir.OpCall)  # zero_stores: a tile_store
            if not (_same_row(first.value, store.expr) and _same_shape(zero_stores[id(store)].target.type, tile.type)):
                continue
            if (isinstance(start, ir.Assign) and isinstance(start.value, ir.OpCall) and is_fusible(start.value)
                    and id(start) not in taken and _same_shape(start.target.type, tile.type)):
                found[tile] = RowTake(first.value, store, start)
    return found


def taken_by_loops(takes: dict[ir.Sym, RowTake], fused: dict[int, FusedLoop]) -> dict[ir.Sym, int]:
    """{tile: id of the statement whose loop takes its row (the first of its fused run)} for the
    candidates of rows_taken whose loop reads the tile, at its own element only, with no member
    before the statement after the store reading it and nothing hoisted before the loop that
    reads the tile or touches its array (it would run before the loop loads and zeroes them)."""
    run_of = {id(m): run for run in fused.values() for m in run.members}
    kept: dict[ir.Sym, int] = {}
    for tile, take in takes.items():
        run = run_of.get(id(take.start))
        members = run.members if run is not None else (take.start,)
        at = next(i for i, m in enumerate(members) if m is take.start)
        reads = [element_reads(m.value) for m in members]
        if any(tile in direct or tile in elsewhere for direct, elsewhere in reads[:at]):
            continue
        if not any(tile in direct for direct, _ in reads) or any(tile in elsewhere for _, elsewhere in reads):
            continue
        array = take.load.args[0]
        assert isinstance(array, ir.Var)  # _same_row
        hoisted = [h for h in (run.hoisted if run is not None else ()) if h is not take.store
                   and not (isinstance(h, ir.Assign) and h.value is take.load)]
        if any({tile, array.sym} & (reads_of(h) | writes_of([h])) for h in hoisted):
            continue
        kept[tile] = id(members[0])
    return kept


@dataclass(frozen=True)
class RowTake:
    """A one-row load whose row the element loop after the zeroing store reads and zeroes (rows_taken)."""
    load: ir.OpCall  # the tile_load
    store: ir.ExprStmt  # the tile_store of zeros into the same row
    start: ir.Assign  # the first element-wise assignment after the store: its loop takes the row


def _loops_into_rows(fn: ir.Function, read_in_place: dict[ir.Sym, ir.OpCall], op: str,
                     wanted: Callable[[ir.Assign, ir.Expr], bool]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: the `op` (tile_store or tile_atomic_add) of the next statement} for every one-row
    element loop whose tile only that statement reads, into an array row the loop can write
    before the statement runs, and that `wanted(loop, array)`."""
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for first, second in zip(body, body[1:]):
            if not (isinstance(first, ir.Assign) and is_fusible(first.value)
                    and isinstance(second, ir.ExprStmt) and isinstance(second.expr, ir.OpCall)
                    and second.expr.op == op):
                continue
            call, target = second.expr, first.target
            tile, array = call.args[1], call.args[0]
            if not (isinstance(tile, ir.Var) and tile.sym == target and _one_row(target.type, array.type)):
                continue
            if reads.get(target, 0) != 1 or writes.get(target, 0) != 1:
                continue
            assert isinstance(target.type, TileT)  # _one_row
            if split_extent(first.value, target.type) is not None or not _reads_no_array(first.value):
                continue
            if not calls_no_func(call):
                continue  # offsets evaluated before the loop: only without calls
            rows = [read_in_place[x.sym].args[0] for x in ir.walk_expr(first.value)
                    if isinstance(x, ir.Var) and x.sym in read_in_place]
            if any(not arrays_apart(a, array, fn.params) for a in rows):
                continue  # a row read in place from the array being written (or a view of it): keep the copy
            if wanted(first, array):
                found[target] = call
    return found


def _row_load(s: ir.Stmt) -> bool:
    """s assigns a one-row tile its tile_load."""
    return (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_load"
            and _one_row(s.target.type, s.value.args[0].type))


def _one_row(tile: object, array: object) -> bool:
    return (isinstance(tile, TileT) and tile.is_concrete and isinstance(tile.dtype, Scalar)
            and tile.size == tile.shape[-1] and isinstance(array, ArrayT) and array.dtype == tile.dtype)


def _same_shape(a: object, b: object) -> bool:
    return isinstance(a, TileT) and isinstance(b, TileT) and a.shape == b.shape


def _reads_no_array(e: ir.Expr) -> bool:
    return not any(isinstance(x, ir.Var) and isinstance(x.type, ArrayT) for x in ir.walk_expr(e))


def _same_row(load: ir.OpCall, store: ir.OpCall) -> bool:
    """The load and the store name one array, the same offsets (variables and constants only) and
    the same bounds rule."""
    n = load.attr("offset_count") or 0
    if n != (store.attr("offset_count") or 0) or load.attr("bounds_check") != store.attr("bounds_check"):
        return False
    lo, so = load.args[len(load.args) - n:], store.args[len(store.args) - n:]
    return _same_var(load.args[0], store.args[0]) and all(_same_value(a, b) for a, b in zip(lo, so))


def _same_var(a: ir.Expr, b: ir.Expr) -> bool:
    return isinstance(a, ir.Var) and isinstance(b, ir.Var) and a.sym == b.sym


def _same_value(a: ir.Expr, b: ir.Expr) -> bool:
    if isinstance(a, ir.Const) and isinstance(b, ir.Const):
        return type(a.value) is type(b.value) and a.value == b.value and a.type == b.type
    return _same_var(a, b)
