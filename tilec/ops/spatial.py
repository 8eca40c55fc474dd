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
gradient either).

Mesh queries walk the mesh's bounding-volume hierarchy (runtime mesh_query.h) through internal ops
that the front end writes Warp's queries with (`wp.mesh_query_point`, `wp.mesh_query_ray`, ...:
frontend/mesh_queries.py; a `wp.mesh_query_aabb` loop: frontend/hash_grids.py): a walk finds a face
(an int: no gradient), and the values kernels differentiate are recomputed from that face by
`mesh_closest_weight` and `mesh_ray_hit`, whose gradients (the face fixed, as Warp's adjoints fix it)
are `mesh_closest_weight_gradient` and `mesh_ray_hit_gradient`.

And `wp.intersect_tri_tri` (runtime triangles.h): whether two triangles intersect, an int.
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.types import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT64, ArrayT, Scalar, Type, VecT, describe
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


def _vec3f(b: Bound, *names: str) -> None:
    for name in names:
        if b.types[name] != VEC3F:
            b.fail("TC0201", f"`{name}` must be a vec3f, got {describe(b.types[name])}", name)


def _query_rule(vecs: tuple[str, ...], ints: tuple[str, ...], floats: tuple[str, ...], result: Type
                ) -> Callable[[Bound], Type]:
    """The rule of a mesh query's op: vec3f operands `vecs`, then as _rule."""
    def rule(b: Bound) -> Type:
        _vec3f(b, *vecs)
        return _rule(_mesh, ints, result, floats)(b)

    return rule


_point_id = _rule(lambda b: _grid(b, "id"), ("index",), INT32)
_cell = _rule(_grid, ("x", "y", "z"), INT32)
_cell_range = _rule(_grid, ("cell",), INT32)
_group_range = _rule(_grid, ("cell", "group"), INT32)
_eval = _rule(_mesh, ("face",), VEC3F, ("bary_u", "bary_v"))
_face_normal = _rule(_mesh, ("face",), VEC3F)
_get_value = _rule(_mesh, ("index",), VEC3F)
_get_index = _rule(_mesh, ("index",), INT32)
_mesh_values = _rule(_mesh, (), ArrayT(VEC3F, 1))
_mesh_indices = _rule(_mesh, (), ArrayT(INT32, 1))


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
    # wp.mesh_get(id)'s fields (frontend/mesh_queries.py: a struct value of these three arrays)
    OpSpec("mesh_points", (MESH,), _mesh_values, "mesh_points", "a mesh's points (wp.mesh_get(id).points)",
           api=False, runtime_call=True),
    OpSpec("mesh_velocities", (MESH,), _mesh_values, "mesh_velocities",
           "a mesh's velocities (wp.mesh_get(id).velocities; empty for a mesh without them)", api=False,
           runtime_call=True),
    OpSpec("mesh_indices", (MESH,), _mesh_indices, "mesh_indices",
           "a mesh's point indices, three per triangle (wp.mesh_get(id).indices)", api=False, runtime_call=True),
]

def _query(name: str, params: tuple[str, ...], rule: Callable[[Bound], Type], doc: str, **extra: object) -> OpSpec:
    return OpSpec(name, (MESH, *(Param(p, "value") for p in params)), rule, name, doc, api=False, runtime_call=True,
                  **extra)  # type: ignore[arg-type]


def _triangles(b: Bound) -> Type:
    """Six vec3 corners, all of float32 or all of float64."""
    first = b.types["v0"]
    for name, t in b.types.items():
        if not (isinstance(t, VecT) and t.family == "vec" and t.length == 3 and t.dtype in (FLOAT32, FLOAT64)):
            b.fail("TC0201", f"`{name}` must be a vec3 of float32 or float64, got {describe(t)}", name)
        if t != first:
            b.fail("TC0201", f"`{name}` must be {describe(first)} like `v0`, got {describe(t)}", name)
    return INT32


OPS.append(OpSpec("intersect_tri_tri", tuple(Param(n, "value") for n in ("v0", "v1", "v2", "u0", "u1", "u2")),
                  _triangles, "intersect_tri_tri", "1 if triangles (v0, v1, v2) and (u0, u1, u2) intersect, else 0 "
                  "(Moller's test, planes' distances under 1e-6 counted as zero)", runtime_call=True))

def _code_rule(result: Type) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        if b.types["code"] != INT64:
            b.fail("TC0201", f"`code` must be an int64, got {describe(b.types['code'])}", "code")
        return result

    return rule


