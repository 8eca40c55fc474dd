"""Reusable pieces of shape/dtype rules."""
from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ..ir.types import (BOOL, FLOAT32, INT32, ArrayT, Dim, MatT, Scalar, TileT, Type, VecT, component_dtype, describe,
                        fmt_shape)
from .core import Bound


def tile(b: Bound, name: str) -> TileT:
    t = b.types[name]
    if not isinstance(t, TileT):
        b.fail("TC0303", f"`{name}` must be a tile, got {describe(t)}", name)
    return t


def array(b: Bound, name: str) -> ArrayT:
    t = b.types[name]
    if not isinstance(t, ArrayT):
        b.fail("TC0303", f"`{name}` must be an array, got {describe(t)}", name)
    return t


def scalar(b: Bound, name: str) -> Scalar:
    t = b.types[name]
    if not isinstance(t, Scalar):
        b.fail("TC0303", f"`{name}` must be a scalar, got {describe(t)}", name)
    return t


def element_value(b: Bound, name: str, t: TileT) -> None:
    """`name` is a value for one element of tile t (in tile `a`): a scalar of its dtype (untyped
    literals adapt), or, in a tile of vectors or matrices, exactly that vector or matrix type."""
    if isinstance(t.dtype, (VecT, MatT)):
        if b.types[name] != t.dtype:
            b.fail("TC0201", f"`{name}` is {describe(b.types[name])} but the tile holds {t.dtype}", name)
        return
    # t.dtype may be a StructT where the checker has not refused struct operands first: unify_scalars then
    # reports a typed operand's mismatch (TC0201).
    unify_scalars(b, ("a", name), (t.dtype, scalar(b, name)))  # type: ignore[arg-type]


def scalar_element(t: TileT | ArrayT) -> Scalar:
    """The element type of t where an op takes scalar elements only: the checker refuses struct operands
    and value_tiles.refuse tiles of vectors and matrices before the rule of an op that does not take them."""
    assert isinstance(t.dtype, Scalar), t
    return t.dtype


def component(t: TileT) -> Scalar:
    """The scalar a tile's elements are made of (a vector's or matrix's components); never a struct's
    (the checker refuses struct operands)."""
    c = component_dtype(t.dtype)
    assert c is not None, t
    return c


def int_scalar(b: Bound, name: str) -> Scalar:
    t = scalar(b, name)
    if not (t.is_integral or t == BOOL):
        b.fail("TC0203", f"`{name}` must be an integer, got {t}", name)
    return t


def rank(b: Bound, name: str, t: TileT, ranks: tuple[int, ...]) -> None:
    if t.ndim not in ranks:
        want = " or ".join(f"{r}-d" for r in ranks)
        b.fail("TC0107", f"`{name}` must be a {want} tile, got shape {fmt_shape(t.shape)}", name)


def same_shape(b: Bound, names: Sequence[str], ts: Sequence[TileT], code: str = "TC0101") -> None:
    first = ts[0]
    for name, t in zip(names[1:], ts[1:]):
        if t.shape != first.shape:
            b.fail(
                code,
                f"shapes differ: {names[0]} is {fmt_shape(first.shape)}, "
                f"{name} is {fmt_shape(t.shape)}",
                name,
            )


def same_dtype(b: Bound, names: Sequence[str], dts: Sequence[Type]) -> None:
    for name, d in zip(names[1:], dts[1:]):
        if d != dts[0]:
            b.fail("TC0201", f"dtypes differ: {names[0]} is {dts[0]}, {name} is {d}", name)


def unify_scalars(b: Bound, names: Sequence[str], dts: Sequence[Scalar]) -> Scalar:
    """Result dtype of mixing operands; untyped literals adapt to the others."""
    typed = [(n, d) for n, d in zip(names, dts) if n not in b.weak]
    if not typed:
        return FLOAT32 if any(d.is_float for d in dts) else dts[0]
    first_name, first = typed[0]
    for name, d in typed[1:]:
        if d != first:
            b.fail(
                "TC0201",
                f"cannot mix {first} and {d} (`{first_name}` and `{name}`); "
                "convert one explicitly",
                name,
            )
    for name, d in zip(names, dts):
        if name in b.weak and d.is_float and not first.is_float:
            b.fail("TC0201", f"float literal `{name}` cannot adapt to {first}", name)
    return first


def dtype_of(t: Type) -> Type:
    """A tile's element type; any other type as it is."""
    return t.dtype if isinstance(t, TileT) else t


# The most elements one tile may hold (256 MiB of float32): every extent and offset computed from a
# tile's shape then fits an int32, and the generated C++ never declares an object it cannot hold.
MAX_TILE_ELEMENTS = 1 << 26


def check_shape_value(b: Bound, name: str, shape: int | Sequence[Dim]) -> tuple[Dim, ...]:
    """A shape attribute: positive ints, 1 to 4 dimensions, at most MAX_TILE_ELEMENTS elements."""
    if isinstance(shape, int):
        shape = (shape,)
    if not 1 <= len(shape) <= 4:
        b.fail("TC0111", f"`{name}` must have 1 to 4 dimensions, got {len(shape)}", name)
    for d in shape:
        if isinstance(d, int) and d <= 0:
            b.fail("TC0111", f"`{name}` must be positive, got {fmt_shape(tuple(shape))}", name)
    extents = [d for d in shape if isinstance(d, int)]
    if len(extents) == len(shape) and prod(extents) > MAX_TILE_ELEMENTS:
        b.fail("TC0111", f"`{name}` {fmt_shape(tuple(shape))} has more than {MAX_TILE_ELEMENTS} elements "
               "(the largest tile tilec compiles)", name)
    return tuple(shape)


def norm_axis(b: Bound, name: str, axis: int, ndim: int, what: str = "tile") -> int:
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        b.fail("TC0106", f"axis {axis} is out of range for a {ndim}-d {what}", name)
    return axis % ndim


def int_index_type(b: Bound, name: str) -> None:
    t = b.types[name]
    if not (isinstance(t, Scalar) and (t.is_integral or t == BOOL)):
        b.fail("TC0203", f"`{name}` must be an integer, got {describe(t)}", name)


INDEX = INT32
