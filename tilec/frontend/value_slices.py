"""Slices of vector and matrix values, as Warp 1.19 reads them (issue #13 item 3).

Expects: a subscript of a value (`wp.vec*`, quat, transform, spatial vector, `wp.mat*`) with at
least one slice item. Guarantees: `v[a:b:s]` is a vector (family "vec", the same dtype) of the
static length `len(range(*slice(a, b, s).indices(n)))`, made of the components it selects
(`value_new` of `value_extract`s, so forward and adjoint come from those two ops); on a matrix
`m[a:b]` / `m[a:b, c:d]` is a matrix of the selected rows and columns, `m[i, c:d]` row i's selected
columns and `m[a:b, j]` column j's selected rows, each a vector; `v[a:b] = w` (and `op=`) on a local
replaces (combines) the selected components. Bounds follow Python's slice rules
(negative bounds count from the end, a negative step walks backwards) and must be compile-time
integers; a non-constant or float bound, a zero step, an empty slice and too many items are
diagnostics at the offending item.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import INT32, MatT, Scalar, Type, VecT, describe
from . import consts

Index = Any  # a component index: an int, or an ir expression for an int item beside a slice


class ValueSliceLowering:
    """Mixin of FunctionChecker (through ValueLowering)."""

    # Supplied by FunctionChecker (check.py, lower_*.py): declared for the type checker only.
    fail: Callable[..., NoReturn]
    span: Callable[[cst.CSTNode], Span]
    expr: Callable[[cst.BaseExpression], ir.Expr]
    make_op: Callable[..., ir.Expr]
    constant_of: Callable[[cst.BaseExpression], Any]
    new_temp: Callable[[Type], ir.Sym]
    assign_counts: dict[str, int]

    def value_slice_selection(self, t: Any, node: cst.Subscript, items: list[Any]) -> tuple[list[tuple[Index, ...]], Type]:
        """(the component index tuples a slice selects, in the order of its result; the result's
        type). An index is an int, or an ir expression for an int item beside a slice."""
        axes = (t.rows, t.cols) if isinstance(t, MatT) else (t.length,)
        if len(items) > len(axes):
            self.fail("TC0304", f"{len(items)} indices for {describe(t)}, which has {len(axes)} "
                      f"{'axes' if len(axes) > 1 else 'axis'}", node)
        items = items + [cst.Slice(lower=None, upper=None)] * (len(axes) - len(items))  # m[a:b] is m[a:b, :]
        picks: list[Any] = []  # per axis: the component indices it selects (an ir index expression for an int item)
        for k, (item, extent) in enumerate(zip(items, axes)):
            if isinstance(item, cst.Slice):
                picks.append(self.value_slice_indices(item, extent, k, t))
            else:
                picks.append(self.value_slice_index(item, extent))
        sliced = [k for k, p in enumerate(picks) if isinstance(p, range)]
        if len(axes) == 1 or len(sliced) == 1:  # a vector: the one sliced axis
            axis = sliced[0]
            chosen = [tuple(i if k == axis else picks[k] for k in range(len(axes))) for i in picks[axis]]
            return chosen, VecT(t.dtype, len(chosen))
        rows, cols = picks
        return [(i, j) for i in rows for j in cols], MatT(t.dtype, len(rows), len(cols))

    def value_component(self, base: ir.Expr, idx: tuple[Index, ...], node: cst.CSTNode, where: list[Any]) -> ir.Expr:
        span = self.span(node)
        args = [ir.Const(i, INT32, span) if isinstance(i, int) else i for i in idx]
        return self.make_op("value_extract", [base] + args, {}, node, where=where)

    def lower_value_slice(self, base: ir.Expr, node: cst.Subscript, items: list[Any]) -> ir.Expr:
        chosen, out_t = self.value_slice_selection(base.type, node, items)
        where = [node.value] + items
        parts = [self.value_component(base, idx, node, where) for idx in chosen]
        return self.make_op("value_new", parts, {"type": out_t}, node, where=where)

    def store_value_slice(self, holder: ir.Expr, target: cst.Subscript, value: ir.Expr, node: Any, aug: Any,
                          items: list[Any]) -> list[Any]:
        """`v[a:b] = w`, `m[a:b, j] = w`, and their `op=` forms on a local value: each selected
        component replaced (combined) by the matching component of w, which must be a value of the
        slice's type (the overwritten components' adjoints are dropped, as for `v[i] = e`)."""
        from .lower_expr import BINOPS

        chosen, out_t = self.value_slice_selection(holder.type, target, items)
        value_node = getattr(node, "value", node)
        if value.type != out_t:
            self.fail("TC0201", f"cannot assign {describe(value.type)} to the slice, which is {describe(out_t)}",
                      value_node)
        if not isinstance(holder, ir.Var):
            self.fail("TC0401", "unsupported syntax: a slice write into an array element or a temporary value; "
                      "assign it to a variable first", target)
        span = self.span(node)
        stmts: list[Any] = []
        if not isinstance(value, ir.Var):  # read once: it may be a call
            tmp = self.new_temp(value.type)
            stmts.append(ir.Assign(tmp, value, span))
            value = ir.Var(tmp, span)
        where = [target.value, value_node]
        new: ir.Expr = holder
        for k, idx in enumerate(chosen):
            own = (k // out_t.cols, k % out_t.cols) if isinstance(out_t, MatT) else (k,)
            part = self.value_component(value, own, node, where)
            if aug is not None:
                part = self.make_op(BINOPS[aug], [self.value_component(holder, idx, node, where), part], {}, node,
                                    where=where)
            args = [ir.Const(i, INT32, span) if isinstance(i, int) else i for i in idx]
            new = self.make_op("value_insert", [new, part] + args, {}, node, where=where)
        self.assign_counts[holder.sym.name] = self.assign_counts.get(holder.sym.name, 0) + 1
        return stmts + [ir.Assign(holder.sym, new, span)]

    def value_slice_index(self, item: Any, extent: int) -> Index:
        """An int item beside a slice (`m[i, a:b]`): its index expression, a constant counted from the end."""
        e = self.expr(item)
        if not (isinstance(e.type, Scalar) and e.type.is_integral):
            self.fail("TC0203", f"indices must be integers, got {describe(e.type)}", item)
        if isinstance(e, ir.Const) and isinstance(e.value, int):
            value = e.value + extent if e.value < 0 else e.value
            if not 0 <= value < extent:
                self.fail("TC0104", f"index {e.value} is out of range for an axis of {extent}", item)
            return ir.Const(value, INT32, e.span)
        return e

    def value_slice_indices(self, item: cst.Slice, extent: int, axis: int, t: Any) -> range:
        values = self.slice_constants(item, f"slice bounds of {describe(t)} must be compile-time integers (the "
                                            "result's length is static)")
        picked = range(*slice(*values).indices(extent))
        if not picked:
            self.fail("TC0104", f"the slice is empty on axis {axis} of {describe(t)}", item)
        return picked

    def slice_constants(self, item: Any, rule: str) -> list[int | None]:
        """[lower, upper, step] of a slice (a cst.Slice or lower_views' SliceArgs), each a
        compile-time integer or None; rule says why they must be (TC0305), a zero step is TC0303.
        Tile slices (lower_views) and value slices share it."""
        values: list[int | None] = []
        for part in (item.lower, item.upper, item.step):
            if part is None:
                values.append(None)
                continue
            v = self.constant_of(part)
            if v is consts.NOT_CONST or isinstance(v, bool) or not isinstance(v, int):
                what = "a float" if isinstance(v, float) else "not a compile-time integer"
                self.fail("TC0305", f"{rule}: this one is {what}", part)
            values.append(v)
        if values[2] == 0:
            self.fail("TC0303", "slice step must not be zero", item.step)
        return values


__all__ = ["ValueSliceLowering"]
