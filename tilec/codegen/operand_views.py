"""Transposes a CPU matmul can read in place.

The matmul adjoint (ops/adjoints.py) multiplies by `tile_transpose(b)` and `tile_transpose(a)`;
normalize.py gives each transpose its own temporary, so a plain emission copies the operand
into that temporary first. On the CPU, gemm.h reads a transposed operand through strides, so
`transposed_operands` finds the temporaries that can be skipped: a tile assigned once from
`tile_transpose(x)` of a float/double tile, read exactly once, as operand `a` or `b` of the
`tile_matmul` in the very next statement (x cannot change in between), where that matmul does
not write x. The emitter then declares no temporary and passes `tl::transposed(x)` instead.

`array_operands` does the same for a tile loaded only to be multiplied: a float/double tile of
at most 64 KiB (gemm.h packs it on the stack) assigned once from a `tile_load` of a 2-d array,
read exactly once, as a matmul operand (or through such a transpose) later in the same statement
list, where every statement in between only assigns tiles, from loads, transposes, matmuls or
zeros, that the load's arguments do not read (so no array write, nothing the array or offsets
read can change; arguments that call a function keep the copy). The emitter then declares no
tile and passes `tl::array_tile<M, K>(A, row, col)`: gemm.h packs the operand straight from the
array (with tile_load's zero fill at the edges) instead of copying a tile that is copied again
into panels.

`window_operands` does it for a window of a tile: a float/double 2-d tile assigned once from
`tile_view(x, row, col)` of a 2-d tile x of its dtype, read exactly once, as operand `a` (or
through such a transpose: the adjoint's window^T @ dC) of a later `tile_matmul` of that dtype in the same statement list, where every statement in between
only assigns tiles (as above) other than x and the offsets' symbols, and the matmul does not write
x. The emitter then declares no tile and passes
`tl::tile_window<M, K>(x, row, col)`: gemm.h reads the window's rows in place from x.

`matmul_sums` finds the loops whose body is one accumulating matmul of two such operands (b an
array view, a an array view or a window), `acc = tile_matmul(a, b, acc)` (alpha = beta = 1), and
their loads or view: nothing in the loop reads acc but the matmul or writes memory, so the
products can be summed after the loop. The emitter gathers them (`tl::MatmulSum`, linalg.h) and gemm.h sums them with acc held in registers across
the steps, instead of adding each step's product into acc's memory.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeGuard

from .. import ir
from ..ir.types import ArrayT, TileT
from ..passes.fuse_tiles import reads_of
from .analysis import ops_called

_VIEW_DTYPES = ("float32", "float64")  # gemm.h; half operands keep their copy


def transposed_operands(fn: ir.Function) -> dict[ir.Sym, ir.Var]:
    """{temporary Sym: the Var it transposes} for every transpose the next matmul can read in place."""
    if "tile_matmul" not in ops_called(fn):
        return {}  # without a matmul, no walk over the body
    reads, writes = read_write_counts(fn)
    found: dict[ir.Sym, ir.Var] = {}
    for body in bodies(fn.body):
        for first, second in zip(body, body[1:]):
            source = _transpose_source(first)
            if source is None or not isinstance(first, ir.Assign) or reads.get(first.target, 0) != 1 or writes.get(first.target, 0) != 1:
                continue
            if _matmul_reads(second, first.target) and second.target != source.sym:
                found[first.target] = source
    return found


def window_operands(fn: ir.Function, transposes: dict[ir.Sym, ir.Var]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: its tile_view OpCall} for every view a later matmul reads in place as its A.

    `transposes` is transposed_operands(fn): a view read through one of those temporaries counts
    as read by the temporary's matmul."""
    if "tile_matmul" not in ops_called(fn) or "tile_view" not in ops_called(fn):
        return {}
    reads, writes = read_write_counts(fn)
    through = {src.sym: tmp for tmp, src in transposes.items()}  # view -> transpose temporary
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for pos, s in enumerate(body):
            if not _window_view(s) or reads.get(s.target, 0) != 1 or writes.get(s.target, 0) != 1:
                continue
            view = s.value
            assert isinstance(view, ir.OpCall) and isinstance(view.args[0], ir.Var)  # _window_view
            inputs = _read_syms(view)  # the parent and the offsets, evaluated at the matmul instead
            if inputs is None:
                continue
            operand = through.get(s.target, s.target)  # the symbol the matmul reads
            for later in body[pos + 1:]:
                if _matmul_reads(later, operand):
                    call = later.value
                    assert isinstance(call, ir.OpCall) and isinstance(s.target.type, TileT)  # _matmul_reads
                    a = call.args[0]
                    if (isinstance(a, ir.Var) and a.sym == operand and later.target not in inputs
                            and _same_dtype(call, s.target.type)):
                        found[s.target] = view
                    break
                if not _pure_tile_assign(later) or later.target in inputs:
                    break
    return found


