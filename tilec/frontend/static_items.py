"""`wp.static(TABLE[key])`: an item of a module-level dict literal, read when tilec compiles, as
Warp evaluates `wp.static` when it builds the module (`OPS = {"double": doubled, "sin": wp.sin}`,
then `f = wp.static(OPS["double"])` or `wp.static(OPS[op])(x)` in a kernel factory).

tilec never runs the module, so it reads the dict's source: a dict is taken as written only when
nothing in the file could change it, i.e. every other mention of its name is an item read
(`OPS[...]` that is no assignment or `del` target). Anything else (a method call, an item
assigned, the dict passed to a function, a second binding) leaves it a host value, which a kernel
cannot read (a diagnostic), never a stale item.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import consts


def literal_dicts(tree: cst.Module, candidates: dict[str, cst.BaseExpression]) -> dict[str, cst.Dict]:
    """The names among `candidates` (module host values) bound to a dict literal that the file only
    ever reads items of."""
    dicts = {name: value for name, value in candidates.items() if isinstance(value, cst.Dict)}
    if not dicts:
        return {}
    uses = _Uses(set(dicts))
    tree.visit(uses)
    return {name: d for name, d in dicts.items()
            if name not in uses.changed and uses.mentions.get(name, 0) == 1 + uses.reads.get(name, 0)}


def item(d: cst.Dict, key: object, evaluate: Callable[[cst.BaseExpression], object]) -> cst.BaseExpression | None:
    """The value `d[key]` has once the literal is built (a repeated key: its last value), else None."""
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

    def visit_Subscript(self, node: cst.Subscript) -> None:
        base = node.value
        if isinstance(base, cst.Name) and base.value in self.names:
            if id(node) in self.targets:
                self.changed.add(base.value)
            else:
                self.reads[base.value] = self.reads.get(base.value, 0) + 1
