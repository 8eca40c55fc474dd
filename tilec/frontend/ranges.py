"""Integer range check of the typed IR: every integer constant that reaches generated code fits its
C type (literals, folded module constants, loop bounds, offsets, op attributes).

Expects checked IR; adds a TC0112 diagnostic at each constant that does not fit (C++ would
silently truncate it: `range(2**32 + 3)` would run 3 iterations) and changes nothing.
"""
from __future__ import annotations

from .. import ir
from ..diagnostics import Diagnostics, Span
from ..ir.types import Scalar, Type


def int_range(t: Scalar) -> tuple[int, int]:
    if t.kind == "uint":
        return 0, (1 << t.bits) - 1
    return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1


def wrap_int(value: int, t: Scalar) -> int:
    """An integer converted to the integer dtype t as C (and Warp) convert it, modulo 2**bits:
    wp.uint8(300) is 44, wp.int8(200) is -56, wp.uint8(-1) is 255, uint8 250 + 10 is 4."""
    lo, hi = int_range(t)
    return (value - lo) % (hi - lo + 1) + lo


# Integer attributes (axes, counts) are emitted as C int literals.
ATTR_RANGE = (-(1 << 31), (1 << 31) - 1)


# Stores whose untyped literal value is converted to the array's dtype (not to its own int32).
STORES = ("array_store", "array_atomic_add", "array_atomic_sub")


def check_int_ranges(module: ir.Module, diags: Diagnostics) -> None:
    seen: set[tuple[Span, str]] = set()
    for fn in module.funcs + module.kernels:
        for stmt in ir.walk_stmts(fn.body):
            for root in ir.stmt_exprs(stmt):
                stored: dict[int, Type] = {}  # id(literal) -> the dtype it is stored as
                for e in ir.walk_expr(root):
                    if (isinstance(e, ir.OpCall) and e.op in STORES and len(e.args) > 1
                            and isinstance(e.args[1], ir.Const) and e.args[1].weak):
                        stored[id(e.args[1])] = getattr(e.args[0].type, "dtype", e.args[1].type)
                    _check(e, diags, seen, stmt.span, stored.get(id(e)))


def _check(e: ir.Expr, diags: Diagnostics, seen: set[tuple[Span, str]], where: Span,
           stored_as: Type | None = None) -> None:
    t = stored_as if isinstance(stored_as, Scalar) else getattr(e, "type", None)
    if isinstance(e, ir.Const) and isinstance(t, Scalar) and t.kind in ("int", "uint"):
        value = e.value
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value != int(value):
                _report(diags, seen, e.span or where, f"the value {value!r} is not an integer but is used as "
                        f"{t.name}")
            return
        lo, hi = int_range(t)
        if not lo <= value <= hi:
            _report(diags, seen, e.span or where, f"integer {_short(value)} does not fit in {t.name} "
                    f"[{lo}, {hi}]")
    elif isinstance(e, ir.OpCall):
        for name, value in e.attrs:
            if e.op == "tile_arange" and name == "args":
                continue  # range bounds: checked against the dtype by the op's rule, emitted as doubles
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, int) and not isinstance(v, bool) and not ATTR_RANGE[0] <= v <= ATTR_RANGE[1]:
                    _report(diags, seen, e.span or where, f"`{name}` value {_short(v)} does not fit in int32")


def _short(value: int) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:12]}...({len(text)} digits)"


def _report(diags: Diagnostics, seen: set[tuple[Span, str]], span: Span, message: str) -> None:
    key = (span, message)
    if key not in seen:
        seen.add(key)
        diags.error("TC0112", message, span)