def _window_view(s: ir.Stmt) -> TypeGuard[ir.Assign]:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_view"):
        return False
    view, t = s.value, s.target.type
    parent = view.args[0]
    return (isinstance(t, TileT) and t.ndim == 2 and t.is_concrete and str(t.dtype) in _VIEW_DTYPES
            and isinstance(parent, ir.Var) and parent.sym != s.target and isinstance(parent.type, TileT)
            and parent.type.ndim == 2 and parent.type.is_concrete and str(parent.type.dtype) == str(t.dtype)
            and view.attr("offset_count") == 2)


def _same_dtype(matmul: ir.OpCall, t: TileT) -> bool:
    """The matmul's result and operands all of t's dtype (the runtime's in-place form)."""
    return all(isinstance(x.type, TileT) and str(x.type.dtype) == str(t.dtype) for x in (matmul, *matmul.args))


# Statements that may sit between an operand's load and its matmul: they assign a tile and write
# no array memory (and no scalar, so the load's array and offsets read the same values).
_PURE_TILE_OPS = ("tile_load", "tile_transpose", "tile_matmul", "tile_zeros")
# gemm.h packs a view's panels on the stack: larger tiles keep their (heap) copy (cxx.HEAP_TILE_BYTES).
_MAX_VIEW_BYTES = 64 * 1024


def array_operands(fn: ir.Function, transposes: dict[ir.Sym, ir.Var]) -> dict[ir.Sym, ir.OpCall]:
    """{tile Sym: its tile_load OpCall} for every loaded tile a matmul can read from the array.

    `transposes` is transposed_operands(fn): a load read through one of those temporaries counts
    as read by the temporary's matmul."""
    if "tile_matmul" not in ops_called(fn):
        return {}
    reads, writes = read_write_counts(fn)
    through = {src.sym: tmp for tmp, src in transposes.items()}  # loaded tile -> transpose temporary
    found: dict[ir.Sym, ir.OpCall] = {}
    for body in bodies(fn.body):
        for pos, s in enumerate(body):
            if not _viewable_load(s) or reads.get(s.target, 0) != 1 or writes.get(s.target, 0) != 1:
                continue
            assert isinstance(s.value, ir.OpCall)  # _viewable_load: a tile_load
            inputs = _read_syms(s.value)  # the array and offsets, evaluated at the matmul instead
            if inputs is None:
                continue
            operand = through.get(s.target, s.target)  # the symbol the matmul reads
            for later in body[pos + 1:]:
                if _matmul_reads(later, operand):
                    found[s.target] = s.value
                    break
                if operand is not s.target and _transpose_of(later, s.target, operand):
                    continue
                if not _pure_tile_assign(later) or later.target in inputs:
                    break
    return found


@dataclass(frozen=True)
class MatmulSumLoop:
    """A loop matmul_sums found: its matmul; the accumulator's tile_zeros (earlier in the loop's
    statement list) when the sum may make those zeros; and when it is then only stored, by a
    tile_store right after the loop, that store."""

    matmul: ir.Assign  # acc = tile_matmul(a, b, acc)
    zeros: ir.Assign | None = None  # acc = tile_zeros(...)
    store: ir.ExprStmt | None = None  # tile_store(C, acc, row, col)


