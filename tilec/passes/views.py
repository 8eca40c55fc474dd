"""Array views for the adjoint: IR -> IR without array-typed locals.

`row = A[i]` binds a view (an `array_view` op) to a name. The adjoint of a view is the same view
of the parent's adjoint array, which the autodiff driver builds from the view expression itself
(`array_view(adj_A, i)`); so every array local is replaced by its defining expression at each use.
That is exact when the expression reads the same values at every use: each symbol it reads is a
parameter or assigned once, or is a loop's induction variable and every use sits in that loop.
Anything else raises NotDifferentiable (a warning; the kernel gets no adjoint), never a wrong one.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from .. import ir
from ..ir.types import ArrayT
from ..diagnostics import NotDifferentiable


def array_base(e: ir.Expr) -> ir.Expr:
    """The parameter (or local) array a view expression reads through; for an array held in an
    array of structs (`array_load` of an array of descriptors, `ps[i].data`), that descriptor
    array: every array it holds counts as one array."""
    while isinstance(e, ir.OpCall) and (e.op == "array_view" or is_held_array(e)):
        e = e.args[0]
    return e


def is_held_array(e: ir.Expr) -> bool:
    """`ps[i].data`: an element read of an array of array descriptors (ir/structs.py)."""
    return isinstance(e, ir.OpCall) and e.op == "array_load" and isinstance(e.type, ArrayT)


def inline_array_locals(fn: ir.Function) -> ir.Function:
    defs: dict[ir.Sym, tuple[ir.Assign, tuple[ir.For, ...]]] = {}
    sites: dict[ir.Sym, int] = {}
    loops_of: dict[ir.Sym, object] = {}
    _scan(fn.body, (), defs, sites, loops_of)
    if not defs:
        return fn
    params = set(fn.params)
    values: dict[ir.Sym, ir.Expr] = {}
    for sym, (stmt, loops) in defs.items():
        if isinstance(stmt.value, ir.OpCall) and stmt.value.op == "zeros":  # its elements live in the forward only
            raise NotDifferentiable("a local array (wp.zeros in a kernel or func) is made here; tilec derives no "
                                    "adjoint through one yet", stmt.span)
        if sites.get(sym, 0) != 1:
            raise NotDifferentiable(f"array variable `{sym.name}` is assigned more than once; its adjoint "
                                    "is not derived", stmt.span)
        for x in ir.walk_expr(stmt.value):
            if not isinstance(x, ir.Var) or x.sym in params or isinstance(x.sym.type, ArrayT):
                continue
            loop = next((f for f in loops if f.var == x.sym), None)
            if loop is not None:
                outside = [u for u in _uses(fn.body, sym) if not _inside(loop.body, u)]
                if not outside:
                    continue
            elif sites.get(x.sym, 0) == 1:
                continue
            raise NotDifferentiable(f"the view `{sym.name}` reads `{x.sym.name}`, which changes while the view "
                                    "is in use; its adjoint is not derived", stmt.span)
    for sym, (stmt, _) in defs.items():
        values[sym] = stmt.value
    return replace(fn, body=_substitute(fn.body, values))


def _scan(body: tuple[ir.Stmt, ...], loops: tuple[ir.For, ...], defs: dict[ir.Sym, tuple[ir.Assign, tuple[ir.For, ...]]],
          sites: dict[ir.Sym, int], loops_of: dict[ir.Sym, object]) -> None:
    for s in body:
        targets = (s.target,) if isinstance(s, ir.Assign) else (s.targets if isinstance(s, ir.Unpack) else ())
        if isinstance(s, ir.For):
            targets = (s.var,)
        for t in targets:
            sites[t] = sites.get(t, 0) + 1
        if isinstance(s, ir.Assign) and isinstance(s.target.type, ArrayT):
            defs.setdefault(s.target, (s, loops))
        inner = loops + ((s,) if isinstance(s, ir.For) else ())
        for block in ir.child_blocks(s):
            _scan(block, inner, defs, sites, loops_of)


def _uses(body: tuple[ir.Stmt, ...], sym: ir.Sym) -> Iterator[ir.Stmt]:
    for s in ir.walk_stmts(body):
        if any(isinstance(x, ir.Var) and x.sym == sym for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)):
            yield s


def _inside(body: tuple[ir.Stmt, ...], stmt: ir.Stmt) -> bool:
    return any(s is stmt for s in ir.walk_stmts(body))


def _substitute(body: tuple[ir.Stmt, ...], values: dict[ir.Sym, ir.Expr]) -> tuple[ir.Stmt, ...]:
    def expr(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Var) and e.sym in values:
            return expr(values[e.sym])
        if isinstance(e, (ir.OpCall, ir.Call)):
            return replace(e, args=tuple(expr(a) for a in e.args))
        return e

    return ir.map_exprs(body, expr, drop=lambda s: isinstance(s, ir.Assign) and s.target in values)
