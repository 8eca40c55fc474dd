"""Lowering of subscripts that make views: array views and slices (`A[i]`, `A[a:b]`, `A[i, ::2]`).

Mixed into `FunctionChecker`. `A[i, j]` with every index given stays an element read; fewer
indices, or any slice, make an `array_view` op: an array of lower (or equal) rank sharing the
parent's memory, with Python's slice rules (negative bounds count from the end, bounds clamp).
Slice steps are compile-time integers.
"""
from __future__ import annotations

import libcst as cst

from ..ir.types import INT32


class ViewLowering:
    def subscript_items(self, node: cst.Subscript) -> list:
        """The subscript's items: cst expressions for indices, cst.Slice for slices."""
        items = []
        for el in node.slice:
            if isinstance(el.slice, cst.Index):
                value = el.slice.value
                if isinstance(value, cst.Tuple) and len(node.slice) == 1:
                    items += [e.value for e in value.elements]
                else:
                    items.append(value)
            else:
                items.append(el.slice)
        return items

    def lower_array_subscript(self, base, node: cst.Subscript):
        items = self.subscript_items(node)
        ndim = base.type.ndim
        if len(items) > ndim:
            self.fail("TC0304", f"{len(items)} indices for a {ndim}-d array", node)
        if len(items) == ndim and not any(isinstance(i, cst.Slice) for i in items):
            indices = [self.index(i) for i in items]
            return self.make_op("array_load", [base] + indices, {}, node, where=items)
        axes, args = [], []
        for item in items:
            if isinstance(item, cst.Slice):
                step = 1 if item.step is None else self.constant_of(item.step)
                if not isinstance(step, int) or isinstance(step, bool):
                    self.fail("TC0305", "a slice step must be a compile-time integer", item.step)
                if step == 0:
                    self.fail("TC0303", "slice step must not be zero", item.step)
                bounds = [b for b in (item.lower, item.upper) if b is not None]
                args += [self.index(b) for b in bounds]
                axes.append(("s", item.lower is not None, item.upper is not None, step))
            else:
                axes.append(("i",))
                args.append(self.index(item))
        args = [self.retype_literal(a, INT32) for a in args]
        return self.make_op("array_view", [base] + args, {"axes": tuple(axes)}, node, where=[node.value] + items)


__all__ = ["ViewLowering"]
