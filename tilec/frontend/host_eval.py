"""Plain host Python that Warp runs when it builds a module, followed by tilec without running it: the
body of an enum's property (enum_properties.py) or of a module-level function called with constants in a
constant expression (`wp.static(make_bitmask(31))`, `MASK = make_bitmask(bits)` in a factory: Newton's
kamino keying.py).

A body is followed statement by statement: `if`/`elif`/`else` tests evaluated, constant assignments to
local names, and the first `return` reached. A `raise` reached, a loop, a call as a statement or anything
else makes the result unknown (NOT_CONST): never a guess. Calls nest at most MAX_DEPTH deep and one
evaluation makes at most MAX_CALLS (a recursive function is unknown past them, never endless nor
exponential), and the arithmetic is consts.py's (bounded sizes).
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import consts
from .statement_walk import single_name_assign

Lookup = Callable[[cst.BaseExpression], object]

MAX_DEPTH = 16
MAX_CALLS = 1000
_DEPTH = [0]
_CALLS = [0]  # calls made since the outermost one began


def call(fn: cst.FunctionDef, args: list[object], kwargs: dict[str, object], home: Lookup) -> object:
    """The value `fn(*args, **kwargs)` returns, its other names read with `home` (its module's), else
    NOT_CONST. Parameters: positional or keyword, with defaults (constants of its module)."""
    if _DEPTH[0] == 0:
        _CALLS[0] = 0
    _CALLS[0] += 1
    local = bind(fn, args, kwargs, home) if _DEPTH[0] < MAX_DEPTH and _CALLS[0] <= MAX_CALLS else None
    if local is None:
        return consts.NOT_CONST

    def lookup(node: cst.BaseExpression) -> object:
        if isinstance(node, cst.Name) and node.value in local:
            return local[node.value]
        return home(node)

    _DEPTH[0] += 1
    try:
        found = run_body(fn.body, lookup, local, lambda node: consts.evaluate(node, lookup))
    finally:
        _DEPTH[0] -= 1
    return consts.NOT_CONST if found is None else found


def bind(fn: cst.FunctionDef, args: list[object], kwargs: dict[str, object], home: Lookup) -> dict[str, object] | None:
    """fn's parameters bound to constant arguments, positional or keyword, the rest to their defaults
    (constants of its module, read with `home`); None where they do not match (or `*args`, `**kwargs`)."""
    if isinstance(fn.params.star_arg, cst.Param) or fn.params.star_kwarg is not None:
        return None
    params = [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]
    if len(args) > len(fn.params.posonly_params) + len(fn.params.params):
        return None
    kwargs = dict(kwargs)
    local: dict[str, object] = {}
    for p, value in zip(params, args):
        local[p.name.value] = value
    for p in params[len(args):]:
        name = p.name.value
        if name in kwargs:
            local[name] = kwargs.pop(name)
        elif p.default is not None:
            local[name] = consts.evaluate(p.default, home)
        else:
            return None
    if kwargs or consts.NOT_CONST in local.values():
        return None
    return local


def run_body(body: cst.BaseSuite, lookup: Lookup, local: dict[str, object], returned: Lookup) -> object:
    """The value the statements return (NOT_CONST where tilec cannot follow them); None past their end."""
    for stmt in getattr(body, "body", ()):
        if isinstance(stmt, cst.If):
            branch: cst.If | cst.Else | None = stmt
            while isinstance(branch, cst.If):
                taken = consts.evaluate(branch.test, lookup)
                if taken is consts.NOT_CONST:
                    return consts.NOT_CONST
                if taken:
                    break
                branch = branch.orelse
            if branch is not None:
                found = run_body(branch.body, lookup, local, returned)
                if found is not None:
                    return found
            continue
        assigned = single_name_assign(stmt)
        if assigned is not None:
            local[assigned[0]] = returned(assigned[1])
            continue
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else stmt
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            continue  # a docstring
        if isinstance(small, cst.Return):
            return returned(small.value) if small.value is not None else consts.NOT_CONST
        return consts.NOT_CONST  # a raise, a loop, a call: not followed
    return None