def matmul_sums(fn: ir.Function, arrays: dict[ir.Sym, ir.OpCall],
                windows: dict[ir.Sym, ir.OpCall]) -> dict[int, MatmulSumLoop]:
    """{id of a For: what it sums} for every loop whose products can be summed after it.

    `arrays` is array_operands(fn), `windows` window_operands(fn): the loop's other statements must
    be the load of b, which the matmul reads from its array, and the load or view of a, read from
    its array or in place from its tile (which the loop does not write)."""
    if not arrays:
        return {}
    reads, writes = read_write_counts(fn)
    found: dict[int, MatmulSumLoop] = {}
    for body in bodies(fn.body):
        for pos, s in enumerate(body):
            matmul = _summed_matmul(s, arrays, windows)
            if matmul is None:
                continue
            acc = matmul.target
            # acc's zeros earlier in the list, nothing reading acc in between (only the zeros and the
            # matmul write it: the count), made by the sum instead; and its store right after the loop
            # when nothing else reads acc (the count), which the sum replaces there
            zeros = next((z for z in range(pos) if _zeros_of(body[z], acc)), None)
            if zeros is None or writes.get(acc, 0) != 2 or _reads(body[zeros + 1:pos], acc):
                found[id(s)] = MatmulSumLoop(matmul)
                continue
            before, after = body[zeros], body[pos + 1] if pos + 1 < len(body) else None
            assert isinstance(before, ir.Assign)  # _zeros_of
            if _store_of(after, acc) and reads.get(acc, 0) == 2:
                assert isinstance(after, ir.ExprStmt)  # _store_of
                found[id(s)] = MatmulSumLoop(matmul, before, after)
            else:
                found[id(s)] = MatmulSumLoop(matmul, before)
    return found


def _summed_matmul(s: ir.Stmt, arrays: dict[ir.Sym, ir.OpCall], windows: dict[ir.Sym, ir.OpCall]) -> ir.Assign | None:
    """The matmul of a loop whose body is one accumulating matmul of a (an array view or a tile's
    window) and b (an array view), and their loads or view."""
    if not isinstance(s, ir.For):
        return None
    operands = {x.target for x in s.body if isinstance(x, ir.Assign) and (x.target in arrays or x.target in windows)}
    matmuls = [x for x in s.body if not (isinstance(x, ir.Assign) and x.target in operands)]
    if len(matmuls) != 1 or not _accumulating_matmul(matmuls[0]):
        return None
    matmul = matmuls[0]
    assert isinstance(matmul, ir.Assign) and isinstance(matmul.value, ir.OpCall)  # _accumulating_matmul
    a, b = matmul.value.args[:2]
    if (isinstance(a, ir.Var) and isinstance(b, ir.Var) and {a.sym, b.sym} == operands and a.sym != b.sym
            and b.sym in arrays):
        return matmul
    return None


def _reads(stmts: Iterable[ir.Stmt], sym: ir.Sym) -> bool:
    """Whether any of the statements (or their nested blocks) reads sym."""
    return any(isinstance(x, ir.Var) and x.sym == sym
               for s in ir.walk_stmts(stmts) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e))


def _zeros_of(s: ir.Stmt | None, acc: ir.Sym) -> bool:
    return (isinstance(s, ir.Assign) and s.target == acc and isinstance(s.value, ir.OpCall)
            and s.value.op == "tile_zeros")


