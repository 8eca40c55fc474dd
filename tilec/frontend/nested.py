"""Nested definitions: kernels and funcs defined anywhere in the file, not only at module level.

Warp code defines kernels inside test functions, classes, `if __name__ == "__main__":` blocks,
loops (`for T in [8, 16]: @wp.kernel def k(...)`) and kernel factories
(`def make(TILE: int): @wp.kernel def k(...): ...; return k`). tilec never runs the file, so a
nested definition whose body (or annotations) uses a name bound by an enclosing function or
loop -- a *free variable* -- is compiled once per binding visible statically:

- calls of the enclosing function anywhere in the file whose arguments are compile-time
  constants or dtypes (`make(16)`, `make(TILE=16)`, `make(wp.float64)`; defaults fill the rest;
  a call inside `for T in [8, 16]:` is evaluated for each element; a call inside another
  function, `def outer(n): return make(n)`, once per call of that function, `outer(16)`, up to
  MAX_FACTORY_DEPTH functions deep);
- constant assignments in the enclosing function (`N = 16`, `M = 2 * TILE`);
- an enclosing `for NAME in [literal, ...]` / `range(constant)` loop.

Each instantiation is a kernel named `<name>__<VAR>_<value>...` (naming.kernel_instance); a
nested kernel without free variables keeps its name, qualified by its enclosing definitions
(`<outer>_<name>`) only where that name is taken. Funcs defined beside a nested kernel are
visible to it with the same binding.

Guarantees: every decorated def below module level ends up in `scope.kernels`/`scope.funcs` once
per instantiation, with its own Scope (`FuncDef.scope`), or is named by a diagnostic: an error
at the kernel when no binding of a free variable is known, a warning at each call whose
arguments are not constant. `Discovery.skipped` lists what was not compiled and why.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from .. import naming
from ..diagnostics import Diagnostics, Label, Span
from . import branch_values, conditions, consts, launch_types
from .binding_values import DtypeValue, Env, FuncValue, KernelValue, Loop, TypeValue, Unknown
from .binding_values import holds_type as _holds_type
from .binding_values import loop_values as _loop_values
from .binding_values import substitute as _substitute
from .binding_values import value as _value
from .parse import Parsed
from .resolve import FuncDef, Scope, _function
from .statement_walk import names_in

DECORATORS = ("kernel", "func")
CUSTOM_ADJOINTS = ("func_grad", "func_replay")  # nested ones are registered beside their func, per binding

@dataclass
class Frame:
    """An enclosing function, class or loop of a nested definition."""

    kind: str  # "def", "class" or "loop"
    node: cst.CSTNode
    name: str = ""  # def/class name
    bound: set[str] = field(default_factory=set)  # names this frame binds for the code inside it


def _def(frame: Frame) -> cst.FunctionDef:
    """A "def" frame's function."""
    return cst.ensure_type(frame.node, cst.FunctionDef)


def _loop(frame: Frame) -> Loop:
    """A "loop" frame's for statement or comprehension `for`."""
    assert isinstance(frame.node, (cst.For, cst.CompFor)), frame.node
    return frame.node


@dataclass
class Found:
    node: cst.FunctionDef
    kind: str  # "kernel" or "func"
    frames: tuple[Frame, ...]  # enclosing frames, outermost first


Guard = tuple[cst.BaseExpression, bool]  # an `if` test and the branch taken (True: its body)
Overload = tuple[Span, dict[str, cst.BaseExpression]]  # a wp.overload's span and {param name or "#i": annotation}
Comprehension = Union[cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp]


@dataclass
class Discovery:
    skipped: list[tuple[str, Span, str]] = field(default_factory=list)  # (name, span, reason): kernels not compiled


def discover(scope: Scope, parsed: Parsed, diags: Diagnostics) -> Discovery:
    """Adds every nested kernel/func instantiation to `scope`; see the module docstring."""
    walker = _Walker(scope)
    walker.block(parsed.tree.body, (), top=True)
    out = Discovery()
    taken: dict[str, FuncDef | None] = {name: None for name in scope.kernels}
    plain = [f for f in walker.found if f.kind == "kernel"]
    base_counts: dict[str, int] = {}
    for f in plain:
        base_counts[f.node.name.value] = base_counts.get(f.node.name.value, 0) + 1
    for f in plain:
        _instantiate(f, walker, scope, parsed, diags, out, taken, base_counts)
    for f in walker.found:  # a nested custom adjoint no kernel sees would be ignored: say so
        if f.kind == "custom" and id(f.node) not in walker.applied:
            diags.error("TC0408", f"`{f.node.name.value}` is a custom adjoint defined inside "
                        f"`{_enclosing(f)}` beside no kernel; tilec applies custom "
                        "adjoints defined at module level or beside the kernels that use them",
                        parsed.span(f.node.name))
    launched = launch_block_dims(walker, scope)
    declared = overloads(walker, scope, parsed, diags)
    for name, given in launch_overloads(walker, scope, parsed, declared).items():
        declared[name] = given
    for fd in scope.kernels.values():
        fd.launch_block_dims = tuple(sorted({value for env, value in launched.get(fd.name, ())
                                             if _agrees(env, fd.bindings)}))
        fd.overloads = tuple(declared.get(fd.name, ()))
    return out


