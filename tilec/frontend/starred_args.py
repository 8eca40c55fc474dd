"""`*` in a call's arguments: `wp.vec4(*v3, 1.0)`, `wp.max(*v)`, `wp.matrix_from_rows(*m[:2])`,
`wp.vec3i(*arr[:3])`, `f(*t)` of a tuple.

Mixed into `FunctionChecker`. As in Warp, the unpacked value's length is known when the kernel
compiles: a vector, quaternion or transform gives its components, a matrix its rows, a tuple its
items, a slice of a 1-d array with constant bounds (`arr[a:b:s]`, b given, none negative) its
elements. The call is spelled out with one argument per item (`wp.vec4(v3[0], v3[1], v3[2], 1.0)`)
and lowered as written so. A value that is not a variable, a field or an element (`*wp.normalize(v)`)
is first bound to a local, once, before its statement, so it is evaluated once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from ..ir.types import ArrayT, MatT, StructT, VecT, describe, tuple_items
from .lowering_host import LoweringHost
from .ref_arguments import plain_index

if TYPE_CHECKING:
    from .. import ir
    from .check import Lowered

_UNPACKS = "a vector, a quaternion, a transform, a matrix, a tuple or a constant slice of a 1-d array"


class StarredArguments(LoweringHost):
    def lower_call(self, node: cst.Call, tid_count: int = 1) -> Lowered:
        for arg in node.args:  # (first in the chain: constructors, casts and funcs all come after)
            if arg.star:
                return super().lower_call(self.spelled_out(node), tid_count)
        return super().lower_call(node, tid_count)

    def hoist_starred(self, node: cst.CSTNode) -> list[ir.Stmt]:
        """Binds each unpacked value of statement `node` that is no place to a local before it
        (`self.starred_locals`); a value under a condition is left to spelled_out's diagnostic."""
        roots = [node.test] if isinstance(node, cst.If) else [node] if isinstance(node, cst.BaseSmallStatement) else []
        out: list[ir.Stmt] = []
        # Post-order (a loop, not recursion: an expression may nest deeper than Python's stack): a value
        # nested in another (`f(*g(*h(x)))`) is bound first, siblings in the order they are written.
        pending: list[tuple[cst.CSTNode, bool]] = [(root, False) for root in reversed(roots)]
        while pending:
            n, children_done = pending.pop()
            if isinstance(n, (cst.IfExp, cst.BooleanOperation, cst.Lambda)):
                continue  # evaluated only sometimes: not moved before the statement
            if not children_done:
                pending.append((n, True))
                pending += [(child, False) for child in reversed(n.children)]
            elif isinstance(n, cst.Arg) and n.star == "*":
                for value in _computed(n.value):
                    out += self.bind_starred(value, node)
        return out

    def bind_starred(self, value: cst.BaseExpression, stmt: cst.CSTNode) -> list[ir.Stmt]:
        span = self.span(value)
        # (numbered: a statement of an unrolled loop is lowered once per pass, the value's type may differ)
        local = cst.Name(self.fresh_name(f"unpacked_{span.line}_{span.col}_{len(self.starred_locals)}"))
        self.parsed.place_like(local, value)
        assign = cst.Assign(targets=(cst.AssignTarget(local),), value=value)
        self.parsed.place_like(assign, stmt)
        stmts = self.small_stmt(assign)
        self.starred_locals[id(value)] = local
        return stmts

    def spelled_out(self, node: cst.Call) -> cst.Call:
        """`node` with each `*value` argument spelled out as the value's items (`**` a diagnostic)."""
        args: list[cst.Arg] = []
        for arg in node.args:
            if arg.star == "**":
                self.fail("TC0401", "unsupported syntax: `**` argument unpacking (a dict's items as keywords)", arg)
            if arg.star != "*":
                args.append(arg)
                continue
            items = self.unpacked_items(arg.value)
            if not items:
                self.fail("TC0303", "`*` of an empty sequence (Warp refuses it too)", arg.value)
            for item in items:
                made = cst.Arg(value=item)
                self.parsed.place_like(made, arg)
                args.append(made)
        call = node.with_changes(args=args)
        self.parsed.place_like(call, node)
        return call

    def unpacked_items(self, value: cst.BaseExpression) -> list[cst.BaseExpression]:
        if isinstance(value, cst.Tuple):  # `*(a, b)`
            items: list[cst.BaseExpression] = []
            for el in value.elements:
                items += self.unpacked_items(el.value) if isinstance(el, cst.StarredElement) else [el.value]
            return items
        local = self.starred_locals.get(id(value))
        if local is not None:
            value = local
        elif not _is_place(value):
            self.fail("TC0401", "unsupported syntax: `*` of a value computed here (under a condition, or in a loop's header)",
                      value, help="bind it to a variable first")
        sliced = self.tuple_slice_items(value)
        if sliced is None:
            sliced = self.array_slice_items(value)
        if sliced is not None:
            return sliced
        count = self.tuple_len(value)  # a tuple local (tuple_values.py)
        if count is None:
            t = self.expr(value).type
            count = _item_count(t)
            if count is None:
                self.fail("TC0203", f"`*` unpacks {_UNPACKS}, not {describe(t)}", value)
        return [self.item_node(value, k, value) for k in range(count)]

    def tuple_slice_items(self, value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """`t[a:b:s]` of a tuple: its items, as Python slices it (bounds constant); None where `value` is
        no slice of a tuple."""
        if not (isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice)):
            return None
        count = self.tuple_len(value.value)
        if count is None:
            return None
        piece = value.slice[0].slice
        bounds: list[int | None] = []
        for bound in (piece.lower, piece.upper, piece.step):
            number = None if bound is None else self.constant_of(bound)
            if bound is not None and (not isinstance(number, int) or isinstance(number, bool)):
                self.fail("TC0305", "a tuple's slice needs compile-time integer bounds and step", bound)
            bounds.append(number)
        if bounds[2] == 0:
            self.fail("TC0303", "slice step must not be zero", piece.step or value)
        return [self.item_node(value.value, k, value) for k in range(*slice(*bounds).indices(count))]

    def item_node(self, base: cst.BaseExpression, k: int, like: cst.CSTNode) -> cst.BaseExpression:
        """`base[k]`, placed where `like` is."""
        index = cst.SubscriptElement(cst.Index(self.placed(cst.Integer(str(k)), like)))
        return cast(cst.BaseExpression, self.placed(cst.Subscript(base, [index]), like))

    def array_slice_items(self, value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """`arr[a:b:s]` of a 1-d array: its elements `arr[a]`, `arr[a + s]`, ... (bounds constant,
        as Warp needs them); None where `value` is no slice of an array."""
        if not (isinstance(value, cst.Subscript) and any(isinstance(el.slice, cst.Slice) for el in value.slice)):
            return None
        base = self.expr(value.value).type
        if not isinstance(base, ArrayT):
            return None
        piece = value.slice[0].slice
        if len(value.slice) != 1 or base.ndim != 1 or not isinstance(piece, cst.Slice):
            self.fail("TC0203", f"`*` unpacks a slice of a 1-d array (`arr[a:b]`), not of {describe(base)}", value)
        if piece.upper is None:
            self.fail("TC0305", "`*` of an array slice needs its upper bound (an array's length is known only "
                      "when it runs)", value)
        bounds: list[int] = []
        for bound, default in ((piece.lower, 0), (piece.upper, 0), (piece.step, 1)):
            number = default if bound is None else self.constant_of(bound)
            if not isinstance(number, int) or isinstance(number, bool):
                self.fail("TC0305", "`*` of an array slice needs compile-time integer bounds and step",
                          bound or value)
            if number < 0:
                self.fail("TC0305", "`*` of an array slice: its bounds and step cannot be negative (an array's "
                          "length is known only when it runs)", bound or value)
            bounds.append(number)
        start, stop, step = bounds
        if step == 0:
            self.fail("TC0303", "slice step must not be zero", piece.step or value)
        return [self.item_node(value.value, k, value) for k in range(start, stop, step)]


def _computed(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values `*value` unpacks that are no place (`value` itself, or in a tuple display `*(a, *g(x))`
    the starred ones)."""
    if isinstance(value, cst.Tuple):
        return [v for el in value.elements if isinstance(el, cst.StarredElement) for v in _computed(el.value)]
    return [] if _is_place(value) else [value]


def _is_place(node: cst.BaseExpression) -> bool:
    """A variable, or a field, component, element or slice of one, by names and numbers: reading
    it again reads the same value."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript):
            for el in node.slice:
                piece = el.slice
                parts = [piece.value] if isinstance(piece, cst.Index) else [
                    p for p in (piece.lower, piece.upper, piece.step) if p is not None] if isinstance(
                    piece, cst.Slice) else []
                if not all(plain_index(p) for p in parts):
                    return False
        node = node.value
    return isinstance(node, cst.Name)


def _item_count(t: object) -> int | None:
    """How many arguments `*` of a value of type t gives: a vector's components, a matrix's rows, a
    tuple's items."""
    if isinstance(t, VecT):
        return t.length
    if isinstance(t, MatT):
        return t.rows
    items = tuple_items(t) if isinstance(t, StructT) else None  # a tuple parameter of a func
    return None if items is None else len(items)
