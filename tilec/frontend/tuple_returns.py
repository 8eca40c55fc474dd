"""What a func returns, read from its body where it has no return annotation: several values
(`return a, b`, `-> tuple[float, float]`: which funcs do, and how many values; the lowering is
lower_structs.TupleReturns), and where a returned value comes from (a struct's constructor, a
struct parameter, another func: lower_structs.struct_returned)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from .parse import dotted
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


def returned_count(fd: FuncDef, callee_count: Callable[[str], int | None] = lambda name: None) -> int | None:
    """How many values the func returns, when it returns several: its `-> tuple[...]` annotation's
    items, or the length of the tuple every `return` of its body gives (`return g(x)` gives as many as
    the func g returns: `callee_count`); else None."""
    returns = fd.node.returns
    if returns is not None:
        items = tuple_annotation(returns.annotation)
        return len(items) if items is not None and len(items) >= 2 else None

    def length(value: cst.BaseExpression | None) -> int:
        if isinstance(value, cst.Tuple):
            return len(value.elements)
        forwarded = callee_count(value.func.value) if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
            else None
        return forwarded or 1

    lengths = {length(s.value) for s in statements(fd.node.body) if isinstance(s, cst.Return)}
    count = lengths.pop() if len(lengths) == 1 else 1
    return count if count >= 2 else None


def return_sources(fd: FuncDef, item: int | None = None) -> frozenset[str]:
    """The names a func without a return annotation takes its returned values from, as Warp users
    write a struct-returning func: the callee of `return S(...)` / `return f(...)`, the annotation of
    a returned parameter (`x: S`), what a returned local was assigned (`s = S()` ... `return s`, and
    `q = p` of another local or parameter), "#k" for `type(p)(...)` of the k-th parameter p; "" for a
    value of another form. Empty for a func that returns nothing. item: of a func returning several
    values, where its item `item` comes from (`return s, v`: s's sources for item 0)."""
    params = {p.name.value: p.annotation.annotation for p in fd.node.params.params if p.annotation is not None}
    body = list(statements(fd.node.body))
    assigned: dict[str, set[cst.BaseExpression]] = {}
    for s in body:
        if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
            assigned.setdefault(s.targets[0].target.value, set()).add(s.value)

    order = [p.name.value for p in fd.node.params.params]

    def sources(value: cst.BaseExpression, seen: frozenset[str]) -> set[str]:
        if isinstance(value, cst.Call):
            made = value.func  # `type(p)(...)`: the type of parameter p, "#<its position>"
            if isinstance(made, cst.Call) and isinstance(made.func, cst.Name) and made.func.value == "type" and \
                    len(made.args) == 1 and isinstance(made.args[0].value, cst.Name) and made.args[0].value.value in order:
                return {f"#{order.index(made.args[0].value.value)}"}
            return {dotted(value.func)}  # `S(...)`, `f(...)`, `wp.mesh_query_point(...)` (a builtin's struct)
        if not isinstance(value, cst.Name) or value.value in seen:
            return {""}
        name = value.value
        if name in assigned:  # a local (a parameter rebound too: its assignments are all it can hold after)
            return set().union(*(sources(v, seen | {name}) for v in assigned[name])) | (
                {_annotated(params[name])} if name in params else set())
        return {_annotated(params[name])} if name in params else {""}

    found: set[str] = set()
    for s in body:
        if not isinstance(s, cst.Return) or s.value is None:
            continue
        if item is None:
            found |= sources(s.value, frozenset())
        elif isinstance(s.value, cst.Tuple) and item < len(s.value.elements):
            found |= sources(s.value.elements[item].value, frozenset())
        else:
            found.add("")  # `return g(x)` of a func returning several: not followed for an item's struct
    return frozenset(found)


def _annotated(annotation: cst.BaseExpression) -> str:
    return annotation.value if isinstance(annotation, cst.Name) else ""
