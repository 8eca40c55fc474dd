"""The project's modules imported whole: `import newton`, `import pkg.math as pm`, `from . import kernels`,
`from ..geometry import types as gt`. A kernel reaches their names by attribute: `newton.BodyFlags.KINEMATIC`,
`kernels.helper(x)`, `gt.Shape` in an annotation, `pkg.sub.N` through a submodule.

Before the module's names are resolved, each such attribute chain becomes one name spelled like it with
MODULE_DOT for its dots (`newton·BodyFlags`), recorded as a use of the alias; resolve.py brings every used
name from its module under that spelling at the import statement (imports.py's rules: funcs, structs,
constants, type aliases, enums), so every later pass sees a plain name. The rewritten text has as many
characters as the original, so every position stays where it was; a diagnostic shows the dots again
(diagnostics.py). Only chains spelled without spaces or parentheses inside are rewritten, none inside a
function that binds the alias's name itself, and none in a file that already holds MODULE_DOT.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from ..diagnostics import MODULE_DOT
from .imports import local_name, locate
from .parse import Parsed, dotted

_EMPTY = cst.Module([])


@dataclasses.dataclass(frozen=True)
class Use:
    """`newton.BodyFlags` in the source: the name `local` (newton·BodyFlags) means `name` of the module
    `dots` + `module` (imports.locate's terms)."""

    local: str
    dots: int
    module: str
    name: str


def import_statements(tree: cst.Module) -> Iterator[cst.BaseSmallStatement]:
    """The module-level imports (also those in a top-level try/except or if, as resolve.py reads them)."""
    for stmt in tree.body:
        blocks: list[cst.BaseSuite] = []
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
            continue
        if isinstance(stmt, cst.Try):
            blocks = [stmt.body, *(h.body for h in stmt.handlers)]
        elif isinstance(stmt, cst.If):
            blocks = [stmt.body] + ([stmt.orelse.body] if isinstance(stmt.orelse, cst.Else) else [])
        for block in blocks:
            for inner in getattr(block, "body", ()):
                if isinstance(inner, cst.SimpleStatementLine):
                    yield from inner.body


def aliases(parsed: Parsed, host_roots: tuple[str, ...]) -> dict[str, tuple[int, str]]:
    """local name -> (dots, module) of every module-level import binding one of the project's modules
    (imports.locate finds its file); `host_roots` are module names never looked up (warp, numpy, ...)."""
    found: dict[str, tuple[int, str]] = {}
    for small in import_statements(parsed.tree):
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted(alias.name)
                if full.split(".")[0] in host_roots:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    if locate(parsed.filename, 0, full) is not None:
                        found[alias.asname.name.value] = (0, full)
                elif locate(parsed.filename, 0, full.split(".")[0]) is not None:
                    found[full.split(".")[0]] = (0, full.split(".")[0])  # `import a.b` binds a
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            module = dotted(small.module) if small.module is not None else ""
            dots = len(small.relative)
            if not dots and module.split(".")[0] in host_roots:
                continue
            for alias in small.names:
                full = f"{module}.{dotted(alias.name)}" if module else dotted(alias.name)
                if _is_module(parsed.filename, dots, full):
                    found[local_name(alias)] = (dots, full)
    return found


def _is_module(importer: str, dots: int, module: str) -> bool:
    """Whether the dotted name is a module of the project (its .py file or package folder), not a name
    defined in one: `from . import kernels` with kernels.py beside the file."""
    return bool(module) and locate(importer, dots, module) is not None


def rewrite(parsed: Parsed, host_roots: tuple[str, ...]) -> dict[str, list[Use]]:
    """Rewrite the chains through the file's module aliases into names (the module docstring); the uses,
    by alias. The parse's tree is replaced (before any position is computed)."""
    found = aliases(parsed, host_roots)
    if not found or MODULE_DOT in parsed.source:
        return {}
    rewriter = _Rewriter(parsed.filename, found)
    parsed.replace_tree(parsed.tree.visit(rewriter))
    return rewriter.uses


class _Rewriter(cst.CSTTransformer):
    def __init__(self, importer: str, found: dict[str, tuple[int, str]]):
        super().__init__()
        self.importer = importer
        self.found = found
        self.shadowed: list[set[str]] = []  # per enclosing function: the aliases it binds itself
        self.uses: dict[str, list[Use]] = {}
        self.modules: dict[str, tuple[int, str] | None] = {}  # a chain's spelling -> its module, or None

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.shadowed.append(bound_in(node) & set(self.found))
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.shadowed.pop()
        return updated

    def _module(self, spelling: str) -> tuple[int, str] | None:
        """The module a chain's spelling names (`newton`, `pkg.sub`), or None."""
        if spelling not in self.modules:
            owner, _, attr = spelling.rpartition(".")
            outer = self._module(owner) if owner else None
            inner = (outer[0], f"{outer[1]}.{attr}") if outer is not None else None
            self.modules[spelling] = self.found.get(spelling) if not owner else \
                inner if inner is not None and _is_module(self.importer, *inner) else None
        return self.modules[spelling]

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        chain = dotted(original)
        root = chain.split(".")[0]
        if root not in self.found or any(root in names for names in self.shadowed):
            return updated
        if not spelled_plainly(original, chain):
            return updated
        module = self._module(chain.rsplit(".", 1)[0])
        if module is None or self._module(chain) is not None:
            return updated  # not through an alias, or a module itself (its attribute is rewritten)
        local = chain.replace(".", MODULE_DOT)
        if all(use.local != local for use in self.uses.get(root, [])):
            self.uses.setdefault(root, []).append(Use(local, module[0], module[1], original.attr.value))
        return cst.Name(local, lpar=original.lpar, rpar=original.rpar)


def spelled_plainly(node: cst.Attribute, chain: str) -> bool:
    """Whether the chain is written as its dotted name: with spaces, comments or parentheses inside, one
    name in its place would move the text."""
    return _EMPTY.code_for_node(node.with_changes(lpar=[], rpar=[])) == chain


def bound_in(node: cst.FunctionDef) -> set[str]:
    """The names a function binds: its parameters and the names it assigns (a local that hides a module)."""
    names = {p.name.value for p in (*node.params.params, *node.params.posonly_params, *node.params.kwonly_params)}
    for star in (node.params.star_arg, node.params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    for target in _targets(node.body):
        names.add(target)
    return names


def _targets(body: cst.CSTNode) -> Iterator[str]:
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For)):
            target = node.target
            yield from (n.value for n in _names(target))
        elif isinstance(node, cst.AsName) and isinstance(node.name, cst.Name):
            yield node.name.value
        if not isinstance(node, (cst.FunctionDef, cst.ClassDef)) or node is body:
            stack.extend(node.children)


def _names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)
