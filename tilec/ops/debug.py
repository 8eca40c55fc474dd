"""Debugging and test statements: print, the expect_* checks and assert.

They have no value and no gradient, are never replayed by an adjoint, and write only to the
output stream: `print(x)` formats x as Warp does (`%g` for floats, True/False for bools), one
line per executing thread; `wp.expect_eq/neq/near` print a report when the check fails;
`assert` (internal, made by the checker) stops the launch with an AssertionError in `--debug`
builds and is compiled out otherwise, as in Warp. `print(t)` of a tile prints it once per block.
"""
from __future__ import annotations

from ..ir.types import MatT, Scalar, TileT, VecT, describe
from . import rules
from .core import Bound, OpSpec, Param


def _print(b: Bound) -> None:
    t = b.types["value"]
    if not isinstance(t, Scalar):
        b.fail("TC0303", f"prints scalars only, got {describe(t)}", "value")
    return None


def _print_tile(b: Bound) -> None:
    t = b.types["value"]
    if not isinstance(t, TileT) or not isinstance(t.dtype, Scalar):
        b.fail("TC0303", f"prints tiles of scalars only, got {describe(t)}", "value")
    return None


def _print_format(b: Bound) -> None:
    for k, t in enumerate(b.variadic):
        if not isinstance(t, Scalar):
            b.fail("TC0303", f"prints scalars only, got {describe(t)}", f"arg{k}")
    return None


def _values(b: Bound) -> VecT | MatT | None:
    """The vector or matrix type both operands share (Warp's checks of values), else None."""
    actual, expected = b.types["actual"], b.types["expected"]
    if not isinstance(actual, (VecT, MatT)) and not isinstance(expected, (VecT, MatT)):
        return None
    if actual != expected:
        b.fail("TC0201", f"compares {describe(actual)} with {describe(expected)}; they must be of one type", "expected")
    assert isinstance(actual, (VecT, MatT))  # (the test above)
    return actual


def _expect(b: Bound) -> None:
    if _values(b) is not None:
        return None
    actual, expected = (rules.scalar(b, name) for name in ("actual", "expected"))
    rules.unify_scalars(b, ("actual", "expected"), (actual, expected))
    return None


def _expect_near(b: Bound) -> None:
    value = _values(b)
    if value is not None and not value.dtype.is_float:
        b.fail("TC0203", f"`actual` must hold floats, got {describe(value)}", "actual")
    if value is None:
        _expect(b)
    for name in (("tolerance",) if value is not None else ("actual", "expected", "tolerance")):
        t = rules.scalar(b, name)
        if not t.is_float:
            b.fail("TC0203", f"`{name}` must be a float, got {t}", name)
    return None


def _assert(b: Bound) -> None:
    if not isinstance(b.types["cond"], Scalar):
        b.fail("TC0406", f"an assert needs a scalar condition, got {describe(b.types['cond'])}", "cond")
    return None


OPS = [
    OpSpec("print", (Param("value", "value"),), _print, "print_value",
           "print a scalar on its own line (stdout on the CPU, printf on the GPU)", effect=True),
    OpSpec("print_tile", (Param("value", "value"),), _print_tile, "print_tile",
           "print(t) of a tile: its elements nested by rows, then `= tile(shape=(...), storage=...)`, as Warp "
           "1.19 prints it (once per block, by the leader)", effect=True, api=False),
    OpSpec("print_format", (Param("format", "const"),), _print_format, "print_format",
           "print() of a string literal and wp.printf: a format checked by frontend/printing.py, its integers "
           "as long long and floats as double", variadic="args", effect=True, api=False),
    OpSpec("expect_eq", (Param("actual", "value"), Param("expected", "value")), _expect, "expect_eq",
           "print a report when actual != expected", effect=True),
    OpSpec("expect_neq", (Param("actual", "value"), Param("expected", "value")), _expect, "expect_neq",
           "print a report when actual == expected", effect=True),
    OpSpec("expect_near", (Param("actual", "value"), Param("expected", "value"),
                           Param("tolerance", "value", 1e-6)), _expect_near, "expect_near",
           "print a report when abs(actual - expected) > tolerance", effect=True),
    OpSpec("assert_", (Param("cond", "value"), Param("message", "const")), _assert, "assert_check",
           "`assert cond`: checked in --debug builds (the launch raises AssertionError), dropped otherwise",
           effect=True, api=False),
]
