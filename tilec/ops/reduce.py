"""Maps, reductions, scans, sort and the BLAS-1 ops (dot, axpy) over tiles."""
from __future__ import annotations

from typing import Callable

from ..ir.types import INT32, Dim, MatT, Scalar, TileT, Type, VecT, describe, fmt_shape
from . import rules
from .core import Bound, OpSpec, Param, RuleError

A = Param("a", "value")
AXIS = Param("axis", "const", None)


def _map(b: Bound) -> Type:
    if not b.variadic:
        b.fail("TC0303", "needs at least one tile after the function")
    names = tuple(f"arg{i}" for i in range(len(b.variadic)))
    for n, t in zip(names, b.variadic):
        if not isinstance(t, (TileT, Scalar, VecT, MatT)):
            b.fail("TC0303", f"argument {n[3:]} must be a tile or a scalar, got {describe(t)}", n)
    tiled = tuple((n, t) for n, t in zip(names, b.variadic) if isinstance(t, TileT))
    if not tiled:
        b.fail("TC0303", "needs at least one tile after the function (scalars are broadcast to its shape)",
               names[0])
    tiles = tuple(t for _, t in tiled)
    rules.same_shape(b, tuple(n for n, _ in tiled), tiles)
    f = b.funcs["op"]
    try:
        out = f.result(tuple(rules.dtype_of(t) for t in b.variadic))
    except RuleError as e:
        b.fail("TC0407", f"function `{f.name}` {e.message}", "op")
    if not isinstance(out, (Scalar, VecT, MatT)):
        b.fail("TC0407", f"function `{f.name}` must return a scalar, returns {out}", "op")
    return TileT(out, tiles[0].shape)


def reduced_shape(b: Bound, t: TileT) -> tuple[Dim, ...]:
    axis = b.attrs.get("axis")
    if axis is None:
        return (1,)
    if isinstance(axis, int) and axis < 0:  # Warp 1.19's tile_sum and tile_reduce refuse it
        b.fail("TC0106", f"axis {axis} is out of range for a {t.ndim}-d tile: a reduction's axis counts from 0, "
               f"as in Warp (here 0 to {t.ndim - 1})", "axis")
    axis = rules.norm_axis(b, "axis", axis, t.ndim)
    shape = t.shape[:axis] + t.shape[axis + 1:]
    return shape or (1,)


def _reduction(result_int: bool = False) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        t = rules.tile(b, "a")
        if rules.component(t).kind == "bool" and not result_int:
            b.fail("TC0203", "is not defined on bool tiles", "a")
        return TileT(INT32 if result_int else t.dtype, reduced_shape(b, t))

    return rule


def _reduce(b: Bound) -> Type:
    t = rules.tile(b, "a")
    f = b.funcs["op"]
    try:
        out = f.result((t.dtype, t.dtype))
    except RuleError as e:
        b.fail("TC0407", f"function `{f.name}` {e.message}", "op")
    if out != t.dtype:
        b.fail("TC0407", f"function `{f.name}` must return {t.dtype} for {t.dtype} tiles, returns {out}",
               "op")
    return TileT(t.dtype, reduced_shape(b, t))


def _scan(b: Bound) -> Type:
    """Any rank: a multi-dimensional tile is scanned in its flattened row-major order (as Warp)."""
    t = rules.tile(b, "a")
    if rules.scalar_element(t).kind == "bool":
        b.fail("TC0203", "is not defined on bool tiles", "a")
    return t


def _dot(b: Bound) -> Type:
    a, bb = rules.tile(b, "a"), rules.tile(b, "b")
    rules.same_shape(b, ("a", "b"), (a, bb))
    rules.same_dtype(b, ("a", "b"), (a.dtype, bb.dtype))
    if rules.component(a).kind == "bool":
        b.fail("TC0203", "is not defined on bool tiles", "a")
    return TileT(rules.component(a), (1,))  # vectors: sum of wp.dot; matrices: sum of wp.ddot


