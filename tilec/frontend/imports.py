"""Names a file imports from the project's other Python files: `from .utils import helper, Particle`,
`from ..math import velocity_at_point`, `from utils import N` (a module beside the file, or in its
package). Each such module is read and resolved like the file itself (parsed, never imported or run),
once per check, and the names it defines come into the importing file's scope: @wp.func funcs (with
their overloads and custom adjoints, checked in their own module's names), @wp.struct classes,
constants, type aliases and IntEnum classes. Other names (kernels, host values) stay unknown there.

A func from another module is checked where a kernel calls it: a diagnostic in its body points at the
call, one in its signature at the import statement (tilec reports positions in the file it compiles);
the generated code's comments name the call's line. A module that does not parse is reported at the
import statement; one with other errors (a struct field tilec lacks) gives no names (a struct may have lost
a field): each is unknown where a kernel uses it, with the module's first error as help.

Only files inside the importing file's folder tree or its package's are read: a relative import climbs
at most to the package root's folder; an absolute one is looked up beside the file, from the root
of the package holding it (where `__init__.py` files stop), and from the folder above the package the
file lies in when the import names it (`from newton._src.sim import X` inside newton/, also through
folders without `__init__.py`), never on sys.path (site-packages are host code). At most MAX_MODULES modules of at most MAX_BYTES each are read; a name from one past those limits
is unknown where a kernel uses it, with the reason as help.
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import libcst as cst

from ..diagnostics import MODULE_DOT, CompileError, Diagnostics
from .parse import Parsed, dotted, parse
from .source import package_root

if TYPE_CHECKING:
    from .module_aliases import Use
    from .resolve import FuncDef, Scope

Resolver = Callable[[Parsed, Diagnostics], "Scope"]  # resolve.py's resolve (passed in: no import cycle)
MAX_MODULES = 200
MAX_BYTES = 2_000_000
_CYCLE = "which imports this file back, and does not define it when that import runs (an import cycle)"


@dataclasses.dataclass(frozen=True)
class Unread:
    """A module tilec did not read (past MAX_MODULES or MAX_BYTES, or unreadable): why."""

    why: str


@dataclasses.dataclass(frozen=True)
class _Pending:
    """A name imported from a module of an import cycle before that module finished (`from .types
    import Axis` while types.py, further up the chain, is still being read): brought when it finishes,
    as Python's module object has it by the time a kernel is compiled."""

    scope: Scope
    local: str
    path: Path  # the module the name comes from
    name: str
    label: str  # how the import spells that module


@dataclasses.dataclass
class _Session:
    depth: int = 0
    modules: dict[Path, tuple[Parsed, Scope] | str | None] = dataclasses.field(default_factory=dict)  # None: in progress
    parses: dict[Path, Parsed | None] = dataclasses.field(default_factory=dict)  # None: does not parse
    pending: list[_Pending] = dataclasses.field(default_factory=list)


_SESSION: list[_Session] = []


@contextlib.contextmanager
def session() -> Iterator[None]:
    """One check's modules: entered by every resolve(), kept until the outermost one returns."""
    if not _SESSION:
        _SESSION.append(_Session())
    _SESSION[0].depth += 1
    try:
        yield
    finally:
        _SESSION[0].depth -= 1
        if _SESSION[0].depth == 0:
            _SESSION.clear()


