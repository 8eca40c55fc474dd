"""The argument types of a launch, read statically: how a generic kernel with no `wp.overload`
gets one instantiation per concrete launch in the file (issue #13 item 5).

A Warp test launches a generic kernel on arrays it makes a few lines above:
`src = wp.array(np.array(rows, dtype=np.float64))`, `dst = wp.zeros(n, dtype=wp.float32)`,
`wp.zeros_like(src)`, `wp.dtype_from_numpy(T)`, in a loop over literal dtypes. frontend/nested.py
evaluates such an assignment to an ArrayValue (the element dtype; `array_value`) with the same
path-by-path env it binds nested kernels with; `launch_overload` turns a launch whose array
arguments all have one into the overload annotations `{"#i": wp.array2d[wp.float64], ...}`: the
kernel's own annotation with `Any` replaced by the dtype. A launch where some generic argument's
dtype is not known declares nothing (the kernel keeps TC0436 if no launch does).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import libcst as cst

from ..ir.types import SCALARS, VALUE_TYPE_NAMES
from . import consts
from .parse import Parsed
from .resolve import Scope


@dataclass(frozen=True)
class ArrayValue:
    """An array made in host code whose element dtype is known: the API dtype name."""

    dtype: str


# numpy's scalar types as Warp's dtypes (`np.float64`, `numpy.int32`)
NUMPY_DTYPES = {"float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8",
                "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16",
                "uint32": "uint32", "uint64": "uint64", "bool_": "bool"}
WARP_MAKERS = ("array", "zeros", "empty", "ones", "full")  # wp.<maker>(..., dtype=T)
WARP_LIKE = ("zeros_like", "empty_like", "ones_like", "full_like", "clone")  # wp.<like>(a): a's dtype
NUMPY_MAKERS = ("array", "asarray", "zeros", "empty", "ones", "full", "arange")  # np.<maker>(..., dtype=T)

Value = Callable[[cst.BaseExpression], object]  # nested._value in the caller's env


def numpy_dtype(node: cst.BaseExpression, scope: Scope) -> str | None:
    """`np.float64` -> "float64" (numpy imported under any name)."""
    origin = scope.host_origin(node)
    if origin is not None and origin[0] == "numpy":
        return NUMPY_DTYPES.get(origin[1])
    return None


def array_value(node: cst.BaseExpression, scope: Scope, value: Value, dtype_of: Callable[[object], str | None]) -> object:
    """The ArrayValue of a host expression that makes an array of a known dtype, else NOT_CONST.
    dtype_of(v): the dtype name a value evaluated by `value` stands for, or None."""
    if not isinstance(node, cst.Call):
        return consts.NOT_CONST
    kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    positional = [a.value for a in node.args if a.keyword is None]
    api = scope.api_attr(node.func)
    origin = scope.host_origin(node.func)
    if api == "dtype_from_numpy" and len(positional) == 1:
        return value(positional[0])  # a DtypeValue already (numpy dtypes evaluate to one)
    if api in WARP_MAKERS or (origin is not None and origin[0] == "numpy" and origin[1] in NUMPY_MAKERS):
        if "dtype" in kw:
            name = dtype_of(value(kw["dtype"]))
            return ArrayValue(name) if name is not None else consts.NOT_CONST
        if api == "array" and positional:  # wp.array(np_array): its dtype
            made = value(positional[0])
            return made if isinstance(made, ArrayValue) else consts.NOT_CONST
        return consts.NOT_CONST
    if api in WARP_LIKE and positional and "dtype" not in kw:
        made = value(positional[0])
        return made if isinstance(made, ArrayValue) else consts.NOT_CONST
    return consts.NOT_CONST


def launch_args(call: cst.Call) -> list[cst.BaseExpression] | None:
    """The kernel arguments of `wp.launch(k, dim, inputs=[...], outputs=[...])` in parameter
    order, or None when they are not literal lists."""
    positional = [a.value for a in call.args if a.keyword is None]
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    lists = [kw.get("inputs", positional[2] if len(positional) > 2 else None),
             kw.get("outputs", positional[3] if len(positional) > 3 else None)]
    out: list[cst.BaseExpression] = []
    for part in lists:
        if part is None:
            continue
        if not isinstance(part, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in part.elements):
            return None
        out += [e.value for e in part.elements]
    return out


def launch_overload(call: cst.Call, kernel: cst.FunctionDef, scope: Scope, parsed: Parsed,
                    value: Value) -> dict[str, cst.BaseExpression] | None:
    """{"#i": annotation} for a launch of a generic kernel whose generic array arguments all have
    a known dtype; None when one does not (or a generic parameter is not an array)."""
    args = launch_args(call)
    params = list(kernel.params.params)
    if args is None or len(args) != len(params):
        return None
    given: dict[str, cst.BaseExpression] = {}
    for i, (param, arg) in enumerate(zip(params, args)):
        if param.annotation is None or not _mentions_any(param.annotation.annotation, scope):
            continue
        if scope.is_any(param.annotation.annotation):  # `value: Any`: a number or a value type's constructor
            spelled = _value_type(arg, value, scope)
            if spelled is None:
                return None
            parsed.place_all_like(spelled, param.annotation.annotation)
            given[f"#{i}"] = spelled
            continue
        made = value(arg)
        if not isinstance(made, ArrayValue):
            return None
        given[f"#{i}"] = _with_dtype(param.annotation.annotation, made.dtype, scope, parsed)
    return given or None


def _value_type(arg: cst.BaseExpression, value: Value, scope: Scope) -> cst.BaseExpression | None:
    """The type Warp gives a launch's argument for an `Any` parameter, where it is known here: a
    Python int is an int32, a float a float32, a bool a bool (Warp's inference from the value's
    type), `wp.vec3(...)` / `wp.float64(...)` its constructor's type; else None."""
    if isinstance(arg, cst.Call) and (scope.api_attr(arg.func) in VALUE_TYPE_NAMES or scope.api_attr(arg.func) in SCALARS):
        return arg.func
    made = value(arg)
    kind = "bool" if isinstance(made, bool) else "int32" if isinstance(made, int) else \
        "float32" if isinstance(made, float) else None
    return None if kind is None else cst.parse_expression(scope.api_prefix() + kind)


def _mentions_any(node: cst.CSTNode, scope: Scope) -> bool:
    found = []

    class Visit(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, (cst.Name, cst.Attribute)) and scope.is_any(n):
                found.append(n)
                return False
            return True

    node.visit(Visit())
    return bool(found)


def _with_dtype(annotation: cst.BaseExpression, dtype: str, scope: Scope, parsed: Parsed) -> cst.BaseExpression:
    """The annotation with its `Any` spelled as the dtype, placed where the annotation is."""
    spelled = cst.parse_expression(scope.api_prefix() + dtype)

    class Replace(cst.CSTTransformer):
        def on_visit(self, n: cst.CSTNode) -> bool:
            return not (isinstance(n, (cst.Name, cst.Attribute)) and scope.is_any(n))

        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
            if isinstance(original, (cst.Name, cst.Attribute)) and scope.is_any(original):
                return spelled
            return updated

    out = annotation.visit(Replace())
    assert isinstance(out, cst.BaseExpression), out
    parsed.place_all_like(out, annotation)
    return out