POINT_QUERY = ("point", "max_dist")
RAY = ("start", "dir")
BOX = ("lower", "upper")
OPS += [
    _query("mesh_closest_face", POINT_QUERY, _query_rule(("point",), (), ("max_dist",), INT32),
           "the face closest to `point` strictly within max_dist, -1 if none (slivers skipped)"),
    _query("mesh_closest_signed", (*POINT_QUERY, "epsilon"), _query_rule(("point",), (), ("max_dist", "epsilon"), INT64),
           "mesh_query_point_sign_normal's one walk: 2 face + 1 if `point` is in front of the angle-weighted normal "
           "of its closest faces (distances within epsilon equal), 2 face if behind; -1 if none"),
    OpSpec("mesh_signed_face", (Param("code", "value"),), _code_rule(INT32), "mesh_signed_face",
           "the face of a mesh_closest_signed code (-1 for none)", api=False, runtime_call=True),
    OpSpec("mesh_signed_sign", (Param("code", "value"),), _code_rule(FLOAT32), "mesh_signed_sign",
           "the sign of a mesh_closest_signed code: 1 outside, -1 inside, 0 for none", api=False, runtime_call=True),
    _query("mesh_closest_weight", ("face", "point", "which"), _query_rule(("point",), ("face", "which"), (), FLOAT32),
           "the weight u (which 0, rebuilt from v and w as Warp's) or v (1) of the point of `face` closest to "
           "`point`; 0 for face -1", adj_cpp="mesh_closest_weight_gradient", nondiff=frozenset({"id", "face", "which"})),
    _query("mesh_closest_weight_gradient", ("face", "point", "which"),
           _query_rule(("point",), ("face", "which"), (), VEC3F),
           "the gradient of mesh_closest_weight in the point, the face fixed"),
    _query("mesh_furthest_face", ("point", "min_dist"), _query_rule(("point",), (), ("min_dist",), INT32),
           "the face whose farthest corner is farthest from `point`, strictly beyond min_dist, -1 if none"),
    _query("mesh_furthest_weight", ("face", "point", "which"), _query_rule(("point",), ("face", "which"), (), FLOAT32),
           "the weight u (which 0) or v (1) of the corner of `face` farthest from `point` (1 or 0); 0 for face -1"),
    _query("mesh_parity_sign", ("face", "point", "n_sample", "perturbation_scale"),
           _query_rule(("point",), ("face", "n_sample"), ("perturbation_scale",), FLOAT32),
           "-1 if most of n_sample perturbed rays from `point` cross the mesh an odd number of times, else 1; 0 "
           "for face -1"),
    _query("mesh_inside_rays", ("face", "point"), _query_rule(("point",), ("face",), (), FLOAT32),
           "-1 if at least two of three rays from `point` along +x, +y, +z first hit a face's back, else 1; 0 for "
           "face -1"),
    _query("mesh_ray_face", (*RAY, "max_t", "root"), _query_rule(RAY, ("root",), ("max_t",), INT32),
           "the face the ray start + t dir first hits at 0 <= t < max_t, -1 if none; in node `root`'s subtree (a "
           "grouped mesh's group, -1 the whole mesh)"),
    _query("mesh_ray_hit", ("face", *RAY, "which"), _query_rule(RAY, ("face", "which"), (), FLOAT32),
           "of the ray's hit on `face`: t (which 0), the weights u (1) and v (2), the signed determinant (3)",
           adj_cpp="mesh_ray_hit_gradient", nondiff=frozenset({"id", "face", "which"})),
    _query("mesh_ray_hit_gradient", ("face", *RAY, "which", "wrt"),
           _query_rule(RAY, ("face", "which", "wrt"), (), VEC3F),
           "the gradient of mesh_ray_hit(which) in the ray's start (wrt 0) or direction (wrt 1)"),
    _query("mesh_box_next_leaf", ("after", "root", *BOX), _query_rule(BOX, ("after", "root"), (), INT32),
           "the next leaf of the mesh's tree after node `after`'s subtree (-1: from the root) whose box overlaps "
           "[lower, upper], -1 if none; within node `root`'s subtree (-1: the whole tree)"),
    _query("mesh_leaf_begin", ("node",), _query_rule((), ("node",), (), INT32),
           "a leaf's first position in the tree's face order"),
    _query("mesh_leaf_end", ("node",), _query_rule((), ("node",), (), INT32),
           "one past a leaf's last position in the tree's face order"),
    _query("mesh_box_face", ("position", *BOX), _query_rule(BOX, ("position",), (), INT32),
           "the face at `position` of the tree's face order if its box overlaps [lower, upper], else -1"),
    _query("mesh_sphere_next_leaf", ("after", "root", "center", "radius"),
           _query_rule(("center",), ("after", "root"), ("radius",), INT32),
           "the next leaf of the mesh's tree after node `after`'s subtree (-1: from the root) whose box the sphere "
           "reaches, -1 if none"),
    _query("mesh_sphere_face", ("position", "center", "radius"), _query_rule(("center",), ("position",), ("radius",),
                                                                             INT32),
           "the face at `position` of the tree's face order if the sphere reaches its box and its closest point, "
           "else -1"),
    # a Bvh (the same descriptor, its items' boxes in place of the faces'): the items tested by their boxes alone
    _query("mesh_ray_next_leaf", ("after", "root", *RAY, "max_dist"),
           _query_rule(RAY, ("after", "root"), ("max_dist",), INT32),
           "the next leaf of the tree after node `after`'s subtree (-1: from the root) whose box the ray start + t "
           "dir reaches at some t < max_dist (Warp's slab test), -1 if none"),
    _query("bvh_ray_item", ("position", *RAY, "max_dist"), _query_rule(RAY, ("position",), ("max_dist",), INT32),
           "the item at `position` of a Bvh's tree order if the ray reaches its box before max_dist, else -1"),
    _query("mesh_capsule_next_leaf", ("after", "root", *RAY, "radius", "max_dist"),
           _query_rule(RAY, ("after", "root"), ("radius", "max_dist"), INT32),
           "the next leaf of the tree after node `after`'s subtree (-1: from the root) whose box, grown by the radius, "
           "the ray start + t dir reaches at some t <= max_dist (Warp's capsule test), -1 if none"),
    _query("bvh_capsule_item", ("position", *RAY, "radius", "max_dist"),
           _query_rule(RAY, ("position",), ("radius", "max_dist"), INT32),
           "the item at `position` of a Bvh's tree order if the capsule sweep reaches its box, else -1"),
    # a block's shared walk (Warp's tiled queries): a cursor (int64) from which lane l takes the l-th item
    _query("mesh_batch_start", ("a", "b", "test"), _query_rule(("a", "b"), ("test",), (), INT64),
           "the cursor at the first item the shape touches (test 0: the box [a, b]; 1: the ray from a along b), "
           "-1 if none"),
    _query("mesh_batch_item", ("cursor", "lane", "a", "b", "test"), _query_rule(("a", "b"), ("cursor", "lane", "test"),
                                                                                (), INT32),
           "the lane-th item from the cursor the shape touches, -1 past the last"),
    _query("mesh_batch_advance", ("cursor", "count", "a", "b", "test"),
           _query_rule(("a", "b"), ("cursor", "count", "test"), (), INT64),
           "the cursor after `count` items the shape touches, -1 at the end"),
    _query("bvh_sphere_item", ("position", "center", "radius"),
           _query_rule(("center",), ("position",), ("radius",), INT32),
           "the item at `position` of a Bvh's tree order if the sphere reaches its box, else -1"),
]
def _ray_test(result: Type) -> Callable[[Bound], Type]:
    """mesh_query_ray_anyhit / _count_intersections: a vec3f start and direction (a float32 max_t), an int root
    (a grouped mesh's group: mesh_get_group_root; -1 the whole mesh)."""
    def rule(b: Bound) -> Type:
        _vec3f(b, "start", "dir")
        return _rule(_mesh, ("root",), result, ("max_t",) if "max_t" in b.types else ())(b)

    return rule