def _store_of(s: ir.Stmt | None, acc: ir.Sym) -> bool:
    """tile_store(C, acc, row, col) into a 2-d array of acc's dtype (no `aligned` debug check)."""
    if not (isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tile_store"):
        return False
    store, acc_type = s.expr, acc.type
    array, tile = store.args[0], store.args[1]
    return (isinstance(tile, ir.Var) and tile.sym == acc and isinstance(array, ir.Var)
            and isinstance(array.type, ArrayT) and array.type.ndim == 2 and isinstance(acc_type, TileT)
            and str(array.type.dtype) == str(acc_type.dtype) and store.attr("offset_count") == 2
            and not store.attr("aligned"))


def _accumulating_matmul(s: ir.Stmt) -> bool:
    """acc = tile_matmul(a, b, acc) with alpha = beta = 1: acc += a @ b, all of acc's float dtype."""
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_matmul"):
        return False
    call, acc = s.value, s.target.type
    return (len(call.args) == 3 and isinstance(call.args[2], ir.Var) and call.args[2].sym == s.target
            and call.attr("alpha") == 1.0 and call.attr("beta") == 1.0 and isinstance(acc, TileT)
            and acc.ndim == 2 and acc.is_concrete and str(acc.dtype) in _VIEW_DTYPES and _same_dtype(call, acc))


def _viewable_load(s: ir.Stmt) -> TypeGuard[ir.Assign]:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_load"):
        return False
    load, t = s.value, s.target.type
    array = load.args[0]
    return (isinstance(t, TileT) and t.ndim == 2 and t.is_concrete and str(t.dtype) in _VIEW_DTYPES
            and t.nbytes <= _MAX_VIEW_BYTES
            and isinstance(array, ir.Var) and isinstance(array.type, ArrayT) and array.type.ndim == 2
            and (load.attr("offset_count") or 0) in (0, 2) and not load.attr("aligned"))


def _read_syms(load: ir.OpCall) -> set[ir.Sym] | None:
    """The symbols a load's arguments read; None (nothing may move it) when they call a function."""
    syms: set[ir.Sym] = set()
    for arg in load.args:
        for x in ir.walk_expr(arg):
            if isinstance(x, ir.Call):
                return None
            if isinstance(x, ir.Var):
                syms.add(x.sym)
    return syms


def _transpose_of(s: ir.Stmt, source: ir.Sym, temp: ir.Sym) -> bool:
    return (isinstance(s, ir.Assign) and s.target == temp and isinstance(s.value, ir.OpCall)
            and s.value.op == "tile_transpose" and isinstance(s.value.args[0], ir.Var) and s.value.args[0].sym == source)


def _pure_tile_assign(s: ir.Stmt) -> TypeGuard[ir.Assign]:
    return (isinstance(s, ir.Assign) and isinstance(s.target.type, TileT) and isinstance(s.value, ir.OpCall)
            and s.value.op in _PURE_TILE_OPS)


def read_write_counts(fn: ir.Function) -> tuple[dict[ir.Sym, int], dict[ir.Sym, int]]:
    """({Sym: times read}, {Sym: times written}) over the whole function, read-only. Kept while fn
    lives: the CPU emitter's operand and row analyses (here and row_views.py) each ask it of the
    same body, six walks where one does."""
    hit = _COUNTS.get(id(fn))
    if hit is None:
        hit = ir.keep_while_alive(_COUNTS, fn, id(fn), _counts(fn))
    return hit


_COUNTS: dict[int, tuple[dict[ir.Sym, int], dict[ir.Sym, int]]] = {}


def _counts(fn: ir.Function) -> tuple[dict[ir.Sym, int], dict[ir.Sym, int]]:
    reads: dict[ir.Sym, int] = {}
    writes: dict[ir.Sym, int] = {}
    for s in ir.walk_stmts(fn.body):
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Var):
                    reads[x.sym] = reads.get(x.sym, 0) + 1
        for sym in _written(s):
            writes[sym] = writes.get(sym, 0) + 1
    return reads, writes


def _transpose_source(s: ir.Stmt) -> ir.Var | None:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_transpose"):
        return None
    (x,) = s.value.args
    if isinstance(x, ir.Var) and isinstance(x.type, TileT) and str(x.type.dtype) in _VIEW_DTYPES and x.sym != s.target:
        return x
    return None


def _matmul_reads(s: ir.Stmt, sym: ir.Sym) -> TypeGuard[ir.Assign]:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_matmul"):
        return False
    return any(isinstance(a, ir.Var) and a.sym == sym for a in s.value.args[:2])


def _written(s: ir.Stmt) -> tuple[ir.Sym, ...]:
    if isinstance(s, ir.Assign):
        return (s.target,)
    if isinstance(s, ir.Unpack):
        return tuple(s.targets)
    if isinstance(s, ir.For):
        return (s.var,)
    return ()


def read_once_by(fn: ir.Function, wanted: Callable[[ir.Assign], bool],
                 reach: int) -> Iterator[tuple[tuple[ir.Stmt, ...], int, ir.Assign, int]]:
    """(body, i, body[i], j) for each assignment body[i] of `wanted` whose target is written there
    only and read once, by body[j] within `reach` statements after it: the pairs the CPU
    peepholes (matmul_adds, extreme_adds, zero_stores) look at."""
    reads, writes = read_write_counts(fn)
    for body in bodies(fn.body):
        for i, first in enumerate(body):
            if not (isinstance(first, ir.Assign) and wanted(first)):
                continue
            z = first.target
            if reads.get(z, 0) != 1 or writes.get(z, 0) != 1:
                continue
            j = next((j for j in range(i + 1, min(len(body), i + 1 + reach)) if z in reads_of(body[j])), None)
            if j is not None:
                yield body, i, first, j


def bodies(stmts: Iterable[ir.Stmt]) -> Iterator[tuple[ir.Stmt, ...]]:
    """Every statement list: the body and, depth first, each nested block."""
    body = tuple(stmts)
    yield body
    for s in body:
        for block in ir.child_blocks(s):
            yield from bodies(block)
