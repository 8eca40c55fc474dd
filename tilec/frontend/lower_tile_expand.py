"""`wp.tile(v)` of a per-lane vector or matrix without `preserve_type=True` (Warp's default).

Mixed into `FunctionChecker`. Warp's doc: a vector of length n gives a float tile of shape
(n, block_dim), a (rows, cols) matrix one of shape (rows, cols, block_dim), component k of lane l at
[k, l]. Lowered with ops tilec already has (and their adjoints): each component's (block_dim,) tile
of lanes assigned as row k of a zero tile,

    T = tile_assign(... tile_assign(tile_zeros((n, block_dim)), tile(v[0]), 0, 0) ..., tile(v[n-1]), n-1, 0)

then reshaped to (rows, cols, block_dim) for a matrix. `wp.untile(t)` of such a float tile (last axis
block_dim) is the value built from each component row's untile (`tile_view` of row k, then `untile`).
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import INT32, MatT, Scalar, TileT, VecT, fmt_shape
from ..ops import OPS
from ..ops.random import DRAWING
from . import consts


class TileExpandLowering:
    # Supplied by FunctionChecker (check.py, lower_*.py, rewrites.py): declared for the type checker only.
    bind: Callable[..., tuple[dict[str, Any], Any]]  # (OpSpec, call node) -> (param -> argument node, ...)
    constant_of: Callable[[cst.BaseExpression], object]
    expr: Callable[[cst.BaseExpression], ir.Expr]
    lower_op: Callable[..., ir.Expr]  # (op, call node) -> the checked expression
    make_op: Callable[..., ir.Expr]  # (op, operands, attrs, node[, where]) -> the checked expression
    fail: Callable[..., NoReturn]
    span: Callable[[cst.CSTNode], Span]
    note_rewrite: Callable[[ir.Expr, str, list[tuple[str, ir.Expr]]], None]
    block_dim: int
    lane_ops: bool

    def lower_wp_tile(self, node: cst.Call) -> ir.Expr:
        """`wp.tile(x[, preserve_type])`: the op as it is, or the expansion of a vector/matrix x."""
        bound, _ = self.bind(OPS["tile"], node)
        keep_node = bound.get("preserve_type")
        keep = False if keep_node is None else self.constant_of(keep_node)
        if keep is consts.NOT_CONST or keep is True:
            return self.lower_op("tile", node)  # the rule reports a non-constant preserve_type
        x = self.expr(bound["x"])
        if not isinstance(x.type, (VecT, MatT)):
            return self.lane_tile(x, node, bound["x"])
        self.refuse_effects(x, bound["x"])
        shape: tuple[int, ...]
        indices: list[tuple[int, ...]]
        if isinstance(x.type, VecT):
            shape, indices = (x.type.length,), [(k,) for k in range(x.type.length)]
        else:
            shape = (x.type.rows, x.type.cols)
            indices = [(i, j) for i in range(shape[0]) for j in range(shape[1])]
        n, bd, span = len(indices), self.block_dim, self.span(node)
        result = self.make_op("tile_zeros", [], {"shape": (n, bd), "dtype": x.type.dtype, "storage": "register"},
                              node)
        for k in range(n):
            part = self.make_op("value_extract", [x] + [ir.Const(i, INT32, span) for i in indices[k]], {}, node)
            lanes = self.make_op("tile_reshape", [self.lane_tile(part, node, bound["x"])], {"shape": (1, bd)}, node)
            result = ir.OpCall("tile_assign", (result, lanes, ir.Const(k, INT32, span), ir.Const(0, INT32, span)),
                               (("offset_count", 2),), result.type, span)
        self.note_rewrite(result, "tile", [])  # rewrites.py: a fresh tile, though its outer op is tile_assign
        if isinstance(x.type, MatT):
            result = self.make_op("tile_reshape", [result], {"shape": (*shape, bd)}, node)
        return result

    def lower_wp_untile(self, node: cst.Call) -> ir.Expr:
        """`wp.untile(t)`: the op as it is, or, for t of shape (n, block_dim) / (rows, cols, block_dim) (what
        wp.tile(v) of a vector/matrix gives), lane l's column as a vector/matrix (Warp's untile)."""
        bound, _ = self.bind(OPS["untile"], node)
        t = self.expr(bound["a"])
        bd, span = self.block_dim, self.span(node)
        if not (isinstance(t.type, TileT) and len(t.type.shape) in (2, 3) and t.type.shape[-1] == bd
                and isinstance(t.type.dtype, Scalar) and t.type.dtype.is_float):
            self.lane_ops = True
            return self.make_op("untile", [t], {"block_dim": bd}, node, where=[bound["a"]])
        self.refuse_effects(t, bound["a"])
        lead = [d for d in t.type.shape[:-1] if isinstance(d, int)]
        if len(lead) != len(t.type.shape) - 1:  # a shape-annotated func's "M": no vector length to build
            self.fail("TC0303", f"untile: `a` is a tile of shape {fmt_shape(t.type.shape)}; spreading it into a "
                      "vector or matrix needs constant leading extents, not shape variables", bound["a"])
        value_type = VecT(t.type.dtype, lead[0]) if len(lead) == 1 else MatT(t.type.dtype, lead[0], lead[1])
        indices = [(k,) for k in range(lead[0])] if len(lead) == 1 else \
            [(i, j) for i in range(lead[0]) for j in range(lead[1])]
        parts = []
        for index in indices:
            offsets = tuple(ir.Const(i, INT32, span) for i in (*index, 0))
            one_row = (*[1] * len(lead), bd)
            row: ir.Expr = ir.OpCall("tile_view", (t, *offsets), (("offset_count", len(offsets)), ("shape", one_row)),
                            TileT(t.type.dtype, one_row), span)
            row = self.make_op("tile_reshape", [row], {"shape": (bd,)}, node)
            self.lane_ops = True
            parts.append(self.make_op("untile", [row], {"block_dim": bd}, node, where=[bound["a"]]))
        return self.make_op("value_new", parts, {"type": value_type}, node)

    def refuse_effects(self, x: ir.Expr, x_node: cst.CSTNode) -> None:
        if any(isinstance(e, ir.OpCall) and (OPS[e.op].effect or e.op in DRAWING) for e in ir.walk_expr(x)):
            self.fail("TC0401", "unsupported syntax: wp.tile()/wp.untile() spreading a vector/matrix reads its "
                      "argument once per component; assign a value that draws random numbers or has effects to a "
                      "variable first", x_node)

    def lane_tile(self, x: ir.Expr, node: cst.Call, x_node: cst.CSTNode) -> ir.Expr:
        """tile(x) of a per-lane scalar (or kept vector): one value per lane, as lower_op builds it."""
        self.lane_ops = True
        return self.make_op("tile", [x], {"preserve_type": False, "block_dim": self.block_dim}, node,
                            where=[x_node])
