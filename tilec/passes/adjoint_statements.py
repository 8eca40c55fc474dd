"""The adjoint of each straight-line statement: its forward replay and its reverse.

Part of autodiff (autodiff.py drives; these functions read and extend the derivation's state
`ad`). Assignments, tuple unpacks and expression statements: the replay repeats each one except
effects (stores, atomics, prints: EFFECTS), pushing first the old value of a target the tape must
keep (adjoint_tape.py); the reverse pops it back, takes the target's adjoint and hands it to the
op's rule (ops/adjoints.py) through `ad.propagate`. `tile_sort` is reversed here too: its
gradients are un-permuted. Branches and loops are in adjoint_control_flow.py.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .. import ir
from ..ops import decompositions
from ..ops.adjoints import RULES
from ..ops.build import call as C
from ..diagnostics import NotDifferentiable
from .adjoint_tape import EFFECTS, pop, push
from ..ir.types import MatT, Scalar, TileT, Type, VecT, component_dtype

if TYPE_CHECKING:
    from .autodiff import Adjoint


def differentiable(t: Type) -> bool:
    if isinstance(t, (VecT, MatT)):  # vectors and matrices of floats (ops/adjoints_values.py)
        return t.dtype.is_float
    if isinstance(t, TileT):
        component = component_dtype(t.dtype)  # a tile of scalars, vectors or matrices (never of structs)
        return component is not None and component.is_float
    return isinstance(t, Scalar) and t.is_float


def forward_statement(ad: Adjoint, s: ir.Stmt) -> list[ir.Stmt]:
    """The replay of a statement other than a branch or loop."""
    if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op in EFFECTS:
        return []  # an atomic whose old value is unused (effects.py refuses the others): not replayed
    if isinstance(s, ir.Assign):
        save = s.target in ad.pushed and s.target not in ad.no_tape
        saved: list[ir.Stmt] = [push(s.target, s.span)] if save else []
        return saved + [s]
    if isinstance(s, ir.Unpack):
        pre: list[ir.Stmt] = [push(t, s.span) for t in s.targets if t in ad.pushed or _is_sort(s)]
        return pre + [s]
    if isinstance(s, ir.ExprStmt):
        if isinstance(s.expr, ir.OpCall) and s.expr.op == "native_call" and s.expr.attr("replay"):
            return [ir.ExprStmt(replace(s.expr, attrs=s.expr.attrs + (("replayed", True),)), s.span)]  # its replay_snippet
        return [] if isinstance(s.expr, ir.OpCall) and s.expr.op in EFFECTS else [s]
    return [s]


POPPED_FLOAT = ("tile_stack_pop: a float popped from a tile stack has no gradient path back to what was pushed "
                "(Warp drops it); tilec refuses the adjoint")


def reverse_statement(ad: Adjoint, s: ir.Stmt) -> None:
    """The reverse of a statement other than a branch or loop."""
    if isinstance(s, ir.Assign):
        if (isinstance(s.value, ir.OpCall) and s.value.op == "tile_stack_get"  # a struct's field, popped
                and differentiable(s.target.type)):
            raise NotDifferentiable(POPPED_FLOAT, s.span)
        if s.target in ad.pushed and s.target not in ad.no_tape:
            ad.emit(pop(s.target, s.span))
        if differentiable(s.target.type):
            ad.propagate(s.value, ad.take_adjoint(s.target, s.span))
    elif isinstance(s, ir.Unpack):
        if _is_sort(s):
            _reverse_sort(ad, s)
        elif isinstance(s.value, ir.OpCall) and s.value.op in decompositions.FACTORS:
            _reverse_decomposition(ad, s, s.value)
        elif (isinstance(s.value, ir.OpCall) and s.value.op == "tile_stack_pop"
              and any(differentiable(t.type) for t in s.targets)):
            raise NotDifferentiable(POPPED_FLOAT, s.span)
        else:
            for t in reversed(s.targets):
                if t in ad.pushed:
                    ad.emit(pop(t, s.span))
    elif isinstance(s, ir.ExprStmt):
        if isinstance(s.expr, ir.OpCall) and s.expr.op in RULES:
            ad.apply_rule(s.expr, None)
    _reverse_natives(ad, s)


def _reverse_natives(ad: Adjoint, s: ir.Stmt) -> None:
    """The adjoint of each snippet call in s the sweep did not reach through a float (an integer
    result, a value no float depends on): its adj_snippet may still add to float arrays' adjoints,
    or its floats refuse the adjoint (ops/adjoints.py)."""
    calls = [e for x in ir.stmt_exprs(s) for e in ir.walk_expr(x) if isinstance(e, ir.OpCall) and e.op == "native_call"]
    for call in reversed(calls):
        if id(call) not in ad.natives_reversed:
            ad.apply_rule(call, None)


def _reverse_sort(ad: Adjoint, s: ir.Unpack) -> None:
    keys, vals = s.targets
    grads: list[tuple[ir.Sym, ir.Var]] = []
    for t in (vals, keys):
        ad.emit(pop(t, s.span))
    for t in (keys, vals):
        if differentiable(t.type):
            grads.append((t, ad.take_adjoint(t, s.span)))
    for t, g in grads:
        un = C("tile_unsort_grad", ir.Var(keys, s.span), g)
        ad.accumulate(ir.Var(t, s.span), un)


def _reverse_decomposition(ad: Adjoint, s: ir.Unpack, call: ir.OpCall) -> None:
    """`U, sigma, V = wp.svd3(A)` reversed: A's adjoint from the factors' (ops/decompositions.py)."""
    for t in reversed(s.targets):
        if t in ad.pushed:
            ad.emit(pop(t, s.span))
    grads = [ad.take_adjoint(t, s.span) for t in s.targets]
    ad.accumulate(call.args[0], C(f"{call.op}_grad", ad.val(call.args[0]), *grads))


def _is_sort(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Unpack) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_sort"