def overloads(walker: _Walker, scope: Scope, parsed: Parsed, diags: Diagnostics) -> dict[str, list[Overload]]:
    """Kernel def name -> [(span, {param name or "#i": annotation node})] from
    `wp.overload(k, [types])`, `wp.overload(k, {"name": type})` and `@wp.overload` stubs. A call
    in loops over literal values (`for k in (k1, k2): for T in (wp.float32, wp.float64):
    wp.overload(k, [wp.array[T]])`) declares one overload per element, its loop variables
    replaced by their values in the annotations."""
    out: dict[str, list[Overload]] = {}
    unreadable = []
    for stub in walker.stubs:
        if not _declared(walker, stub, {}, scope, parsed, diags):
            continue
        given = {p.name.value: p.annotation.annotation for p in _params(stub) if p.annotation is not None}
        out.setdefault(stub.name.value, []).append((parsed.span(stub.name), given))
    for call, frames in walker.calls:
        if scope.api_attr(call.func) != "overload" or len(call.args) != 2:
            continue
        kernel, types = call.args[0].value, call.args[1].value
        listed = _repeated(types, scope)
        if listed is not None:
            given = {f"#{i}": e for i, e in enumerate(listed)}
        elif isinstance(types, cst.Dict):
            keyed = [(e.key.evaluated_value, e.value) for e in types.elements
                     if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)]
            if any(isinstance(k, bytes) for k, _ in keyed):  # b"a" names no parameter
                unreadable.append(call)
                continue
            given = {k: v for k, v in keyed if isinstance(k, str)}
        else:
            unreadable.append(call)
            continue
        looped = [f for f in frames if f.kind == "loop"]
        for env in _call_envs(tuple(looped), scope) if looped else [{}]:
            if not _declared(walker, call, env, scope, parsed, diags):
                continue
            bound = env.get(kernel.value) if isinstance(kernel, cst.Name) else None
            name = bound.name if isinstance(bound, KernelValue) else (
                kernel.value if isinstance(kernel, cst.Name) else (
                    kernel.attr.value if isinstance(kernel, cst.Attribute) else None))
            if name is not None:
                out.setdefault(name, []).append(
                    (parsed.span(call), {k: _substitute(v, env, scope, parsed) for k, v in given.items()}))
    for call in unreadable:
        diags.error("TC0436", "wp.overload: tilec reads the types from a literal list or dict "
                    "(`[wp.array(dtype=wp.float32), ...]` or `{\"name\": type}`)", parsed.span(call.args[1].value))
    return out


def _repeated(types: cst.BaseExpression, scope: Scope) -> list[cst.BaseExpression] | None:
    """The items of a literal list or tuple of types, `[...] * n` / `n * [...]` (n a constant)
    repeated n times; None for anything else."""
    if isinstance(types, (cst.List, cst.Tuple)):
        return [e.value for e in types.elements]
    if isinstance(types, cst.BinaryOperation) and isinstance(types.operator, cst.Multiply):
        for listed, count in ((types.left, types.right), (types.right, types.left)):
            times = scope.constant(count)
            items = _repeated(listed, scope) if isinstance(listed, (cst.List, cst.Tuple)) else None
            if items is not None and isinstance(times, int) and not isinstance(times, bool) and 0 <= times <= 64:
                return items * times
    return None


def _declared(walker: _Walker, node: cst.CSTNode, env: Env, scope: Scope, parsed: Parsed,
              diags: Diagnostics) -> bool:
    """Whether an overload declaration under `if` tests is reached: every test evaluates (in env)
    to its branch. A test tilec cannot evaluate is an error naming it, and declares nothing."""
    for test, taken in walker.guards.get(id(node), ()):
        holds = conditions.truth(test, lambda n: _value(n, scope, env),
                                 lambda c: scope.api_attr(c.func) == "static")
        if holds is None:
            if id(test) not in walker.reported:
                walker.reported.add(id(test))
                diags.error("TC0436", f"wp.overload under `if {' '.join(parsed.tree.code_for_node(test).split())}`: tilec cannot evaluate "
                            "this condition from constants, so it cannot tell whether the overload is declared",
                            parsed.span(test),
                            help="write the condition with module constants, literals or wp.static(...), "
                                 "or declare the overload outside the `if`")
            return False
        if holds != taken:
            return False
    return True


