"""`wp.ref[T]` arguments that are no local variable: an array element, a struct field, a vector's
component (`add_to(arr[i], 1.0)`, `set(boxes[i].value, x)`, `set(v[-1], y)`).

Mixed into `FunctionChecker`. Warp passes such a place's address; tilec copies it into a local the
call updates and writes the local back after the call, the same place by the same indices:

    ref_12_5 = arr[i]
    add_to(ref_12_5, 1.0)
    arr[i] = ref_12_5

That is Warp's result when the indices have no effects and the call is a statement of its own (or
the value of an assignment), which is where this applies: elsewhere the call keeps its diagnostic.
In a differentiable kernel the write-back is an ordinary store, so the adjoint analysis sees the
element read and then overwritten, as it sees any such update.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

import libcst as cst

from . import annotations as ann
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .. import ir

Node = TypeVar("Node", bound=cst.CSTNode)


class RefArguments(LoweringHost):
    def ref_argument_copies(self, call: cst.Call, stmt: cst.CSTNode,
                            target: cst.BaseAssignTargetExpression | None) -> list[ir.Stmt] | None:
        """The statement `f(..., place, ...)` (or `target = f(...)`) with each place passed to a
        `wp.ref` parameter copied in and out; None where no argument needs it."""
        if not (isinstance(call.func, cst.Name) and call.func.value in self.scope.funcs):
            return None
        positions = self.ref_positions(call)
        places = [(i, a) for i, a in enumerate(call.args)
                  if (a.keyword.value if a.keyword else i) in positions and _is_place(a.value)]
        if not places:
            return None
        args = list(call.args)
        before: list[cst.BaseSmallStatement] = []
        after: list[cst.BaseSmallStatement] = []
        for i, a in places:
            span = self.span(a.value)
            temp = cst.Name(self.fresh_name(f"ref_{span.line}_{span.col}"))
            self.parsed.place_like(temp, a.value)
            before.append(self.placed(cst.Assign(targets=(cst.AssignTarget(temp),), value=a.value), stmt))
            place = cast(cst.BaseAssignTargetExpression, a.value)  # (_is_place: a subscript or attribute)
            after.append(self.placed(cst.Assign(targets=(cst.AssignTarget(place),), value=temp), stmt))
            args[i] = a.with_changes(value=temp)
        new_call = self.placed(call.with_changes(args=args), call)
        self.parsed.place_like(new_call.func, call.func)
        middle: cst.BaseSmallStatement = cst.Expr(new_call) if target is None else \
            cst.Assign(targets=(cst.AssignTarget(target),), value=new_call)
        out: list[ir.Stmt] = []
        for small in (*before, self.placed(middle, stmt), *after):
            out.extend(self.small_stmt(small))
        return out

    def ref_positions(self, call: cst.Call) -> set[int | str]:
        """The argument positions and keywords of a func's `wp.ref[T]` parameters (any of its
        definitions'), when `call` calls a @wp.func of this module."""
        if not isinstance(call.func, cst.Name) or call.func.value in self.env:
            return set()
        name = call.func.value
        fd = self.scope.funcs.get(name)
        if fd is None:
            return set()
        out: set[int | str] = set()
        for d in self.scope.func_overloads.get(name) or [fd]:
            for i, p in enumerate(d.node.params.params):
                if ann.by_reference(p, self.scope):
                    out |= {i, p.name.value}
        return out

    def fresh_name(self, base: str) -> str:
        """A local name the file never spells (so no variable of the user's is touched)."""
        name = base
        while name in self.parsed.source:
            name += "_"
        return name

    def placed(self, made: Node, like: cst.CSTNode) -> Node:
        self.parsed.place_like(made, like)
        return made


def _is_place(node: cst.BaseExpression) -> bool:
    """An element, field or component of a named variable, by indices without effects."""
    if isinstance(node, cst.Attribute):
        return _rooted(node.value)
    return isinstance(node, cst.Subscript) and _rooted(node)


def _rooted(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _rooted(node.value)
    if isinstance(node, cst.Subscript):
        return _rooted(node.value) and all(isinstance(el.slice, cst.Index) and plain_index(el.slice.value)
                                           for el in node.slice)
    return False


def plain_index(node: cst.BaseExpression) -> bool:
    """An index that reads the same each time it is evaluated: names, numbers, shapes, their arithmetic."""
    if isinstance(node, (cst.Name, cst.Integer)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return plain_index(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return plain_index(node.left) and plain_index(node.right)
    if isinstance(node, cst.Attribute):
        return plain_index(node.value)
    if isinstance(node, cst.Subscript):  # `a.shape[0]`: no element the call could change
        return isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape" and plain_index(node.value)
    return False
