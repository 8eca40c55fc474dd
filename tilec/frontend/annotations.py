"""Types written in source: dtypes and parameter annotations.

Accepted annotations: scalars (`int`, `float`, `bool`, `wp.float64`, `wp.uint64`,
`wp.bfloat16`, ...), arrays in every spelling Warp accepts (`wp.array(dtype=T[, ndim=N])`,
`wp.array1d..4d(dtype=T)`, `wp.array[T]`, `wp.array1d..4d[T]`), tiles
(`wp.tile(dtype=T, shape=(M, N))`, `tl.Tile[T, "M", 8]`, `wp.tile[T, M, N]`),
`typing.Any` (the func is specialised per call site), Warp's vector and matrix types (`wp.vec3`,
`wp.mat22d`, `wp.quat`, `wp.transform`, `wp.spatial_vector`, ... and declared ones:
`wp.vec(length=5, dtype=float)`, `wp.types.matrix(shape=(2, 3), dtype=wp.float64)`), which may
also be the dtype of an array or a tile, and module-level aliases of any of these
(`dt = wp.float64`, `Mat = wp.array2d[dt]`, `vec5 = wp.vec(5, float)`). Indexed arrays of scalars
(`wp.indexedarray[T]`, `wp.indexedarray(dtype=T, ndim=N)`, `wp.indexedarray2d(dtype=T)`;
`indexedarray2d[T]` is not Warp's) are `IndexedT`: kernel parameters read element by element
(frontend/indexed.py). Fabric arrays (`wp.fabricarray`, `wp.indexedfabricarray`) are diagnostics
naming them.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Union, cast

import libcst as cst

from ..ir.types import (BUILTIN_DTYPE_NAMES, BUILTIN_STRUCTS, DTYPE_NAMES, VALUE_TYPE_NAMES, ArrayT, Dim, Element, MatT, Scalar, StackT,
                        StructT, TEXTURES, TileT, Type, VecT, describe)
from ..ir.types import IndexedT as IndexedT  # declared with the IR's types (a struct field may be one)
from . import consts

if TYPE_CHECKING:  # resolve imports this module to read type aliases; only the type is needed
    from .resolve import Scope

ANY = "any"  # marker: the parameter takes its type from each call site


Declared = Union[Type, IndexedT, str]  # what an annotation denotes: a type, an indexed array, or ANY
TEXTURE_TYPES = {"Texture1D": 1, "Texture2D": 2, "Texture3D": 3}


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


def _array_kind(name: str | None) -> tuple[str | None, int | None]:
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


def element_type(node: cst.BaseExpression, scope: Scope) -> Element | None:
    """A scalar dtype, a vector/matrix type (`wp.vec3`, an alias `vec5 = wp.vec(5, float)`,
    an inline `wp.types.vector(length=5, dtype=float)`) or a @wp.struct class
    -> Scalar | VecT | MatT | StructT, or None."""
    scalar = dtype(node, scope)
    if scalar is not None:
        return scalar
    if isinstance(node, cst.Name) and node.value in scope.type_aliases:
        aliased = scope.type_aliases[node.value]
        return aliased if isinstance(aliased, (VecT, MatT)) else None
    if isinstance(node, cst.Name) and node.value in scope.structs:  # a @wp.struct class
        struct: StructT = scope.structs[node.value]
        return struct
    attr = scope.api_attr(node)
    if attr is not None and attr in VALUE_TYPE_NAMES:
        return VALUE_TYPE_NAMES[attr]
    if attr is not None and attr in BUILTIN_STRUCTS:  # `wp.MeshQueryPoint`: a builtin's result
        return BUILTIN_STRUCTS[attr]
    if isinstance(node, cst.Call) and scope.api_attr(node.func) in DECLARED_VALUE_TYPES:
        return _declared_value_type(node, scope)
    if isinstance(node, cst.Call) and scope.api_attr(node.func) in DECLARED_ROTATION_TYPES and \
            isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Attribute) and \
            node.func.value.attr.value == "types":  # (`wp.transformation(...)` is the builtin constructor)
        return _declared_rotation_type(node, scope)
    return None


# `wp.types.transformation(dtype=T)` / `wp.types.quaternion(dtype=T)`: Warp's transform and quat types of T
DECLARED_ROTATION_TYPES = {"transformation": "transform", "quaternion": "quat"}


def _declared_rotation_type(node: cst.Call, scope: Scope) -> VecT | None:
    kw = _kwargs(node)
    if set(kw) - {"dtype", "#0"} or len(kw) != 1:
        return None  # components: a constructor, not a type
    d = dtype(kw.get("dtype", kw.get("#0")), scope)  # type: ignore[arg-type]  # one of the two is there
    suffix = {"float16": "h", "float32": "f", "float64": "d"}.get(d.name if d is not None else "")
    if suffix is None:
        raise AnnotationError("a transformation's or quaternion's dtype is float16, float32 or float64",
                              kw.get("dtype", kw.get("#0")) or node)
    named = VALUE_TYPE_NAMES[DECLARED_ROTATION_TYPES[str(scope.api_attr(node.func))] + suffix]
    assert isinstance(named, VecT), named
    return named


DECLARED_VALUE_TYPES = ("vec", "vector", "mat", "matrix")  # wp.vec / wp.types.vector / wp.mat / wp.types.matrix


def _declared_value_type(node: cst.Call, scope: Scope) -> VecT | MatT:
    """`wp.vec(length=5, dtype=float)`, `wp.vec(5, float)`, `wp.types.matrix(shape=(2, 3), dtype=T)`."""
    name = scope.api_attr(node.func)
    kw = _kwargs(node)
    is_vec = name in ("vec", "vector")
    size_node = kw.get("length" if is_vec else "shape", kw.get("#0"))
    d = _need_dtype(kw.get("dtype", kw.get("#1")), scope, node)
    if size_node is None:
        raise AnnotationError(f"missing `{'length' if is_vec else 'shape'}=`", node)
    size = scope.constant(size_node)
    if is_vec:
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise AnnotationError("a vector length must be a positive integer constant", size_node)
        return VecT(d, size)
    if (not isinstance(size, tuple) or len(size) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in size)):
        raise AnnotationError("a matrix shape must be a constant pair of positive integers, e.g. (3, 3)",
                              size_node)
    return MatT(d, size[0], size[1])


def _kwargs(call: cst.Call) -> dict[str, cst.BaseExpression]:
    out = {}
    for i, arg in enumerate(call.args):
        key = arg.keyword.value if arg.keyword is not None else f"#{i}"
        out[key] = arg.value
    return out


def annotation(node: cst.BaseExpression, scope: Scope) -> Declared:
    """The Type (or ANY) an annotation denotes; raises AnnotationError."""
    return read_annotation(node, scope)


def read_annotation(node: cst.BaseExpression, scope: Scope) -> Declared:
    """The Type (or ANY) an annotation denotes, vector and matrix types included."""
    if scope.is_any(node):
        return ANY
    if scope.api_attr(node) in TEXTURE_TYPES:  # wp.Texture3D: a texture's id (textures.py)
        return TEXTURES[TEXTURE_TYPES[cast(str, scope.api_attr(node))]]
    if isinstance(node, cst.Name) and node.value in scope.type_aliases:
        return scope.type_aliases[node.value]
    element = element_type(node, scope)
    if element is not None:
        return element
    if isinstance(node, cst.Call):
        return _call_annotation(node, scope)
    referenced = ref_target(node, scope)
    if referenced is not None:  # wp.ref[T]: a func's T by reference (check.py marks it)
        return read_annotation(referenced, scope)
    if isinstance(node, cst.Subscript):
        return _subscript_annotation(node, scope)
    raise AnnotationError("unsupported type annotation", node)


def ref_target(node: cst.BaseExpression | None, scope: Scope) -> cst.BaseExpression | None:
    """T of a `wp.ref[T]` annotation (Warp 1.19: a func's parameter whose updates the caller's
    variable takes), else None."""
    if isinstance(node, cst.Subscript) and scope.api_attr(node.value) == "ref" and len(node.slice) == 1 and \
            isinstance(node.slice[0].slice, cst.Index):
        return node.slice[0].slice.value
    return None


def by_reference(p: cst.Param, scope: Scope) -> bool:
    """Whether a parameter is annotated `wp.ref[T]`."""
    return ref_target(p.annotation.annotation if p.annotation is not None else None, scope) is not None


def _need_dtype(node: cst.BaseExpression | None, scope: Scope, where: cst.CSTNode) -> Scalar:
    if node is None:
        raise AnnotationError("missing `dtype=`", where)
    d = dtype(node, scope)
    if d is None:
        raise AnnotationError("not a dtype (expected float, int, wp.float32, ...)", node)
    return d


def _need_element(node: cst.BaseExpression | None, scope: Scope, where: cst.CSTNode) -> Element:
    """The dtype of an array or tile: a scalar, vector or matrix type."""
    if node is None:
        raise AnnotationError("missing `dtype=`", where)
    d = element_type(node, scope)
    if d is None:
        raise AnnotationError("not a dtype (expected float, int, wp.float32, wp.vec3, ...)", node)
    return d


def _indexed_element(d: Element, where: cst.CSTNode) -> Scalar | VecT | MatT:
    if not isinstance(d, (Scalar, VecT, MatT)):
        raise AnnotationError(f"an indexed array holds scalars, vectors or matrices, not {describe(d)}", where)
    return d


def _call_annotation(node: cst.Call, scope: Scope) -> Type | IndexedT:
    name = scope.api_attr(node.func)
    kw = _kwargs(node)
    kind, fixed_ndim = _array_kind(name)
    if kind in UNSUPPORTED_ARRAYS:
        raise AnnotationError(UNSUPPORTED_ARRAYS[kind], node)
    if kind in ("array", "indexedarray"):
        d = _need_element(kw.get("dtype", kw.get("#0")), scope, node)
        extra = [k for k in kw if k.startswith("#") and k != "#0"] + (["ndim"] if fixed_ndim and "ndim" in kw else [])
        if extra:  # silently dropping `wp.array(float, 2)`'s 2 or array2d's ndim=3 would change the type
            raise AnnotationError(f"`{name}(...)` takes `dtype=`" + ("" if fixed_ndim else " and `ndim=`") +
                                  " only", kw[extra[0]])
        if fixed_ndim is None:
            ndim_node = kw.get("ndim")
            ndim = 1 if ndim_node is None else scope.constant(ndim_node)
            if not isinstance(ndim, int) or isinstance(ndim, bool) or not 1 <= ndim <= 4:
                raise AnnotationError("arrays have 1 to 4 dimensions (`ndim=` must be a constant 1..4)",
                                      ndim_node)  # type: ignore[arg-type]  # not None: None gives ndim 1
        else:
            ndim = fixed_ndim
        return ArrayT(d, ndim) if kind == "array" else IndexedT(_indexed_element(d, node), ndim)
    if name == "tile":
        d = _need_element(kw.get("dtype"), scope, node)
        shape_node = kw.get("shape")
        if shape_node is None:
            raise AnnotationError("missing `shape=`", node)
        shape = _dims(shape_node.elements if isinstance(shape_node, cst.Tuple) else [shape_node], scope)
        return TileT(d, shape)
    if name == "tile_stack":  # a func parameter holding a block stack (of scalars, vectors or matrices)
        d = _need_element(kw.get("dtype", kw.get("#0")), scope, node)
        if not isinstance(d, (Scalar, VecT, MatT)):
            raise AnnotationError(f"a tile stack parameter holds scalars, vectors or matrices, not {describe(d)}",
                                  kw.get("dtype", kw.get("#0")) or node)
        capacity_node = kw.get("capacity", kw.get("#1"))
        capacity = None if capacity_node is None else scope.constant(capacity_node)
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
            raise AnnotationError("a tile stack annotation needs `capacity=`, a positive constant",
                                  capacity_node or node)
        return StackT(d, capacity)
    raise AnnotationError("unsupported type annotation", node)


def _subscript_annotation(node: cst.Subscript, scope: Scope) -> Type | IndexedT:
    name = scope.api_attr(node.value)
    items = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
    kind, fixed_ndim = _array_kind(name)
    if kind in UNSUPPORTED_ARRAYS:
        raise AnnotationError(UNSUPPORTED_ARRAYS[kind], node)
    if kind == "indexedarray" and fixed_ndim is not None:
        raise AnnotationError(f"`wp.{name}[...]` is not an annotation Warp accepts (`{name}` is a function); "
                              f"write `wp.{name}(dtype=...)`", node)
    if kind in ("array", "indexedarray"):  # wp.array[T], wp.array2d[T]: Warp's subscript spelling
        ndim = fixed_ndim or 1
        if fixed_ndim is None and len(items) == 2 and len(node.slice) == 2:  # wp.array[T, Literal[2]]
            given = scope.literal_value(items[1])
            given = scope.constant(items[1]) if given is consts.NOT_CONST else given
            if not isinstance(given, int) or isinstance(given, bool) or not 1 <= given <= 4:
                raise AnnotationError(f"`{name}[T, N]`: N must be Literal[n] or an integer n from 1 to 4",
                                      items[1])
            ndim = given
        elif len(items) != 1 or len(node.slice) != 1:
            raise AnnotationError(f"`{name}[...]` takes one dtype, e.g. {name}[float]"
                                  + ("" if fixed_ndim else f", or a dtype and Literal[ndim], e.g. {name}[float, Literal[2]]"),
                                  node)
        d = _need_element(items[0], scope, node)
        return ArrayT(d, ndim) if kind == "array" else IndexedT(_indexed_element(d, node), ndim)
    if name not in ("Tile", "tile"):
        raise AnnotationError("unsupported type annotation", node)
    if len(items) < 2:
        raise AnnotationError("a tile annotation needs a dtype and at least one extent", node)
    d = _need_element(items[0], scope, node)
    return TileT(d, _dims(items[1:], scope))


def _dims(items: Sequence[cst.BaseElement | cst.BaseExpression], scope: Scope) -> tuple[Dim, ...]:
    dims: list[Dim] = []
    for item in items:
        value_node = item.value if isinstance(item, cst.Element) else item
        if isinstance(value_node, cst.SimpleString):
            name = value_node.evaluated_value
            if not isinstance(name, str) or not name.isidentifier():  # b"M" is bytes: no name
                raise AnnotationError("a shape variable must be an identifier", value_node)
            dims.append(name)
            continue
        v = scope.literal_value(value_node)  # type: ignore[arg-type]  # `wp.tile[float, Literal[8], Literal[4]]`
        if v is consts.NOT_CONST:
            v = scope.constant(value_node)  # type: ignore[arg-type]  # a starred element: NOT_CONST, refused below
        if v is consts.NOT_CONST or not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise AnnotationError("a tile extent must be a positive constant or a \"Name\"", value_node)
        dims.append(v)
    if not 1 <= len(dims) <= 4:
        raise AnnotationError("tiles have 1 to 4 dimensions", items[0])
    return tuple(dims)