def launch_overloads(walker: _Walker, scope: Scope, parsed: Parsed,
                     declared: dict[str, list[Overload]]) -> dict[str, list[Overload]]:
    """Kernel name -> overloads from its launches (launch_types.py), for the generic kernels with
    no declared overload: one per launch env whose generic array arguments have known dtypes."""
    out: dict[str, list[Overload]] = {}
    for call, frames in walker.calls:
        if scope.api_attr(call.func) not in ("launch", "launch_tiled"):
            continue
        kernel = next((a.value for a in call.args if a.keyword is None), None)
        kernel = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "kernel"), kernel)
        name = kernel.value if isinstance(kernel, cst.Name) else None
        fd = scope.kernels.get(name) if name is not None else None
        if fd is None or fd.bindings or declared.get(fd.name):
            continue
        for env in _call_envs(frames, scope, walker):
            given = launch_types.launch_overload(call, fd.node, scope, parsed, _evaluator(scope, env))
            if given is not None:
                out.setdefault(fd.name, []).append((parsed.span(call), given))
    return out


def _evaluator(scope: Scope, env: Env) -> Callable[[cst.BaseExpression], object]:
    """`_value` in one env, as launch_types takes it."""
    return lambda node: _value(node, scope, env)


def _agrees(env: Env, bindings: tuple[tuple[str, object], ...]) -> bool:
    """Whether a launch's env can be the one an instance was compiled for: every binding it
    knows is the instance's (`THREADS = 1` ... `launch(k, block_dim=THREADS)` is not the
    launch of the THREADS = 32 instance)."""
    return all(k not in env or isinstance(env[k], Unknown) or env[k] == v for k, v in bindings)


def launch_block_dims(walker: _Walker, scope: Scope) -> dict[str, list[tuple[Env, int]]]:
    """Kernel def name -> the constant `block_dim=` values of its `wp.launch`/`wp.launch_tiled`
    calls in the file (`wp.launch(k, ...)`, `wp.launch(kernel=Ops.k, ...)`)."""
    out: dict[str, list[tuple[Env, int]]] = {}
    for call, frames in walker.calls:
        if scope.api_attr(call.func) not in ("launch", "launch_tiled"):
            continue
        kernel = next((a.value for a in call.args if a.keyword is None), None)
        kernel = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "kernel"), kernel)
        block_dim = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "block_dim"), None)
        factories: set[str] = set()
        if isinstance(kernel, cst.Call) and isinstance(kernel.func, (cst.Name, cst.Attribute)):
            factories = {kernel.func.value if isinstance(kernel.func, cst.Name) else kernel.func.attr.value}
            kernel = kernel.func  # `wp.launch(make(16), ...)`
        name = kernel.value if isinstance(kernel, cst.Name) else (
            kernel.attr.value if isinstance(kernel, cst.Attribute) else None)
        if name is None or block_dim is None:
            continue
        # `k = make(16); wp.launch(k, ...)`: the kernels defined in `make`
        factories |= walker.made_by.get(name, set())
        names = {name} | {f.node.name.value for f in walker.found if f.kind == "kernel" and any(
            fr.kind == "def" and fr.name in factories for fr in f.frames)}
        for env in _call_envs(frames, scope, walker):
            value = _value(block_dim, scope, env)
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1024:
                for n in names:
                    out.setdefault(n, []).append((env, value))
    return out


# ---------------------------------------------------------------- walking the file


