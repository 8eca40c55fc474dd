"""Warp's hash grids and triangle meshes in kernels.

Hash grids (runtime hash_grid.h): `wp.hash_grid_point_id(grid, k)`, and the
internal ops the front end expands a query loop into (frontend/hash_grids.py):
`for index in wp.hash_grid_query(grid, point, radius)` becomes loops over the cells between
`hash_grid_query_start` and `hash_grid_query_stop` on each axis, the physical `hash_grid_cell` of each,
and the points `hash_grid_cell_begin` .. `hash_grid_cell_end` of that cell.

`grid` is a uint64, the id of a grid the loader built (a kernel parameter: the loader checks it).
All results are integers: no gradient flows through a query (Warp's neither); the point's and the
radius' only effect is which cells are visited.

Meshes (runtime mesh.h): `wp.mesh_eval_position` / `mesh_eval_velocity` (a point of a triangle by
barycentric coordinates, differentiable in them), `mesh_eval_face_normal`, `mesh_get_point`,
`mesh_get_velocity`, `mesh_get_index`. `mesh` is a uint64 mesh id, a kernel parameter the loader
checks like a grid's. The mesh's own points are constants to a kernel (Warp's adjoints give them no
gradient either). Queries (closest point, ray, AABB: Warp's BVH) are not supported yet.
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.types import FLOAT32, FLOAT64, INT32, UINT64, Scalar, Type, VecT, describe
from .core import Bound, OpSpec, Param

VEC3F = VecT(FLOAT32, 3)


def _grid(b: Bound, name: str = "grid", what: str = "a hash grid's id (a uint64, `HashGrid.id`)") -> None:
    t = b.types[name]
    if t != UINT64:
        b.fail("TC0201", f"`{name}` must be {what}, got {describe(t)}", name)


def _mesh(b: Bound) -> None:
    _grid(b, "id", "a mesh's id (a uint64, `Mesh.id`)")


def _int(b: Bound, name: str) -> None:
    t = b.types[name]
    if not (isinstance(t, Scalar) and t.is_integral):
        b.fail("TC0201", f"`{name}` must be an int, got {describe(t)}", name)


def _rule(ident: Callable[[Bound], None], ints: tuple[str, ...], result: Type,
          floats: tuple[str, ...] = ()) -> Callable[[Bound], Type]:
    """The rule of an op taking an id (ident checks it), int operands `ints`, float32 operands `floats`."""
    def rule(b: Bound) -> Type:
        ident(b)
        for name in ints:
            _int(b, name)
        for name in floats:
            _float(b, name)
        return result

    return rule


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


def _float(b: Bound, name: str) -> None:
    t = b.types[name]
    if t != FLOAT32 and not (name in b.weak and isinstance(t, Scalar)):
        b.fail("TC0201", f"`{name}` must be a float32, got {describe(t)}", name)


def _eval_adjoint(b: Bound) -> Type:
    if b.types["adj"] != VEC3F:
        b.fail("TC0201", f"`adj` must be a vec3f, got {describe(b.types['adj'])}", "adj")
    return _rule(_mesh, ("face", "field", "which"), FLOAT32)(b)


_point_id = _rule(lambda b: _grid(b, "id"), ("index",), INT32)
_cell = _rule(_grid, ("x", "y", "z"), INT32)
_cell_range = _rule(_grid, ("cell",), INT32)
_group_range = _rule(_grid, ("cell", "group"), INT32)
_eval = _rule(_mesh, ("face",), VEC3F, ("bary_u", "bary_v"))
_face_normal = _rule(_mesh, ("face",), VEC3F)
_get_value = _rule(_mesh, ("index",), VEC3F)
_get_index = _rule(_mesh, ("index",), INT32)


GRID = Param("grid", "value")
MESH, FACE = Param("id", "value"), Param("face", "value")
EVAL = (MESH, FACE, Param("bary_u", "value"), Param("bary_v", "value"))
QUERY = (GRID, Param("point", "value"), Param("radius", "value"), Param("axis", "value"))
OPS = [
    OpSpec("hash_grid_point_id", (Param("id", "value"), Param("index", "value")), _point_id, "hash_grid_point_id",
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
    OpSpec("hash_grid_group_begin", (GRID, Param("cell", "value"), Param("group", "value")), _group_range,
           "hash_grid_group_begin", "the first position of a cell's points of `group` (a grouped build; else the "
           "cell's first)", api=False, runtime_call=True),
    OpSpec("hash_grid_group_end", (GRID, Param("cell", "value"), Param("group", "value")), _group_range,
           "hash_grid_group_end", "one past the last position of a cell's points of `group` (a grouped build; else "
           "the cell's end)", api=False, runtime_call=True),
    OpSpec("mesh_eval_position", EVAL, _eval, "mesh_eval_position",
           "the point of a mesh's triangle `face` at barycentric coordinates (u, v): p0 u + p1 v + p2 (1 - u - v)",
           adj_cpp="mesh_eval_adjoint", nondiff=frozenset({"id", "face"}), runtime_call=True),
    OpSpec("mesh_eval_velocity", EVAL, _eval, "mesh_eval_velocity",
           "the velocity of a mesh's triangle `face` at barycentric coordinates (u, v) (zero for a mesh without "
           "velocities)", adj_cpp="mesh_eval_adjoint", nondiff=frozenset({"id", "face"}), runtime_call=True),
    OpSpec("mesh_eval_adjoint", (MESH, FACE, Param("adj", "value"), Param("field", "value"), Param("which", "value")),
           _eval_adjoint, "mesh_eval_adjoint",
           "d dot(mesh_eval_position (field 0) or _velocity (1), adj) / du (which 0) or dv (1)", api=False,
           runtime_call=True),
    OpSpec("mesh_eval_face_normal", (MESH, FACE), _face_normal, "mesh_eval_face_normal",
           "the unit normal of a mesh's triangle, normalize(cross(p1 - p0, p2 - p0))", runtime_call=True),
    OpSpec("mesh_get_point", (MESH, Param("index", "value")), _get_value, "mesh_get_point",
           "the point of face-vertex `index` (3 * face + corner) of a mesh", runtime_call=True),
    OpSpec("mesh_get_velocity", (MESH, Param("index", "value")), _get_value, "mesh_get_velocity",
           "the velocity of face-vertex `index` (3 * face + corner) of a mesh", runtime_call=True),
    OpSpec("mesh_get_index", (MESH, Param("index", "value")), _get_index, "mesh_get_index",
           "the point index of face-vertex `index` (3 * face + corner) of a mesh (-1 outside it)", runtime_call=True),
]
MESH_OPS = frozenset(spec.name for spec in OPS if spec.name.startswith("mesh_") and spec.api)  # their `id` is a mesh's
