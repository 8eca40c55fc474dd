"""Value types of the tile language: scalars, vectors and matrices, arrays, tiles.

Types are small frozen dataclasses compared by value. A tile dimension is an
`int`, or a `str` naming a shape variable while a shape-annotated func body is
checked generically.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import prod
from typing import Union

Dim = Union[int, str]


@dataclass(frozen=True)
class Scalar:
    name: str  # canonical dtype name, e.g. "float32"
    kind: str  # "float", "int", "uint" or "bool"
    bits: int  # storage width
    ctype: str  # C++ spelling

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integral(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def nbytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def storage_only(self) -> bool:
        """A float kept in memory at this width but computed in float32 (half, bfloat16)."""
        return self.kind == "float" and self.bits == 16

    def __str__(self) -> str:
        return self.name


BOOL = Scalar("bool", "bool", 8, "bool")
INT8 = Scalar("int8", "int", 8, "int8_t")
UINT8 = Scalar("uint8", "uint", 8, "uint8_t")
INT16 = Scalar("int16", "int", 16, "int16_t")
UINT16 = Scalar("uint16", "uint", 16, "uint16_t")
INT32 = Scalar("int32", "int", 32, "int32_t")
UINT32 = Scalar("uint32", "uint", 32, "uint32_t")
INT64 = Scalar("int64", "int", 64, "int64_t")
UINT64 = Scalar("uint64", "uint", 64, "uint64_t")
FLOAT16 = Scalar("float16", "float", 16, "tl::half")
BFLOAT16 = Scalar("bfloat16", "float", 16, "tl::bfloat16")
FLOAT32 = Scalar("float32", "float", 32, "float")
FLOAT64 = Scalar("float64", "float", 64, "double")

# Warp's textures (wp.Texture1D, 2D, 3D): the id of a texture the loader checked (runtime texture.h).
# Their own kind: no arithmetic, conversion or construction makes one, so a kernel's texture is always
# one a launch passed (a parameter, a struct's field, an array of structs' field) or the empty one (0).
TEXTURES = {n: Scalar(f"texture{n}d", "texture", 64, "uint64_t") for n in (1, 2, 3)}


def texture_ndim(t: object) -> int:
    """A texture type's dimensionality (texture3d: 3); 0 for any other type."""
    return next((n for n, texture in TEXTURES.items() if t == texture), 0)

SCALARS = {s.name: s for s in (BOOL, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT16,
                                BFLOAT16, FLOAT32, FLOAT64)}
# Spellings accepted in source, as attributes of the API module or as builtins.
DTYPE_NAMES = {
    **SCALARS,
    "int": INT32,
    "float": FLOAT32,
    "float16": FLOAT16,
    "half": FLOAT16,
    "handle": UINT64,  # Warp's type for a Mesh's, Volume's or Bvh's id: a uint64 to kernels
}
BUILTIN_DTYPE_NAMES = {"int": INT32, "float": FLOAT32, "bool": BOOL}


# Warp's dtype suffixes of its named vector and matrix types: vec3f, mat22d, vec4ub, ...
VALUE_SUFFIXES = {"b": INT8, "ub": UINT8, "s": INT16, "us": UINT16, "i": INT32, "ui": UINT32, "l": INT64,
                  "ul": UINT64, "h": FLOAT16, "f": FLOAT32, "d": FLOAT64}
_SUFFIX_OF = {scalar.name: suffix for suffix, scalar in VALUE_SUFFIXES.items()}


