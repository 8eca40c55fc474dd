"""`wp.static(TABLE[key])`: an item of a module-level dict literal, read when tilec compiles, as
Warp evaluates `wp.static` when it builds the module (`OPS = {"double": doubled, "sin": wp.sin}`,
then `f = wp.static(OPS["double"])` or `wp.static(OPS[op])(x)` in a kernel factory).

tilec never runs the module, so it reads the dict's source: a dict is taken as written only when
nothing in the file could change it, i.e. every other mention of its name is an item read
(`OPS[...]` that is no assignment or `del` target) or a test for a key (`"x" in OPS`). Anything else (a method call, an item
assigned, the dict passed to a function, a second binding) leaves it a host value, which a kernel
cannot read (a diagnostic), never a stale item.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import consts


def literal_dicts(tree: cst.Module, candidates: dict[str, cst.BaseExpression]) -> dict[str, cst.Dict | cst.Set]:
    """The names among `candidates` (module host values) bound to a dict (or set) literal that the file
    only ever reads items of (or tests for a key: `"x" in OPTIONS`)."""
    dicts = {name: value for name, value in candidates.items() if isinstance(value, (cst.Dict, cst.Set))}
    if not dicts:
        return {}
    uses = _Uses(set(dicts))
    tree.visit(uses)
    return {name: d for name, d in dicts.items()
            if name not in uses.changed and uses.mentions.get(name, 0) == 1 + uses.reads.get(name, 0)}


def keys(d: cst.Dict | cst.Set, evaluate: Callable[[cst.BaseExpression], object]) -> list[object] | None:
    """The keys of a dict literal (a set's elements), for `key in D`; None where one is not a constant."""
    found = [key_value(e.key if isinstance(e, cst.DictElement) else e.value, evaluate)
             for e in d.elements if isinstance(e, (cst.DictElement, cst.Element))]
    return None if len(found) != len(d.elements) or consts.NOT_CONST in found else found


def item(d: cst.Dict | cst.Set, key: object, evaluate: Callable[[cst.BaseExpression], object]) -> cst.BaseExpression | None:
    """The value `d[key]` has once the literal is built (a repeated key: its last value), else None."""
    if isinstance(d, cst.Set):
        return None
    found = None
    for element in d.elements:
        if not isinstance(element, cst.DictElement):
            return None  # `**other`: not readable here
        if key_value(element.key, evaluate) == key:
            found = element.value
    return found


def key_value(node: cst.BaseExpression, evaluate: Callable[[cst.BaseExpression], object]) -> object:
    """A key's value: a string literal's text, else what `evaluate` makes of it (NOT_CONST)."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else consts.NOT_CONST
    return evaluate(node)


class _Uses(cst.CSTVisitor):
    """Counts, per watched name, every mention and the mentions that are item reads."""

    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.mentions: dict[str, int] = {}
        self.reads: dict[str, int] = {}
        self.changed: set[str] = set()
        self.targets: set[int] = set()  # id() of subscripts assigned or deleted

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.mentions[node.value] = self.mentions.get(node.value, 0) + 1

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.targets.add(id(node.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.targets.add(id(node.target))

    def visit_Del(self, node: cst.Del) -> None:
        self.targets.add(id(node.target))

    def visit_Comparison(self, node: cst.Comparison) -> None:  # `"x" in OPTIONS`: a read
        for target in node.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(target.comparator, cst.Name) and \
                    target.comparator.value in self.names:
                self.reads[target.comparator.value] = self.reads.get(target.comparator.value, 0) + 1

    def visit_Subscript(self, node: cst.Subscript) -> None:
        base = node.value
        if isinstance(base, cst.Name) and base.value in self.names:
            if id(node) in self.targets:
                self.changed.add(base.value)
            else:
                self.reads[base.value] = self.reads.get(base.value, 0) + 1
