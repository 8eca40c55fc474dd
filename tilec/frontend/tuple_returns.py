"""Funcs returning several values (`return a, b`, `-> tuple[float, float]`): which funcs do, and
how many values (the lowering is lower_structs.TupleReturns)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from .statement_walk import statements

if TYPE_CHECKING:
    from .resolve import FuncDef


def tuple_annotation(node: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """The item annotations of `tuple[T0, T1]` / `Tuple[...]` / `typing.Tuple[...]`, else None."""
    if not isinstance(node, cst.Subscript):
        return None
    base = node.value
    name = base.value if isinstance(base, cst.Name) else base.attr.value if isinstance(base, cst.Attribute) else ""
    if name not in ("tuple", "Tuple"):
        return None
    items = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    return items if len(items) == len(node.slice) else None


def returned_count(fd: FuncDef) -> int | None:
    """How many values the func returns, when it returns several: its `-> tuple[...]` annotation's
    items, or the length of the tuple every `return` of its body gives; else None."""
    returns = fd.node.returns
    if returns is not None:
        items = tuple_annotation(returns.annotation)
        return len(items) if items is not None and len(items) >= 2 else None
    lengths = {len(s.value.elements) if isinstance(s.value, cst.Tuple) else 1
               for s in statements(fd.node.body) if isinstance(s, cst.Return)}
    count = lengths.pop() if len(lengths) == 1 else 1
    return count if count >= 2 else None
