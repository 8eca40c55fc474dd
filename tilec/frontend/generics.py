"""Generic kernels and funcs: `Any` in parameter annotations, and the overloads that make them
concrete.

A parameter annotated `Any` / `typing.Any` takes any type; one annotated `wp.array(dtype=Any)`,
`wp.array2d(dtype=Any)` or `wp.array2d[Any]` takes an array of that ndim and any dtype
(`GenericArray`). A generic func is specialised per call site (module.py). A generic kernel
has no call site: it is compiled once per overload declared in the file,

    wp.overload(k, [wp.array(dtype=wp.float32), float])      # by position
    wp.overload(k, {"a": wp.array(dtype=wp.float64)})        # by name; the rest as declared
    @wp.overload
    def k(a: wp.array(dtype=wp.float16), s: float): ...      # a stub with concrete annotations

each instance named `<kernel>__<dtype>...` (the dtypes the generic parameters take); the loader
shows one kernel and picks the instance by the dtypes of the launch's arguments. A generic kernel
without an overload is an error naming the parameter.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

import libcst as cst

from ..ir.types import ArrayT, FunctionT, GridQueryT, MatT, Scalar, VecT, tuple_items, tuple_struct
from . import annotations as ann
from .resolve import Scope
from .tuple_returns import tuple_annotation


@dataclass(frozen=True)
class GenericArray:
    """`wp.arrayNd(dtype=Any)`: an array of this ndim, its dtype from each instantiation."""

    ndim: int

    def __str__(self) -> str:
        return f"array{self.ndim}d(Any)"


@dataclass(frozen=True)
class VariadicTuple:
    """`tuple[int, ...]`: a tuple of any length whose items are all of one type."""

    item: Scalar | VecT | MatT

    def __str__(self) -> str:
        return f"tuple[{self.item}, ...]"


Param = Union[ann.Declared, GenericArray, VariadicTuple]  # what a parameter's annotation declares

ANY_FUNCTION = FunctionT("", "Function")  # `g: wp.Function`: the func is specialised per function passed


def is_generic(t: object) -> bool:
    return t == ann.ANY or isinstance(t, (GenericArray, GridQueryT, VariadicTuple)) or t == ANY_FUNCTION


def _array_ndim(name: str | None, ndim_node: cst.BaseExpression | None, scope: Scope) -> int | None:
    if name == "array":
        ndim = 1 if ndim_node is None else scope.constant(ndim_node)
        return ndim if isinstance(ndim, int) and 1 <= ndim <= 4 else None
    if name and name.startswith("array") and name[5:-1].isdigit() and name.endswith("d"):
        return int(name[5:-1])
    return None


def param_annotation(node: cst.BaseExpression, scope: Scope) -> Param:
    """The type of a parameter annotation: a Type, ann.ANY or a GenericArray; raises
    ann.AnnotationError."""
    if isinstance(node, cst.Call):
        name = scope.api_attr(node.func)
        kw = {a.keyword.value if a.keyword else f"#{i}": a.value for i, a in enumerate(node.args)}
        dtype = kw.get("dtype", kw.get("#0"))
        if dtype is not None and scope.is_any(dtype):
            ndim = _array_ndim(name, kw.get("ndim"), scope)
            if ndim is not None:
                return GenericArray(ndim)
    if scope.api_attr(node) == "Function":
        return ANY_FUNCTION
    query = _grid_query(node, scope)
    if query is not None:
        return query
    if (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and scope.is_any(node.slice[0].slice.value)):
        ndim = _array_ndim(scope.api_attr(node.value), None, scope)
        if ndim is not None:
            return GenericArray(ndim)
    items = tuple_annotation(node)
    if items is not None:
        return _tuple_annotation(items, node, scope)
    return ann.annotation(node, scope)


def _tuple_annotation(items: list[cst.BaseExpression], node: cst.BaseExpression, scope: Scope) -> Param:
    """`tuple[wp.vec3, float]` (a tuple of those items) or `tuple[int, ...]` (any length, one item type)."""
    variadic = len(items) == 2 and isinstance(items[1], cst.Ellipsis)
    types = [ann.annotation(item, scope) for item in items[:1 if variadic else None]]
    for t, item in zip(types, items):
        if not isinstance(t, (Scalar, VecT, MatT)):
            raise ann.AnnotationError("a tuple parameter's items are scalars, vectors or matrices", item)
    if not types:
        raise ann.AnnotationError("a tuple annotation names its items' types", node)
    return VariadicTuple(types[0]) if variadic else tuple_struct(types)  # type: ignore[arg-type]  # checked above


def _grid_query(node: cst.BaseExpression, scope: Scope) -> GridQueryT | None:
    """`wp.HashGridQuery[wp.float32]` (or `wp.HashGridQuery` alone: any dtype); None for other annotations."""
    base = node.value if isinstance(node, cst.Subscript) else node
    if scope.api_attr(base) != "HashGridQuery":
        return None
    if not isinstance(node, cst.Subscript):
        return GridQueryT("")
    item = node.slice[0].slice if len(node.slice) == 1 else None
    dtype = ann.annotation(item.value, scope) if isinstance(item, cst.Index) else None
    if not (isinstance(dtype, Scalar) and dtype.name in ("float32", "float64")):
        raise ann.AnnotationError("a hash-grid query's dtype must be wp.float32 or wp.float64", node)
    return GridQueryT(dtype.name)


def accepts(want: Param, got: Param) -> bool:
    """Whether a concrete type fills a generic parameter."""
    if want == ann.ANY:
        return True
    if isinstance(want, GenericArray):
        return isinstance(got, ArrayT) and got.ndim == want.ndim
    if want == ANY_FUNCTION:
        return isinstance(got, FunctionT) and got.kind != ""
    if isinstance(want, GridQueryT):  # any grouping; the points' dtype where the annotation names one
        return isinstance(got, GridQueryT) and want.dtype in ("", got.dtype)
    if isinstance(want, VariadicTuple):
        items = tuple_items(got)
        return items is not None and all(t == want.item for t in items)
    return want == got


def instance_suffix(declared: Sequence[Param],
                    concrete: Sequence[Param]) -> str:
    """`float32_float64`: the dtypes the generic parameters took, in order."""
    parts: list[str] = []
    for want, got in zip(declared, concrete):
        if is_generic(want):
            parts.append(_spelled(got.dtype if isinstance(got, ArrayT) else got))
    return "_".join(parts)


def _spelled(t: Param) -> str:
    """A type as part of an identifier: `float32`, `vec3f`, `quatf`, `matrix_shape_5_5_dtype_float32`."""
    text = t.name if isinstance(t, Scalar) else str(t)
    return re.sub(r"\W+", "_", text).strip("_")
