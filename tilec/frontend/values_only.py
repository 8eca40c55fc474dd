"""A func that gives its results through several instances (one per returned value, or per field of
a returned struct: lower_structs.py) and also has effects (array writes, atomics, prints).

Each instance runs the func's body, so the effects must run in one of them only: the caller calls
the last instance as lowered, and the others without the statements that make the effects (their
"values only" body). That gives the values the func gives, provided none of them depends on an
effect: a value that reads an array the body writes (it could see the write), or that is itself an
effect's result (an atomic's old value), or a call of a func with effects whose result is used, is
refused instead (`values_only_body` names the statement).

The adjoint follows: the adjoint of the instance with the effects carries the effects' adjoints
(the written elements' adjoints), and each instance carries its own value's adjoint.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from .. import ir
from ..ir.types import ArrayT, IndexedT
from ..ops import OPS


def effect_of(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> ir.Stmt | None:
    """The first statement of `fn` with an effect, here or in a func it calls, else None. Kept while
    fn lives: every call site of a func with several values asks it of each instance, and each call
    in a body asks it of the callee (a chain of funcs each calling the next twice: 2^n walks unkept)."""
    hit = _EFFECTS.get(id(fn))
    if hit is None:
        found = next((stmt for stmt in ir.walk_stmts(fn.body) if isinstance(stmt, ir.ExprStmt)
                      or any(makes_effect(e, funcs) for e in ir.stmt_exprs(stmt))), None)
        hit = ir.keep_while_alive(_EFFECTS, fn, id(fn), (found,))
    return hit[0]


_EFFECTS: dict[int, tuple[ir.Stmt | None]] = {}  # id(Function) -> (its first effect statement or None,)


def makes_effect(e: ir.Expr, funcs: Mapping[str, ir.Function]) -> bool:
    """Whether evaluating `e` has an effect: an effect op (an atomic returning its old value too), or a
    call of a func with one."""
    for sub in ir.walk_expr(e):
        if isinstance(sub, ir.OpCall) and sub.op == "native_call" and dict(sub.attrs).get("values_only"):
            continue  # a snippet of values only (native_funcs.values_only)
        if isinstance(sub, ir.OpCall) and sub.op in OPS and OPS[sub.op].effect:
            return True
        if isinstance(sub, ir.Call) and sub.func in funcs and effect_of(funcs[sub.func], funcs) is not None:
            return True
    return False


def values_only_body(fn: ir.Function, funcs: Mapping[str, ir.Function],
                     twin_of: Callable[[ir.Function], ir.Function | None]) -> tuple[ir.Stmt, ...] | ir.Stmt:
    """fn's body without its effect statements, or the statement whose value depends on an effect
    (see the module's doc). A value that calls a func with effects calls its values-only twin
    instead, where `twin_of` gives one (`a, b = g(x)` of a func g writing an array)."""
    roots = _array_roots(fn.body)
    written: set[ir.Sym] = set()

    def strip(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        kept: list[ir.Stmt] = []
        for s in body:
            if isinstance(s, ir.ExprStmt):  # a statement evaluated for its effect: every array it names
                written.update(r for sym in _arrays_read(s.expr) for r in roots.get(sym, {sym}))
                continue
            if isinstance(s, ir.If):
                s = ir.If(s.cond, strip(s.body), strip(s.orelse), s.span)
                if not s.body and not s.orelse:
                    continue  # a branch that only made effects
            elif isinstance(s, (ir.For, ir.While)):
                inner = strip(s.body)
                if not inner:
                    continue  # a loop that only made effects
                s = ir.For(s.var, s.start, s.stop, s.step, inner, s.span, s.static) if isinstance(s, ir.For) \
                    else ir.While(s.cond, inner, s.span)
            kept.append(s)
        return tuple(kept)

    def to_twins(e: ir.Expr) -> ir.Expr:
        if isinstance(e, (ir.OpCall, ir.Call)):
            e = ir.with_args(e, tuple(to_twins(a) for a in e.args))
        if isinstance(e, ir.Call) and e.func in funcs and effect_of(funcs[e.func], funcs) is not None:
            twin = twin_of(funcs[e.func])
            if twin is not None:
                return ir.Call(twin.name, e.args, e.type, e.span)
        return e

    body = ir.map_exprs(strip(fn.body), to_twins)
    for s in ir.walk_stmts(body):
        for e in ir.stmt_exprs(s):
            if makes_effect(e, funcs) or any(roots.get(sym, {sym}) & written for sym in _arrays_read(e)):
                return s
    return body


def _arrays_read(e: ir.Expr) -> set[ir.Sym]:
    return {x.sym for x in ir.walk_expr(e) if isinstance(x, ir.Var) and isinstance(x.sym.type, (ArrayT, IndexedT))}


def _array_roots(body: tuple[ir.Stmt, ...]) -> dict[ir.Sym, set[ir.Sym]]:
    """Each local array (a view: `row = a[i]`) -> the arrays it may reach, itself included."""
    roots: dict[ir.Sym, set[ir.Sym]] = {}
    for s in ir.walk_stmts(body):
        if isinstance(s, ir.Assign) and isinstance(s.target.type, (ArrayT, IndexedT)):
            reached = roots.setdefault(s.target, {s.target})
            for sym in _arrays_read(s.value):
                reached |= roots.get(sym, {sym})
    return roots
