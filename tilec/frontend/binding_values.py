"""The values a nested kernel's free variables can be bound to, evaluated from the file's text
(frontend/nested.py): constants, dtypes, funcs, kernels, host arrays of a known dtype, or
Unknown with the reason. `value` evaluates an expression in an env of such bindings; nothing of
the user's file is run (Python builtins only where pure: PURE_BUILTINS)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

import libcst as cst

from ..diagnostics import Span
from ..ir.types import MatT, VecT
from . import annotations as ann
from . import consts, launch_types
from .parse import Parsed
from .resolve import MATH_CONSTANTS, Scope

Loop = Union[cst.For, cst.CompFor]  # a "loop" frame's node: a for statement or a comprehension's `for`

# A binding's values by name: constants, DtypeValue, FuncValue, or Unknown (the classes below).
Env = dict[str, object]


@dataclass(frozen=True)
class DtypeValue:
    """A binding to a dtype (`make(wp.float64)`, `for T in (wp.vec3, wp.mat22)`): the API attribute
    name it stands for."""

    api: str


@dataclass(frozen=True)
class TypeValue:
    """A binding to a vector or matrix type declared in a function (`mat22f = wp.types.matrix((2, 2),
    wp.float32)` beside a nested kernel): the type."""

    type: VecT | MatT


@dataclass(frozen=True)
class FuncValue:
    """A binding to a function (`make(wp.sin)`, `make(my_func)`): an API builtin or a @wp.func."""

    name: str
    api: bool  # a builtin of the tile API (else a module-level @wp.func)


@dataclass(frozen=True)
class KernelValue:
    """A binding to a module-level kernel (`for k in (k1, k2): wp.overload(k, [...])`)."""

    name: str


@dataclass(frozen=True)
class Unknown:
    """A binding tilec cannot evaluate; `why` completes "… because <why>"."""

    why: str
    span: Span | None = None
    uncalled: bool = False  # nothing in the file calls the def that binds it: an uninstantiated template


def substitute(node: cst.BaseExpression, env: Env, scope: Scope, parsed: Parsed) -> cst.BaseExpression:
    """An annotation with the names `env` binds to dtypes, Warp's own names and numbers spelled as their values;
    every node made has the position of the one it replaces."""
    if not env:
        return node
    prefix = scope.api_prefix()

    class Substitute(cst.CSTTransformer):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            return False  # `wp.array2d`: only its value is a name, done in leave_Attribute

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
            return updated.with_changes(value=updated.value.visit(self))

        def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
            return updated.with_changes(keyword=original.keyword)  # `dtype=dtype`: the keyword is no name's use

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            v = env.get(updated.value)
            if isinstance(v, DtypeValue):
                return cst.parse_expression(prefix + v.api)
            if isinstance(v, FuncValue) and v.api:  # `for A in (wp.array, wp.indexedarray): ... A(dtype=T)`
                return cst.parse_expression(prefix + v.name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return cst.parse_expression(repr(v))
            return updated

        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
            made = super().on_leave(original, updated)
            if isinstance(made, cst.CSTNode) and made is not original:
                parsed.place_all_like(made, original)  # a dtype spelled out is new all through
            return made

    out = node.visit(Substitute())
    assert isinstance(out, cst.BaseExpression), out
    return out



def value(node: cst.BaseExpression, scope: Scope, env: Env, lists: bool = False) -> object:
    """A constant, a DtypeValue, or NOT_CONST: `node` evaluated with module constants and `env`. A list
    (consts.ListValue) only with `lists`: where nothing can change it after (branch_values.read_only)."""
    if isinstance(node, cst.Name) and node.value in env:
        v = env[node.value]
        return consts.NOT_CONST if isinstance(v, Unknown) else v
    if (isinstance(node, cst.Call) and scope.api_attr(node.func) == "constant" and len(node.args) == 1
            and node.args[0].keyword is None):
        return value(node.args[0].value, scope, env)  # `N = wp.constant(4 * K)` in a function
    numpy_dtype = launch_types.numpy_dtype(node, scope)
    if numpy_dtype is not None:
        return DtypeValue(numpy_dtype)  # `np.float64` in host code
    made = launch_types.array_value(node, scope, lambda n: value(n, scope, env),
                                    lambda v: v.api if isinstance(v, DtypeValue) else None)
    if made is not consts.NOT_CONST:
        return made  # `wp.zeros(n, dtype=wp.float16)`: an array of a known dtype (a launch's argument)
    if isinstance(node, cst.Name) and node.value in ("float", "int", "bool") and node.value not in scope.api_names:
        return DtypeValue({"float": "float32", "int": "int32", "bool": "bool"}[node.value])
    attr = scope.api_attr(node)
    if attr is not None:
        from ..ir.types import DTYPE_NAMES, VALUE_TYPE_NAMES

        if attr in DTYPE_NAMES or attr in VALUE_TYPE_NAMES:  # a scalar type, or `wp.vec3`, `wp.mat22d`, `wp.quatf`
            return DtypeValue(attr)
    if isinstance(node, cst.Name) and isinstance(scope.api_names.get(node.value), str):
        from ..ir.types import DTYPE_NAMES

        if scope.api_names[node.value] in DTYPE_NAMES:
            return DtypeValue(scope.api_names[node.value])
    if attr is not None and attr not in MATH_CONSTANTS:
        return FuncValue(attr, True)  # wp.sin, wp.exp, ...: passed to tile_map or called
    if isinstance(node, cst.Name) and node.value in scope.funcs:
        return FuncValue(node.value, False)
    if isinstance(node, cst.Name) and node.value in scope.kernels:
        return KernelValue(node.value)

    if isinstance(node, cst.Call) and scope.api_attr(node.func) in (*ann.DECLARED_VALUE_TYPES, *ann.DECLARED_ROTATION_TYPES):
        try:
            declared = ann.element_type(node, scope)
        except ann.AnnotationError:
            declared = None
        if isinstance(declared, (VecT, MatT)):
            return TypeValue(declared)
    if isinstance(node, cst.Tuple) and node.elements:
        items = tuple(value(e.value, scope, env) for e in node.elements)
        if consts.NOT_CONST not in items and holds_type(items):
            return items  # `(1, wp.float32)`: a loop element tilec unpacks

    def lookup(n: cst.BaseExpression) -> object:
        if isinstance(n, cst.Name) and n.value in env:
            v = env[n.value]
            return consts.NOT_CONST if isinstance(v, (Unknown, DtypeValue, TypeValue, FuncValue, KernelValue,
                                                      launch_types.ArrayValue)) or holds_type(v) else v
        if (isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in PURE_BUILTINS
                and n.func.value not in env and n.func.value not in scope.constants
                and n.func.value not in scope.api_names and n.func.value not in scope.funcs):
            return pure_call(n, lambda a: value(a, scope, env))
        return scope._lookup(n)

    found = consts.evaluate(node, lookup)
    return consts.NOT_CONST if consts.holds_list(found) and not lists else found  # a list code may change after


# Python builtins a factory computes its constants with (`min(512, int(W * H / 8))`): pure, and
# bounded by their arguments, so evaluating them on constants runs no user code.
PURE_BUILTINS = {"min": min, "max": max, "abs": abs, "int": int, "float": float}


def pure_call(call: cst.Call, evaluate: Callable[[cst.BaseExpression], object]) -> object:
    """A PURE_BUILTINS call on numbers (positional arguments only, each `evaluate`d), else NOT_CONST."""
    if not call.args or any(a.keyword is not None or a.star for a in call.args):
        return consts.NOT_CONST
    args = [evaluate(a.value) for a in call.args]
    if any(isinstance(a, bool) or not isinstance(a, (int, float)) for a in args):
        return consts.NOT_CONST
    name = cst.ensure_type(call.func, cst.Name).value
    if (name in ("abs", "int", "float") and len(args) != 1) or (name in ("min", "max") and len(args) < 2):
        return consts.NOT_CONST
    try:
        return PURE_BUILTINS[name](*args)  # type: ignore[operator]  # numbers, checked above
    except (ArithmeticError, ValueError):  # int(inf), int(nan)
        return consts.NOT_CONST


def holds_type(v: object) -> bool:
    """A tuple holding a dtype, func, kernel or host array at any depth (`((np.float64, np.float32), ...)`)."""
    return isinstance(v, tuple) and any(
        isinstance(x, (DtypeValue, TypeValue, FuncValue, KernelValue, launch_types.ArrayValue)) or holds_type(x)
        for x in v)


def loop_values(loop: Loop, scope: Scope, env: Env) -> list[Env] | None:
    """One env per element of a loop over a literal list/tuple/set or range(constants)."""
    it = loop.iter
    items: list[object] | None = None
    if isinstance(it, (cst.List, cst.Tuple, cst.Set)):
        items = [value(e.value, scope, env) for e in it.elements]
    elif isinstance(it, cst.Name) and isinstance(value(it, scope, env), tuple):  # a tuple bound above
        bound = value(it, scope, env)
        items = list(bound) if isinstance(bound, tuple) else None
    elif isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range":
        bounds = [value(a.value, scope, env) for a in it.args]
        ints = [b for b in bounds if isinstance(b, int) and not isinstance(b, bool)]
        if bounds and len(ints) == len(bounds) and len(bounds) <= 3:
            items = list(range(*ints))
            if len(items) > 64:
                return None
    if items is None or any(v is consts.NOT_CONST for v in items):
        return None
    out: list[Env] = []
    for v in items:
        bound = _unpack(loop.target, v)
        if bound is None:
            return None
        out.append(bound)
    return out


def _unpack(target: cst.BaseExpression, value: object) -> Env | None:
    if isinstance(target, cst.Name):
        return {target.value: value}
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, tuple) and len(value) == len(target.elements):
        out: Env = {}
        for el, v in zip(target.elements, value):
            part = _unpack(el.value, v)
            if part is None:
                return None
            out.update(part)
        return out
    return None