@dataclass(frozen=True)
class VecT:
    """A fixed-length vector value: Warp's vecN, quat, transform, spatial_vector, or a
    user-declared `wp.vec(length=n, dtype=T)`. The family decides which builtins apply
    (`quat_rotate` takes a quat, not any vec4) and how the type is named."""

    dtype: Scalar  # component type
    length: int
    family: str = "vec"  # "vec", "quat", "transform" or "spatial_vector"

    def _key(self) -> tuple[Scalar, int, str]:
        # Warp's types_equal: a spatial_vector is a vector of 6 (its own name only); quats and transforms differ
        return self.dtype, self.length, "vec" if self.family == "spatial_vector" else self.family

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VecT) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def nbytes(self) -> int:
        return self.length * self.dtype.nbytes

    @property
    def ctype(self) -> str:
        """Every family is one standard-layout struct of `length` components, as Warp stores it."""
        return f"tl::vec<{self.length}, {self.dtype.ctype}>"

    def __str__(self) -> str:
        suffix = _SUFFIX_OF.get(self.dtype.name)  # bfloat16 has no suffix in Warp: no named type
        if self.family != "vec":
            return self.family + suffix if suffix else f"{self.family}(dtype={self.dtype})"
        if 2 <= self.length <= 4 and suffix:
            return f"vec{self.length}{suffix}"
        return f"vector(length={self.length}, dtype={self.dtype})"


@dataclass(frozen=True)
class MatT:
    """A fixed-shape matrix value, row-major: Warp's matMN, spatial_matrix, or a user-declared
    `wp.mat(shape=(m, n), dtype=T)`."""

    dtype: Scalar  # component type
    rows: int
    cols: int
    family: str = "mat"  # "mat" or "spatial_matrix"

    def _key(self) -> tuple[Scalar, int, int]:
        return self.dtype, self.rows, self.cols  # Warp's types_equal: a spatial_matrix is a 6x6 matrix

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MatT) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def length(self) -> int:
        return self.rows * self.cols

    @property
    def nbytes(self) -> int:
        return self.length * self.dtype.nbytes

    @property
    def ctype(self) -> str:
        """A standard-layout struct of rows * cols components, row-major, as Warp stores it."""
        return f"tl::mat<{self.rows}, {self.cols}, {self.dtype.ctype}>"

    def __str__(self) -> str:
        suffix = _SUFFIX_OF.get(self.dtype.name)
        if self.family != "mat":
            return self.family + suffix if suffix else f"{self.family}(dtype={self.dtype})"
        if self.rows == self.cols and 2 <= self.rows <= 4 and suffix:
            return f"mat{self.rows}{self.cols}{suffix}"
        return f"matrix(shape=({self.rows}, {self.cols}), dtype={self.dtype})"


ValueT = Union[VecT, MatT]


@dataclass(frozen=True)
class IndexedT:
    """`wp.indexedarrayNd[T]`: an array of this dtype and ndim read through one index array per
    dimension (Warp's indexed array). Only the front end sees it: a kernel parameter or a struct
    field of this type becomes the base array and its index arrays (frontend/indexed.py,
    ir/structs.py)."""

    dtype: Scalar | VecT | MatT
    ndim: int

    def __str__(self) -> str:
        return f"indexedarray{self.ndim}d({self.dtype})"


@dataclass(frozen=True)
class StructT:
    """A `@wp.struct` type: named fields in declaration order (scalars, arrays, nested structs).
    Only the frontend holds struct values: it flattens them into one symbol per scalar or array
    leaf (frontend/structs.py), so the IR past the checker never carries a StructT."""

    name: str  # the class name in the user's file
    fields: tuple[tuple[str, FieldT], ...]  # in declaration order

    def field(self, name: str) -> FieldT | None:
        """The type of field `name`, or None."""
        return dict(self.fields).get(name)

    def __str__(self) -> str:
        return self.name


def tuple_struct(items: "list[Type] | tuple[Type, ...]") -> StructT:
    """A tuple a func takes (`values: tuple[wp.vec3, float]`) or is passed: a struct whose fields are
    its items, named "0", "1", ..., so that it flattens into `t.0`, `t.1`, the variables a tuple
    local has (frontend/tuple_values.py). No user struct has this name (not an identifier)."""
    return StructT(f"tuple[{', '.join(str(t) for t in items)}]", tuple((str(k), t) for k, t in enumerate(items)))


def tuple_items(t: object) -> "list[FieldT] | None":
    """The item types of a tuple_struct, else None."""
    if isinstance(t, StructT) and t.name.startswith("tuple["):
        return [ft for _, ft in t.fields]
    return None


# What an array or a tile holds. An ArrayT element is an array descriptor: the leaf of an array field
# of an array of structs (`ps[i].data`, ir/structs.py), which element reads give as an array.
Element = Union[Scalar, VecT, MatT, StructT, "ArrayT"]


