"""Views and conversions: broadcast, view, squeeze, reshape, astype, element access, assign."""
from __future__ import annotations

from math import prod
from typing import Any

from ..ir.types import Scalar, TileT, Type, describe, fmt_shape
from . import rules
from .core import Bound, OpSpec, Param

A = Param("a", "value")


def _broadcast(b: Bound) -> Type:
    t = rules.tile(b, "a")
    shape = rules.check_shape_value(b, "shape", b.attrs["shape"])
    if t.ndim > len(shape):
        b.fail("TC0103", f"cannot broadcast {fmt_shape(t.shape)} to fewer dimensions "
               f"{fmt_shape(shape)}", "shape")
    for src, dst in zip(reversed(t.shape), reversed(shape)):
        if src != 1 and src != dst:
            b.fail("TC0103", f"cannot broadcast {fmt_shape(t.shape)} to {fmt_shape(shape)}: "
                   f"extent {src} is neither 1 nor {dst}", "shape")
    return TileT(t.dtype, shape)


def _integral_offsets(b: Bound) -> None:
    for t in b.offsets.get("offset", []):
        if not (isinstance(t, Scalar) and t.is_integral):
            b.fail("TC0203", f"offset coordinates must be integers, got {describe(t)}", "offset")


def _view(b: Bound) -> Type:
    t = rules.tile(b, "a")
    _integral_offsets(b)
    offs = b.consts.get("offset") or []
    n = len(b.offsets.get("offset", []))
    if n == 0 or n > t.ndim:
        b.fail("TC0304", f"offset has {n} coordinate(s); a view of a {t.ndim}-d tile needs 1 to "
               f"{t.ndim}", "offset")
    shape = b.attrs.get("shape")
    if shape is None:
        shape = t.shape[n:] or (1,)
    shape = rules.check_shape_value(b, "shape", shape)
    # The view covers the last len(shape) dims of the parent, starting at offset.
    parent = t.shape[t.ndim - len(shape):] if len(shape) <= t.ndim else None
    if parent is None:
        b.fail("TC0107", f"a view of shape {fmt_shape(shape)} has more dimensions than the tile "
               f"{fmt_shape(t.shape)}", "shape")
    for k in range(t.ndim - len(shape)):  # an axis the view drops: its offset picks one index
        start = offs[k] if k < len(offs) else 0
        # A symbolic extent (str) raises TypeError, which the checker reports as TC0111 (lower_call.py).
        if isinstance(start, int) and not 0 <= start < t.shape[k]:  # type: ignore[operator]
            b.fail("TC0104", f"view {fmt_shape(shape)} at offset {tuple(offs)} is out of bounds of the tile "
                   f"{fmt_shape(t.shape)}: index {start} on axis {k} of extent {t.shape[k]}", "offset")
    for axis, (extent, parent_extent) in enumerate(zip(shape, parent)):
        k = t.ndim - len(shape) + axis
        start = offs[k] if k < len(offs) else 0
        # A symbolic extent (str) raises TypeError, which the checker reports as TC0111 (lower_call.py).
        if extent > parent_extent or (isinstance(start, int) and start + extent > parent_extent):  # type: ignore[operator]
            b.fail("TC0104", f"view {fmt_shape(shape)} at offset {tuple(offs)} exceeds the tile "
                   f"{fmt_shape(t.shape)} along axis {k}", "offset")
        if isinstance(start, int) and start < 0:
            b.fail("TC0104", f"negative view offset {start}", "offset")
    return TileT(t.dtype, shape)


def _squeeze(b: Bound) -> Type:
    t = rules.tile(b, "a")
    axis = b.attrs.get("axis")
    if axis is None:
        axes = [i for i, d in enumerate(t.shape) if d == 1]
    else:
        axes = [rules.norm_axis(b, "axis", a, t.ndim) for a in (axis if isinstance(axis, tuple) else (axis,))]
        for a in axes:
            if t.shape[a] != 1:
                b.fail("TC0111", f"cannot squeeze axis {a} of extent {t.shape[a]}", "axis")
    shape = tuple(d for i, d in enumerate(t.shape) if i not in axes) or (1,)
    return TileT(t.dtype, shape)


