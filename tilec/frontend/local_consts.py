"""Locals that are compile-time constants: a name assigned exactly once in a kernel or func body,
from a constant expression, and never otherwise bound there (no augmented assignment, loop
target, tuple unpacking, walrus, `with ... as`, parameter of that name).

Warp folds such a local wherever a constant is needed (`stop = 3` then `wp.tile_arange(stop)`,
`shape=stop`); so does tilec. The value is what the right-hand side evaluates to with module
constants and other constant locals; anything else is not a constant (consts.NOT_CONST).
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

import libcst as cst

from . import consts

Lookup = Callable[[cst.BaseExpression], object]  # consts.evaluate's name lookup

_CACHE: dict[int, tuple[cst.FunctionDef, dict[str, object]]] = {}  # id(FunctionDef) -> (the FunctionDef, {name: value}); the node keeps its id alive


class _Bindings(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.single: dict[str, cst.BaseExpression] = {}  # name -> the value expression of its (so far) only assignment
        self.other: set[str] = set()  # names bound some other way, or more than once

    def _bind(self, name: str, value: cst.BaseExpression | None) -> None:
        if name in self.single or value is None:
            self.single.pop(name, None)
            self.other.add(name)
        elif name not in self.other:
            self.single[name] = value

    def _names(self, target: cst.CSTNode) -> None:
        for node in _walk(target):
            if isinstance(node, cst.Name):
                self._bind(node.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Name) and len(node.targets) == 1:
                self._bind(t.target.value, node.value)
            else:
                self._names(t.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._names(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._names(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._names(node.name)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._names(node.target)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def constant_locals(fn: cst.FunctionDef, scope_lookup: Lookup) -> dict[str, object]:
    """{name: value} of fn's constant locals; scope_lookup(node) gives module constants."""
    hit = _CACHE.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    found = _Bindings()
    fn.body.visit(found)
    params = {p.name.value for p in (*fn.params.params, *fn.params.posonly_params, *fn.params.kwonly_params)}
    exprs = {n: v for n, v in found.single.items() if n not in params}
    values: dict[str, object] = {}

    def value_of(name: str, busy: frozenset[str]) -> object:
        if name in values:
            return values[name]
        if name not in exprs or name in busy:
            return consts.NOT_CONST

        def lookup(node: cst.BaseExpression) -> object:
            if isinstance(node, cst.Name) and (node.value in exprs or node.value in found.other or node.value in params):
                return value_of(node.value, busy | {name})
            local = consts.subscripted_name(node)
            if local is not None and (local in exprs or local in found.other or local in params):
                return consts.NOT_CONST
            return scope_lookup(node)

        try:
            value = consts.evaluate(exprs[name], lookup)
        except Exception:  # noqa: BLE001 - a fold that fails (division by zero, too large) is not a constant here
            value = consts.NOT_CONST
        if not isinstance(value, (bool, int, float, tuple)):
            value = consts.NOT_CONST
        values[name] = value
        return value

    for name in exprs:
        value_of(name, frozenset())
    result = {n: v for n, v in values.items() if v is not consts.NOT_CONST}
    _CACHE[id(fn)] = (fn, result)
    return result


def local_lookup(fn: cst.FunctionDef, local_names: Collection[str], scope_lookup: Lookup) -> Lookup:
    """A lookup for consts.evaluate inside fn: a local name (in local_names) is its constant value
    or not a constant, never the module constant it shadows; other names as scope_lookup says."""
    def lookup(node: cst.BaseExpression) -> object:
        if isinstance(node, cst.Name) and node.value in local_names:
            return constant_locals(fn, scope_lookup).get(node.value, consts.NOT_CONST)
        if consts.subscripted_name(node) in local_names:
            return consts.NOT_CONST
        return scope_lookup(node)
    return lookup
