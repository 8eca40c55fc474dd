"""Simplify: IR -> IR without dead assignments (and without tape traffic for dead values).

Expects normalized IR. A value is live when an effect (store, atomic), a
control-flow condition or bound, a return, or a live assignment reads it. Pure
assignments to dead symbols are removed, and so are both the saves
(`tape_push(x)`) and restores (`x = tape_pop()`) of a dead symbol: they come in
matching pairs, so the tape stays balanced. In an adjoint kernel this drops the
replay of forward values the reverse sweep never reads (the accumulator of a
GEMM, for one).
"""
from __future__ import annotations

from dataclasses import replace

from . import ir
from .ops import OPS


def simplify_function(fn: ir.Function) -> ir.Function:
    live = _live_symbols(fn)
    return replace(fn, body=_sweep(fn.body, live))


def _reads(e) -> set:
    return {x.sym for x in ir.walk_expr(e) if isinstance(x, ir.Var)}


def _has_effect(e) -> bool:
    return any(isinstance(x, ir.OpCall) and OPS[x.op].effect and x.op != "tape_push" for x in ir.walk_expr(e))


def _is_push(s) -> bool:
    return isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tape_push"


def _live_symbols(fn: ir.Function) -> set:
    live: set = set()
    assigns = []  # (targets, value) of assignments that may become live
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.ExprStmt) and not _is_push(s):
            live |= _reads(s.expr)
        elif isinstance(s, (ir.If, ir.While)):
            live |= _reads(s.cond)
        elif isinstance(s, ir.For):
            live |= _reads(s.start) | _reads(s.stop) | _reads(s.step)
        elif isinstance(s, ir.Return) and s.value is not None:
            live |= _reads(s.value)
        elif isinstance(s, ir.Assign):
            if _has_effect(s.value):
                live |= _reads(s.value) | {s.target}
            else:
                assigns.append(((s.target,), s.value))
        elif isinstance(s, ir.Unpack):
            assigns.append((s.targets, s.value))
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            if any(t in live for t in targets):
                new = _reads(value) - live
                if new:
                    live |= new
                    changed = True
    return live


def _sweep(body, live) -> tuple:
    out = []
    for s in body:
        if isinstance(s, ir.Assign) and s.target not in live and not _has_effect(s.value):
            continue
        if isinstance(s, ir.Unpack) and not any(t in live for t in s.targets):
            continue
        if _is_push(s) and not (_reads(s.expr) & live):
            continue
        if isinstance(s, ir.If):
            s = replace(s, body=_sweep(s.body, live), orelse=_sweep(s.orelse, live))
        elif isinstance(s, (ir.For, ir.While)):
            s = replace(s, body=_sweep(s.body, live))
            if isinstance(s, ir.For) and not s.body and s.var not in live:
                continue  # a loop left with nothing to do (it always terminates)
        out.append(s)
    return tuple(out)
