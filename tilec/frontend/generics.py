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
from typing import Union, cast

import libcst as cst

from ..ir.types import ArrayT, FunctionT, GridQueryT, MatT, Scalar, TileT, VecT, tuple_items, tuple_struct
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
    """`tuple[int, ...]`: a tuple of any length whose items are all of one type; a bare `tuple`
    (item None): any tuple."""

    item: Scalar | VecT | MatT | None

    def __str__(self) -> str:
        return "tuple" if self.item is None else f"tuple[{self.item}, ...]"


@dataclass(frozen=True)
class ScalarKind:
    """`wp.Float`, `wp.Int`, `wp.Scalar`: any scalar of that kind (Warp's generic annotations)."""

    name: str  # "Float", "Int" or "Scalar"

    def admits(self, t: object) -> bool:
        if not isinstance(t, Scalar):
            return False
        return t.is_float if self.name == "Float" else t.is_integral if self.name == "Int" else t.kind != "bool"

    def __str__(self) -> str:
        return f"wp.{self.name}"


SCALAR_KINDS = ("Float", "Int", "Scalar")


@dataclass(frozen=True)
class GenericValue:
    """`wp.types.vector(3, wp.Int)`, `wp.types.matrix((2, 2), wp.Float)`: a vector or matrix of this
    shape whose dtype is of that kind."""

    shape: tuple[int, ...]  # (length,) of a vector, (rows, cols) of a matrix
    dtype: ScalarKind

    def admits(self, t: object) -> bool:
        shape = (t.length,) if isinstance(t, VecT) else (t.rows, t.cols) if isinstance(t, MatT) else None
        return shape == self.shape and self.dtype.admits(cast(VecT | MatT, t).dtype)

    def __str__(self) -> str:
        kind = "vector" if len(self.shape) == 1 else "matrix"
        return f"a {kind} of shape {self.shape} of {self.dtype}"


@dataclass(frozen=True)
class GenericTile:
    """`wp.tile[float]`: a tile of that dtype, any shape."""

    dtype: object  # the element type

    def __str__(self) -> str:
        return f"a {self.dtype} tile of any shape"


def generic_tile(node: cst.BaseExpression, scope: Scope) -> GenericTile | None:
    """`wp.tile[T]` with no extents, else None."""
    if not (isinstance(node, cst.Subscript) and scope.api_attr(node.value) in ("tile", "Tile") and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)):
        return None
    element = ann.element_type(node.slice[0].slice.value, scope)
    return GenericTile(element) if element is not None else None


Param = Union[ann.Declared, GenericArray, VariadicTuple, ScalarKind, GenericValue, GenericTile]  # what a parameter's annotation declares

ANY_FUNCTION = FunctionT("", "Function")  # `g: wp.Function`: the func is specialised per function passed


def is_generic(t: object) -> bool:
    return t == ann.ANY or isinstance(t, (GenericArray, GridQueryT, VariadicTuple, ScalarKind, GenericValue,
                                          GenericTile)) or t == ANY_FUNCTION


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
    if _names_tuple(node, scope):  # a bare `tuple` / `typing.Tuple`: any tuple
        return VariadicTuple(None)
    kinds = scalar_kind(node, scope) or generic_value(node, scope) or generic_tile(node, scope)
    return kinds if kinds is not None else ann.annotation(node, scope)


def _names_tuple(node: cst.BaseExpression, scope: Scope) -> bool:
    if isinstance(node, cst.Name):
        return (node.value == "tuple" and not scope.binds("tuple")) or node.value in scope.tuple_names
    return (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
            and node.value.value in scope.typing_aliases and node.attr.value == "Tuple")


def scalar_kind(node: cst.BaseExpression, scope: Scope) -> ScalarKind | None:
    name = scope.api_attr(node)
    return ScalarKind(name) if name in SCALAR_KINDS else None


def generic_value(node: cst.BaseExpression, scope: Scope) -> GenericValue | None:
    """`wp.types.vector(3, wp.Int)` / `wp.types.matrix((2, 2), wp.Float)` (by position or keyword)."""
    if not isinstance(node, cst.Call) or scope.api_attr(node.func) not in ("vector", "matrix"):
        return None
    first = "length" if scope.api_attr(node.func) == "vector" else "shape"
    kw = {a.keyword.value if a.keyword else (first, "dtype")[min(i, 1)]: a.value for i, a in enumerate(node.args)}
    kind = scalar_kind(kw["dtype"], scope) if "dtype" in kw else None
    if kind is None or first not in kw:
        return None
    shape = scope.constant(kw[first])
    shape = (shape,) if isinstance(shape, int) and first == "length" else shape
    if not (isinstance(shape, tuple) and len(shape) == (1 if first == "length" else 2)
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)):
        raise ann.AnnotationError(f"`{scope.api_attr(node.func)}`: the {first} must be a positive compile-time "
                                  "integer" + ("" if first == "length" else " pair"), kw[first])
    return GenericValue(cast(tuple[int, ...], shape), kind)


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
    if isinstance(want, (ScalarKind, GenericValue)):
        return want.admits(got)
    if isinstance(want, GenericTile):
        return isinstance(got, TileT) and got.dtype == want.dtype
    if isinstance(want, VariadicTuple):
        items = tuple_items(got)
        return items is not None and (want.item is None or all(t == want.item for t in items))
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