def _named_value_types() -> dict[str, VecT | MatT]:
    """Warp's named vector and matrix types, with and without a dtype suffix."""
    out: dict[str, VecT | MatT] = {}
    floats = {"h": FLOAT16, "f": FLOAT32, "d": FLOAT64}
    for n in (2, 3, 4):
        for suffix, scalar in VALUE_SUFFIXES.items():
            out[f"vec{n}{suffix}"] = VecT(scalar, n)
        for suffix, scalar in floats.items():
            out[f"mat{n}{n}{suffix}"] = MatT(scalar, n, n)
        out[f"vec{n}"] = VecT(FLOAT32, n)
        out[f"mat{n}{n}"] = MatT(FLOAT32, n, n)
    for suffix, scalar in [("", FLOAT32), *floats.items()]:
        out[f"quat{suffix}"] = VecT(scalar, 4, "quat")
        out[f"transform{suffix}"] = VecT(scalar, 7, "transform")
        out[f"spatial_vector{suffix}"] = VecT(scalar, 6, "spatial_vector")
        out[f"spatial_matrix{suffix}"] = MatT(scalar, 6, 6, "spatial_matrix")
    return out


VALUE_TYPE_NAMES = _named_value_types()

# Warp's structs its builtins return (`wp.MeshQueryPoint`, ...): the fields kernels read, in Warp's
# order. tilec/library/warp_math.py builds them; a kernel may name them as types (`wp.MeshQueryRay`).
BUILTIN_STRUCTS = {
    "MeshQueryPoint": StructT("MeshQueryPoint", (("result", BOOL), ("sign", FLOAT32), ("face", INT32),
                                                 ("u", FLOAT32), ("v", FLOAT32))),
    "MeshQueryRay": StructT("MeshQueryRay", (("result", BOOL), ("sign", FLOAT32), ("face", INT32), ("t", FLOAT32),
                                             ("u", FLOAT32), ("v", FLOAT32), ("normal", VecT(FLOAT32, 3)))),
}
# The builtins returning one of them (frontend/mesh_queries.py), by the struct they return.
BUILTIN_STRUCT_CALLS = {"mesh_query_point": "MeshQueryPoint", "mesh_query_point_no_sign": "MeshQueryPoint",
                        "mesh_query_point_sign_normal": "MeshQueryPoint",
                        "mesh_query_point_sign_winding_number": "MeshQueryPoint", "mesh_query_ray": "MeshQueryRay",
                        "mesh_query_point_sign_parity": "MeshQueryPoint",
                        "mesh_query_furthest_point_no_sign": "MeshQueryPoint"}


def component_dtype(t: Type) -> Scalar | None:
    """The scalar a scalar, vector or matrix type is made of; None for other types."""
    if isinstance(t, Scalar):
        return t
    if isinstance(t, (VecT, MatT)):
        return t.dtype
    return None


@dataclass(frozen=True)
class ArrayT:
    dtype: Element  # element type (an ArrayT: an array of array descriptors)
    ndim: int  # number of dimensions, 1..4

    @property
    def nbytes(self) -> int:
        """Bytes of the descriptor (runtime core.h tl::Array<T, N>: a pointer, N extents, N strides)."""
        return 8 + 16 * self.ndim

    @property
    def ctype(self) -> str:
        """The descriptor's C++ type, as an element of an array of array descriptors."""
        assert not isinstance(self.dtype, StructT), "arrays of structs are field views past the checker"
        return f"tl::Array<{self.dtype.ctype}, {self.ndim}>"

    def __str__(self) -> str:
        return f"array{self.ndim}d({self.dtype})"


