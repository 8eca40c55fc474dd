"""`wp.tile_matmul(a, b[, out], alpha=x, beta=y)` with run-time (non-constant) `alpha`/`beta`.

Mixed into `FunctionChecker`. Warp takes any float scalar for both (its doc: `out = alpha * a @ b +
beta * out`, `out` read only when beta is nonzero, so beta = 0 ignores non-finite contents and cuts
their gradient). The op table keeps them as constants (every backend folds them into its GEMM), so a
run-time value is lowered to the constant-scaled product and ordinary elementwise ops:

    p   = tile_matmul(a, b, zeros_like(out), alpha=1, beta=0)      # (a @ b in out's dtype)
    out = where(y != 0, out * y, zeros_like(out)) + p * x

The gradients of these ops are the gradient of Warp's definition for a, b and out; x and y, which
Warp gives no gradient ("do not receive gradients"), get their true one here. The statement form
rebinds `out` like the constant form (recorded with rewrites.note_rewrite).
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import BOOL, Scalar, TileT, describe
from ..ops import OPS
from . import consts


class ScaledMatmulLowering:
    # Supplied by FunctionChecker (check.py, lower_*.py, rewrites.py): declared for the type checker only.
    bind: Callable[..., tuple[dict[str, Any], Any]]  # (OpSpec, call node) -> (param -> argument node, ...)
    constant_of: Callable[[cst.BaseExpression], object]
    expr: Callable[[cst.BaseExpression], ir.Expr]
    is_weak: Callable[[ir.Expr], bool]
    make_op: Callable[..., ir.Expr]  # (op, operands, attrs, node[, where]) -> the checked expression
    fail: Callable[..., NoReturn]
    span: Callable[[cst.CSTNode], Span]
    note_rewrite: Callable[[ir.Expr, str, list[tuple[str, ir.Expr]]], None]

    def runtime_matmul_scalars(self, node: cst.Call) -> bool:
        bound, _ = self.bind(OPS["tile_matmul"], node)
        return any(k in bound and self.constant_of(bound[k]) is consts.NOT_CONST for k in ("alpha", "beta"))

    def lower_scaled_matmul(self, node: cst.Call) -> ir.Expr:
        bound, _ = self.bind(OPS["tile_matmul"], node)
        out_node = bound.get("out")
        if isinstance(out_node, cst.Name) and out_node.value == "None":
            out_node = None
        precision = bound.get("precision")
        attrs = {"alpha": 1.0, "beta": 0.0 if out_node is not None else 1.0,
                 "precision": precision.evaluated_value if isinstance(precision, cst.SimpleString) else "default"}
        a, b = self.expr(bound["a"]), self.expr(bound["b"])
        operands, where = [a, b], [bound["a"], bound["b"]]
        out, out_type = None, None
        if out_node is not None:
            out = self.expr(out_node)
            if not isinstance(out.type, TileT):
                self.fail("TC0201", f"tile_matmul: `out` must be a tile, got {describe(out.type)}", out_node)
            out_type = out.type
            operands.append(self.zeros_like(out_type, node))
            where.append(out_node)
        product = self.make_op("tile_matmul", operands, attrs, node, where=where)
        assert isinstance(product.type, TileT) and isinstance(product.type.dtype, Scalar), product.type  # ops/linalg
        dtype = product.type.dtype
        result = product
        if "alpha" in bound:
            result = self.make_op("mul", [product, self.matmul_scalar("alpha", bound["alpha"], dtype)], {}, node)
        if out is not None and out_type is not None:  # (both set together)
            beta_node = bound.get("beta")
            beta = self.matmul_scalar("beta", beta_node, dtype) if beta_node is not None else None
            kept: ir.Expr | None = out if beta is None else self.make_op("mul", [out, beta], {}, node)
            if beta is not None and not isinstance(beta, ir.Const):  # beta = 0 at run time: out is not read
                nonzero = self.make_op("ne", [beta, ir.Const(0.0, dtype, self.span(node))], {}, node)
                kept = self.make_op("where", [nonzero, kept, self.zeros_like(out_type, node)], {}, node)
            elif beta is not None and beta.value == 0.0:
                kept = None
            if kept is not None:
                result = self.make_op("add", [kept, result], {}, node)
            if not isinstance(out, ir.Var):
                self.fail("TC0408", "tile_matmul: `out` must be a variable (it is updated in place)", out_node)
            self.note_rewrite(result, "tile_matmul", [("out", out)])  # rewrites.py
        return result

    def matmul_scalar(self, name: str, arg: cst.BaseExpression, dtype: Scalar) -> ir.Expr:
        """alpha/beta as a scalar of the product's dtype (Warp: any float scalar)."""
        e = self.expr(arg)
        if not (isinstance(e.type, Scalar) and (e.type.is_float or self.is_weak(e))) or e.type == BOOL:
            self.fail("TC0201", f"tile_matmul: `{name}` must be a float scalar, got {describe(e.type)}", arg)
        if isinstance(e, ir.Const):
            return ir.Const(float(e.value), dtype, e.span, weak=False)  # type: ignore[arg-type]  # a number: checked above
        if e.type != dtype:
            return ir.OpCall("cast", (e,), (("dtype", dtype),), dtype, e.span)
        return e

    def zeros_like(self, t: TileT, node: cst.Call) -> ir.Expr:
        return self.make_op("tile_zeros", [], {"shape": t.shape, "dtype": t.dtype, "storage": "register"}, node)