class _Walker:
    """Collects decorated defs below module level and every call site, each with its frames."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.found: list[Found] = []
        self.calls: list[tuple[cst.Call, tuple[Frame, ...]]] = []  # (cst.Call, frames)
        self.made_by: dict[str, set[str]] = {}  # variable -> names of the functions whose call result it holds
        self.stubs: list[cst.FunctionDef] = []  # @wp.overload defs
        self.applied: set[int] = set()  # ids of nested custom-adjoint defs registered beside a kernel
        self.reported: set[int] = set()  # ids of nested custom-adjoint decorator arguments already diagnosed
        # the `if` tests a call or stub sits under, each with the branch it is in (True: the body)
        self.guards: dict[int, tuple[Guard, ...]] = {}
        self.guard_stack: list[Guard] = []
        # every launch and call site inside a def asks for the envs of the same enclosing defs again
        # (each of them the def's calls, and its body run over each call's env): asked once each
        self.keys = branch_values.StateKeys()
        self.call_envs: dict[tuple[tuple[int, ...], tuple[int, ...]], list[Env]] = {}
        self.locals: dict[tuple[int, tuple[tuple[str, str], ...], frozenset[str]], list[Env]] = {}

    def decorator_kind(self, node: cst.FunctionDef) -> str | None:
        for deco in node.decorators:
            expr = deco.decorator
            attr = self.scope.api_attr(expr.func if isinstance(expr, cst.Call) else expr)
            if attr in DECORATORS:
                return attr
            if attr in CUSTOM_ADJOINTS:
                return "custom"
            if attr == "func_native":
                return "native"  # beside a kernel, a call of it is named by the checker's TC0401
        return None

    def block(self, stmts: Iterable[cst.CSTNode], frames: tuple[Frame, ...], top: bool = False) -> None:
        for stmt in stmts:
            self.stmt(stmt, frames, top)

    def stmt(self, stmt: cst.CSTNode, frames: tuple[Frame, ...], top: bool) -> None:
        if isinstance(stmt, cst.FunctionDef):
            if any(self.scope.api_attr(d.decorator) == "overload" for d in stmt.decorators):
                self.stubs.append(stmt)  # `@wp.overload def k(a: wp.array(dtype=wp.float32)): ...`
                self.note_guards(stmt)
                return
            kind = self.decorator_kind(stmt)
            if kind is not None:
                if not top:
                    self.found.append(Found(stmt, kind, frames))
                return  # a kernel's own body is the checker's (nested defs there are errors)
            for deco in stmt.decorators:
                self.expr(deco.decorator, frames)
            frame = Frame("def", stmt, stmt.name.value, _bound_in_def(stmt))
            self.block(_body(stmt.body), frames + (frame,))
        elif isinstance(stmt, cst.ClassDef):
            self.block(_body(stmt.body), frames + (Frame("class", stmt, stmt.name.value),))
        elif isinstance(stmt, cst.For):
            self.expr(stmt.iter, frames)
            self.block(_body(stmt.body), frames + (Frame("loop", stmt, "", _target_names(stmt.target)),))
            if stmt.orelse is not None:
                self.block(_body(stmt.orelse.body), frames)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.expr(small, frames)
                if (isinstance(small, cst.Assign) and isinstance(small.value, cst.Call)
                        and isinstance(small.value.func, cst.Name)):
                    for t in small.targets:
                        for n in _target_names(t.target):
                            self.made_by.setdefault(n, set()).add(small.value.func.value)
        elif isinstance(stmt, cst.While):
            self.expr(stmt.test, frames)
            self.block(_body(stmt.body), frames)
        elif isinstance(stmt, cst.If):
            depth = len(self.guard_stack)
            branch: cst.If | cst.Else | None = stmt
            while branch is not None:  # each branch runs when its test holds and the earlier ones failed
                if isinstance(branch, cst.If):
                    self.expr(branch.test, frames)
                    self.guard_stack.append((branch.test, True))
                    self.block(_body(branch.body), frames)
                    self.guard_stack[-1] = (branch.test, False)
                    branch = branch.orelse
                else:
                    self.block(_body(branch.body), frames)
                    branch = None
            del self.guard_stack[depth:]
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expr(item.item, frames)
            self.block(_body(stmt.body), frames)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.block(_body(stmt.body), frames)
            for handler in stmt.handlers:
                self.block(_body(handler.body), frames)
            for extra in (stmt.orelse, stmt.finalbody):
                if extra is not None:
                    self.block(_body(extra.body), frames)

    def note_guards(self, node: cst.CSTNode) -> None:
        if self.guard_stack:
            self.guards[id(node)] = tuple(self.guard_stack)

    def expr(self, node: cst.CSTNode, frames: tuple[Frame, ...]) -> None:
        calls = self.calls
        walker = self

        class Calls(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                calls.append((call, frames))
                walker.note_guards(call)

            def visit_Lambda(self, _node: cst.Lambda) -> bool:
                return False

            def comprehension(self, node: Comprehension, parts: list[cst.BaseExpression]) -> bool:
                """`{n: make(n) for n in (65, 2100)}`: the calls inside see each `for` as a loop."""
                inner: tuple[Frame, ...] = frames
                comp: cst.CompFor | None = node.for_in
                while comp is not None:
                    walker.expr(comp.iter, inner)
                    # a filtered `for` (`... for n in ns if n > 0`) lists values tilec does not: unknown
                    listed = comp if not comp.ifs else comp.with_changes(iter=cst.Name("filtered"))
                    inner = inner + (Frame("loop", listed, "", _target_names(comp.target)),)
                    for cond in comp.ifs:
                        walker.expr(cond, inner)
                    comp = comp.inner_for_in
                for part in parts:
                    walker.expr(part, inner)
                return False

            def visit_ListComp(self, node: cst.ListComp) -> bool:
                return self.comprehension(node, [node.elt])

            def visit_SetComp(self, node: cst.SetComp) -> bool:
                return self.comprehension(node, [node.elt])

            def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
                return self.comprehension(node, [node.elt])

            def visit_DictComp(self, node: cst.DictComp) -> bool:
                return self.comprehension(node, [node.key, node.value])

        node.visit(Calls())


def _body(block: cst.CSTNode) -> list[cst.CSTNode]:
    return list(block.body) if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []


def _name_nodes(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _name_nodes(e.value)]
    return []


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements)) if target.elements else set()
    return set()


class _Bound(cst.CSTVisitor):
    """Names a function body binds (assignments, loop targets, defs, imports), not looking into
    nested function or class bodies."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.names |= _target_names(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.names |= _target_names(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names |= _target_names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.names |= _target_names(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names |= _target_names(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self.names |= _target_names(node.asname.name)
        elif isinstance(node.name, cst.Name):
            self.names.add(node.name.value)


def _params(fn: cst.FunctionDef) -> list[cst.Param]:
    p = fn.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


_BOUND: dict[int, tuple[cst.FunctionDef, frozenset[str]]] = {}  # id(def) -> (the def, its names): every call site asks


