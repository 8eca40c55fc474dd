"""The adjoint of branches and loops: what the replay records, and how the reverse runs them.

Part of autodiff (autodiff.py drives; these functions read and extend the derivation's state
`ad`). A branch's replay saves the decision it took (or, when its condition is recomputable,
re-evaluates it in the reverse); the reverse runs the reversed branch under the same decision.
A loop's replay counts its trips and saves its induction variable per iteration; the reverse
runs that many iterations of the reversed body, popping the induction variable. A loop
adjoint_tape.plan_fast_loop accepts needs neither: the reverse derives its trip count and
induction variable again and recomputes the planned statements per iteration. The loop-closing
`if brk: break` of structure.eliminate_jumps is replayed as is and has no reverse.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from .. import ir
from ..ops.build import call as C
from ..ops.build import const
from .adjoint_tape import is_close, plan_fast_loop, pop, push, recomputable, split_close
from ..ir.types import BOOL, INT32

if TYPE_CHECKING:
    from .autodiff import Adjoint


def forward_if(ad: Adjoint, s: ir.If) -> list[ir.Stmt]:
    if is_close(s):
        return [s]
    c = ad.temp(BOOL, "_c")
    ad.cond_syms[id(s)] = c
    if recomputable(ad, s.cond):
        ad.recompute_cond.add(id(s))
        return [ir.Assign(c, s.cond, s.span),
                replace(s, cond=ir.Var(c, s.span), body=tuple(ad.forward(s.body)),
                        orelse=tuple(ad.forward(s.orelse)))]
    # the decision is saved after the branch: the reverse sweep pops it first (LIFO)
    return [ir.Assign(c, s.cond, s.span),
            replace(s, cond=ir.Var(c, s.span), body=tuple(ad.forward(s.body)),
                    orelse=tuple(ad.forward(s.orelse))),
            push(c, s.span)]


def forward_loop(ad: Adjoint, s: ir.For | ir.While) -> list[ir.Stmt]:
    if isinstance(s, ir.For):
        recomputed = plan_fast_loop(ad, s)
        if recomputed is not None:
            ad.fast_loops[id(s)] = recomputed
            ad.no_tape |= {r.target for r in recomputed}
            ad.loop_vars.append(s.var)
            body = tuple(ad.forward(s.body))
            ad.loop_vars.pop()
            pre: list[ir.Stmt] = [push(s.var, s.span)] if ad.sites.get(s.var, 0) > 1 else []
            return pre + [replace(s, body=body)]
    count = ad.temp(INT32, "_n")
    ad.count_syms[id(s)] = count
    body, close = split_close(s.body)
    inner = ad.forward(body)
    if isinstance(s, ir.For):
        inner.append(push(s.var, s.span))
    inner.append(ir.Assign(count, C("add", ir.Var(count, s.span), const(1, INT32)), s.span))
    loop = replace(s, body=tuple(inner) + close)
    head: list[ir.Stmt] = [push(s.var, s.span)] if isinstance(s, ir.For) else []
    return head + [ir.Assign(count, const(0, INT32), s.span), loop, push(count, s.span)]


def reverse_if(ad: Adjoint, s: ir.If) -> None:
    if is_close(s):
        return
    c = ad.cond_syms[id(s)]
    if id(s) in ad.recompute_cond:
        ad.emit(ir.Assign(c, s.cond, s.span))
    else:
        ad.emit(pop(c, s.span))
    ad.emit(replace(s, cond=ir.Var(c, s.span), body=ad.nested(s.body), orelse=ad.nested(s.orelse)))


def reverse_loop(ad: Adjoint, s: ir.For | ir.While) -> None:
    if isinstance(s, ir.For) and id(s) in ad.fast_loops:
        _reverse_fast_loop(ad, s)
        return
    count = ad.count_syms[id(s)]
    ad.emit(pop(count, s.span))
    body, _ = split_close(s.body)
    inner = ad.nested(body)
    if isinstance(s, ir.For):
        inner = (pop(s.var, s.span),) + inner
    k = ad.temp(INT32, "_k")
    zero, one = const(0, INT32), const(1, INT32)
    ad.emit(ir.For(k, zero, ir.Var(count, s.span), one, inner, s.span))
    if isinstance(s, ir.For):
        ad.emit(pop(s.var, s.span))


def _reverse_fast_loop(ad: Adjoint, s: ir.For) -> None:
    """Iterations backwards with the trip count, induction variable and recomputable values
    derived again instead of read from the tape."""
    step = cast(int, cast(ir.Const, s.step).value)  # a constant step (adjoint_tape.plan_fast_loop)
    span = s.span
    n = ad.temp(INT32, "_n")
    distance = C("sub", s.stop, s.start) if step > 0 else C("sub", s.start, s.stop)
    magnitude = const(abs(step), INT32)
    trips = C("floordiv", C("add", distance, C("sub", magnitude, const(1, INT32))), magnitude)
    ad.emit(ir.Assign(n, C("max", trips, const(0, INT32)), span))
    k = ad.temp(INT32, "_k")
    last = C("sub", C("sub", ir.Var(n, span), const(1, INT32)), ir.Var(k, span))
    var_value = C("add", s.start, C("mul", last, s.step))
    ad.loop_vars.append(s.var)
    inner: list[ir.Stmt] = [ir.Assign(s.var, var_value, span)]
    inner += ad.fast_loops[id(s)]
    inner += list(ad.nested(s.body))
    ad.loop_vars.pop()
    ad.emit(ir.For(k, const(0, INT32), ir.Var(n, span), const(1, INT32), tuple(inner), span))
    if ad.sites.get(s.var, 0) > 1:
        ad.emit(pop(s.var, span))
