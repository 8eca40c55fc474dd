"""`wp.grad(f)(args)` in forward code: each `grad_of` op (frontend/grad_calls.py) becomes a call of
a func derived from f's adjoint.

The derivation is the one kernels get (autodiff.adjoint_kernel), of a small kernel made for it: it
reads f's inputs from one-element arrays, calls f (or applies the op), and stores the result. Its
adjoint, with the result's adjoint 1, accumulates each input's gradient into that input's adjoint
array; the derived func reads its parameters where the kernel read the arrays and sums in locals
where the kernel added into the adjoint arrays. A tape the adjoint keeps (values a branch
overwrites, the trip of the one-pass loop a `return` leaves) becomes locals: outside f's loops each
saved value is saved once, and the reverse sweep restores them in the reverse order of the saves.
A loop whose adjoint needs a tape (a value an iteration overwrites, or a `while` loop's trip count)
is refused: its tape would need the kernel's; a loop whose adjoint recomputes what it reads works.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from .. import ir, naming
from ..diagnostics import Diagnostics, NotDifferentiable, Span
from ..ir.types import INT32, NONE, ArrayT, Element, Scalar, Type
from ..ops.build import call, const, zeros
from .autodiff import adjoint_kernel

Key = tuple[Any, ...]


def expand_grad_calls(module: ir.Module, diags: Diagnostics) -> ir.Module:
    """The module with every `grad_of` replaced by a call of its derived func (added before the first
    function using it); a gradient tilec cannot derive is an error at its call."""
    derived: dict[Key, list[ir.Function] | None] = {}
    order: list[ir.Function] = []

    def replaced(e: ir.Expr) -> ir.Expr:
        if not (isinstance(e, ir.OpCall) and e.op == "grad_of"):
            return e
        key = _key(e)
        if key not in derived:
            derived[key] = _derive(module, e, {f.name for f in module.funcs} | {f.name for f in order}, diags)
            order.extend(derived[key] or [])
        funcs = derived[key]
        if funcs is None:
            return e  # reported
        g = funcs[e.attr("index")]
        return ir.Call(g.name, e.args, e.type, e.span)

    funcs: list[ir.Function] = []
    for fn in module.funcs:
        before = len(order)
        body = _map_body(fn.body, replaced)
        funcs.extend(order[before:])  # (derived funcs call no other: f's body is inlined in them)
        funcs.append(replace(fn, body=body) if body != fn.body else fn)
    kernels = []
    for k in module.kernels:
        before = len(order)
        body = _map_body(k.body, replaced)
        funcs.extend(order[before:])
        kernels.append(replace(k, body=body) if body != k.body else k)
    if not order:
        return module
    return replace(module, funcs=tuple(funcs), kernels=tuple(kernels))


def _key(e: ir.OpCall) -> Key:
    return (e.attr("func"), e.attr("op"), e.attr("op_attrs"), tuple(a.type for a in e.args))


def _derive(module: ir.Module, e: ir.OpCall, taken: set[str], diags: Diagnostics) -> list[ir.Function] | None:
    """One func per input of e's target: that input's gradient at the arguments."""
    span = e.span
    target = next((f for f in module.funcs if f.name == e.attr("func")), None)
    what = target.source_name if target is not None else f"wp.{e.attr('op')}"
    kernel, inputs, adjoint_inputs, seed = _gradient_kernel(e, target, span)
    try:
        adjoint = adjoint_kernel(kernel, module)
    except NotDifferentiable as why:
        diags.error("TC0430", f"wp.grad of `{what}`: tilec cannot derive it ({why.diagnostic.message})", span)
        return None
    params = tuple(ir.Sym(f"x{j}", 0, a.type) for j, a in enumerate(e.args))
    sums = tuple(ir.Sym(f"grad{j}", 0, a.type) for j, a in enumerate(e.args))
    try:
        body = _as_func_body(adjoint.body, dict(zip(inputs, params)), dict(zip(adjoint_inputs, sums)), seed, span)
    except _Unsupported as why:
        diags.error("TC0430", f"wp.grad of `{what}`: {why}", span,
                    help="write the derivative as a @wp.func")
        return None
    base = f"{target.name if target is not None else e.attr('op')}_grad"
    out = []
    for j, total in enumerate(sums):
        name = _fresh(f"{base}{j}", taken)
        taken.add(name)
        inits = tuple(ir.Assign(s, zeros(s.type, span), span) for s in sums)
        out.append(ir.Function(name, name, "func", params,
                               inits + body + (ir.Return(ir.Var(total, span), span),), total.type, span, tiled=False))
    return out


def _gradient_kernel(e: ir.OpCall, target: ir.Function | None,
                     span: Span) -> tuple[ir.Function, list[ir.Sym], list[ir.Sym], ir.Sym]:
    """(the kernel, its input arrays, their adjoint arrays, the result's adjoint array)."""
    zero = ir.Const(0, INT32, span)
    arrays = [ir.Sym(f"grad_in{j}", 0, ArrayT(cast(Element, a.type), 1)) for j, a in enumerate(e.args)]
    values = [ir.Sym(f"grad_x{j}", 0, a.type) for j, a in enumerate(e.args)]
    result = ir.Sym("grad_value", 0, _result_type(e, target))
    out = ir.Sym("grad_out", 0, ArrayT(cast(Element, result.type), 1))
    body: list[ir.Stmt] = [ir.Assign(v, ir.OpCall("array_load", (ir.Var(a, span), zero), (), v.type, span), span)
                           for v, a in zip(values, arrays)]
    args = tuple(ir.Var(v, span) for v in values)
    value = ir.Call(target.name, args, target.ret, span) if target is not None else \
        ir.OpCall(e.attr("op"), args, e.attr("op_attrs"), result.type, span)
    body.append(ir.Assign(result, value, span))
    body.append(ir.ExprStmt(ir.OpCall("array_store", (ir.Var(out, span), ir.Var(result, span), zero), (), NONE, span),
                            span))
    kernel = ir.Function("grad_kernel", "wp.grad", "kernel", (*arrays, out), tuple(body), NONE, span, tiled=False)
    adj = [ir.Sym(naming.adjoint_param(a.name), 0, a.type) for a in (*arrays, out)]
    return kernel, arrays, adj[:-1], adj[-1]


def _result_type(e: ir.OpCall, target: ir.Function | None) -> Type:
    if target is not None:
        return target.ret
    return call(e.attr("op"), *e.args, **dict(e.attr("op_attrs"))).type


class _Unsupported(Exception):
    pass


def _as_func_body(body: tuple[ir.Stmt, ...], inputs: dict[ir.Sym, ir.Sym], adjoints: dict[ir.Sym, ir.Sym],
                  seed: ir.Sym, span: Span) -> tuple[ir.Stmt, ...]:
    """The adjoint kernel's body as a func's: array reads of the inputs -> the parameters, the seed's
    take -> 1, atomic adds into the adjoint arrays -> sums in locals, the tape -> locals."""
    pushes: list[ir.Sym] = []
    pops: list[ir.Stmt] = []

    def expr(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.OpCall) and e.args and isinstance(e.args[0], ir.Var):
            array = e.args[0].sym
            if array in inputs and e.op == "array_load":
                return ir.Var(inputs[array], e.span)
            if array == seed and e.op in ("array_take", "array_load"):
                if not isinstance(e.type, Scalar):
                    raise _Unsupported(f"its result is {e.type} (tilec derives wp.grad of functions returning a float)")
                return const(1, e.type, e.span)
            if array in inputs or array == seed or array in adjoints:
                raise _Unsupported(f"its adjoint uses `{e.op}` of an input (tilec derives values, not arrays)")
        if isinstance(e, ir.OpCall) and e.op == "tape_pop":
            raise AssertionError("tape_pop outside an assignment")  # (the adjoint assigns each restored value)
        return e

    def stmts(block: tuple[ir.Stmt, ...], replay: bool) -> tuple[ir.Stmt, ...]:
        """replay: the forward replay, where one of f's loops may save nothing (the reverse sweep's loops
        mirror the replay's: what they restore, a replay's loop saved)."""
        out: list[ir.Stmt] = []
        for s in block:
            if replay and (isinstance(s, ir.While) or (isinstance(s, ir.For) and not _once(s))) and _tapes(s):
                raise _Unsupported("its gradient needs values a loop overwrites (tilec derives wp.grad of funcs "
                                   "whose loops' adjoints need no tape)")
            if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall):
                op = s.expr.op
                if op == "tape_ready":
                    continue
                if op == "tape_push":
                    saved = ir.Sym("saved", len(pushes) + 1, s.expr.args[0].type)
                    pushes.append(saved)
                    out.append(ir.Assign(saved, _map_expr(s.expr.args[0], expr), s.span))
                    continue
                if op == "array_atomic_add" and isinstance(s.expr.args[0], ir.Var) and \
                        s.expr.args[0].sym in adjoints:
                    total = adjoints[s.expr.args[0].sym]
                    added = call("add", ir.Var(total, s.span), _map_expr(s.expr.args[1], expr), span=s.span)
                    out.append(ir.Assign(total, added, s.span))
                    continue
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tape_pop":
                out.append(s)  # its value: the matching save, once every save is numbered
                pops.append(out[-1])
                continue
            if isinstance(s, ir.If):
                out.append(replace(s, cond=_map_expr(s.cond, expr), body=stmts(s.body, replay),
                                   orelse=stmts(s.orelse, replay)))
            elif isinstance(s, ir.For):
                out.append(replace(s, start=_map_expr(s.start, expr), stop=_map_expr(s.stop, expr),
                                   step=_map_expr(s.step, expr), body=stmts(s.body, replay)))
            elif isinstance(s, ir.While):
                out.append(replace(s, cond=_map_expr(s.cond, expr), body=stmts(s.body, replay)))
            else:
                out.extend(_map_body((s,), expr))
        return tuple(out)

    ready = next((i for i, s in enumerate(body) if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.OpCall)
                  and s.expr.op == "tape_ready"), len(body))  # between the replay and the reverse sweep
    forward = stmts(body[:ready], replay=True)
    reverse = stmts(body[ready:], replay=False)
    # the k-th restore takes the k-th save from the end (a stack, each save made at most once)
    restored = {id(s): pushes[len(pushes) - 1 - k] for k, s in enumerate(pops)}
    if len(pops) != len(pushes) or any(cast(ir.Assign, s).target.type != restored[id(s)].type for s in pops):
        raise _Unsupported("its adjoint restores values it did not save in order")
    inits = tuple(ir.Assign(sym, zeros(sym.type, span), span) for sym in pushes)

    def restore(s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Assign) and id(s) in restored:
            return replace(s, value=ir.Var(restored[id(s)], s.span))
        return s

    return inits + forward + _map_stmts(reverse, restore)


