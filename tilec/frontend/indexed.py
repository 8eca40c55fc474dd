"""Indexed arrays (`wp.indexedarray*`) as kernel parameters, read element by element.

Warp's indexed array is a base array and, per dimension, an int32 index array: element `a[i, j]`
is `base[idx0[i], idx1[j]]` and `a.shape[k]` is the length of `idx_k` (Warp lets a dimension go
unindexed; the loader then passes `arange(base.shape[k])`, which reads the same elements). A
kernel parameter `a: wp.indexedarray2d[float]` becomes three IR parameters: the base array `a`
and the index arrays `a:index0`, `a:index1` (naming.index_param); the manifest marks them and
the loader takes one indexed argument for the three. Reads lower to plain array loads at
gathered indices, so the adjoint accumulates into the base array's adjoint at the gathered
positions, as Warp's does; writes (`a[i] = v`, `a[i] += v`, `a[i] -= v`) and `wp.atomic_*(a, i, v)`
to the same ops on the base at gathered indices. Every other use of the name (views, tile loads,
passing it on) is a diagnostic at that use.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import libcst as cst

from .. import ir, naming
from ..diagnostics import Span
from ..ir.types import INT32, ArrayT, Type
from . import annotations as ann

READ_ONLY = ("tilec reads and writes an indexed array element by element (`{name}[i, ...]` with every "
             "index, `wp.atomic_add({name}, i, ..., v)`) and its `.shape`; other uses are not supported")


@dataclass(frozen=True)
class IndexedValue:
    """An indexed array held in a struct (`s.data`, `ps[i].data`): its base array and index arrays
    as IR expressions, while one statement is lowered; read element by element and by `.shape`."""

    type: ann.IndexedT
    base: ir.Expr  # an array of type.dtype, type.ndim
    indices: list[ir.Expr]  # one int32 1-d array per dimension
    origin: str  # how a diagnostic names it: `s.data`


class IndexedLowering:
    """Mixin of FunctionChecker: `self.indexed` maps a parameter name to (base Sym, index Syms)."""

    # Supplied by FunctionChecker (check.py, lower_*.py): declared for the type checker only.
    indexed: dict[str, tuple[ir.Sym, list[ir.Sym]]]
    env: dict[str, Any]  # name -> check.Binding
    fail: Callable[..., NoReturn]
    span: Callable[[cst.CSTNode], Span]
    subscript_items: Callable[[cst.Subscript], list[Any]]
    index: Callable[[cst.BaseExpression], ir.Expr]
    retype_literal: Callable[[ir.Expr, Type], ir.Expr]
    make_op: Callable[..., ir.Expr]
    indexed_field: Callable[[cst.CSTNode], IndexedValue | None]  # lower_structs.py
    bind_name: Callable[[cst.Name, ir.Expr, cst.CSTNode], ir.Assign]  # check.py

    def indexed_params(self, name: str, t: ann.IndexedT) -> list[ir.Sym]:
        """The IR parameters of one indexed array parameter: the base, then one index per axis."""
        base = ir.Sym(name, 0, ArrayT(t.dtype, t.ndim))
        indices = [ir.Sym(naming.index_param(name, k), 0, ArrayT(INT32, 1)) for k in range(t.ndim)]
        self.indexed[name] = (base, indices)
        return [base, *indices]

    def indexed_name(self, node: cst.CSTNode) -> str | None:
        """The parameter name when `node` names an indexed array parameter still in scope."""
        if isinstance(node, cst.Name) and node.value in self.indexed:
            binding = self.env.get(node.value)
            if binding is not None and binding.sym == self.indexed[node.value][0]:
                return node.value
        return None

    def refuse_indexed(self, name: str, node: cst.CSTNode) -> None:
        self.fail("TC0401", f"unsupported syntax: indexed array `{name}` used here; "
                  + READ_ONLY.format(name=name), node)

    def lower_indexed_subscript(self, name: str, node: cst.Subscript) -> ir.Expr:
        """`a[i, j]` -> base[idx0[i], idx1[j]]."""
        base, indices = self.indexed[name]
        span = self.span(node)
        return self.gather_indexed(name, ir.Var(base, span), [ir.Var(i, span) for i in indices], node)

    def gather_indexed(self, name: str, base: ir.Expr, indices: list[ir.Expr], node: cst.Subscript) -> ir.Expr:
        items = self.subscript_items(node)
        gathered = self.gathered_indices(name, indices, items, node)
        return self.make_op("array_load", [base] + gathered, {}, node, where=[node.value] + items)

    def gathered_indices(self, name: str, indices: list[ir.Expr], items: list[Any], node: cst.CSTNode) -> list[ir.Expr]:
        """The base array's indices of element `items` of the indexed array: idx_k[item_k]."""
        ndim = len(indices)
        if len(items) != ndim or any(isinstance(i, cst.Slice) for i in items):
            self.fail("TC0304", f"indexed array `{name}` has {ndim} dimension(s) and is read and written "
                      f"element by element: give {ndim} index(es), no slices (a view of its leading "
                      "dimensions is bound to a name: `row = a[i]`)", node)
        return [self.make_op("array_load", [index, self.retype_literal(self.index(item), INT32)], {}, item,
                             where=[node, item]) for item, index in zip(items, indices)]

    def indexed_chain(self, node: cst.Subscript) -> tuple[str, list[Any]] | None:
        """`a[i][j]` (or `a[i, j]`) of an indexed array parameter or view: its name and every index, the
        outer subscripts' first (Warp's `a[i]` is a view of a, `a[i][j]` its element); None otherwise."""
        items = self.subscript_items(node)
        value = node.value
        while isinstance(value, cst.Subscript):
            items = self.subscript_items(value) + items
            value = value.value
        name = self.indexed_name(value)
        return None if name is None else (name, items)

    def bind_indexed_view(self, target: cst.Name, value: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`row = a[i]` of an indexed array with fewer indices than dimensions (Warp's view, an indexed
        array of the rest): `row` is the base's view at the gathered leading elements, indexed by the
        remaining index arrays, read and written as an indexed parameter is; None for any other value."""
        chain = self.indexed_chain(value) if isinstance(value, cst.Subscript) else None
        if chain is None:
            return None
        name, items = chain
        base, indices = self.indexed[name]
        if len(items) >= len(indices) or any(isinstance(i, cst.Slice) for i in items):
            return None  # an element (or slices: refused where it is read)
        span = self.span(value)
        gathered = [self.make_op("array_load", [ir.Var(index, span), self.retype_literal(self.index(item), INT32)], {},
                                 item, where=[value, item]) for item, index in zip(items, indices)]
        view = self.make_op("array_view", [ir.Var(base, span), *gathered], {"axes": (("i",),) * len(items)}, value,
                            where=[value, *items])
        stmt = self.bind_name(target, view, node)
        self.indexed[target.value] = (stmt.target, indices[len(items):])
        return [stmt]

    def indexed_place(self, array: cst.BaseExpression, items: list[Any],
                      node: cst.CSTNode) -> tuple[ir.Expr, list[ir.Expr]] | None:
        """The base array and its indices of element `items` of the indexed array `array` names, a
        parameter, a view of one (`a[i]` of a 2-d one) or a struct's field (`s.data`, `ps[k].data`):
        a write's or an atomic's place; None for any other array."""
        chain = self.indexed_chain(array) if isinstance(array, cst.Subscript) else None
        if chain is not None:
            return self.indexed_element(chain[0], chain[1] + items, node)
        name = self.indexed_name(array)
        if name is not None:
            return self.indexed_element(name, items, node)
        held = self.indexed_field(array)
        if held is None:
            return None
        return held.base, self.gathered_indices(held.origin, held.indices, items, node)

    def indexed_element(self, name: str, items: list[Any], node: cst.CSTNode) -> tuple[ir.Var, list[ir.Expr]]:
        """The base array of indexed parameter `name` and its indices of element `items` (a write's or
        an atomic's place: `a[i, j] = v` stores into base[idx0[i], idx1[j]])."""
        base, indices = self.indexed[name]
        span = self.span(node)
        return ir.Var(base, span), self.gathered_indices(name, [ir.Var(i, span) for i in indices], items, node)

    def indexed_value_shape(self, value: IndexedValue, axis: int, node: cst.CSTNode) -> ir.Expr:
        """`s.data.shape[k]`: the length of index array k."""
        if not -value.type.ndim <= axis < value.type.ndim:
            self.fail("TC0106", f"axis {axis} is out of range for the {value.type.ndim}-d indexed array "
                      f"`{value.origin}`", node)
        return self.make_op("array_shape", [value.indices[axis]], {"axis": 0}, node)

    def lower_indexed_shape(self, name: str, axis: int, node: cst.CSTNode) -> ir.Expr:
        base, indices = self.indexed[name]
        ndim = _base_array(base).ndim
        if not -ndim <= axis < ndim:
            self.fail("TC0106", f"axis {axis} is out of range for the {ndim}-d indexed array `{name}`",
                      node)
        return self.make_op("array_shape", [ir.Var(indices[axis], self.span(node))], {"axis": 0}, node)


def _base_array(base: ir.Sym) -> ArrayT:
    """The base array of an indexed parameter (indexed_params makes its type an ArrayT)."""
    assert isinstance(base.type, ArrayT), base
    return base.type