@dataclass(frozen=True)
class TileT:
    dtype: Element  # element type
    shape: tuple[Dim, ...]  # static extents; str entries are shape variables

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_concrete(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    # Computed once per type object (every local's declaration, loop and layout asks again).
    @cached_property
    def size(self) -> int:
        return prod(d for d in self.shape if isinstance(d, int)) if self.is_concrete else -1

    @cached_property
    def nbytes(self) -> int:
        assert not isinstance(self.dtype, StructT), "tiles of structs never reach past the checker"
        return self.size * self.dtype.nbytes

    def __str__(self) -> str:
        return f"tile({self.dtype}, {fmt_shape(self.shape)})"


@dataclass(frozen=True)
class StackT:
    """A block's cooperative stack (wp.tile_stack): `capacity` elements of `dtype` (a scalar, vector
    or matrix) in shared memory."""

    dtype: Scalar | VecT | MatT
    capacity: int

    @property
    def nbytes(self) -> int:
        """Its shared memory: the elements (rounded up to 8 bytes), then an int count (8 bytes)."""
        return -(-self.dtype.nbytes * self.capacity // 8) * 8 + 8

    def __str__(self) -> str:
        return f"tile_stack({self.dtype}, capacity={self.capacity})"


@dataclass(frozen=True)
class TupleT:
    items: tuple[Type, ...]  # element types, e.g. of wp.tid()

    def __str__(self) -> str:
        return "(" + ", ".join(str(t) for t in self.items) + ")"


@dataclass(frozen=True)
class NoneT:
    def __str__(self) -> str:
        return "None"


@dataclass(frozen=True)
class FunctionT:
    """A function as a value (Warp's `wp.Function` parameter, `f = my_func`): a @wp.func of the
    program (kind "func") or a builtin (kind "api", by its API name); kind "" is the annotation
    `wp.Function` itself, which any function fills. Only the frontend holds one: a func taking it
    is specialised per function, and a call through it is a call of that function."""

    kind: str
    name: str
    origin: int = 0  # a "func": which def (two funcs of one name in two scopes differ)

    def __str__(self) -> str:
        return self.name if self.kind == "func" else f"wp.{self.name}" if self.kind else "wp.Function"


NONE = NoneT()


@dataclass(frozen=True)
class GridQueryT:
    """A hash-grid query as a func's parameter (Warp's `wp.HashGridQuery[wp.float32]`): dtype the
    points' ("" in the annotation `wp.HashGridQuery` alone: any), grouped whether it filters by a
    group. Only the frontend holds one: the argument spreads into the query's variables
    (frontend/hash_grids.py)."""

    dtype: str
    grouped: bool = False

    def __str__(self) -> str:
        return f"HashGridQuery[{self.dtype or 'Any'}]" + (" (grouped)" if self.grouped else "")


Type = Union[Scalar, VecT, MatT, StructT, ArrayT, TileT, StackT, TupleT, NoneT, FunctionT, GridQueryT]
FieldT = Union[Type, IndexedT]  # what a struct field holds


def fmt_shape(shape: tuple[Dim, ...]) -> str:
    """Shapes print as Python tuples: (32, 16), (8,), (M, K)."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def article(word: str) -> str:
    """`a` or `an` before a dtype name or number as it is read aloud ("a uint32": you-int)."""
    if word.startswith("uint"):
        return "a"
    return "an" if word[:1] in "aeio8" or word.startswith(("int", "11", "18")) else "a"


def describe(t: object) -> str:
    """A type as a diagnostic names it (anything else, an annotation's Any or indexed array, as str())."""
    if isinstance(t, TileT):
        return f"{article(str(t.dtype))} {t.dtype} tile of shape {fmt_shape(t.shape)}"
    if isinstance(t, ArrayT):
        return f"{article(str(t.ndim))} {t.ndim}-d {t.dtype} array"
    if texture_ndim(t):
        return f"a {texture_ndim(t)}-d texture (wp.Texture{texture_ndim(t)}D)"
    if isinstance(t, Scalar):
        return f"{article(t.name)} {t.name} scalar"
    if isinstance(t, (VecT, MatT)):
        return f"{article(str(t))} {t}"
    if isinstance(t, StructT):
        items = tuple_items(t)
        return f"a tuple of ({', '.join(map(str, items))})" if items is not None else f"a `{t.name}` struct"
    if isinstance(t, StackT):
        return f"a tile stack of {t.dtype} (capacity {t.capacity})"
    if isinstance(t, FunctionT):
        return f"the function `{t}`" if t.kind else "a function"
    if isinstance(t, GridQueryT):
        return f"a hash-grid query of {t.dtype or 'any'} points"
    return str(t)
