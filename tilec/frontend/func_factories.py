"""Funcs made, or picked, by a call of a host function: a factory, `ray_intersect_mesh =
_make_ray_intersect_mesh(True)`, where `_make_ray_intersect_mesh(compute_normal)` defines a @wp.func in its
body and returns it (Newton's raycast.py); a selector, `wp.static(get_mapping(JointDoFType.FREE))(x)`, whose
if/elif chain on its arguments returns one of its module's funcs (Newton's kamino).

tilec never runs the factory. The call's arguments (and the factory's defaults) must be compile-time
constants, dtypes or types, or module funcs; the returned func is checked with the factory's parameters
bound to them, and to the constants the factory assigns at its top level before it (`N = 2 * k`), as each
call makes a function of its own in Python. The factory's other @wp.func defs see the same binding and are
visible to it. A selector's body is followed statement by statement: its `if` tests evaluated with the
arguments, constant assignments, and the `return` of a func name it reaches. A call tilec cannot bind or
follow leaves the name a host value, with the reason where a kernel uses it.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import libcst as cst

from ..ir.types import VecT
from . import consts
from .enum_properties import VectorConstant, constructor_name
from .statement_walk import single_name_assign, statements

if TYPE_CHECKING:
    from .resolve import FuncDef, Scope

Define = Callable[["Scope", cst.FunctionDef], "FuncDef | None"]  # resolve's reading of a decorated def
TypeOf = Callable[["Scope", cst.BaseExpression], object]  # resolve's reading of a type expression, or None
Place = Callable[[cst.CSTNode, cst.CSTNode], None]  # gives a made node (first) the position of another


@dataclasses.dataclass(frozen=True)
class HostDef:
    """A module-level host function that makes or picks funcs, and the names it sees: its module's
    (`home`, for one imported from another file), None for the file's own."""

    node: cst.FunctionDef
    home: Scope | None = None


def makes_funcs(fn: cst.FunctionDef, decorated: Callable[[cst.FunctionDef], bool]) -> bool:
    """Whether an undecorated module-level def returns a @wp.func it defines (`decorated` tells those), or
    returns names only (a selector: `return map_free`, maybe `return None`)."""
    if fn.decorators:
        return False
    if _returned(fn, decorated) is not None:
        return True
    returns = [s for s in statements(fn.body) if isinstance(s, cst.Return)]
    return bool(returns) and all(isinstance(r.value, cst.Name) for r in returns) and any(
        isinstance(r.value, cst.Name) and r.value.value != "None" for r in returns)


def _returned(fn: cst.FunctionDef, decorated: Callable[[cst.FunctionDef], bool]) -> cst.FunctionDef | None:
    """The @wp.func def the factory's body defines and returns (`return f`), or None."""
    defs = {s.name.value: s for s in fn.body.body if isinstance(s, cst.FunctionDef) and decorated(s)}
    if not defs:
        return None
    returns = [s for s in statements(fn.body) if isinstance(s, cst.Return)]
    names = {s.value.value for s in returns if isinstance(s.value, cst.Name)}
    if len(returns) != 1 or len(names) != 1:
        return None
    return defs.get(names.pop())


