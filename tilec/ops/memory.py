"""Tile memory ops: load/store/atomic add between arrays and tiles, plain and indexed.

Out-of-bounds elements load as zero and out-of-bounds writes are dropped.
"""
from __future__ import annotations

from ..ir.types import INT32, Dim, TileT, Type, fmt_shape
from . import rules
from .core import Bound, OpSpec, Param

ARR = Param("a", "value")
OFFSET = Param("offset", "offset", 0)
STORAGE = Param("storage", "storage", "register")
BOUNDS = Param("bounds_check", "const", True)
ALIGNED = Param("aligned", "const", False)  # Warp's alignment promise: checked in --debug builds (cxx.aligned_check)
AXIS = Param("axis", "const", 0)


def _offsets(b: Bound, ndim: int) -> None:
    offs = b.offsets.get("offset", [])
    if offs and len(offs) != ndim:
        b.fail("TC0304", f"offset has {len(offs)} coordinate(s) but the array has {ndim} dimension(s)",
               "offset")
    for t in offs:
        if not (hasattr(t, "is_integral") and t.is_integral):
            b.fail("TC0203", f"offset coordinates must be integers, got {t}", "offset")


def _aligned(b: Bound) -> None:
    if not isinstance(b.attrs.get("aligned", False), bool):
        b.fail("TC0303", f"`aligned` must be True or False, got {b.attrs['aligned']!r}", "aligned")


def _load(b: Bound) -> Type:
    _aligned(b)
    a = rules.array(b, "a")
    shape = rules.check_shape_value(b, "shape", b.attrs["shape"])
    if len(shape) != a.ndim:
        b.fail("TC0107", f"shape {fmt_shape(shape)} has {len(shape)} dimension(s) but the array has "
               f"{a.ndim}", "shape")
    _offsets(b, a.ndim)
    return TileT(a.dtype, shape)


def _stored_tile(b: Bound, name: str = "t") -> TileT:
    a = rules.array(b, "a")
    t = rules.tile(b, name)
    if t.dtype != a.dtype:
        b.fail("TC0202", f"tile dtype {t.dtype} does not match the array dtype {a.dtype}", name)
    if t.ndim != a.ndim:
        b.fail("TC0107", f"a {t.ndim}-d tile cannot be stored into a {a.ndim}-d array", name)
    _offsets(b, a.ndim)
    return t


def _store(b: Bound) -> None:
    _aligned(b)
    _stored_tile(b)
    return None


def _atomic(b: Bound) -> Type:
    return _stored_tile(b)


def _indices(b: Bound, extent_of_axis: Dim) -> None:
    idx = rules.tile(b, "indices")
    if idx.ndim != 1 or idx.dtype != INT32:
        b.fail("TC0303", f"`indices` must be a 1-d int32 tile, got {idx}", "indices")
    if idx.shape[0] != extent_of_axis:
        b.fail("TC0101", f"indices has {idx.shape[0]} entries but the tile has {extent_of_axis} along "
               "the indexed axis", "indices")


def _load_indexed(b: Bound) -> Type:
    a = rules.array(b, "a")
    shape = rules.check_shape_value(b, "shape", b.attrs["shape"])
    if len(shape) != a.ndim:
        b.fail("TC0107", f"shape {fmt_shape(shape)} has {len(shape)} dimension(s) but the array has "
               f"{a.ndim}", "shape")
    axis = rules.norm_axis(b, "axis", b.attrs["axis"], a.ndim)
    _indices(b, shape[axis])
    _offsets(b, a.ndim)
    return TileT(a.dtype, shape)


def _store_indexed(b: Bound) -> TileT | None:
    t = _stored_tile(b)
    axis = rules.norm_axis(b, "axis", b.attrs["axis"], t.ndim)
    _indices(b, t.shape[axis])
    return t if b.op.startswith("tile_atomic") else None


OPS = [
    OpSpec("tile_load", (ARR, Param("shape", "shape"), OFFSET, STORAGE, BOUNDS, ALIGNED), _load, "tile_load",
           "a tile read from an array at offset (zeros outside)", adj_cpp="adj_tile_load",
           nondiff=frozenset({"offset"})),
    OpSpec("tile_store", (ARR, Param("t", "value"), OFFSET, BOUNDS, ALIGNED), _store, "tile_store",
           "write a tile into an array at offset (outside writes dropped)", adj_cpp="adj_tile_store",
           effect=True),
    OpSpec("tile_atomic_add", (ARR, Param("t", "value"), OFFSET, BOUNDS), _atomic,
           "tile_atomic_add", "atomically add a tile into an array; returns the old values",
           adj_cpp="adj_tile_atomic_add", effect=True),
    OpSpec("tile_load_indexed", (ARR, Param("indices", "value"), Param("shape", "shape"), OFFSET, AXIS,
                                 STORAGE), _load_indexed, "tile_load_indexed",
           "a tile gathered along axis at the given indices", adj_cpp="adj_tile_load_indexed",
           nondiff=frozenset({"indices"})),
    OpSpec("tile_store_indexed", (ARR, Param("indices", "value"), Param("t", "value"), OFFSET, AXIS),
           _store_indexed, "tile_store_indexed", "scatter a tile along axis at the given indices",
           adj_cpp="adj_tile_store_indexed", effect=True, nondiff=frozenset({"indices"})),
    OpSpec("tile_atomic_add_indexed", (ARR, Param("indices", "value"), Param("t", "value"), OFFSET,
                                       AXIS), _store_indexed, "tile_atomic_add_indexed",
           "atomically scatter-add a tile along axis", adj_cpp="adj_tile_atomic_add_indexed",
           effect=True, nondiff=frozenset({"indices"})),
]