def _axpy(b: Bound) -> Type:
    src, dest = rules.tile(b, "src"), rules.tile(b, "dest")
    rules.same_shape(b, ("src", "dest"), (src, dest))
    rules.same_dtype(b, ("src", "dest"), (src.dtype, dest.dtype))
    if rules.component(dest).kind == "bool":
        b.fail("TC0203", "is not defined on bool tiles", "dest")
    alpha = rules.scalar(b, "alpha")
    rules.unify_scalars(b, ("dest", "alpha"), (rules.component(dest), alpha))  # vec3: float alpha
    return dest


def _sort(b: Bound) -> Type:
    k = rules.tile(b, "keys")
    v = rules.tile(b, "values")
    rules.rank(b, "keys", k, (1,))
    rules.rank(b, "values", v, (1,))
    if k.shape != v.shape:
        b.fail("TC0101", f"keys is {fmt_shape(k.shape)} but values is {fmt_shape(v.shape)}", "values")
    from ..ir.types import TupleT

    return TupleT((k, v))


OPS = [
    OpSpec("tile_map", (Param("op", "func"),), _map, "tile_map",
           "f applied elementwise to tiles of equal shape (scalar arguments broadcast)", adj_cpp="adj_tile_map",
           variadic="args"),
    OpSpec("tile_sum", (A, AXIS), _reduction(), "tile_sum", "sum of all elements, or along axis",
           adj_cpp="adj_tile_sum"),
    OpSpec("tile_max", (A, AXIS), _reduction(), "tile_max", "largest element, or along axis",
           adj_cpp="adj_tile_max"),
    OpSpec("tile_min", (A, AXIS), _reduction(), "tile_min", "smallest element, or along axis",
           adj_cpp="adj_tile_min"),
    OpSpec("tile_argmax", (A, AXIS), _reduction(True), "tile_argmax",
           "index of the largest element (first on ties)"),
    OpSpec("tile_argmin", (A, AXIS), _reduction(True), "tile_argmin",
           "index of the smallest element (first on ties)"),
    OpSpec("tile_reduce", (Param("op", "func"), A, AXIS), _reduce, "tile_reduce",
           "fold with a binary function, or along axis", adj_cpp="adj_tile_reduce"),
    OpSpec("tile_scan_inclusive", (A,), _scan, "tile_scan_inclusive", "running sum including self",
           adj_cpp="adj_tile_scan_inclusive"),
    OpSpec("tile_scan_exclusive", (A,), _scan, "tile_scan_exclusive", "running sum excluding self",
           adj_cpp="adj_tile_scan_exclusive"),
    OpSpec("tile_scan_max_inclusive", (A,), _scan, "tile_scan_max_inclusive",
           "running maximum including self (C fmax: a NaN loses)", adj_cpp="adj_tile_scan_max_inclusive"),
    OpSpec("tile_scan_min_inclusive", (A,), _scan, "tile_scan_min_inclusive",
           "running minimum including self (C fmin: a NaN loses)", adj_cpp="adj_tile_scan_min_inclusive"),
    OpSpec("tile_dot", (A, Param("b", "value")), _dot, "tile_dot",
           "sum of a * b over all elements, as a (1,) tile", adj_cpp="adj_tile_dot"),
    OpSpec("tile_axpy", (Param("alpha", "value"), Param("src", "value"), Param("dest", "value")), _axpy,
           "tile_axpy", "dest += alpha * src, in place", adj_cpp="adj_tile_axpy"),
    OpSpec("tile_sort", (Param("keys", "value"), Param("values", "value")), _sort, "tile_sort",
           "sort keys ascending (stable), permuting values alike; both updated in place",
           adj_cpp="adj_tile_sort", nondiff=frozenset({"keys"})),
]
MUTATES = {"tile_sort": ("keys", "values"), "tile_axpy": ("dest",)}