def instantiate(scope: Scope, name: str, call: cst.Call, host: HostDef,
                decorated: Callable[[cst.FunctionDef], bool], define: Define, type_of: TypeOf, place: Place) -> str | None:
    """Binds `name` in `scope` to the func the host function makes or picks for this call (its arguments
    evaluated in `scope`); None, or why it cannot. `place` gives a node tilec makes a node's position."""
    factory = host.node
    base = host.home or scope
    caller = scope
    env, why = _arguments(scope, base, call, factory, type_of)
    if why is not None:
        return why
    if _returned(factory, decorated) is None:  # a selector
        picked, why = _select(base, factory, env)
        if picked is None:
            return why
        scope.funcs[name] = base.funcs[picked]
        return None
    unknown: dict[str, cst.BaseExpression] = {}  # locals tilec cannot compute: a read says where they are bound

    def lookup(n: cst.BaseExpression) -> object:
        if isinstance(n, cst.Name) and n.value in env:
            return env[n.value]
        made = _vector_constant(n, env, lambda a: consts.evaluate(a, lookup), place) if isinstance(n, cst.Call) \
            else consts.NOT_CONST
        return base._lookup(n) if made is consts.NOT_CONST else made

    def follow(body: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> None:
        """The constants the body assigns before its defs, through the `if`s whose tests evaluate
        (`if support_func is None: support_func = support_map`); a name an `if` tilec cannot decide
        assigns is unknown after it."""
        for stmt in body:
            if isinstance(stmt, cst.If):
                test = consts.evaluate(stmt.test, lookup)
                if test is consts.NOT_CONST:
                    for assigned_stmt in _assignments_under(stmt):
                        env.pop(assigned_stmt[0], None)
                        unknown[assigned_stmt[0]] = assigned_stmt[1]
                elif test:
                    follow(stmt.body.body)
                elif isinstance(stmt.orelse, cst.If):
                    follow([stmt.orelse])
                elif isinstance(stmt.orelse, cst.Else):
                    follow(stmt.orelse.body.body)
                continue
            line = cst.SimpleStatementLine([stmt]) if isinstance(stmt, cst.BaseSmallStatement) else stmt
            assigned = single_name_assign(line)  # (`if x: y = 1` on one line: a small statement)
            if assigned is None:
                continue
            value = consts.evaluate(assigned[1], lookup)
            if consts.holds_list(value):  # a list the body may change after (`limits.append(b)`): not followed
                value = consts.NOT_CONST
            if value is consts.NOT_CONST and isinstance(assigned[1], cst.Name) and assigned[1].value in base.funcs \
                    and assigned[1].value not in env:
                value = _FuncName(assigned[1].value, base.funcs[assigned[1].value])  # `support_func = support_map`
            if value is consts.NOT_CONST:
                value = _selected(base, env, assigned[1], decorated, type_of)
            if value is not consts.NOT_CONST:
                env[assigned[0]] = value
                unknown.pop(assigned[0], None)
            else:
                env.pop(assigned[0], None)
                unknown[assigned[0]] = assigned[1]

    follow(factory.body.body)
    child = _child(base, env, unknown)
    child.native_funcs = {**child.native_funcs, **{  # a snippet its funcs call is named as such, not unknown
        s.name.value: s for s in factory.body.body if isinstance(s, cst.FunctionDef) and any(
            base.api_attr(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) == "func_native"
            for d in s.decorators)}}
    bindings = tuple(sorted(env.items(), key=lambda item: item[0]))
    returned = _returned(factory, decorated)
    assert returned is not None  # (is_factory)
    made = None
    for inner in (s for s in factory.body.body if isinstance(s, cst.FunctionDef) and decorated(s)):
        fd = define(child, inner)
        if fd is None:
            continue
        fd.scope, fd.bindings, fd.key = child, bindings, (id(inner), repr(bindings))
        child.funcs[inner.name.value] = fd
        if inner is returned:
            made = fd
    if made is None:
        return f"`{factory.name.value}` returns no func tilec could read"
    caller.funcs[name] = made
    return None


def _assignments_under(stmt: cst.If) -> list[tuple[str, cst.BaseExpression]]:
    """The single-name assignments anywhere in an `if`'s arms."""
    found: list[tuple[str, cst.BaseExpression]] = []

    class Visitor(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
            assigned = single_name_assign(node)
            if assigned is not None:
                found.append(assigned)
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    stmt.visit(Visitor())
    return found


def _selected(base: Scope, env: dict[str, object], value: cst.BaseExpression, decorated: Callable[[cst.FunctionDef], bool],
              type_of: TypeOf) -> object:
    """`mix = get_mixing_function(mode)` in a factory's body, of a selector of its module and the factory's
    bound names: the func it picks (a _FuncName), else NOT_CONST."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in base.factories):
        return consts.NOT_CONST
    host = base.factories[value.func.value]
    if _returned(host.node, decorated) is not None:
        return consts.NOT_CONST  # a factory making a func of its own: not followed here
    here = _child(base, env)
    args, why = _arguments(here, host.home or base, value, host.node, type_of)
    home = host.home or base
    picked, why = _select(home, host.node, args) if why is None else (None, why)
    return consts.NOT_CONST if picked is None else _FuncName(picked, home.funcs[picked])


def _select(base: Scope, fn: cst.FunctionDef, env: dict[str, object]) -> tuple[str | None, str]:
    """The module func a selector returns for `env` (its parameters' values), or (None, why)."""
    def lookup(node: cst.BaseExpression) -> object:
        if isinstance(node, cst.Name) and node.value in env:
            return env[node.value]
        return base._lookup(node)

    def run(body: cst.BaseSuite) -> tuple[str | None, str] | None:
        for stmt in getattr(body, "body", ()):
            if isinstance(stmt, cst.Match):  # `match mode: case Mix.AVERAGE: ...` (kamino's materials.py)
                case = _case_taken(stmt, lookup)
                if isinstance(case, str):
                    return None, f"`{fn.name.value}` {case}"
                if case is not None:
                    found = run(case.body)
                    if found is not None:
                        return found
                continue
            if isinstance(stmt, cst.If):
                taken = consts.evaluate(stmt.test, lookup)
                if taken is consts.NOT_CONST:
                    return None, f"`{fn.name.value}` tests `{_code(stmt.test)}`, which tilec cannot evaluate"
                branch: cst.If | cst.Else | None = stmt if taken else stmt.orelse
                while isinstance(branch, cst.If) and branch is not stmt:  # an elif
                    taken = consts.evaluate(branch.test, lookup)
                    if taken is consts.NOT_CONST:
                        return None, f"`{fn.name.value}` tests `{_code(branch.test)}`, which tilec cannot evaluate"
                    if taken:
                        break
                    branch = branch.orelse
                if branch is not None:
                    found = run(branch.body)
                    if found is not None:
                        return found
                continue
            for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else (stmt,):
                if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                    continue
                if isinstance(small, cst.Return):
                    picked = env.get(small.value.value) if isinstance(small.value, cst.Name) else None
                    if isinstance(picked, _FuncName):  # `mix_func = material_average` ... `return mix_func`
                        return picked.name, ""
                    if isinstance(small.value, cst.Name) and small.value.value in base.funcs:
                        return small.value.value, ""
                    return None, f"`{fn.name.value}` returns `{_code(small.value) if small.value else 'None'}` " \
                                 "for these arguments, not a func"
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target,
                                                                                             cst.Name):
                    value = consts.evaluate(small.value, lookup)
                    if value is consts.NOT_CONST and isinstance(small.value, cst.Name) and small.value.value in base.funcs:
                        value = _FuncName(small.value.value)  # a func picked, returned below
                    if value is not consts.NOT_CONST:
                        env[small.targets[0].target.value] = value
                        continue
                return None, f"`{fn.name.value}` runs `{_code(small)}`, which tilec does not follow"
        return None

    return run(fn.body) or (None, f"`{fn.name.value}` returns nothing for these arguments")


def _case_taken(stmt: cst.Match, lookup: Callable[[cst.BaseExpression], object]) -> cst.MatchCase | str | None:
    """The case of a `match` that Python takes (value patterns, `|` of them, `_`, guards of constants), None
    when none matches, or why tilec cannot tell."""
    subject = consts.evaluate(stmt.subject, lookup)
    if subject is consts.NOT_CONST:
        return f"matches `{_code(stmt.subject)}`, which tilec cannot evaluate"

    def matches(pattern: cst.MatchPattern) -> bool | None:
        if isinstance(pattern, cst.MatchAs) and pattern.pattern is None:
            return True  # `case _:` or `case name:`
        if isinstance(pattern, cst.MatchValue):
            value = consts.evaluate(pattern.value, lookup)
            return None if value is consts.NOT_CONST else bool(value == subject)
        if isinstance(pattern, cst.MatchOr):
            found = [matches(p.pattern) for p in pattern.patterns]
            return None if None in found else any(found)
        return None

    for case in stmt.cases:
        taken = matches(case.pattern)
        if taken is None:
            return f"matches the pattern `{_code(case.pattern)}`, which tilec does not follow"
        if taken and case.guard is not None:
            guard = consts.evaluate(case.guard, lookup)
            if guard is consts.NOT_CONST:
                return f"tests `{_code(case.guard)}`, which tilec cannot evaluate"
            taken = bool(guard)
        if taken:
            return case
    return None


def _code(node: cst.CSTNode) -> str:
    text = cst.Module([]).code_for_node(node).strip()
    return text if len(text) <= 60 else text[:57] + "..."


def _arguments(scope: Scope, home: Scope, call: cst.Call, factory: cst.FunctionDef,
               type_of: TypeOf) -> tuple[dict[str, object], str | None]:
    """The factory's parameters bound to the call's arguments (read in the caller's `scope`) and its
    defaults (read in its module's, `home`: `mode: Mix = Mix.AVERAGE` of a factory imported from there),
    or the reason it cannot."""
    params = [*factory.params.posonly_params, *factory.params.params, *factory.params.kwonly_params]
    given: dict[str, cst.BaseExpression] = {}
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > len(params):
        return {}, f"`{factory.name.value}` is called with arguments tilec cannot match"
    for p, a in zip(params, positional):
        given[p.name.value] = a.value
    for a in call.args:
        if a.keyword is not None:
            given[a.keyword.value] = a.value
    env: dict[str, object] = {}
    for p in params:
        node = given.get(p.name.value, p.default)
        if node is None:
            return {}, f"`{factory.name.value}` is called without `{p.name.value}`"
        where = scope if p.name.value in given else home
        if isinstance(node, cst.Name) and node.value == "None":  # `support_func=None`, then `if support_func is None:`
            env[p.name.value] = None
            continue
        value = where.constant(node)
        if value is consts.NOT_CONST:
            value = type_of(where, node)
        if value is None and isinstance(node, cst.Name) and node.value in where.funcs:
            value = _FuncName(node.value, where.funcs[node.value])  # the caller's func, its module maybe another
        if value is None:
            return {}, f"`{p.name.value}` of `{factory.name.value}` is `{_code(node)}`, not a compile-time constant, type " \
                "or func"
        env[p.name.value] = value
    return env, None


@dataclasses.dataclass(frozen=True)
class _FuncName:
    """A module func passed to the factory (`make(step=integrate)`), or one a selector picked (its def: the
    selector's module may be another)."""

    name: str
    fd: FuncDef | None = None

    def __repr__(self) -> str:  # short: a factory's instances are keyed by the repr of its bindings
        return f"_FuncName({self.name!r}, {id(self.fd.node) if self.fd is not None else None})"


def _vector_constant(call: cst.Call, env: dict[str, object], evaluate: Callable[[cst.BaseExpression], object],
                     place: Place) -> object:
    """`vec(kind.bounds(mode))` / `vec(1.0, b)` of a vector type bound in the factory (a property's): the
    VectorConstant of its numbers (a sequence of them, or one each), else NOT_CONST. The made constructor
    takes the call's position."""
    t = env.get(call.func.value) if isinstance(call.func, cst.Name) else None
    if not isinstance(t, VecT) or any(a.keyword is not None or a.star for a in call.args):
        return consts.NOT_CONST
    values = [evaluate(a.value) for a in call.args]
    if len(values) == 1 and isinstance(values[0], tuple):
        values = list(values[0])
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) != len(values) or len(numbers) != t.length:
        return consts.NOT_CONST
    literals = [consts.number_literal(float(v) if t.dtype.is_float else v) for v in numbers]
    if any(s is None for s in literals):
        return consts.NOT_CONST
    made = cst.Call(cst.Name(constructor_name(t)), [cst.Arg(cast(cst.BaseExpression, s)) for s in literals])
    for node in (made, made.func, *(a.value for a in made.args)):
        place(node, call)
    return VectorConstant(made, t)


def _child(scope: Scope, env: dict[str, object], unknown: dict[str, cst.BaseExpression] | None = None) -> Scope:
    """The scope the factory's funcs see: its module's, with the bound names (`unknown`: the factory's locals
    tilec cannot compute, each with its value, which a read reports)."""
    constants = {k: v for k, v in scope.constants.items() if k not in env}
    type_aliases = {k: v for k, v in scope.type_aliases.items() if k not in env}
    funcs = dict(scope.funcs)
    value_constants = {k: v for k, v in scope.value_constants.items() if k not in env}
    for k, v in env.items():
        if isinstance(v, _FuncName):
            funcs[k] = v.fd or scope.funcs[v.name]
        elif isinstance(v, VectorConstant):  # `axes` bound to `JointDoFType.CARTESIAN.cts_axes`
            value_constants[k] = v.call
            type_aliases[cst.ensure_type(v.call.func, cst.Name).value] = v.type  # type: ignore[assignment]  # a VecT or MatT
        elif isinstance(v, (bool, int, float, str, tuple)):
            constants[k] = v
        else:
            type_aliases[k] = v  # type: ignore[assignment]  # a Type or IndexedT (type_of)
    return dataclasses.replace(scope, constants=constants, type_aliases=type_aliases, funcs=funcs,
                               value_constants=value_constants,
                               typed_constants={k: v for k, v in scope.typed_constants.items() if k not in env},
                               host_values={**{k: v for k, v in scope.host_values.items() if k not in env},
                                            **(unknown or {})},
                               bound=scope.bound | set(env), custom_adjoints={}, custom_targets=[])