def _module_file(base: Path, module: str) -> Path | None:
    stem = base.joinpath(*module.split(".")) if module else base
    for candidate in (stem.with_name(stem.name + ".py") if module else None, stem / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def locate(importer: str, dots: int, module: str) -> Path | None:
    """The file `from <dots><module> import ...` in `importer` names, when it is one of the project's."""
    try:
        here = Path(importer).resolve().parent
    except (OSError, RuntimeError):
        return None
    if not here.is_dir():
        return None
    root = package_root(here)
    if dots:
        base = here
        for _ in range(dots - 1):
            if base == root:
                return None  # above the top-level package
            base = base.parent
        return _module_file(base, module)
    return _module_file(here, module) or (_module_file(root, module) if root != here else None) or \
        _own_package_module(here, module)


def _own_package_module(here: Path, module: str) -> Path | None:
    """`from newton._src.sim import X` in a file inside the package `newton` (a package folder above it
    named like the import's first part), through folders without `__init__.py` (namespace packages)."""
    top = module.split(".")[0]
    for folder in (here, *here.parents):
        if folder.name == top and (folder / "__init__.py").is_file():
            return _module_file(folder.parent, module)
    return None


def _load(path: Path, resolve: Resolver) -> tuple[Parsed, Scope] | str | Unread | None:
    """The module's parse and names; a message when it does not parse; Unread past the limits; None while
    it is being resolved (an import cycle: its names are not brought)."""
    state = _SESSION[0]
    if path in state.modules:
        return state.modules[path]
    if len(state.modules) >= MAX_MODULES:
        return Unread(f"more than {MAX_MODULES} modules imported")
    try:
        if path.stat().st_size > MAX_BYTES:
            return Unread(f"larger than {MAX_BYTES} bytes")
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return Unread(f"it cannot be read ({type(e).__name__})")
    state.modules[path] = None
    diags = Diagnostics()
    try:
        parsed = state.parses.pop(path, None) or parse(source, str(path), path.stem)
        scope = resolve(parsed, diags)
    except CompileError as e:
        first = e.diagnostics[0]
        state.modules[path] = f"{path.name}:{first.span.line}:{first.span.col}: {first.message}"
        return state.modules[path]
    if diags.has_errors:  # none of its names is brought (a struct may have lost a field): unknown where used, with this
        first = diags.sorted()[0]
        scope.import_problem = f"{path.name}:{first.span.line}:{first.span.col}: {first.message}"
    _own_funcs(scope, parsed, path)
    state.modules[path] = (parsed, scope)
    _bring_pending(state)
    return parsed, scope


def module_classes(path: Path) -> tuple[dict[str, cst.ClassDef], list[cst.ImportFrom]]:
    """The module-level classes of one of the project's modules, by name, and its module-level `from ...
    import` statements, before its names are resolved (nested_classes.py reads the classes inside them);
    its parse is kept for its resolve."""
    state = _SESSION[0]
    if path not in state.parses:
        try:
            state.parses[path] = None if path.stat().st_size > MAX_BYTES else \
                parse(path.read_text(encoding="utf-8"), str(path), path.stem)
        except (OSError, UnicodeDecodeError, CompileError):
            state.parses[path] = None
    found = state.parses[path]
    if found is None:
        loaded = state.modules.get(path)
        found = loaded[0] if isinstance(loaded, tuple) else None
    if found is None:
        return {}, []
    imported = [small for stmt in found.tree.body if isinstance(stmt, cst.SimpleStatementLine)
                for small in stmt.body if isinstance(small, cst.ImportFrom)]
    return {s.name.value: s for s in found.tree.body if isinstance(s, cst.ClassDef)}, imported


def _waits(state: _Session, scope: Scope, local: str) -> bool:
    """Whether `scope` still waits for its name `local` from a module of an import cycle."""
    return any(w.scope is scope and w.local == local for w in state.pending)


def _bring_pending(state: _Session) -> None:
    """The names waiting on a cycle's modules, each brought once its module has it (a name passed on
    through another waiting module follows in a later round)."""
    progress = True
    while progress:
        progress = False
        for wait in list(state.pending):
            loaded = state.modules.get(wait.path)
            if not isinstance(loaded, tuple):
                continue
            other = loaded[1]
            if other.import_problem is None and _bring_name(wait.scope, wait.local, other, wait.name):
                wait.scope.unbrought.pop(wait.local, None)
            elif _waits(state, other, wait.name):
                continue  # that module waits for the name itself
            else:
                wait.scope.unbrought[wait.local] = _not_found(wait.local, wait.label, wait.path, other)
            state.pending.remove(wait)
            progress = True


def _own_funcs(scope: Scope, parsed: Parsed, path: Path) -> None:
    """The module's funcs marked as its own: checked in its names (scope), placed by its parse (origin),
    and keyed apart from any other module's func of the same name (key), so that two modules' `helper`s
    never share an instance. Every table holding a def holds the marked one."""
    marked: dict[int, FuncDef] = {}

    def mark(fd: FuncDef) -> FuncDef:
        if id(fd) not in marked:
            marked[id(fd)] = dataclasses.replace(fd, scope=fd.scope or scope, origin=fd.origin or parsed,
                                                 key=fd.key if fd.key is not None else (str(path), fd.name))
        return marked[id(fd)]

    scope.funcs = {name: mark(fd) for name, fd in scope.funcs.items()}
    scope.func_overloads = {name: [mark(fd) for fd in defs] for name, defs in scope.func_overloads.items()}


def bring(scope: Scope, node: cst.ImportFrom, parsed: Parsed, errors: list[tuple[cst.CSTNode, str]],
          resolve: Resolver) -> bool:
    """Whether `node` imports from one of the project's files; if so, its names are brought into
    `scope` (the ones the module defines), and a module that cannot be used is noted in `errors`."""
    if isinstance(node.names, cst.ImportStar) or not _SESSION:
        return False
    dots = len(node.relative)
    module = dotted(node.module) if node.module is not None else ""
    path = locate(parsed.filename, dots, module)
    if path is None:
        return bool(dots)  # a relative import tilec cannot find is still no host module's
    names = [(dotted(alias.name), local_name(alias)) for alias in node.names]
    uses = scope.module_uses
    _bring_from(scope, node, parsed, path, f"{'.' * dots}{module}", [n for n in names if n[1] not in uses], errors,
                resolve)
    for _, local in names:
        if local in uses:  # `from . import kernels`: a module (module_aliases.py)
            bring_uses(scope, node, parsed, uses[local], errors, resolve)
    return True


def bring_uses(scope: Scope, node: cst.CSTNode, parsed: Parsed, uses: list[Use], errors: list[tuple[cst.CSTNode, str]],
               resolve: Resolver) -> None:
    """The names a file reaches through one module alias (`newton.BodyFlags`: module_aliases.py), brought
    at its import statement `node` under their rewritten spelling."""
    by_module: dict[tuple[int, str], list[tuple[str, str]]] = {}
    for use in uses:
        by_module.setdefault((use.dots, use.module), []).append((use.name, use.local))
    for (dots, module), names in by_module.items():
        path = locate(parsed.filename, dots, module)
        if path is not None:
            _bring_from(scope, node, parsed, path, f"{'.' * dots}{module}", names, errors, resolve)


def _bring_from(scope: Scope, node: cst.CSTNode, parsed: Parsed, path: Path, label: str, names: list[tuple[str, str]],
                errors: list[tuple[cst.CSTNode, str]], resolve: Resolver) -> None:
    """Each (name, local) of the module at `path` into scope as local; `label` is how the import spells it."""
    if not names:
        return
    loaded = _load(path, resolve)
    if isinstance(loaded, str):
        errors.append((node, f"`{label}` ({path.name}) cannot be used: {loaded}"))
        return
    why = f"which tilec did not read: {loaded.why}" if isinstance(loaded, Unread) else _CYCLE if loaded is None else None
    if loaded is not None and not isinstance(loaded, Unread):
        parsed.adopt(loaded[0], node)  # a diagnostic at one of its nodes points at this import
    state = _SESSION[0]
    for name, local in names:
        scope.bound.add(local)
        if why is not None:
            scope.unbrought[local] = f"`{local}` is imported from `{label}` ({path.name}), {why}"
            if loaded is None:  # a cycle: brought when that module finishes, if it has the name then
                state.pending.append(_Pending(scope, local, path, name, label))
            continue
        assert loaded is not None and not isinstance(loaded, Unread)
        other = loaded[1]
        if _waits(state, other, name):  # passed on from a cycle
            scope.unbrought[local] = f"`{local}` is imported from `{label}` ({path.name}), {_CYCLE}"
            state.pending.append(_Pending(scope, local, path, name, label))
            continue
        if other.import_problem is not None or not _bring_name(scope, local, other, name):
            scope.unbrought[local] = _not_found(local, label, path, other)


def _not_found(local: str, label: str, path: Path, other: Scope) -> str:
    problem = f" (tilec reports there: {other.import_problem})" if other.import_problem else ""
    return (f"`{local}` is imported from `{label}` ({path.name}), where tilec finds no @wp.func, @wp.struct, "
            f"constant or type alias of that name{problem}")


def local_name(alias: cst.ImportAlias) -> str:
    """The name `alias` binds: `x` of `y as x`, else `y`."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted(alias.name)


def _bring_name(scope: Scope, local: str, other: Scope, name: str) -> bool:
    """Whether the module defines `name` as something a kernel may use; if so it is `local` in scope."""
    brought = False
    for table in ("funcs", "structs", "enums", "enum_classes", "class_constants", "type_aliases"):
        # a class's @wp.func methods (`C·m`: resolve._class_funcs) and nested classes (`C·D`) with it
        for key, value in getattr(other, table).items():
            if key.startswith(f"{name}{MODULE_DOT}"):
                getattr(scope, table)[f"{local}{key[len(name):]}"] = value
    if name in other.funcs:
        scope.funcs[local] = other.funcs[name]
        if name in other.func_overloads:
            scope.func_overloads[local] = other.func_overloads[name]
        brought = True
    if name in other.native_funcs:  # a snippet, its annotations read in its own module's names
        scope.native_funcs[local] = other.native_funcs[name]
        scope.native_homes[local] = other.native_homes.get(name, other)
        brought = True
    if name in other.factories:  # a host function making or picking funcs, seeing its own module's names
        scope.factories[local] = dataclasses.replace(other.factories[name], home=other.factories[name].home or other)
        brought = True
    tables = ("structs", "constants", "typed_constants", "type_aliases", "enums", "enum_classes", "class_constants",
              "host_defs", "host_members",
              "host_values")  # a host value too: a kernel reading it is told where it is bound
    for table in tables:
        found = getattr(other, table)
        if name in found:
            getattr(scope, table)[local] = found[name]
            brought = True
    return brought
