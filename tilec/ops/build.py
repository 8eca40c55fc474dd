"""Typed IR construction for passes: an op call whose type comes from the op's own rule."""
from __future__ import annotations

from typing import Any

from .. import ir
from ..diagnostics import Span
from ..ir.types import BOOL, MatT, Scalar, TileT, Type, VecT
from . import OPS, Bound, KeptTypes


def call(_op: str, *args: ir.Expr, span: Span | None = None, **attrs: Any) -> ir.OpCall:
    op = _op  # positional-only in spirit: `op` is also an attribute name (tile_reduce_grad)
    # The rule is a pure function of what Bound holds: the types, constants and attributes. An
    # adjoint builds the same few calls over and over (running the rule was a tenth of deriving
    # one), so its answers are kept, keyed by exactly that (a constant by its Python type too).
    try:
        key = (op, tuple([(a.type, type(a.value), a.value) if type(a) is ir.Const else a.type for a in args]),
               tuple(attrs.items()))
        t = _TYPES.get(key)
    except TypeError:  # an unhashable attribute or constant: the rule decides each time
        key, t = None, KeptTypes.MISSING
    if t is KeptTypes.MISSING:
        t = _rule_type(op, args, attrs)
        if key is not None:
            _TYPES.keep(key, t)
    span = span or (args[0].span if args else None)  # (every IR expression has a span, maybe None)
    # An effect's type is None, and a call built from spanless operands has no span: both as the
    # IR's consumers expect (ir.OpCall declares the common case).
    return ir.OpCall(op, tuple(args), tuple(attrs.items()), t, span)  # type: ignore[arg-type]


_TYPES = KeptTypes()  # (op, argument types and constants, attributes) -> the rule's type


def _rule_type(op: str, args: tuple[ir.Expr, ...], attrs: dict[str, Any]) -> Type | None:
    """The op's rule applied to the call's arguments (raises the rule's RuleError)."""
    spec = OPS[op]
    names = [p.name for p in spec.params if p.kind == "value"]
    b = Bound(op=op, attrs=dict(attrs))
    for i, a in enumerate(args):
        if i < len(names):
            b.types[names[i]] = a.type
            if isinstance(a, ir.Const):
                b.consts[names[i]] = a.value
        else:
            b.variadic.append(a.type)
            b.variadic_consts.append(a.value if isinstance(a, ir.Const) else None)
    return spec.rule(b)


def const(value: float, dtype: Scalar | VecT | MatT, span: Span | None = None) -> ir.Const:
    if isinstance(dtype, (VecT, MatT)):  # a vector/matrix constant is its zero
        assert value == 0, value
        return ir.Const(0.0, dtype, span)  # type: ignore[arg-type]  # spanless: see call
    if dtype.is_float:
        value = float(value)
    elif dtype == BOOL:
        value = bool(value)
    else:
        value = int(value)
    return ir.Const(value, dtype, span)  # type: ignore[arg-type]  # spanless: see call


def dtype_of(t: Type) -> Type:
    return t.dtype if isinstance(t, TileT) else t


def zeros(t: Type, span: Span | None = None) -> ir.Expr:
    if isinstance(t, TileT):
        return call("tile_zeros", span=span, shape=t.shape, dtype=t.dtype, storage="register")
    assert isinstance(t, (Scalar, VecT, MatT)), t
    return const(0, t, span)
