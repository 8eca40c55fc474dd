"""Classes defined inside a module-level class: `class Gaussian:` holding `@wp.struct class Data:` and
`class SortingMode(enum.IntEnum):` (Newton's geometry/types.py), which kernels reach as `Gaussian.Data`
(an annotation, `wp.array[Gaussian.Data]`, a constructor) and `Gaussian.SortingMode.Z_DEPTH`.

As module_aliases.py does for modules imported whole, each chain `Outer.Inner` in the file becomes one
name spelled like it with MODULE_DOT for its dot (`Outer·Inner`, as many characters, so every position
stays), and resolve.py declares the inner class under that name (nested_in): every later pass
sees a module-level struct, enum or class of constants. Chains inside a function that binds `Outer`
itself are left alone, as are chains spelled with spaces or parentheses inside.
"""
from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ..diagnostics import MODULE_DOT
from .imports import local_name, locate, module_classes
from .module_aliases import bound_in, import_statements, spelled_plainly
from .parse import Parsed, dotted


def nested_in(outer: cst.ClassDef, prefix: str | None = None) -> Iterator[tuple[cst.ClassDef, str]]:
    """(inner class, its name `Outer·Inner`) of every class directly inside `outer`, and of the
    classes inside those (`A·B·C`)."""
    prefix = prefix or outer.name.value
    for stmt in outer.body.body:
        if isinstance(stmt, cst.ClassDef):
            name = f"{prefix}{MODULE_DOT}{stmt.name.value}"
            yield stmt, name
            yield from nested_in(stmt, name)


def rewrite(parsed: Parsed) -> None:
    """Every chain `Outer.Inner` (`Outer.Inner.member` too: its `Outer.Inner` part) of the nested classes
    of the file's classes, and of the classes it imports from the project's modules by name
    (`from .types import Gaussian`: imports.py brings `Gaussian·Data` with `Gaussian`), becomes the name
    `Outer·Inner`. The parse's tree is replaced (before any position is computed)."""
    outer = [(stmt, stmt.name.value) for stmt in parsed.tree.body if isinstance(stmt, cst.ClassDef)]
    outer += list(_imported_classes(parsed))
    spellings = {name.replace(MODULE_DOT, "."): name for cls, local in outer for _, name in nested_in(cls, local)}
    if not spellings or MODULE_DOT in parsed.source:
        return
    parsed.replace_tree(parsed.tree.visit(_Rewriter(spellings)))


def _imported_classes(parsed: Parsed) -> Iterator[tuple[cst.ClassDef, str]]:
    """(class, the name the file binds it to) of every class with classes inside it that the file
    imports by name from one of the project's modules (through a package's re-export too: `from
    ..geometry import Gaussian` of geometry/__init__.py's `from .types import Gaussian`)."""
    for small in import_statements(parsed.tree):
        if not isinstance(small, cst.ImportFrom) or isinstance(small.names, cst.ImportStar):
            continue
        for alias in small.names:
            found = _imported_class(parsed.filename, small, dotted(alias.name), 0)
            if found is not None and any(isinstance(s, cst.ClassDef) for s in found.body.body):
                yield found, local_name(alias)


def _imported_class(importer: str, node: cst.ImportFrom, name: str, depth: int) -> cst.ClassDef | None:
    """The class `name` that `from <module> import name` in `importer` brings, followed through the
    module's own imports of it (a few levels), else None."""
    path = locate(importer, len(node.relative), dotted(node.module) if node.module else "")
    if path is None or path.suffix != ".py":
        return None
    classes, imported = module_classes(path)
    if name in classes or depth >= 4:
        return classes.get(name)
    for small in imported:
        for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
            if local_name(alias) == name:
                return _imported_class(str(path), small, dotted(alias.name), depth + 1)
    return None


class _Rewriter(cst.CSTTransformer):
    def __init__(self, spellings: dict[str, str]) -> None:
        super().__init__()
        self.spellings = spellings
        self.roots = {s.split(".")[0] for s in spellings}
        self.shadowed: list[set[str]] = []  # per enclosing function: the outer classes' names it binds

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.shadowed.append(bound_in(node) & self.roots)
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.shadowed.pop()
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        chain = dotted(original)
        if chain not in self.spellings or any(chain.split(".")[0] in names for names in self.shadowed):
            return updated
        if not spelled_plainly(original, chain):
            return updated
        return cst.Name(self.spellings[chain], lpar=original.lpar, rpar=original.rpar)