def _tapes(s: ir.Stmt) -> bool:
    """Whether a statement (nested blocks included) saves or restores a value on the tape."""
    return any(isinstance(x, ir.OpCall) and x.op in ("tape_push", "tape_pop")
               for t in ir.walk_stmts((s,)) for e in ir.stmt_exprs(t) for x in ir.walk_expr(e))


def _once(s: ir.For) -> bool:
    """The one-pass loop a `return` inside f is lowered to (its trip saved for the reverse sweep)."""
    bounds = (s.start, s.stop)
    return s.static and isinstance(bounds[0], ir.Const) and isinstance(bounds[1], ir.Const) and \
        bounds[1].value == cast(int, bounds[0].value) + 1


def _fresh(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


# ---------------------------------------------------------------- expression maps


def _map_expr(e: ir.Expr, f: Callable[[ir.Expr], ir.Expr]) -> ir.Expr:
    """f applied bottom-up to every subexpression."""
    if isinstance(e, (ir.OpCall, ir.Call)) and e.args:
        args = tuple(_map_expr(a, f) for a in e.args)
        if args != e.args:
            e = ir.with_args(e, args)
    return f(e)


def _map_body(body: tuple[ir.Stmt, ...], f: Callable[[ir.Expr], ir.Expr]) -> tuple[ir.Stmt, ...]:
    """f applied bottom-up to every subexpression of every statement."""
    return ir.map_exprs(body, lambda e: _map_expr(e, f))


def _map_stmts(body: tuple[ir.Stmt, ...], f: Callable[[ir.Stmt], ir.Stmt]) -> tuple[ir.Stmt, ...]:
    """f applied to every statement, nested blocks first."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.If):
            s = replace(s, body=_map_stmts(s.body, f), orelse=_map_stmts(s.orelse, f))
        elif isinstance(s, (ir.For, ir.While)):
            s = replace(s, body=_map_stmts(s.body, f))
        out.append(f(s))
    return tuple(out)
