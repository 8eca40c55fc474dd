"""Types written in source: dtypes and parameter annotations.

Accepted annotations: scalars (`int`, `float`, `bool`, `wp.float64`, `wp.uint64`,
`wp.bfloat16`, ...), arrays in every spelling Warp accepts (`wp.array(dtype=T[, ndim=N])`,
`wp.array1d..4d(dtype=T)`, `wp.array[T]`, `wp.array1d..4d[T]`), tiles
(`wp.tile(dtype=T, shape=(M, N))`, `tl.Tile[T, "M", 8]`, `wp.tile[T, M, N]`),
`typing.Any` (the func is specialised per call site), and module-level aliases of any of these
(`dt = wp.float64`, `Mat = wp.array2d[dt]`). Indexed arrays (`wp.indexedarray[T]`,
`wp.indexedarray(dtype=T, ndim=N)`, `wp.indexedarray2d(dtype=T)`; `indexedarray2d[T]` is not Warp's)
are `IndexedT`:
kernel parameters read element by element (frontend/indexed.py). Fabric arrays
(`wp.fabricarray`, `wp.indexedfabricarray`) are diagnostics naming them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ..ir.types import BUILTIN_DTYPE_NAMES, DTYPE_NAMES, ArrayT, Scalar, TileT
from . import consts

if TYPE_CHECKING:  # resolve imports this module to read type aliases; only the type is needed
    from .resolve import Scope

ANY = "any"  # marker: the parameter takes its type from each call site


@dataclass(frozen=True)
class IndexedT:
    """`wp.indexedarrayNd[T]`: an array of this dtype and ndim read through one index array per
    dimension (Warp's indexed array). Only the front end sees it: a kernel parameter of this type
    becomes the base array and its index arrays (frontend/indexed.py)."""

    dtype: Scalar
    ndim: int

    def __str__(self) -> str:
        return f"indexedarray{self.ndim}d({self.dtype})"


class AnnotationError(Exception):
    def __init__(self, message: str, node: cst.CSTNode):
        super().__init__(message)
        self.message = message
        self.node = node


# Array kinds Warp has and tilec does not compile, with what to write instead.
UNSUPPORTED_ARRAYS = {
    "fabricarray": "Fabric arrays (`wp.fabricarray`) are not supported: tilec compiles kernels over "
                   "strided arrays only",
    "indexedfabricarray": "Fabric arrays (`wp.indexedfabricarray`) are not supported: tilec compiles "
                          "kernels over strided arrays only",
}


def _array_kind(name: str | None) -> tuple:
    """("array"|"indexedarray"|..., ndim or None) for `array`, `array2d`, `indexedarray3d`, ..."""
    if not name:
        return None, None
    for kind in ("indexedfabricarray", "fabricarray", "indexedarray", "array"):
        if name == kind:
            return kind, None
        rest = name[len(kind):] if name.startswith(kind) else ""
        if len(rest) == 2 and rest[0] in "1234" and rest[1] == "d":
            return kind, int(rest[0])
    return None, None


def dtype(node: cst.BaseExpression, scope: Scope) -> Scalar | None:
    """`float`, `int`, `bool`, `wp.float32`, `tl.int64`, from-imported `float16`, an alias
    constant `dt = wp.float64` -> Scalar."""
    if isinstance(node, cst.Name) and node.value in scope.type_aliases:
        aliased = scope.type_aliases[node.value]
        return aliased if isinstance(aliased, Scalar) else None
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
    if isinstance(node, cst.Name) and node.value in scope.type_aliases:
        return scope.type_aliases[node.value]
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
    kind, fixed_ndim = _array_kind(name)
    if kind in UNSUPPORTED_ARRAYS:
        raise AnnotationError(UNSUPPORTED_ARRAYS[kind], node)
    if kind in ("array", "indexedarray"):
        d = _need_dtype(kw.get("dtype", kw.get("#0")), scope, node)
        if fixed_ndim is None:
            ndim_node = kw.get("ndim")
            ndim = 1 if ndim_node is None else scope.constant(ndim_node)
            if not isinstance(ndim, int) or isinstance(ndim, bool) or not 1 <= ndim <= 4:
                raise AnnotationError("arrays have 1 to 4 dimensions (`ndim=` must be a constant 1..4)",
                                      ndim_node)
        else:
            ndim = fixed_ndim
        return ArrayT(d, ndim) if kind == "array" else IndexedT(d, ndim)
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
    items = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    kind, fixed_ndim = _array_kind(name)
    if kind in UNSUPPORTED_ARRAYS:
        raise AnnotationError(UNSUPPORTED_ARRAYS[kind], node)
    if kind == "indexedarray" and fixed_ndim is not None:
        raise AnnotationError(f"`wp.{name}[...]` is not an annotation Warp accepts (`{name}` is a function); "
                              f"write `wp.{name}(dtype=...)`", node)
    if kind in ("array", "indexedarray"):  # wp.array[T], wp.array2d[T]: Warp's subscript spelling
        if len(items) != 1 or len(node.slice) != 1:
            raise AnnotationError(f"`{name}[...]` takes one dtype, e.g. {name}[float]", node)
        made = ArrayT if kind == "array" else IndexedT
        return made(_need_dtype(items[0], scope, node), fixed_ndim or 1)
    if name not in ("Tile", "tile"):
        raise AnnotationError("unsupported type annotation", node)
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