def _reshape(b: Bound) -> Type:
    t = rules.tile(b, "a")
    shape = b.attrs["shape"]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if shape.count(-1) > 1:
        b.fail("TC0105", "at most one extent may be -1", "shape")
    known = prod(d for d in shape if d != -1)
    if -1 in shape:
        if known == 0 or t.size % known:
            b.fail("TC0105", f"cannot reshape {t.size} elements into {fmt_shape(shape)}", "shape")
        shape = tuple(t.size // known if d == -1 else d for d in shape)
    shape = rules.check_shape_value(b, "shape", shape)
    if prod(shape) != t.size:
        b.fail("TC0105", f"cannot reshape {fmt_shape(t.shape)} ({t.size} elements) into "
               f"{fmt_shape(shape)} ({prod(shape)} elements)", "shape")
    return TileT(t.dtype, shape)


def _astype(b: Bound) -> Type:
    t = rules.tile(b, "a")
    return TileT(b.attrs["dtype"], t.shape)


def _check_indices(b: Bound, t: TileT, types: list[Type], consts: list[Any], what: str) -> None:
    if len(types) != t.ndim:
        b.fail("TC0304", f"{what} needs {t.ndim} index(es) for a tile of shape {fmt_shape(t.shape)}, "
               f"got {len(types)}")
    for axis, (ty, c) in enumerate(zip(types, consts)):
        if not (isinstance(ty, Scalar) and ty.is_integral):
            b.fail("TC0203", f"tile indices must be integers, got {describe(ty)}", f"arg{axis}")
        if isinstance(c, int) and not 0 <= c < t.shape[axis]:  # type: ignore[operator]  # symbolic: as in _view
            b.fail("TC0104", f"index {c} is out of bounds for axis {axis} of extent {t.shape[axis]}",
                   f"arg{axis}")


def _extract(b: Bound) -> Type:
    t = rules.tile(b, "a")
    _check_indices(b, t, b.variadic, b.variadic_consts, "element access")
    return t.dtype


def _setitem(b: Bound) -> Type:
    t = rules.tile(b, "a")
    _check_indices(b, t, b.variadic, b.variadic_consts, "element write")
    rules.element_value(b, "value", t)
    return t


def _assign(b: Bound) -> Type:
    dst, src = rules.tile(b, "dst"), rules.tile(b, "src")
    _integral_offsets(b)
    if dst.dtype != src.dtype:
        # scalar elements were converted by the lowering (lower_call._convert_assigned)
        b.fail("TC0201", f"src is {src.dtype} but dst is {dst.dtype}, and only scalar elements are "
               "converted; convert the components explicitly", "src")
    if src.ndim != dst.ndim:
        b.fail("TC0107", f"src is {src.ndim}-d but dst is {dst.ndim}-d", "src")
    offs = b.consts.get("offset") or []
    n = len(b.offsets.get("offset", []))
    if n and n != dst.ndim:
        b.fail("TC0304", f"offset has {n} coordinate(s) but dst has {dst.ndim} dimension(s)", "offset")
    for axis, (s, d) in enumerate(zip(src.shape, dst.shape)):
        start = offs[axis] if axis < len(offs) else 0
        if s > d or (isinstance(start, int) and (start < 0 or start + s > d)):  # type: ignore[operator]  # as in _view
            b.fail("TC0104", f"src {fmt_shape(src.shape)} at offset {tuple(offs) or 0} exceeds dst "
                   f"{fmt_shape(dst.shape)} along axis {axis}", "src")
    return dst


def _slice(b: Bound) -> Type:
    """Shape computed (and bounds checked) by the lowering of the subscript; args: keep mask, then a
    start and a step per parent axis."""
    t = rules.tile(b, "a")
    if len(b.variadic) != 1 + 2 * t.ndim:
        b.fail("TC0304", f"a slice of a {t.ndim}-d tile needs a start and a step per axis", "a")
    return TileT(t.dtype, tuple(b.attrs["shape"]))


def _gather(b: Bound) -> Type:
    """t[idx] / t[idx, :] / t[:, idx] (Warp's tile_slice_indexed): the extent along `axis` becomes
    len(idx); negative indices count from the end of that axis."""
    t = rules.tile(b, "a")
    idx = rules.tile(b, "indices")
    if idx.ndim != 1 or not rules.scalar_element(idx).is_integral:
        b.fail("TC0203", f"a tile can be indexed by a 1-d int tile, got {describe(idx)}", "indices")
    axis = b.attrs.get("axis", 0)
    return TileT(t.dtype, t.shape[:axis] + idx.shape + t.shape[axis + 1:])


VALUE = Param("value", "value")
OPS = [
    OpSpec("tile_broadcast", (A, Param("shape", "shape")), _broadcast, "tile_broadcast",
           "a repeated along extents of 1 (numpy rules)", adj_cpp="adj_tile_broadcast"),
    OpSpec("tile_view", (A, Param("offset", "offset"), Param("shape", "shape", None)), _view,
           "tile_view", "the sub-tile of shape at offset", adj_cpp="adj_tile_view",
           nondiff=frozenset({"offset"})),
    OpSpec("tile_squeeze", (A, Param("axis", "const", None)), _squeeze, "tile_reshape",
           "extents of 1 removed", adj_cpp="adj_tile_reshape"),
    OpSpec("tile_reshape", (A, Param("shape", "shape")), _reshape, "tile_reshape",
           "the elements in row-major order, in a new shape (as numpy.reshape; of a transposed tile too: TC0437)",
           adj_cpp="adj_tile_reshape"),
    OpSpec("tile_astype", (A, Param("dtype", "dtype")), _astype, "tile_astype",
           "elements converted to dtype", adj_cpp="adj_tile_astype"),
    OpSpec("tile_extract", (A,), _extract, "tile_extract", "one element, t[i, j]",
           adj_cpp="adj_tile_extract", variadic="indices"),
    OpSpec("tile_slice", (A, Param("shape", "shape")), _slice, "tile_slice",
           "t[i], t[a:b:s], t[-1, ::-1]: a sub-tile (Warp's subscripts)", adj_cpp="tile_slice_add",
           variadic="spec", api=False),
    OpSpec("tile_gather", (A, Param("indices", "value"), Param("axis", "const", 0)), _gather, "tile_gather",
           "t[idx], t[idx, :], t[:, idx]: slices of t along one axis picked by an int tile (negative "
           "indices count from the end)", adj_cpp="tile_gather_add",
           nondiff=frozenset({"indices"}), api=False),
    OpSpec("tile_setitem", (A, VALUE), _setitem, "tile_setitem", "t[i, j] = value",
           adj_cpp="adj_tile_setitem", variadic="indices", api=False),
    OpSpec("tile_additem", (A, VALUE), _setitem, "tile_additem",
           "t[i, j] += value, once per lane", adj_cpp="adj_tile_additem", variadic="indices",
           api=False),
    OpSpec("tile_subitem", (A, VALUE), _setitem, "tile_subitem",
           "t[i, j] -= value, once per lane", adj_cpp="adj_tile_subitem", variadic="indices",
           api=False),
    OpSpec("tile_assign", (Param("dst", "value"), Param("src", "value"), Param("offset", "offset", 0)),
           _assign, "tile_assign", "src written into dst at offset", adj_cpp="adj_tile_assign",
           nondiff=frozenset({"offset"})),
]
MUTATES = {
    "tile_assign": ("dst",),
    # element writes update their tile in place (never callable by name from source)
    "tile_setitem": ("a",),
    "tile_additem": ("a",),
    "tile_subitem": ("a",),
}
