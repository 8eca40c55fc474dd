"""Warp's scalar builtins that are other ops in a fixed order (`wp.lerp(a, b, t)` is
`a * (1 - t) + b * t`): lowered as those ops, so their values are Warp's operation for operation
and their adjoints the ops' own (zero where Warp's builtin has none: a comparison's or a selected
constant's). Scalars, vectors where Warp takes them (lerp); not inside tile_map, whose builtins
are the op table's.

Mixed into `FunctionChecker` (its lower_api_call dispatches here)."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import libcst as cst

from .. import ir
from ..ir.types import BOOL, FLOAT64, Scalar, component_dtype
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .check import Lowered

# builtin -> its parameter names
MATH_REWRITES = {"lerp": ("a", "b", "t"), "smoothstep": ("a", "b", "x"), "step": ("x",), "nonzero": ("x",),
                 "isnan": ("a",), "isinf": ("a",), "isfinite": ("a",), "degrees": ("x",), "radians": ("x",)}
RAD_TO_DEG = 57.29577951308232
DEG_TO_RAD = 0.017453292519943295


class MathRewrites(LoweringHost):
    def lower_math_rewrite(self, api: str, node: cst.Call) -> Lowered:
        names = MATH_REWRITES[api]
        given: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(node.args):
            key = arg.keyword.value if arg.keyword is not None else (names[i] if i < len(names) else "")
            if key not in names or key in given:
                self.fail("TC0303", f"{api}({', '.join(names)}): takes the arguments {', '.join(names)}", arg)
            given[key] = arg.value
        if len(given) != len(names):
            self.fail("TC0303", f"{api}({', '.join(names)}): missing an argument", node)
        args = [self.expr(given[k]) for k in names]
        if api == "lerp":
            return self._lerp(node, given, *args)
        if api == "smoothstep":
            return self._smoothstep(node, given, *args)
        if api in ("step", "nonzero"):
            return self._flag(node, given, args[0], negative=api == "step")
        if api in ("isnan", "isinf", "isfinite"):
            return self._classified(api, node, given, args[0])
        return self._angle(api, node, given, args[0], RAD_TO_DEG if api == "degrees" else DEG_TO_RAD)

    def _op(self, op: str, operands: list[ir.Expr], node: cst.Call, where: list[cst.BaseExpression | None]) -> ir.Expr:
        made: ir.Expr = self.make_op(op, operands, {}, node, where=where)
        return made

    def _float_scalar(self, api: str, value: ir.Expr, node: cst.Call) -> Scalar:
        if not (isinstance(value.type, Scalar) and value.type.is_float):
            self.fail("TC0201", f"{api}: takes float scalars, got {value.type}", node)
        return value.type

    def _lerp(self, node: cst.Call, given: dict[str, cst.BaseExpression], a: ir.Expr, b: ir.Expr,
                      t: ir.Expr) -> ir.Expr:
        scalar = component_dtype(a.type) if isinstance(t.type, Scalar) else None
        if not (isinstance(t.type, Scalar) and t.type.is_float) or scalar is None or not scalar.is_float \
                or (scalar != t.type and not self.is_weak(t)) \
                or (a.type != b.type and not (self.is_weak(a) or self.is_weak(b))):
            self.fail("TC0201", "lerp(a, b, t): a and b must be floats, vectors, matrices or quaternions of one "
                      "type and t a float scalar of their dtype", node)
        one = ir.Const(1.0, t.type, self.span(node), weak=True)
        rest = self._op("sub", [one, t], node, [None, given["t"]])
        left = self._op("mul", [a, rest], node, [given["a"], given["t"]])
        right = self._op("mul", [b, t], node, [given["b"], given["t"]])
        return self._op("add", [left, right], node, [given["a"], given["b"]])

    def _smoothstep(self, node: cst.Call, given: dict[str, cst.BaseExpression], a: ir.Expr, b: ir.Expr,
                            x: ir.Expr) -> ir.Expr:
        """t = clamp((x - a) / (b - a), 0, 1); t * t * (3 - 2 * t)."""
        dt = self._float_scalar("smoothstep", x, node) if not self.is_weak(x) else \
            self._float_scalar("smoothstep", a if not self.is_weak(a) else b, node)
        span = self.span(node)
        rise = self._op("div", [self._op("sub", [x, a], node, [given["x"], given["a"]]),
                                self._op("sub", [b, a], node, [given["b"], given["a"]])], node, [None, None])
        t = self._op("clamp", [rise, ir.Const(0.0, dt, span), ir.Const(1.0, dt, span)], node, [None, None, None])
        cubic = self._op("sub", [ir.Const(3.0, dt, span), self._op("mul", [ir.Const(2.0, dt, span), t], node,
                                                                     [None, None])], node, [None, None])
        return self._op("mul", [self._op("mul", [t, t], node, [None, None]), cubic], node, [None, None])

    def _flag(self, node: cst.Call, given: dict[str, cst.BaseExpression], x: ir.Expr, negative: bool) -> ir.Expr:
        """step: 1 where x < 0 else 0; nonzero: 0 where x == 0 else 1 (of x's dtype; no gradient)."""
        dt = x.type
        if not isinstance(dt, Scalar) or dt.kind == "bool":
            self.fail("TC0201", f"{'step' if negative else 'nonzero'}: takes a number, got {dt}", node)
        span = self.span(node)
        zero = ir.Const(0, dt, span, weak=True)
        test = self._op("lt" if negative else "ne", [x, zero], node, [given["x"], None])
        return self._op("where", [test, ir.Const(1, dt, span), ir.Const(0, dt, span)], node, [None, None, None])

    def _classified(self, api: str, node: cst.Call, given: dict[str, cst.BaseExpression], a: ir.Expr) -> ir.Expr:
        """isnan: a != a; isinf: |a| == inf; isfinite: |a| < inf (false for NaN). Integers: no NaN, no inf."""
        if not isinstance(a.type, Scalar):
            self.fail("TC0201", f"{api}: takes a scalar, got {a.type}", node)
        span = self.span(node)
        if not a.type.is_float:
            return ir.Const(api == "isfinite", BOOL, span)
        if api == "isnan":
            return self._op("ne", [a, a], node, [given["a"], given["a"]])
        inf = ir.Const(math.inf, a.type, span, weak=True)
        size = self._op("abs", [a], node, [given["a"]])
        return self._op("eq" if api == "isinf" else "lt", [size, inf], node, [given["a"], None])

    def _angle(self, api: str, node: cst.Call, given: dict[str, cst.BaseExpression], x: ir.Expr,
               factor: float) -> ir.Expr:
        """x times the conversion factor, computed in float64 and rounded to x's dtype once (Warp multiplies
        by a double literal)."""
        dt = self._float_scalar(api, x, node)
        span = self.span(node)
        wide = x if dt == FLOAT64 else ir.OpCall("cast", (x,), (("dtype", FLOAT64),), FLOAT64, span)
        product = self._op("mul", [wide, ir.Const(factor, FLOAT64, span)], node, [given["x"], None])
        return product if dt == FLOAT64 else ir.OpCall("cast", (product,), (("dtype", dt),), dt, span)
