"""Lane ops: an adjoint derived for cooperating lanes -> the same adjoint with lane ops taken out
where they are copies.

An adjoint derived with lanes=True (autodiff.py) sums each lane's partial adjoint with `lane_sum`
and keeps a value in the leader lane only with `leader_only`. Where a tile is the block's, not a
lane's (the GPU model: one tile per block, its elements spread over the threads), both are the
identity on a tile, and `block_tile_form` takes them out of the GPU's adjoint. With one lane per
block both are the identity on every value (one_lane.py takes out the rest).

The normalizer had bound a lane op's elementwise operand to a temporary; once the op is gone, a
temporary read once, in an elementwise position of a later statement of its block, with nothing
in between writing what it reads, is put back there: each such statement is a loop of its own
(fuse_tiles.py). The GPU adjoint of an elementwise tile statement was four loops (the partial,
its copy, the sum, the next partial); it is one.
"""
from __future__ import annotations

from dataclasses import replace
from operator import is_
from typing import AbstractSet

from .. import ir
from ..ir.types import NONE, TileT
from ..ops.build import zeros
from .fuse_tiles import fold_single_use, single_use_tiles

LANE_OPS = {"lane_sum", "leader_only"}


def block_tile_form(adjoint: ir.Function) -> ir.Function:
    """The lanes adjoint with every lane op on a tile taken out (a copy where tiles are the
    block's), and the temporaries bound for them folded into their readers."""
    bound = tile_lane_bound(adjoint.body)
    if not bound:
        return adjoint
    return fold_lane_temporaries(replace(adjoint, body=strip_lane_ops(adjoint.body, tiles_only=True)), bound)


def fold_lane_temporaries(adjoint: ir.Function, bound: set[ir.Sym]) -> ir.Function:
    """The adjoint with the tiles of `bound` (tile_lane_bound of its lanes form) that are assigned
    and read once folded into their readers."""
    single = single_use_tiles(adjoint.body, bound)
    return replace(adjoint, body=fold_single_use(adjoint.body, single)) if single else adjoint


def tile_lane_bound(body: tuple[ir.Stmt, ...]) -> set[ir.Sym]:
    """The targets of assignments of a lane op on a tile, and the variables such an op reads (also
    where the op sits inside an expression: the derivation's form before it is normalized)."""
    bound: set[ir.Sym] = set()
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign) and _is_tile_lane_op(s.value):
            bound.add(s.target)
        for top in ir.stmt_exprs(s):
            for e in ir.walk_expr(top):
                if _is_tile_lane_op(e):
                    bound |= {a.sym for a in e.args if isinstance(a, ir.Var)}  # type: ignore[union-attr]
    return bound


def _is_tile_lane_op(e: ir.Expr) -> bool:
    return type(e) is ir.OpCall and e.op in LANE_OPS and _on_tile(e)


def strip_lane_ops(body: tuple[ir.Stmt, ...], lane_takes: AbstractSet[ir.Sym] = frozenset(),
                   tiles_only: bool = False) -> tuple[ir.Stmt, ...]:
    """body with each lane op replaced by its operand (tiles_only: only those on a tile); body itself
    when there is none. lane_takes: symbols of element takes only cooperating lanes need
    (autodiff.adjoint_kernel): with one lane they read the element and zero it, without an atomic
    exchange."""
    def expr(e: ir.Expr) -> ir.Expr:
        kind = type(e)  # exact classes: asked of every node of the adjoint
        while kind is ir.OpCall and e.op in LANE_OPS and (  # type: ignore[union-attr]  # the kind was just tested
                not tiles_only or _on_tile(e)):  # type: ignore[arg-type]
            e = e.args[0]  # type: ignore[union-attr]
            kind = type(e)
        if kind is ir.OpCall or kind is ir.Call:
            return ir.with_args(e, tuple([expr(a) for a in e.args]))  # type: ignore[union-attr,arg-type]
        return e

    def block(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.Assign) and s.target in lane_takes and isinstance(s.value, ir.OpCall) \
                    and s.value.op == "array_take":
                adj, *idx = s.value.args
                load = ir.OpCall("array_load", (adj, *idx), (), s.value.type, s.value.span)
                store = ir.OpCall("array_store", (adj, zeros(s.value.type, s.span), *idx), (), NONE, s.span)
                out += [replace(s, value=load), ir.ExprStmt(store, s.span)]
                continue
            if type(s) is ir.Assign:  # most statements: built directly where a lane op went
                value = expr(s.value)
                s = s if value is s.value else ir.Assign(s.target, value, s.span)
            elif isinstance(s, (ir.Assign, ir.Unpack)):
                value = expr(s.value)
                s = s if value is s.value else replace(s, value=value)
            elif isinstance(s, ir.ExprStmt):
                e = expr(s.expr)
                s = s if e is s.expr else replace(s, expr=e)
            elif isinstance(s, ir.Return):
                s = replace(s, value=None if s.value is None else expr(s.value))
            elif isinstance(s, ir.If):
                s = replace(s, cond=expr(s.cond), body=block(s.body), orelse=block(s.orelse))
            elif isinstance(s, ir.For):
                s = replace(s, start=expr(s.start), stop=expr(s.stop), step=expr(s.step), body=block(s.body))
            elif isinstance(s, ir.While):
                s = replace(s, cond=expr(s.cond), body=block(s.body))
            out.append(s)
        if len(out) == len(body) and all(map(is_, out, body)):
            return body  # nothing to take out: the same tuple, which callers can test for
        return tuple(out)

    return block(body)


def _on_tile(e: ir.OpCall) -> bool:
    return isinstance(e.args[0].type, TileT)