RAY_TEST = (MESH, Param("start", "value"), Param("dir", "value"))
OPS += [
    OpSpec("mesh_query_ray_anyhit", (*RAY_TEST, Param("max_t", "value"), Param("root", "value", -1)),
           _ray_test(BOOL), "mesh_query_ray_anyhit", "whether the ray start + t dir hits a face at 0 <= t < max_t",
           runtime_call=True),
    OpSpec("mesh_query_ray_count_intersections", (*RAY_TEST, Param("root", "value", -1)), _ray_test(INT32),
           "mesh_query_ray_count_intersections", "how many faces the ray start + t dir meets at t >= 0",
           runtime_call=True),
]
OPS.append(OpSpec("mesh_get_group_root", (MESH, Param("group", "value")), _rule(_mesh, ("group",), INT32),
                  "mesh_get_group_root", "the root of a grouped mesh's group `group` (-1, the whole mesh, for a group "
                  "it lacks): the `root` of its ray queries", runtime_call=True))
OPS.append(OpSpec("bvh_get_group_root", (Param("id", "value"), Param("group", "value")),
                  _rule(lambda b: _grid(b, "id", "a BVH's id (a uint64, `Bvh.id`)"), ("group",), INT32),
                  "bvh_get_group_root", "the root of a grouped Bvh's group `group` (-1, the whole tree, for a group it "
                  "lacks): the `root` of its queries", runtime_call=True))
OPS.append(OpSpec("live_id", (Param("id", "value"), Param("kind", "value")), _rule(lambda b: _grid(b, "id", "an id (a uint64)"),
                                                                                     ("kind",), UINT64),
                  "live_id", "an id read from a value, as a live object of `kind` (runtime live_ids.h LiveKind) or that "
                  "kind's empty object", api=False, runtime_call=True))
# LiveKind (runtime live_ids.h) of an id read as (kind, precision): a hash grid of unknown precision takes either
LIVE_KINDS = {("hash_grid", "any"): 0, ("hash_grid", "float32"): 1, ("hash_grid", "float64"): 2, ("mesh", "float32"): 3,
              ("mesh", "any"): 3, ("bvh", "float32"): 4, ("bvh", "any"): 4, ("volume", "any"): 5}
MESH_OPS = frozenset(spec.name for spec in OPS if spec.name.startswith("mesh_") and spec.api)  # their `id` is a mesh's