def _bound_in_def(fn: cst.FunctionDef) -> set[str]:
    hit = _BOUND.get(id(fn))
    if hit is not None and hit[0] is fn:
        return set(hit[1])
    names = {p.name.value for p in _params(fn)}
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    visitor = _Bound()
    for stmt in _body(fn.body):
        stmt.visit(visitor)
    _BOUND[id(fn)] = (fn, frozenset(names | visitor.names))
    return names | visitor.names


class _Uses(cst.CSTVisitor):
    """Names a definition reads: not attribute names, keywords or its own parameter names."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        for part in (node.annotation, node.default):
            if part is not None:
                part.visit(self)
        return False


def free_names(fn: cst.FunctionDef) -> set[str]:
    """Names `fn` reads that it does not bind itself. A decorator's `module=` argument is not one:
    it names Warp's module for the kernel, which tilec ignores (`@wp.kernel(module=module)` in a
    factory taking `module=None`)."""
    uses = _Uses()
    fn.with_changes(decorators=[_without_module_arg(d) for d in fn.decorators]).visit(uses)
    return uses.names - _bound_in_def(fn) - {fn.name.value}


def _without_module_arg(deco: cst.Decorator) -> cst.Decorator:
    call = deco.decorator
    if not isinstance(call, cst.Call):
        return deco
    args = [a for a in call.args if a.keyword is None or a.keyword.value != "module"]
    return deco.with_changes(decorator=call.with_changes(args=args))


MAX_FACTORY_DEPTH = 4  # factories calling factories: how many enclosing calls a binding is followed through
MAX_ENVS = 64  # bindings one call site is evaluated for


def _call_envs(frames: tuple[Frame, ...], scope: Scope, walker: _Walker | None = None,
               active: tuple[cst.CSTNode, ...] = ()) -> list[Env]:
    """The envs a call site sees from its enclosing literal loops and, for a call inside a def that is
    itself called with constants (`def outer(n): return inner(n)`, `outer(16)`), that def's
    parameters as each of its calls binds them ([{}] when none)."""
    if walker is None:
        return _frames_envs(frames, scope, None, active)
    key = (tuple(id(f.node) for f in frames), tuple(id(n) for n in active))
    if key not in walker.call_envs:
        walker.call_envs[key] = _frames_envs(frames, scope, walker, active)
    return list(walker.call_envs[key])


def _frames_envs(frames: tuple[Frame, ...], scope: Scope, walker: _Walker | None,
                 active: tuple[cst.CSTNode, ...]) -> list[Env]:
    """_call_envs, worked out."""
    envs: list[dict[str, object]] = [{}]
    for frame in frames:
        if frame.kind == "def" and walker is not None:
            if frame.node in active or len(active) >= MAX_FACTORY_DEPTH:
                continue  # recursion, or too deep: its parameters stay unknown
            calls = _calls_of(walker, frame, scope, active + (frame.node,))
            if calls:
                envs = [{**env, **values} for env in envs for _, values in calls][:MAX_ENVS]
            else:  # never called in the file (a test function handed to a runner): its defaults
                defaults = {p.name.value: _value(p.default, scope, {}) for p in _params(_def(frame))
                            if p.default is not None}
                envs = [{**env, **{k: v for k, v in defaults.items() if v is not consts.NOT_CONST}}
                        for env in envs]
            # and the constants it assigns before the call (`N = block_dim; make(N)`)
            envs = [e for env in envs for e in _locals(frame, scope, env, _assigned(_def(frame)), walker)][:MAX_ENVS]
            continue
        if frame.kind != "loop":
            continue
        grown = []
        for env in envs:
            for values in _loop_values(_loop(frame), scope, env) or [{n: Unknown("a loop variable over "
                                                                            "values tilec cannot list")
                                                                    for n in frame.bound}]:
                grown.append({**env, **values})
        envs = grown[:MAX_ENVS]
        if isinstance(frame.node, cst.For):  # what the loop body assigns (`src = wp.array(..., dtype=T)`)
            envs = [e for env in envs for e in branch_values.block_envs(
                _body(frame.node.body), env, lambda node, e: _value(node, scope, e), Unknown, MAX_ENVS, _code,
                "the loop")][:MAX_ENVS]
    return envs


def _calls_of(walker: _Walker, frame: Frame, scope: Scope,
              active: tuple[cst.CSTNode, ...] = ()) -> list[tuple[cst.Call | None, Env]]:
    """(call node, {param: value}) for each call of the def `frame` (one per loop element)."""
    fn = cst.ensure_type(frame.node, cst.FunctionDef)  # a "def" frame
    params = _params(fn)
    out: list[tuple[cst.Call | None, Env]] = []
    for call, call_frames in walker.calls:
        target = call.func
        name = target.value if isinstance(target, cst.Name) else (
            target.attr.value if isinstance(target, cst.Attribute) else None)
        if name != frame.name:
            continue
        plist = params[1:] if isinstance(target, cst.Attribute) and params and params[0].name.value in (
            "self", "cls") else params
        for env in _call_envs(call_frames, scope, walker, active or (frame.node,)):
            bound: dict[str, cst.BaseExpression] = {}
            ok = True
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args) or len(positional) > len(plist):
                ok = False
            for p, a in zip(plist, positional):
                bound[p.name.value] = a.value
            for a in call.args:
                if a.keyword is not None:
                    bound[a.keyword.value] = a.value
            values: Env = {}
            for p in plist:
                pname = p.name.value
                node = bound.get(pname, p.default)
                if not ok:
                    values[pname] = Unknown(f"`{frame.name}` is called with arguments tilec cannot match")
                    continue
                if node is None:
                    continue
                v = _value(node, scope, env)
                values[pname] = Unknown(f"`{_code(node)}` is not a compile-time constant") if v is consts.NOT_CONST else v
            out.append((call, values))
    return out


def _code(node: cst.CSTNode) -> str:
    text = cst.Module(body=[]).code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."


def _assigned(fn: cst.FunctionDef) -> set[str]:
    """Names a def binds in its own body (not its parameters)."""
    params = {p.name.value for p in _params(fn)}
    return _bound_in_def(fn) - params


def _locals(frame: Frame, scope: Scope, env: Env, wanted: set[str], walker: _Walker | None = None) -> list[Env]:
    """The def's locals in `wanted`, one env per path through its if/else statements
    (branch_values.local_envs); its parameters keep their values from `env`."""
    fn = _def(frame)
    params = {p.name.value for p in _params(fn)}
    wanted = wanted - (params - set(env))

    def run() -> list[Env]:
        return branch_values.local_envs(fn, env, wanted, lambda node, e: _value(node, scope, e), Unknown, MAX_ENVS,
                                        _code, walker.keys if walker is not None else None,
                                        lambda node, e: _value(node, scope, e, lists=True))

    if walker is None:
        return run()
    key = (id(fn), walker.keys.key(env), frozenset(wanted))
    if key not in walker.locals:
        walker.locals[key] = run()
    return list(walker.locals[key])


def _bindings(found: Found, uses: set[str], walker: _Walker, scope: Scope,
              siblings: set[str]) -> list[tuple[Env, cst.Call | None]]:
    """[(env, call node or None)] : the candidate bindings of the free names `found` uses."""
    envs: list[tuple[Env, cst.Call | None]] = [({}, None)]
    for frame in found.frames:
        wanted = (uses & frame.bound) - siblings
        if frame.kind == "loop":
            grown: list[tuple[Env, cst.Call | None]] = []
            for env, via in envs:
                loop = _loop(frame)
                listed = _loop_values(loop, scope, env)
                if listed is None:
                    listed = [{n: Unknown(f"the loop `for {_code(loop.target)} in "
                                          f"{_code(loop.iter)}` is not over literal values")
                               for n in frame.bound}]
                grown += [({**env, **v}, via) for v in listed]
            envs = grown
            continue
        if frame.kind != "def" or not wanted:
            continue
        params = {p.name.value for p in _params(_def(frame))}
        grown = []
        needed = wanted & params
        # the parameters the wanted locals are computed from (`sp_dim = wp.constant(space_dim)`), bound
        # for that and dropped after: a parameter the kernel never reads cannot make it unknown
        extra = (_read_by_locals(_def(frame), wanted - params) & params) - needed
        needed |= extra
        if needed:
            calls = _calls_of(walker, frame, scope)
            if not calls:
                defaults = {p.name.value: p.default for p in _params(_def(frame))}
                given = {n: d for n, d in defaults.items() if d is not None}
                if all(n in given for n in needed):
                    calls = [(None, {n: _value(given[n], scope, {}) for n in needed})]
                else:  # the defaults it has; the others only other files' calls give
                    calls = [(None, {n: _value(given[n], scope, {}) if n in given else Unknown(
                        f"no call of `{frame.name}` in this file gives it a value", uncalled=True) for n in needed})]
            for env, via in envs:
                for call, values in calls:
                    v = {n: values.get(n, Unknown(f"`{frame.name}` is called without it")) for n in needed}
                    grown.append(({**env, **v}, call if call is not None else via))
            envs = grown
        envs = [(e, via) for env, via in envs for e in _locals(frame, scope, env, wanted, walker)][:MAX_ENVS]
        if extra:
            envs = [({k: v for k, v in e.items() if k not in extra}, via) for e, via in envs]
    return envs


class _AssignmentReads(cst.CSTVisitor):
    """{name: the names read by the values assigned to it} over a def's body, its nested defs' and
    classes' bodies left out."""

    def __init__(self, top: cst.FunctionDef) -> None:
        self.top = top
        self.reads: dict[str, set[str]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.top

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._note([node.target], node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note([node.target], node.value)

    def _note(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None) -> None:
        if value is None:
            return
        names = names_in(value)  # an attribute's name too: at worst a parameter bound for nothing
        for t in targets:
            for n in _name_nodes(t):
                self.reads.setdefault(n.value, set()).update(names)


def _read_by_locals(fn: cst.FunctionDef, names: set[str]) -> set[str]:
    """The names the def's own assignments to `names` read, those the locals among them read, and so on."""
    if not names:
        return set()
    visitor = _AssignmentReads(fn)
    fn.visit(visitor)
    found: set[str] = set()
    todo = list(names)
    while todo:
        for r in visitor.reads.get(todo.pop(), ()):
            if r not in found:
                found.add(r)
                todo.append(r)
    return found


# ---------------------------------------------------------------- instantiation


def _siblings(found: Found, walker: _Walker) -> list[Found]:
    """The funcs defined in the same enclosing defs as `found` (visible to it by name)."""
    defs = [f for f in found.frames if f.kind in ("def", "loop")]
    if not defs:
        return []
    inner = defs[-1].node
    return [f for f in walker.found if f.kind in ("func", "custom", "native")
            and any(fr.node is inner for fr in f.frames)]


def _enclosing(found: Found) -> str:
    return next((fr.name for fr in reversed(found.frames) if fr.kind in ("def", "class")), "a block")


def _qualified(found: Found) -> str:
    return "_".join([f.name for f in found.frames if f.kind in ("def", "class")] + [found.node.name.value])


def _child_scope(scope: Scope, env: Env) -> Scope:
    constants = dict(scope.constants)
    api_names = dict(scope.api_names)
    type_aliases = dict(scope.type_aliases)
    funcs_alias: dict[str, FuncDef] = {}
    for name, v in env.items():
        constants.pop(name, None)
        api_names.pop(name, None)
        type_aliases.pop(name, None)
        if isinstance(v, TypeValue):
            type_aliases[name] = v.type
        elif isinstance(v, DtypeValue) or (isinstance(v, FuncValue) and v.api):
            api_names[name] = v.name if isinstance(v, FuncValue) else v.api
        elif isinstance(v, FuncValue):
            funcs_alias[name] = scope.funcs[v.name]
        elif _holds_type(v) or isinstance(v, launch_types.ArrayValue):
            continue  # a tuple holding a dtype, or a host array, is no constant a kernel body can use
        elif not isinstance(v, (Unknown, KernelValue)):  # a kernel is nothing a kernel body can use
            constants[name] = v
    typed = {name: t for name, t in scope.typed_constants.items() if name not in env}
    return dataclasses.replace(scope, constants=constants, typed_constants=typed, api_names=api_names,
                               type_aliases=type_aliases,
                               funcs={**scope.funcs, **funcs_alias}, native_funcs=dict(scope.native_funcs),
                               bound=scope.bound | set(env),  # a closure's names hide Warp's (api_attr)
                               custom_adjoints={}, custom_targets=[])  # the nested funcs' own rules


def _make_def(node: cst.FunctionDef, scope: Scope, parsed: Parsed, diags: Diagnostics) -> FuncDef | None:
    """The FuncDef `resolve` makes of a decorated def, seen through `scope`."""
    holder = dataclasses.replace(scope, funcs={}, kernels={}, constants=dict(scope.constants))
    _function(holder, node, parsed, diags)
    made = list(holder.kernels.values()) + list(holder.funcs.values())
    if made and made[0].enable_backward is None:  # no decorator option: the module's (resolve.resolve)
        made[0].enable_backward = scope.module_options.get("enable_backward", True) is not False
    return made[0] if made else None


def _instantiate(found: Found, walker: _Walker, scope: Scope, parsed: Parsed, diags: Diagnostics, out: Discovery,
                 taken: dict[str, FuncDef | None], base_counts: dict[str, int]) -> None:
    node = found.node
    name = node.name.value
    siblings = _siblings(found, walker)
    sibling_names = {f.node.name.value for f in siblings}
    uses = free_names(node)
    for f in siblings:  # a native func's snippets (its decorator's arguments) apart: see below
        uses |= free_names(f.node.with_changes(decorators=[]) if f.kind == "native" else f.node)
    snippets = set().union(*(free_names(f.node) for f in siblings if f.kind == "native")) - uses
    envs = _bindings(found, uses | snippets, walker, scope, sibling_names)
    # a snippet held in a local (`snippet = """..."""` beside the def) is a constant of the scope; one tilec
    # cannot know leaves the kernel compiled all the same (the call says why the snippet is refused)
    envs = [({k: v for k, v in env.items() if not (k in snippets and isinstance(v, Unknown))}, via) for env, via in envs]
    known = [(env, via) for env, via in envs if not any(isinstance(v, Unknown) for v in env.values())]
    unknown = [(env, via) for env, via in envs if any(isinstance(v, Unknown) for v in env.values())]
    span = parsed.span(node.name)
    if not known:
        env, via = unknown[0]
        unknowns = [(k, v) for k, v in env.items() if isinstance(v, Unknown)]
        # a value only other files' calls give makes it an uninstantiated template, whatever else is unknown
        var, why = next(((k, v) for k, v in unknowns if v.uncalled), unknowns[0])
        where = next((f.name for f in reversed(found.frames) if var in f.bound and f.kind == "def"), None)
        owner = f"a name bound in `{where}`" if where else "a loop variable"
        labels = (Label(parsed.span(via), "this call"),) if via is not None else ()
        message = f"kernel `{name}` uses `{var}`, {owner}, whose value tilec cannot know: {why.why}"
        if why.uncalled:  # made only by other files' calls: not compiled here, as an uninstantiated template
            message += "; it is not compiled"
        diags.error("TC0433", message, span, labels=labels, severity="warning" if why.uncalled else "error",
                    help=f"call `{where}` with constant arguments in this file, or make `{var}` a module constant"
                    if where else f"loop over a literal list, or make `{var}` a module constant")
        out.skipped.append((name, span, message))
        return
    for env, via in unknown:
        var, why = next((k, v) for k, v in env.items() if isinstance(v, Unknown))
        at = parsed.span(via) if via is not None else span
        diags.error("TC0434", f"kernel `{name}` is not compiled for this binding of `{var}`: {why.why} "
                    f"(it is compiled for {_describe([e for e, _ in known], var)})", at, severity="warning")
        out.skipped.append((name, at, f"`{var}`: {why.why}"))
    loop_vars = sorted(n for f in found.frames if f.kind == "loop" for n in f.bound & uses)
    if loop_vars:
        diags.error("TC0435", f"kernel `{name}` is compiled once per value of the loop variable "
                    f"`{loop_vars[0]}`, but Python binds it late: under Warp, this kernel launched after "
                    "the loop sees its last value", span, severity="warning",
                    help="define the kernel in a function taking the value (a kernel factory) and call "
                    "it in the loop")
    base = name if base_counts.get(name, 0) == 1 and name not in taken else _qualified(found)
    inputs: list[str] = []  # the names an instance is named by, in source order: parameters and loop variables
    for frame in found.frames:
        if frame.kind == "loop":
            inputs += [n.value for n in _name_nodes(_loop(frame).target)]
        elif frame.kind == "def":
            inputs += [p.name.value for p in _params(_def(frame))]
    # a local with a value per path (`THREADS = 1 if ... else 32` as an if/else) names the instances too
    # where the parameters and loop variables do not tell them apart (`HALF = COLS // 2` never does)
    varying = sorted(n for n in uses - set(inputs) - sibling_names if len({repr(env.get(n)) for env, _ in known}) > 1)
    told: dict[str, set[str]] = {}
    for env, _ in known:
        told.setdefault(repr([env.get(k) for k in inputs if k in uses]), set()).add(repr([env.get(n) for n in varying]))
    if any(len(locals_) > 1 for locals_ in told.values()):
        inputs += varying
    order = {n: i for i, n in enumerate(inputs)}
    seen: set[tuple[tuple[str, object], ...]] = set()
    for env, _ in known:
        used = tuple((k, env[k]) for k in sorted(env, key=lambda n: (order.get(n, len(order)), n))
                     if k in uses and k not in sibling_names)
        if used in seen:
            continue
        seen.add(used)
        child = _child_scope(scope, dict(env))
        fd = _make_def(node, child, parsed, diags)
        if fd is None:
            continue
        fd.scope = child
        fd.bindings = used
        for sib in siblings:
            if sib.kind == "native":
                child.native_funcs[sib.node.name.value] = sib.node
                continue
            if sib.kind == "custom":
                walker.applied.add(id(sib.node))
            sfd = _make_def(sib.node, child, parsed, diags)
            if sfd is not None:
                sfd.scope = child
                sfd.bindings = used
                sfd.key = (id(sib.node), used)
                child.funcs[sfd.name] = sfd
        for target, attr, arg in child.custom_targets:  # a nested @wp.func_grad(f) names a func beside it
            if target not in child.funcs and id(arg) not in walker.reported:
                walker.reported.add(id(arg))
                diags.error("TC0408", f"@wp.{attr} names `{target}`, which is not a @wp.func defined beside it",
                            parsed.span(arg))
        instance = naming.kernel_instance(base, [(k, _spell(v)) for k, v in used if k in inputs])
        while instance in taken:
            instance += "_"
        taken[instance] = fd
        scope.kernels[instance] = fd


def _spell(v: object) -> str:
    if isinstance(v, DtypeValue):
        return v.api
    if isinstance(v, TypeValue):
        return str(v.type)
    if isinstance(v, (FuncValue, KernelValue)):
        return v.name
    if isinstance(v, str):
        return v  # `make("relu")`: kk__act_relu (naming.kernel_instance keeps it an identifier)
    return repr(v) if not isinstance(v, tuple) else "_".join(_spell(x) for x in v)


def _describe(envs: list[Env], var: str) -> str:
    values = sorted({_spell(e[var]) for e in envs if var in e})
    return f"`{var}` in {{{', '.join(values)}}}" if values else "its other bindings"


__all__ = ["Discovery", "DtypeValue", "FuncValue", "discover", "free_names"]
