"""View adds in place: IR -> IR for the one-lane (CPU) adjoint.

The adjoint of `part = tile_view(t, offset)` is derived for cooperating lanes (the GPU's form),
which spreads the view's gradient into a fresh zero tile and adds that whole tile to adj(t):

    z = zeros
    z = tile_view_add(z, g, offset)
    adj_t = adj_t + z

In one lane that is a zero fill and an add over all of t for a gradient the size of the view
(the MLP's 16x256 hidden tile, read 16x32 at a time: 8 fills and 8 full adds per block). Where
z is read by those two statements only, the three become `adj_t = tile_view_add(adj_t, g,
offset)`: the same values (adj_t + 0 is adj_t, up to the sign of a zero).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .. import ir
from ..ir.types import TileT


def fold_view_adds(fn: ir.Function) -> ir.Function:
    reads = ir.use_counts(fn.body)
    return replace(fn, body=_fold(fn.body, reads))


def _fold(body: Sequence[ir.Stmt], reads: dict[ir.Sym, int]) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    stmts = [_nested(s, reads) for s in body]
    i = 0
    while i < len(stmts):
        folded = _folded(stmts[i:i + 3], reads)
        if folded is not None:
            out.append(folded)
            i += 3
        else:
            out.append(stmts[i])
            i += 1
    return tuple(out)


def _nested(s: ir.Stmt, reads: dict[ir.Sym, int]) -> ir.Stmt:
    if isinstance(s, ir.If):
        return replace(s, body=_fold(s.body, reads), orelse=_fold(s.orelse, reads))
    if isinstance(s, (ir.For, ir.While)):
        return replace(s, body=_fold(s.body, reads))
    return s


def _folded(three: Sequence[ir.Stmt], reads: dict[ir.Sym, int]) -> ir.Assign | None:
    """`x = tile_view_add(x, g, offsets)` for a spread-and-add triple, else None."""
    if len(three) != 3:
        return None
    fill, spread, add = three
    if not (isinstance(fill, ir.Assign) and isinstance(spread, ir.Assign) and isinstance(add, ir.Assign)):
        return None
    z = fill.target
    if not (isinstance(z.type, TileT) and _is_zeros(fill.value) and spread.target == z and reads.get(z, 0) == 2):
        return None
    view = spread.value
    if not (isinstance(view, ir.OpCall) and view.op == "tile_view_add" and _is_var(view.args[0], z)):
        return None
    total = add.value
    if not (isinstance(total, ir.OpCall) and total.op == "add" and len(total.args) == 2):
        return None
    x = add.target
    if x == z or x.type != z.type or not any(_is_var(a, z) for a in total.args):
        return None
    if not any(_is_var(a, x) for a in total.args):
        return None
    args = (ir.Var(x, view.args[0].span), *view.args[1:])
    return ir.Assign(x, replace(view, args=args, type=x.type), add.span)


def _is_zeros(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_zeros" and not e.args


def _is_var(e: ir.Expr, sym: ir.Sym) -> bool:
    return isinstance(e, ir.Var) and e.sym == sym
