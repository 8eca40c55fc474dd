"""Warp's hash grid in kernels (runtime: hash_grid.h): `wp.hash_grid_point_id(grid, k)`, and the
internal ops the front end expands a query loop into (frontend/hash_grids.py):
`for index in wp.hash_grid_query(grid, point, radius)` becomes loops over the cells between
`hash_grid_query_start` and `hash_grid_query_stop` on each axis, the physical `hash_grid_cell` of each,
and the points `hash_grid_cell_begin` .. `hash_grid_cell_end` of that cell.

`grid` is a uint64, the id of a grid the loader built (a kernel parameter: the loader checks it).
All results are integers: no gradient flows through a query (Warp's neither); the point's and the
radius' only effect is which cells are visited.
"""
from __future__ import annotations

from ..ir.types import FLOAT32, FLOAT64, INT32, UINT64, Scalar, Type, VecT, describe
from .core import Bound, OpSpec, Param


def _grid(b: Bound) -> None:
    t = b.types["grid"]
    if t != UINT64:
        b.fail("TC0201", f"`grid` must be a hash grid's id (a uint64, `HashGrid.id`), got {describe(t)}", "grid")


def _int(b: Bound, name: str) -> None:
    t = b.types[name]
    if not (isinstance(t, Scalar) and t.is_integral):
        b.fail("TC0201", f"`{name}` must be an int, got {describe(t)}", name)


def _point_id(b: Bound) -> Type:
    _grid(b)
    _int(b, "index")
    return INT32


def _bounds(b: Bound) -> Type:
    """start/stop of a query's cells on one axis: a vec3 point of float32 or float64, a radius of its dtype."""
    _grid(b)
    point = b.types["point"]
    if not (isinstance(point, VecT) and point.family == "vec" and point.length == 3 and point.dtype in (FLOAT32, FLOAT64)):
        b.fail("TC0201", f"`point` must be a vec3 of float32 or float64, got {describe(point)}", "point")
    radius = b.types["radius"]
    if radius != point.dtype and not ("radius" in b.weak and isinstance(radius, Scalar)):
        b.fail("TC0201", f"`max_dist` must be a {point.dtype} like the point, got {describe(radius)}", "radius")
    _int(b, "axis")
    return INT32


def _cell(b: Bound) -> Type:
    _grid(b)
    for name in ("x", "y", "z"):
        _int(b, name)
    return INT32


def _cell_range(b: Bound) -> Type:
    _grid(b)
    _int(b, "cell")
    return INT32


GRID = Param("grid", "value")
QUERY = (GRID, Param("point", "value"), Param("radius", "value"), Param("axis", "value"))
OPS = [
    OpSpec("hash_grid_point_id", (GRID, Param("index", "value")), _point_id, "hash_grid_point_id",
           "the original index of the point at position `index` of a hash grid's cell-sorted order (-1 before a "
           "build, and for a position outside the points)", runtime_call=True),
    OpSpec("hash_grid_query_start", QUERY, _bounds, "hash_grid_query_start",
           "the first cell coordinate on `axis` a hash-grid query visits", api=False, runtime_call=True),
    OpSpec("hash_grid_query_stop", QUERY, _bounds, "hash_grid_query_stop",
           "one past the last cell coordinate on `axis` a hash-grid query visits", api=False, runtime_call=True),
    OpSpec("hash_grid_cell", (GRID, Param("x", "value"), Param("y", "value"), Param("z", "value")), _cell,
           "hash_grid_cell", "the physical cell of cell coordinates (x, y, z), each wrapped into the grid",
           api=False, runtime_call=True),
    OpSpec("hash_grid_cell_begin", (GRID, Param("cell", "value")), _cell_range, "hash_grid_cell_begin",
           "the first position of a cell's points in the grid's sorted order", api=False, runtime_call=True),
    OpSpec("hash_grid_cell_end", (GRID, Param("cell", "value")), _cell_range, "hash_grid_cell_end",
           "one past the last position of a cell's points in the grid's sorted order", api=False, runtime_call=True),
]
