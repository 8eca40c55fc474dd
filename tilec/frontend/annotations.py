"""Types written in source: dtypes and parameter annotations.

Accepted annotations: scalars (`int`, `float`, `wp.float64`, ...), arrays
(`wp.array(dtype=T[, ndim=N])`, `wp.array1d..4d(dtype=T)`), tiles
(`wp.tile(dtype=T, shape=(M, N))`, `tl.Tile[T, "M", 8]`, `wp.tile[T, M, N]`)
and `typing.Any` (the func is specialised per call site).
"""
from __future__ import annotations

import libcst as cst

from ..ir.types import BUILTIN_DTYPE_NAMES, DTYPE_NAMES, ArrayT, Scalar, TileT
from . import consts
from .resolve import Scope

ANY = "any"  # marker: the parameter takes its type from each call site


class AnnotationError(Exception):
    def __init__(self, message: str, node: cst.CSTNode):
        super().__init__(message)
        self.message = message
        self.node = node


def dtype(node: cst.BaseExpression, scope: Scope) -> Scalar | None:
    """`float`, `int`, `bool`, `wp.float32`, `tl.int64`, from-imported `float16` -> Scalar."""
    if isinstance(node, cst.Name) and node.value in BUILTIN_DTYPE_NAMES and node.value not in scope.api_names:
        return BUILTIN_DTYPE_NAMES[node.value]
    attr = scope.api_attr(node)
    if attr is not None and attr in DTYPE_NAMES:
        return DTYPE_NAMES[attr]
    return None


def _kwargs(call: cst.Call) -> dict:
    out = {}
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else f"#{i}"
        out[key] = arg.value
    return out


def annotation(node: cst.BaseExpression, scope: Scope):
    """The Type (or ANY) an annotation denotes; raises AnnotationError."""
    if scope.is_any(node):
        return ANY
    scalar = dtype(node, scope)
    if scalar is not None:
        return scalar
    if isinstance(node, cst.Call):
        return _call_annotation(node, scope)
    if isinstance(node, cst.Subscript):
        return _subscript_annotation(node, scope)
    raise AnnotationError("unsupported type annotation", node)


def _need_dtype(node, scope: Scope, where: cst.CSTNode) -> Scalar:
    if node is None:
        raise AnnotationError("missing `dtype=`", where)
    d = dtype(node, scope)
    if d is None:
        raise AnnotationError("not a dtype (expected float, int, wp.float32, ...)", node)
    return d


def _call_annotation(node: cst.Call, scope: Scope):
    name = scope.api_attr(node.func)
    kw = _kwargs(node)
    if name == "array" or (name and name.startswith("array") and name[5:-1].isdigit()):
        d = _need_dtype(kw.get("dtype", kw.get("#0")), scope, node)
        if name == "array":
            ndim_node = kw.get("ndim")
            ndim = 1 if ndim_node is None else scope.constant(ndim_node)
        else:
            ndim = int(name[5:-1])
        if not isinstance(ndim, int) or not 1 <= ndim <= 4:
            raise AnnotationError("arrays have 1 to 4 dimensions", node)
        return ArrayT(d, ndim)
    if name == "tile":
        d = _need_dtype(kw.get("dtype"), scope, node)
        shape_node = kw.get("shape")
        if shape_node is None:
            raise AnnotationError("missing `shape=`", node)
        shape = _dims(shape_node.elements if isinstance(shape_node, cst.Tuple) else [shape_node], scope)
        return TileT(d, shape)
    raise AnnotationError("unsupported type annotation", node)


def _subscript_annotation(node: cst.Subscript, scope: Scope):
    name = scope.api_attr(node.value)
    if name not in ("Tile", "tile"):
        raise AnnotationError("unsupported type annotation", node)
    items = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    if len(items) < 2:
        raise AnnotationError("a tile annotation needs a dtype and at least one extent", node)
    d = _need_dtype(items[0], scope, node)
    return TileT(d, _dims(items[1:], scope))


def _dims(items, scope: Scope) -> tuple:
    dims = []
    for item in items:
        value_node = item.value if isinstance(item, cst.Element) else item
        if isinstance(value_node, cst.SimpleString):
            name = value_node.evaluated_value
            if not name.isidentifier():
                raise AnnotationError("a shape variable must be an identifier", value_node)
            dims.append(name)
            continue
        v = scope.constant(value_node)
        if v is consts.NOT_CONST or not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise AnnotationError("a tile extent must be a positive constant or a \"Name\"", value_node)
        dims.append(v)
    if not 1 <= len(dims) <= 4:
        raise AnnotationError("tiles have 1 to 4 dimensions", items[0])
    return tuple(dims)
