"""Simplify: IR -> IR without dead assignments (and without tape traffic for dead values).

Expects normalized IR. A value is live when an effect (store, atomic), a
control-flow condition or bound, a return, or a live assignment reads it. Pure
assignments to dead symbols are removed, and so are both the saves
(`tape_push(x)`) and restores (`x = tape_pop()`) of a dead symbol: they come in
matching pairs, so the tape stays balanced. In an adjoint kernel this drops the
replay of forward values the reverse sweep never reads (the accumulator of a
GEMM, for one).

Before that, a backward liveness pass finds symbols none of whose restores is
ever read before being overwritten (a forward value the reverse sweep reads only
before the loop that restores it, say): their saves and restores go too.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TypeGuard

from .. import ir
from ..ops import OPS


def simplify_function(fn: ir.Function) -> ir.Function:
    useless = _useless_restores(fn)
    if useless:
        fn = replace(fn, body=_drop_tape_pairs(fn.body, useless))
    while True:
        dropped: list[ir.For] = []
        fn = replace(fn, body=_sweep(fn.body, _live_symbols(fn), dropped))
        if not dropped:
            return fn
        # A loop left empty went, and with it the reads of its bounds, which may have been all
        # that kept their values live: sweep again (simplified twice is then simplified once).


def _is_pop(s: ir.Stmt) -> TypeGuard[ir.Assign]:
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tape_pop"


def _useless_restores(fn: ir.Function) -> set[ir.Sym]:
    """Symbols restored from the tape whose restored value is never read."""
    restores = False
    for s in ir.walk_stmts(fn.body):  # one walk for both questions
        if isinstance(s, (ir.Break, ir.Continue)):
            return set()  # jumps are gone after structuring; without that, keep every restore
        restores = restores or _is_pop(s)
    if not restores:
        return set()  # nothing restored (straight-line code overwrites nothing): no liveness walk
    restored: set[ir.Sym] = set()
    useful: set[ir.Sym] = set()

    # `live` is updated in place along straight-line code (linear time); a branch or loop works
    # on copies.
    def live_in(body: tuple[ir.Stmt, ...], live: set[ir.Sym]) -> set[ir.Sym]:
        for s in reversed(body):
            live = stmt_live_in(s, live)
        return live

    def stmt_live_in(s: ir.Stmt, live: set[ir.Sym]) -> set[ir.Sym]:
        if _is_pop(s):
            restored.add(s.target)
            if s.target in live:
                useful.add(s.target)
            live.discard(s.target)
            return live
        if isinstance(s, ir.Assign):
            live.discard(s.target)
            live |= ir.read_syms(s.value)
            return live
        if isinstance(s, ir.Unpack):
            live.difference_update(s.targets)
            live |= ir.read_syms(s.value)
            return live
        if isinstance(s, ir.If):
            return live_in(s.body, set(live)) | live_in(s.orelse, live) | ir.read_syms(s.cond)
        if isinstance(s, (ir.For, ir.While)):
            head = set(live)
            while True:  # the loop head: what is live after the loop or at the next iteration
                new = live | live_in(s.body, set(head))
                if new == head:
                    break
                head = new
            bounds = [s.cond] if isinstance(s, ir.While) else [s.start, s.stop, s.step]
            for b in bounds:
                head |= ir.read_syms(b)
            return head
        for e in ir.stmt_exprs(s):
            live |= ir.read_syms(e)
        return live

    live_in(fn.body, set())
    return restored - useful


def _drop_tape_pairs(body: tuple[ir.Stmt, ...], syms: set[ir.Sym]) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for s in body:
        if (_is_pop(s) and s.target in syms) or (_is_push(s) and ir.read_syms(s.expr) <= syms):
            continue
        if isinstance(s, ir.If):
            s = replace(s, body=_drop_tape_pairs(s.body, syms), orelse=_drop_tape_pairs(s.orelse, syms))
        elif isinstance(s, (ir.For, ir.While)):
            s = replace(s, body=_drop_tape_pairs(s.body, syms))
        out.append(s)
    return tuple(out)


def _has_effect(e: ir.Expr) -> bool:
    stack = [e]  # walk_expr's walk, inline: asked of every assignment, twice
    while stack:
        x = stack.pop()
        kind = type(x)
        if kind is ir.OpCall:
            if x.op in _EFFECTS:  # type: ignore[union-attr]  # the kind was just tested
                return True
            stack.extend(x.args)  # type: ignore[union-attr]
        elif kind is ir.Call:
            stack.extend(x.args)  # type: ignore[union-attr]
    return False


_EFFECTS = frozenset(name for name, spec in OPS.items() if spec.effect) - {"tape_push"}


def _is_push(s: ir.Stmt) -> TypeGuard[ir.ExprStmt]:
    return isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall) and s.expr.op == "tape_push"


def _live_symbols(fn: ir.Function) -> set[ir.Sym]:
    live: set[ir.Sym] = set()
    defining: dict[ir.Sym, list[ir.Expr]] = {}  # symbol -> values of the pure assignments to it (live once it is)
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.ExprStmt) and not _is_push(s):
            live |= ir.read_syms(s.expr)
        elif isinstance(s, (ir.If, ir.While)):
            live |= ir.read_syms(s.cond)
        elif isinstance(s, ir.For):
            live |= ir.read_syms(s.start) | ir.read_syms(s.stop) | ir.read_syms(s.step)
        elif isinstance(s, ir.Return) and s.value is not None:
            live |= ir.read_syms(s.value)
        elif isinstance(s, ir.Assign):
            if _has_effect(s.value):
                live |= ir.read_syms(s.value) | {s.target}
            else:
                defining.setdefault(s.target, []).append(s.value)
        elif isinstance(s, ir.Unpack):
            for t in s.targets:
                defining.setdefault(t, []).append(s.value)
    work = list(live)  # a worklist, not rounds over every assignment: a chain of n takes n steps
    while work:
        for value in defining.pop(work.pop(), ()):
            for sym in ir.read_syms(value):
                if sym not in live:
                    live.add(sym)
                    work.append(sym)
    return live


def _sweep(body: tuple[ir.Stmt, ...], live: set[ir.Sym], dropped: list[ir.For]) -> tuple[ir.Stmt, ...]:
    """body without its dead assignments; the loops left empty, and dropped, are added to `dropped`."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Assign) and s.target not in live and not _has_effect(s.value):
            continue
        if isinstance(s, ir.Unpack) and not any(t in live for t in s.targets):
            continue
        if _is_push(s) and not (ir.read_syms(s.expr) & live):
            continue
        if isinstance(s, ir.If):
            s = replace(s, body=_sweep(s.body, live, dropped), orelse=_sweep(s.orelse, live, dropped))
        elif isinstance(s, (ir.For, ir.While)):
            s = replace(s, body=_sweep(s.body, live, dropped))
            if isinstance(s, ir.For) and not s.body and s.var not in live:
                dropped.append(s)
                continue  # a loop left with nothing to do (it always terminates)
        out.append(s)
    return tuple(out)
