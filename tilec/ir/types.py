"""Value types of the tile language: scalars, arrays, tiles.

Types are small frozen dataclasses compared by value. A tile dimension is an
`int`, or a `str` naming a shape variable while a shape-annotated func body is
checked generically.
"""
from __future__ import annotations

from dataclasses import dataclass
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

SCALARS = {s.name: s for s in (BOOL, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, FLOAT16,
                                BFLOAT16, FLOAT32, FLOAT64)}
# Spellings accepted in source, as attributes of the API module or as builtins.
DTYPE_NAMES = {
    **SCALARS,
    "int": INT32,
    "float": FLOAT32,
    "float16": FLOAT16,
    "half": FLOAT16,
}
BUILTIN_DTYPE_NAMES = {"int": INT32, "float": FLOAT32, "bool": BOOL}


@dataclass(frozen=True)
class ArrayT:
    dtype: Scalar  # element type
    ndim: int  # number of dimensions, 1..4

    def __str__(self) -> str:
        return f"array{self.ndim}d({self.dtype})"


@dataclass(frozen=True)
class TileT:
    dtype: Scalar  # element type
    shape: tuple[Dim, ...]  # static extents; str entries are shape variables

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_concrete(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    @property
    def size(self) -> int:
        return prod(self.shape) if self.is_concrete else -1

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.nbytes

    def __str__(self) -> str:
        return f"tile({self.dtype}, {fmt_shape(self.shape)})"


@dataclass(frozen=True)
class StackT:
    """A block's cooperative stack (wp.tile_stack): `capacity` elements of `dtype` in shared memory."""

    dtype: Scalar
    capacity: int

    @property
    def nbytes(self) -> int:
        """Its shared memory: the elements (rounded up to 8 bytes), then an int count (8 bytes)."""
        return -(-self.dtype.nbytes * self.capacity // 8) * 8 + 8

    def __str__(self) -> str:
        return f"tile_stack({self.dtype}, capacity={self.capacity})"


@dataclass(frozen=True)
class TupleT:
    items: tuple  # element types, e.g. of wp.tid()

    def __str__(self) -> str:
        return "(" + ", ".join(str(t) for t in self.items) + ")"


@dataclass(frozen=True)
class NoneT:
    def __str__(self) -> str:
        return "None"


NONE = NoneT()
Type = Union[Scalar, ArrayT, TileT, StackT, TupleT, NoneT]


def fmt_shape(shape: tuple) -> str:
    """Shapes print as Python tuples: (32, 16), (8,), (M, K)."""
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def article(word: str) -> str:
    """`a` or `an` before a dtype name or number as it is read aloud."""
    return "an" if word[:1] in "aeiou8" or word.startswith(("int", "uint", "11", "18")) else "a"


def describe(t: Type) -> str:
    """A type as a diagnostic names it."""
    if isinstance(t, TileT):
        return f"{article(str(t.dtype))} {t.dtype} tile of shape {fmt_shape(t.shape)}"
    if isinstance(t, ArrayT):
        return f"{article(str(t.ndim))} {t.ndim}-d {t.dtype} array"
    if isinstance(t, Scalar):
        return f"{article(t.name)} {t.name} scalar"
    if isinstance(t, StackT):
        return f"a tile stack of {t.dtype} (capacity {t.capacity})"
    return str(t)
