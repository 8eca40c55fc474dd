"""Warp's hash-grid queries, as its users write them:

    query = wp.hash_grid_query(grid, x, radius)
    for index in query:                                # or: index = int(0)
        ...                                            #     while wp.hash_grid_query_next(query, index):

Mixed into `FunctionChecker`. A query lives in the front end only, like a tuple: binding one
evaluates the point and the radius once and keeps, per axis, the first and one-past-the-last cell
coordinate its box overlaps (int32 variables `query.x0`, `query.x1`, ...). Its loop expands into
loops over z, y and x (x fastest, Warp's order), the physical cell of each, and that cell's points
in the grid's sorted order (ops/spatial.py, runtime hash_grid.h): plain `for` loops over ranges, so
`continue`, the adjoint's replay and every later pass need nothing new. A `break` in the query's
body leaves all of its loops (a flag tested after each inner loop).

A mesh's box or sphere query (`query = wp.mesh_query_aabb(mesh, low, high)` or
`wp.mesh_query_sphere(mesh, center, radius)`, then `for face in query:` or
`while wp.mesh_query_next(query, face):`, Warp's older `mesh_query_aabb_next` too) is the same kind
of front-end value, holding its shape (`query.a`, `query.b`: the box's corners, or the sphere's
centre and radius); its loop walks the leaves of the mesh's tree whose boxes the shape touches (a
`while` over `mesh_box_next_leaf` / `mesh_sphere_next_leaf`) and, in each, the faces it touches
(ops/spatial.py, runtime mesh_query.h). A Bvh's queries (`wp.bvh_query_aabb`, `_sphere`, `_ray`, then
`while wp.bvh_query_next(query, item[, max_dist]):`) are the same walks over its tree of boxes, each
item tested by its box (a ray's tests, of the tree's boxes and the items', read max_dist each time).

A grid's id that is a parameter of the kernel or func, never assigned, is checked at the launch: the
loader knows which arguments are grid ids (ir.Function.spatial_ids, the manifest) and takes only the
id of a live grid of the point's precision there (or 0, read as an empty grid). An id read from any
other value (an element of a uint64 array, a local: Newton keeps mesh ids in arrays whose other
elements hold other things) is checked where it is read, against the objects alive at the launch
(`live_id`, runtime live_ids.h). Either way a wrong number never reaches native code as an address.
Meshes', BVHs' and volumes' ids follow the same rules.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import BOOL, FLOAT32, INT32, INT64, UINT64, GridQueryT, Scalar, Type, VecT, describe
from ..ops import REQUIRED
from ..ops.spatial import LIVE_KINDS, VEC3F
from .lowering_host import LoweringHost
from .statement_walk import names_in, subnodes

QUERY_ARGS = (("id", REQUIRED), ("point", REQUIRED), ("max_dist", REQUIRED), ("group", None))
# The queries of a shape against a tree: api -> (the kind of id, the shape, its arguments after the id)
SHAPE_QUERIES = {
    "mesh_query_aabb": ("mesh", "box", ("low", "high")),
    "mesh_query_sphere": ("mesh", "sphere", ("center", "radius")),
    "bvh_query_aabb": ("bvh", "box", ("low", "high")),
    "bvh_query_sphere": ("bvh", "sphere", ("center", "radius")),
    "bvh_query_ray": ("bvh", "ray", ("start", "dir")),
    "bvh_query_capsule": ("bvh", "capsule", ("start", "dir", "radius")),
}
# A block's shared walk (tiled_queries.py): api -> (the kind of id, the shape's test: 0 a box, 1 a ray)
TILED_QUERIES = {"tile_mesh_query_aabb": ("mesh", 0), "mesh_query_aabb_tiled": ("mesh", 0),
                 "tile_bvh_query_aabb": ("bvh", 0), "bvh_query_aabb_tiled": ("bvh", 0),
                 "tile_bvh_query_ray": ("bvh", 1), "bvh_query_ray_tiled": ("bvh", 1)}
TILED_NEXT = {"tile_mesh_query_aabb_next": "mesh", "mesh_query_aabb_next_tiled": "mesh",
              "tile_bvh_query_next": "bvh", "bvh_query_next_tiled": "bvh"}
QUERY_CALLS = {"hash_grid_query": "hash_grid", **{api: kind for api, (kind, _, _) in SHAPE_QUERIES.items()},
               **{api: kind for api, (kind, _) in TILED_QUERIES.items()}}  # -> its kind
NEXT_CALLS = {"hash_grid_query_next": "hash_grid", "mesh_query_next": "mesh", "mesh_query_aabb_next": "mesh",
              "bvh_query_next": "bvh"}
KINDS = {"hash_grid": ("a hash grid's", "HashGrid"), "mesh": ("a mesh's", "Mesh"),
         "bvh": ("a BVH's", "Bvh"), "volume": ("a volume's", "Volume")}  # kind -> (in a message, class)
# The ops a shape's walk is written with: the next leaf whose box it touches, then each item it touches in
# the leaf (a mesh's face by its box, and a sphere by the face's closest point too; a Bvh's item by its box).
NEXT_LEAF = {"box": "mesh_box_next_leaf", "sphere": "mesh_sphere_next_leaf", "ray": "mesh_ray_next_leaf",
             "capsule": "mesh_capsule_next_leaf"}
ITEM_TEST = {("mesh", "box"): "mesh_box_face", ("mesh", "sphere"): "mesh_sphere_face",
             ("bvh", "box"): "mesh_box_face", ("bvh", "sphere"): "bvh_sphere_item", ("bvh", "ray"): "bvh_ray_item",
             ("bvh", "capsule"): "bvh_capsule_item"}


@dataclass(frozen=True)
class GridQuery:
    grid: ir.Sym  # the grid's id: a uint64 parameter
    bounds: tuple[ir.Sym, ...]  # x0, x1, y0, y1, z0, z1: the cells visited per axis, [start, stop)
    group: ir.Sym | None  # a grouped query's group (int32), evaluated once
    dtype: str = "float32"  # the points' precision

    @classmethod
    def named(cls, name: str, grid: ir.Sym, dtype: str, grouped: bool) -> GridQuery:
        """The query `name` holds: its bound and group variables named after it."""
        bounds = tuple(ir.Sym(f"{name}.{axis}{end}", 0, INT32) for axis in "xyz" for end in "01")
        return cls(grid, bounds, ir.Sym(f"{name}.group", 0, INT32) if grouped else None, dtype)

    what = "hash-grid query"  # as a diagnostic names it

    def variables(self) -> tuple[ir.Sym, ...]:
        """Everything a loop over it reads: the grid's id, the bounds, the group (a func's parameters, in order)."""
        return (self.grid, *self.bounds, *((self.group,) if self.group is not None else ()))


@dataclass(frozen=True)
class MeshQuery:
    mesh: ir.Sym  # the mesh's or Bvh's id: a uint64 parameter
    shape: str  # "box", "sphere", "ray" or "capsule"
    a: ir.Sym  # the box's lower corner (vec3f), the sphere's centre or the ray's start: evaluated once
    b: ir.Sym  # the box's upper corner (vec3f), the sphere's radius (float32) or the ray's direction
    kind: str = "mesh"  # or "bvh"
    c: ir.Sym | None = None  # a capsule's radius (float32)
    root: ir.Sym | None = None  # a Bvh's query: the node whose subtree it walks (int32; -1: the whole tree)

    @classmethod
    def named(cls, name: str, mesh: ir.Sym, shape: str, kind: str) -> MeshQuery:
        return cls(mesh, shape, ir.Sym(f"{name}.a", 0, VEC3F), ir.Sym(f"{name}.b", 0, FLOAT32 if shape == "sphere" else
                                                                        VEC3F), kind,
                   ir.Sym(f"{name}.c", 0, FLOAT32) if shape == "capsule" else None,
                   ir.Sym(f"{name}.root", 0, INT32) if kind == "bvh" else None)

    def variables(self) -> tuple[ir.Sym, ...]:
        """The shape's variables, in the order its ops take them."""
        return (self.a, self.b) if self.c is None else (self.a, self.b, self.c)

    @property
    def key(self) -> tuple[object, ...]:
        """What a name rebound to another query must keep to keep its variables."""
        return (self.mesh, self.kind, self.shape)

    @property
    def what(self) -> str:
        return f"{'mesh' if self.kind == 'mesh' else 'BVH'} {self.shape} query"


@dataclass(frozen=True)
class TiledQuery:
    mesh: ir.Sym  # the mesh's or Bvh's id: a uint64 parameter
    kind: str  # "mesh" or "bvh"
    test: int  # the shape: 0 the box [a, b], 1 the ray from a along b
    a: ir.Sym
    b: ir.Sym
    cursor: ir.Sym  # int64: where the walk goes on (-1 at its end)
    valid: ir.Sym  # bool: whether the last step found an item (true before the first)

    @classmethod
    def named(cls, name: str, mesh: ir.Sym, kind: str, test: int) -> TiledQuery:
        return cls(mesh, kind, test, ir.Sym(f"{name}.a", 0, VEC3F), ir.Sym(f"{name}.b", 0, VEC3F),
                   ir.Sym(f"{name}.cursor", 0, INT64), ir.Sym(f"{name}.valid", 0, BOOL))

    @property
    def what(self) -> str:
        return f"tiled {'mesh' if self.kind == 'mesh' else 'BVH'} {('box', 'ray')[self.test]} query"

    @property
    def key(self) -> tuple[object, ...]:
        return (self.mesh, self.kind, self.test)


Query = GridQuery | MeshQuery | TiledQuery


def query_kind(query: Query) -> str:
    """What a per-thread query walks ("hash_grid", "mesh", "bvh"); "tiled" for a block's shared walk."""
    return "hash_grid" if isinstance(query, GridQuery) else query.kind if isinstance(query, MeshQuery) else "tiled"



class HashGridQueries(LoweringHost):
    grid_queries: dict[str, Query]  # name -> the query bound to it
    mesh_bvhs: dict[str, cst.BaseExpression]  # name -> the mesh id of the `wp.mesh_get_bvh(mesh)` bound to it
    grid_ids: dict[str, tuple[str, str, cst.CSTNode]]  # parameter -> (kind, dtype read: "any" for none yet, a use)
    grid_candidates: dict[str, ir.Sym]  # the parameters by name: what a grid id may name (check.py)
    lowered_ids: dict[cst.CSTNode, ir.Expr]  # an op's id argument, checked (note_id_argument): expr() takes it
    query_depths: list[int]  # the loop depth of each query body being lowered, innermost last
    query_breaks: list[ir.Sym | None]  # and its break flag, once a `break` needs one

    # ------------------------------------------------------------ binding a query

    def bind_grid_query(self, target: cst.Name, value_node: cst.BaseExpression,
                        node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`q = wp.hash_grid_query(grid, point, max_dist)` (or `wp.mesh_query_aabb(mesh, low, high)`);
        None when the value is no query."""
        if not isinstance(value_node, cst.Call):
            return None
        api = self.scope.api_attr(value_node.func)
        mesh = self.mesh_of_bvh(value_node) if api == "mesh_get_bvh" else None
        if mesh is not None:  # `bvh = wp.mesh_get_bvh(mesh)`: a name for the mesh's tree, in the front end
            self.grid_id(mesh, "float32", kind="mesh")
            self.mesh_bvhs[target.value] = mesh
            return []
        if api not in QUERY_CALLS:
            return None
        name = target.value
        if name in self.env:
            self.fail("TC0405", f"`{name}` was {describe(self.env[name].sym.type)} and cannot become a query",
                      target, help="use a new name")
        return self.make_query(name, value_node, node)

    def is_query_call(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.scope.api_attr(node.func) in QUERY_CALLS

    def make_query(self, name: str, call: cst.Call, node: cst.CSTNode) -> list[ir.Stmt]:
        api = self.scope.api_attr(call.func)
        if api in SHAPE_QUERIES:
            return self.make_mesh_query(api, name, call, node)
        if api in TILED_QUERIES:
            return self.make_tiled_query(api, name, call, node)  # tiled_queries.py
        args = self.query_arguments("hash_grid_query", call, QUERY_ARGS)
        point = self.expr(args["point"])
        if not (isinstance(point.type, VecT) and point.type.family == "vec" and point.type.length == 3
                and isinstance(point.type.dtype, Scalar) and point.type.dtype.name in ("float32", "float64")):
            self.fail("TC0201", f"hash_grid_query: `point` must be a vec3 of float32 or float64 (a float16 grid is not "
                      f"supported), got {describe(point.type)}", args["point"])
        dtype = point.type.dtype
        radius = self.retype_literal(self.expr(args["max_dist"]), dtype)
        if radius.type != dtype:
            self.fail("TC0201", f"hash_grid_query: `max_dist` must be a {dtype} like the point, got "
                      f"{describe(radius.type)}", args["max_dist"])
        span = self.span(node)
        out: list[ir.Stmt] = []
        grid = self.id_variable(name, self.grid_id(args["id"], dtype.name), out)
        group = self.expr(args["group"]) if "group" in args else None
        if group is not None and self.is_weak(group) and type(group.value) is int:  # a literal `2`: an int32
            group = self.retype_literal(group, INT32)
        if group is not None and group.type != INT32:
            self.fail("TC0201", f"hash_grid_query: `group` must be an int32, got {describe(group.type)}", args["group"])
        held = [self.new_temp(point.type), self.new_temp(dtype)]  # the point and radius, evaluated once
        out += [ir.Assign(held[0], point, span), ir.Assign(held[1], radius, span)]
        query = self.grid_queries.get(name)
        if query is None:
            query = GridQuery.named(name, grid.sym, dtype.name, group is not None)
            self.grid_queries[name] = query
        elif not isinstance(query, GridQuery):
            self.fail("TC0405", f"`{name}` was a mesh's query and cannot become a hash-grid query", node,
                      help="use a new name")
        elif query.dtype != dtype.name:
            self.fail("TC0405", f"`{name}` was a query of {query.dtype} points and cannot become one of {dtype.name} "
                      "points", node, help="use a new name")
        elif query.grid != grid.sym:
            self.fail("TC0405", f"`{name}` was a query of the grid `{query.grid.name}` and cannot become one of "
                      f"`{grid.sym.name}`", node, help="use a new name")
        elif (query.group is None) != (group is None):
            self.fail("TC0405", f"`{name}` was a{' grouped' if query.group is not None else 'n ungrouped'} query "
                      f"and cannot become a{'n ungrouped' if group is None else ' grouped'} one", node,
                      help="use a new name")
        if group is not None and query.group is not None:
            out.append(ir.Assign(query.group, group, span))
        operands = [grid, ir.Var(held[0], span), ir.Var(held[1], span)]
        for axis in range(3):
            for end, op in enumerate(("hash_grid_query_start", "hash_grid_query_stop")):
                value = self.make_op(op, [*operands, ir.Const(axis, INT32, span)], {}, node)
                assert isinstance(value, ir.OpCall), value  # (an int op's call)
                out.append(ir.Assign(query.bounds[2 * axis + end], value, span))
        return out

    def make_mesh_query(self, api: str, name: str, call: cst.Call, node: cst.CSTNode) -> list[ir.Stmt]:
        """`q = wp.mesh_query_aabb(mesh, low, high)` (or `_sphere(mesh, center, radius)`, a Bvh's
        `wp.bvh_query_aabb(bvh, low, high)`, `_sphere`, `_ray(bvh, start, dir)`): the shape, evaluated
        once into the query's variables."""
        kind, shape, names = SHAPE_QUERIES[api]
        params = (("id", REQUIRED), *((n, REQUIRED) for n in names), *((("root", None),) if kind == "bvh" else ()))
        args = self.query_arguments(api, call, params)
        span = self.span(node)
        root: ir.Expr = ir.Const(-1, INT32, span)
        if "root" in args:  # a grouped Bvh's group (wp.bvh_get_group_root), -1 the whole tree
            root = self.retype_literal(self.expr(args["root"]), INT32)
            if root.type != INT32:
                self.fail("TC0201", f"{api}: `root` must be an int32 (a node, from wp.bvh_get_group_root), got "
                          f"{describe(root.type)}", args["root"])
        values = self.shape_values(api, args, zip(names, (VEC3F, FLOAT32 if shape == "sphere" else VEC3F, FLOAT32)))
        checked: list[ir.Stmt] = []
        mesh = self.id_variable(name, self.grid_id(args["id"], "float32", kind=kind), checked)
        query = self.kept_query(name, MeshQuery.named(name, mesh.sym, shape, kind), node)
        assert isinstance(query, MeshQuery)  # (kept_query: the same kind of query)
        rooted = [ir.Assign(query.root, root, span)] if query.root is not None else []
        return [*checked, *(ir.Assign(sym, value, span) for sym, value in zip(query.variables(), values)), *rooted]

    def shape_values(self, api: str, args: dict[str, cst.BaseExpression], wanted: Iterable[tuple[str, Type]]
                     ) -> list[ir.Expr]:
        """A query's shape arguments `wanted` (name, type), lowered and checked (a float literal is float32)."""
        values = []
        for key, t in wanted:
            value = self.expr(args[key])
            if t == FLOAT32:
                value = self.retype_literal(value, FLOAT32)
            if value.type != t:
                self.fail("TC0201", f"{api}: `{key}` must be {describe(t)}, got {describe(value.type)}", args[key])
            values.append(value)
        return values

    def kept_query(self, name: str, made: MeshQuery | TiledQuery, node: cst.CSTNode) -> Query:
        """The query `name` holds: `made` when it held none, else the one it holds when that is of the same
        kind, shape and id (its variables then take the new values); TC0405 otherwise."""
        query = self.grid_queries.setdefault(name, made)
        if type(query) is not type(made) or query.key != made.key:
            held = query.what + ("" if isinstance(query, GridQuery) else f" of `{query.mesh.name}`")
            self.fail("TC0405", f"`{name}` was a {held} and cannot become a {made.what} of "
                      f"`{made.mesh.name}`", node, help="use a new name")
        return query

    def query_arguments(self, api: str, call: cst.Call, params: Sequence[tuple[str, Any]]
                        ) -> dict[str, cst.BaseExpression]:
        """A grid's or mesh's query call's arguments by name: `params` are (name, default) in positional
        order, REQUIRED where the call must give one (mesh_queries.py's queries too)."""
        names = [name for name, _ in params]
        given: dict[str, cst.BaseExpression] = {}
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else (names[k] if k < len(names) else None)
            if key is None:
                self.fail("TC0303", f"{api}: takes {len(names)} arguments at most ({', '.join(names)}), given "
                          f"{len(call.args)}", a)
            if key not in names:
                self.fail("TC0303", f"{api}: unknown argument `{key}` (its arguments: {', '.join(names)})", a)
            if key in given:
                self.fail("TC0303", f"{api}: `{key}` is given twice", a)
            given[key] = a.value
        missing = [name for name, default in params if default is REQUIRED and name not in given]
        if missing:
            self.fail("TC0408", f"{api}: no value for {', '.join(f'`{m}`' for m in missing)}", call)
        return given

    def mesh_of_bvh(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The mesh id of `wp.mesh_get_bvh(mesh)` (or of a name bound to one): a mesh's tree is a Bvh's, its
        faces' boxes the items (runtime mesh.h: one descriptor); None for other expressions."""
        if isinstance(node, cst.Name) and node.value in self.mesh_bvhs and node.value not in self.env:
            return self.mesh_bvhs[node.value]
        if isinstance(node, cst.Call) and self.scope.api_attr(node.func) == "mesh_get_bvh":
            return self.query_arguments("mesh_get_bvh", node, (("id", REQUIRED),))["id"]
        return None

    def grid_id(self, node: cst.BaseExpression, dtype: str, name: str | None = None, kind: str = "hash_grid"
                ) -> ir.Expr:
        """The id `node` names (or `name`, the caller's argument at `node`) of a hash grid, a mesh or a Bvh
        (kind): a uint64 parameter of this kernel or func (or a field of a struct parameter), recorded for
        the loader; any other uint64 value is checked where it is read (live_grid_id). A Bvh's may be a
        mesh's tree (`wp.mesh_get_bvh(mesh)`): the mesh's id then."""
        if kind == "bvh" and name is None:
            mesh = self.mesh_of_bvh(node)
            if mesh is not None:
                return self.grid_id(mesh, dtype, kind="mesh")
        if name is None and isinstance(node, cst.Attribute):  # `mesh.id`: a uint64 field of a struct parameter
            leaf = self.expr(node)
            held = leaf.sym if isinstance(leaf, ir.Var) else None
            if held is not None and self.grid_candidates.get(held.name) is held:
                return self.checked_grid_id(held.name, held, kind, dtype, node)
            return self.live_grid_id(leaf, kind, dtype, node)
        name = name or (node.value if isinstance(node, cst.Name) else None)
        binding = self.env.get(name) if name is not None else None
        if binding is not None and name is not None and binding.sym is self.grid_candidates.get(name):
            return self.checked_grid_id(name, binding.sym, kind, dtype, node)
        return self.live_grid_id(self.expr(node), kind, dtype, node)

    def live_grid_id(self, value: ir.Expr, kind: str, dtype: str, node: cst.CSTNode) -> ir.Expr:
        """An id read from a value (an element of a uint64 array, a local): checked against the launch's
        live objects where it is read, the null id (an empty object) when it is none (runtime live_ids.h)."""
        what, cls = KINDS[kind]
        if self.is_weak(value) and type(value.value) is int:
            value = self.retype_literal(value, UINT64)
        if value.type != UINT64:
            self.fail("TC0201", f"{what} id must be a uint64 (`{cls}.id`), got {describe(value.type)}", node)
        span = self.span(node)
        return ir.OpCall("live_id", (value, ir.Const(LIVE_KINDS[(kind, dtype)], INT32, span)), (), UINT64, span)

    def id_variable(self, query: str, value: ir.Expr, out: list[ir.Stmt]) -> ir.Var:
        """The id a query walks as a variable: a checked parameter as it is, a value's id checked once into
        the query's own `query.id` (appended to `out`)."""
        if isinstance(value, ir.Var):
            return value
        sym = ir.Sym(f"{query}.id", 0, UINT64)
        out.append(ir.Assign(sym, value, value.span))
        return ir.Var(sym, value.span)

    def checked_grid_id(self, name: str, sym: ir.Sym, kind: str, dtype: str, node: cst.BaseExpression) -> ir.Var:
        """The id parameter `sym` (`name`: a parameter, or a struct parameter's leaf `s.id`), recorded
        for the loader as an id of `kind` read with `dtype` points."""
        what, cls = KINDS[kind]
        if sym.type != UINT64:
            self.fail("TC0201", f"`{name}` must be {what} id, a uint64 (`{cls}.id`), not "
                      f"{describe(sym.type)}", node)
        seen = self.grid_ids.get(name)
        if seen is not None and seen[0] != kind:
            self.fail("TC0201", f"`{name}` is read as {KINDS[seen[0]][0]} id elsewhere and as {what} here", node)
        if seen is not None and "any" not in (seen[1], dtype) and seen[1] != dtype:
            self.fail("TC0201", f"`{name}` is queried with {seen[1]} points elsewhere and with {dtype} points here; "
                      "a grid has one precision", node)
        if seen is None or seen[1] == "any":
            self.grid_ids[name] = (kind, dtype, node)
        return ir.Var(sym, self.span(node))

    def query_argument(self, node: cst.Name) -> ir.Const | None:
        """A query passed to a func (a `wp.HashGridQuery[...]` parameter): a front-end constant of its type,
        which flatten_args spreads into the query's variables; None for other names."""
        query = self.grid_queries.get(node.value) if node.value not in self.env else None
        if query is None:
            return None
        if not isinstance(query, GridQuery):
            self.fail("TC0401", f"unsupported syntax: {KINDS[query.kind][0]} query passed to a func (tilec loops over "
                      "it where it is made)", node)
        return ir.Const(query, GridQueryT(query.dtype, query.group is not None), self.span(node))

    def query_leaves(self, value: ir.Const) -> list[ir.Expr]:
        """A passed query's variables, in the order of the callee's parameters (bind_query_param)."""
        query = value.value
        assert isinstance(query, GridQuery), query  # (query_argument made it)
        return [ir.Var(s, value.span) for s in query.variables()]

    def bind_query_param(self, p: cst.Param, t: GridQueryT, params: list[ir.Sym]) -> None:
        """A func's `wp.HashGridQuery[...]` parameter: the query's variables as parameters (the caller's
        values: looping here leaves the caller's query as it was), its grid id one the loader checked."""
        name = p.name.value
        query = GridQuery.named(name, ir.Sym(f"{name}.grid", 0, UINT64), t.dtype, t.grouped)
        self.grid_queries[name] = query
        self.env[query.grid.name] = self.new_binding(query.grid, self.span(p.name), ())
        self.grid_ids[query.grid.name] = ("hash_grid", t.dtype, p.name)
        params += query.variables()

    def check_grid_ids(self) -> None:
        """At the end of a body: a grid id assigned anywhere in it is no longer the parameter the loader checked."""
        for name, (kind, _, use) in self.grid_ids.items():
            if self.assign_counts.get(name):  # reported, not raised: the body is done
                self.diags.error("TC0401", f"unsupported syntax: `{name}` is {KINDS[kind][0]} id and is assigned in "
                                 f"`{self.fd.name}`; the loader checks the id the launch passes, so it must stay as "
                                 "passed", self.span(use), help="keep the parameter unchanged; bind other values to "
                                 "other names")

    def spatial_ids(self) -> tuple[tuple[str, str, str], ...]:
        return tuple(sorted((name, kind, dtype) for name, (kind, dtype, _) in self.grid_ids.items()))

    def pass_grid_ids(self, fn: ir.Function, args: list[ir.Expr], node: cst.Call) -> None:
        """A call of a func that reads grid ids: an argument given for one that is the caller's own checked
        id passes as it is, any other uint64 value checked against the live objects (live_grid_id)."""
        positions = {p.name: k for k, p in enumerate(fn.params)}
        for param, kind, dtype in fn.spatial_ids:
            at = positions[param]
            arg = args[at]
            name = arg.sym.name if isinstance(arg, ir.Var) else None
            if isinstance(arg, ir.Var) and name is not None and self.grid_candidates.get(name) is arg.sym \
                    and self.env[name].sym is arg.sym:
                self.grid_id(node, dtype, name, kind)
            else:
                args[at] = self.live_grid_id(arg, kind, dtype, node)

    # ------------------------------------------------------------ its loop

    def grid_query_for(self, node: cst.For) -> list[ir.Stmt] | None:
        """`for index in query:` (or straight over `wp.hash_grid_query(...)`); None for other loops."""
        it = node.iter
        out: list[ir.Stmt] = []
        if self.is_query_call(it):
            assert isinstance(it, cst.Call)  # (is_query_call)
            name = f"query@{self.span(it).line}:{self.span(it).col}"
            out = self.make_query(name, it, node)
        elif isinstance(it, cst.Name) and it.value in self.grid_queries and it.value not in self.env:
            name = it.value
        else:
            return None
        if isinstance(self.grid_queries[name], TiledQuery):
            self.fail("TC0401", f"unsupported syntax: a loop over the tiled query `{name}`; a block's shared walk "
                      "steps by its `_next` in a `while wp.tile_query_valid(query):` loop", node.iter)
        if node.orelse is not None:
            self.fail("TC0401", "unsupported syntax: for-else over a query", node)
        if not isinstance(node.target, cst.Name):
            self.fail("TC0401", "unsupported syntax: a loop target other than a name", node.target)
        index = self.declare(node.target, INT32, node)
        return out + self.query_loops(self.grid_queries[name], index, node.body, node)

    def grid_query_while(self, node: cst.While) -> list[ir.Stmt] | None:
        """`while wp.hash_grid_query_next(query, index):` the same loops, `index` the current point (a
        mesh's box query: `wp.mesh_query_next(query, face)`, the current face)."""
        guarded = self.guarded_query_while(node)
        if guarded is not None:
            return list(self.block(guarded))
        test = node.test
        api = self.scope.api_attr(test.func) if isinstance(test, cst.Call) else None
        if api not in NEXT_CALLS:
            return None
        assert isinstance(test, cst.Call)  # (api)
        kind = NEXT_CALLS[api]
        given = self.query_arguments(api, test, (("query", REQUIRED), ("index", REQUIRED), *(
            (("max_dist", None),) if kind == "bvh" else ())))
        if any(a.keyword is not None for a in test.args[:2]):
            self.fail("TC0408", f"{api}: takes a query and an int variable, by position", test)
        query_node, index_node = given["query"], given["index"]
        calls = [f"`wp.{q}(...)`" for q, k in QUERY_CALLS.items() if k == kind and q not in TILED_QUERIES]
        made = " or ".join([", ".join(calls[:-1]), calls[-1]] if len(calls) > 1 else calls)
        query = self.grid_queries.get(query_node.value) if isinstance(query_node, cst.Name) \
            and query_node.value not in self.env else None
        if query is None or query_kind(query) != kind:
            self.fail("TC0401", f"unsupported syntax: {api} takes the name a {made} is bound to", query_node)
        if not isinstance(index_node, cst.Name):
            self.fail("TC0401", f"unsupported syntax: {api} writes the index to a variable", index_node)
        if node.orelse is not None:
            self.fail("TC0401", "unsupported syntax: while-else", node)
        max_dist = None
        if "max_dist" in given:  # evaluated at each test of the walk, as Warp evaluates it at each advance
            max_dist = self.retype_literal(self.expr(given["max_dist"]), FLOAT32)
            if max_dist.type != FLOAT32:
                self.fail("TC0201", f"{api}: `max_dist` must be a float32, got {describe(max_dist.type)}",
                          given["max_dist"])
        index = self.declare(index_node, INT32, node)
        return self.query_loops(query, index, node.body, node, max_dist)

    def guarded_query_while(self, node: cst.While) -> cst.IndentedBlock | None:
        """`while count < limit and wp.bvh_query_next(query, index): body` (Newton's style3d BVH queries)
        as `if count < limit:` around `while wp.bvh_query_next(query, index): body; if not (count <
        limit): break`. The same: Python tests the guard before each advance, and only the body can
        change what the guard reads; so the guard may not mention the index (written by the advance) and
        calls nothing (a call could have effects the advance would reorder)."""
        test = node.test
        if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)):
            return None
        advance = test.right
        api = self.scope.api_attr(advance.func) if isinstance(advance, cst.Call) else None
        if api not in NEXT_CALLS or node.orelse is not None:
            return None
        guard = test.left
        index = advance.args[1].value if isinstance(advance, cst.Call) and len(advance.args) > 1 else None
        calls = any(isinstance(n, cst.Call) for n in subnodes(guard))
        if calls or (isinstance(index, cst.Name) and index.value in names_in(guard)):
            self.fail("TC0401", f"unsupported syntax: `while <guard> and wp.{api}(...)` takes a guard that calls "
                      "nothing and does not read the index", guard)
        stop = cst.If(test=cst.UnaryOperation(cst.Not(), guard.with_changes(
            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])), body=cst.IndentedBlock([cst.SimpleStatementLine(
                [cst.Break()])]))
        body = node.body
        statements: list[cst.BaseStatement] = list(body.body) if isinstance(body, cst.IndentedBlock) else \
            [cst.SimpleStatementLine(cast(cst.SimpleStatementSuite, body).body)]
        loop = node.with_changes(test=advance, body=cst.IndentedBlock([*statements, stop]))
        outer = cst.If(test=guard, body=cst.IndentedBlock([loop]))
        self.parsed.place_all_like(outer, node)  # what is new placed at the loop; the user's nodes keep theirs
        return cst.IndentedBlock([outer])

    def note_id_argument(self, api: str, node: cst.Call) -> None:
        """The `id` argument of a hash-grid, mesh or BVH builtin (by keyword or first), checked and recorded."""
        given = [a for a in node.args if a.keyword is not None and a.keyword.value == "id"] or \
            [a for a in node.args[:1] if a.keyword is None]
        if given:
            grid = api.startswith("hash_grid")  # else a mesh's or BVH's builtin: their points are float32
            kind = "hash_grid" if grid else "bvh" if api.startswith("bvh") else "volume" if api.startswith(
                "volume") else "mesh"
            checked = self.grid_id(given[0].value, "any" if grid or kind == "volume" else "float32", kind=kind)
            if not isinstance(checked, ir.Var):  # a value's id, checked: what the op's lowering takes for it
                self.lowered_ids[given[0].value] = checked

    def refuse_query_call(self, api: str, node: cst.Call) -> None:
        """A query or its advance anywhere but where the two loop forms above take them."""
        if api in TILED_QUERIES:
            self.fail("TC0401", f"unsupported syntax: bind `wp.{api}(...)` to a name, then step it in a "
                      "`while wp.tile_query_valid(query):` loop", node)
        if api in QUERY_CALLS:
            self.fail("TC0401", f"unsupported syntax: bind `wp.{api}(...)` to a name, or loop over it "
                      f"(`for index in wp.{api}(...):`)", node)
        if api in NEXT_CALLS:
            self.fail("TC0401", f"unsupported syntax: `wp.{api}` is taken only as a while loop's "
                      f"condition (`while wp.{api}(query, index):`)", node,
                      help="or loop over the query: `for index in query:`")

    def refuse_query_value(self, node: cst.Name) -> None:
        if node.value in self.grid_queries and node.value not in self.env:
            self.fail("TC0401", f"unsupported syntax: the query `{node.value}` used as a value (tilec "
                      "loops over a query, or passes a hash grid's to a func's `wp.HashGridQuery[...]` parameter)", node,
                      help=f"loop over it: `for index in {node.value}:`")

    def query_body(self, body_node: cst.BaseSuite) -> tuple[tuple[ir.Stmt, ...], ir.Sym | None]:
        """A query loop's body, lowered, and its break flag (None without a `break`)."""
        self.loop_depth += 1
        self.query_depths.append(self.loop_depth)
        self.query_breaks.append(None)
        try:
            body = self.block(body_node)
        finally:
            self.loop_depth -= 1
            self.query_depths.pop()
            stop = self.query_breaks.pop()
        return body, stop

    def query_loops(self, query: Query, index: ir.Sym, body_node: cst.BaseSuite, node: cst.CSTNode,
                    max_dist: ir.Expr | None = None) -> list[ir.Stmt]:
        if isinstance(query, MeshQuery):
            return self.mesh_query_loops(query, index, body_node, node, max_dist)
        assert isinstance(query, GridQuery)  # (grid_query_for and grid_query_while refuse a tiled query)
        span = self.span(node)
        grid = ir.Var(query.grid, span)
        body, stop = self.query_body(body_node)
        read = query.variables()[1:]  # the bounds and the group (the grid's id is a parameter: never rebound)
        held = [self.new_temp(INT32) for _ in read]  # the loop's own copies: rebinding the query in it changes nothing
        x0, x1, y0, y1, z0, z1 = (ir.Var(s, span) for s in held[:6])
        z, y, x, k = (self.new_temp(INT32) for _ in range(4))
        one = ir.Const(1, INT32, span)

        def op(name: str, *args: ir.Expr) -> ir.OpCall:
            return ir.OpCall(name, args, (), INT32, span)

        cell = self.new_temp(INT32)
        current = ir.Assign(index, op("hash_grid_point_id", grid, ir.Var(k, span)), span)
        if query.group is None:
            first, last = op("hash_grid_cell_begin", grid, ir.Var(cell, span)), op("hash_grid_cell_end", grid, ir.Var(
                cell, span))
        else:  # the cell's points of the query's group (a grid built with groups; the whole cell otherwise)
            group = ir.Var(held[6], span)
            first = op("hash_grid_group_begin", grid, ir.Var(cell, span), group)
            last = op("hash_grid_group_end", grid, ir.Var(cell, span), group)
        points = ir.For(k, first, last, one, (current, *body), span)
        after = (ir.If(ir.Var(stop, span), (ir.Break(span),), (), span),) if stop is not None else ()
        cells: ir.Stmt = ir.For(x, x0, x1, one, (ir.Assign(cell, op("hash_grid_cell", grid, ir.Var(x, span), ir.Var(
            y, span), ir.Var(z, span)), span), points, *after), span)
        cells = ir.For(y, y0, y1, one, (cells, *after), span)
        cells = ir.For(z, z0, z1, one, (cells, *after), span)
        start = [ir.Assign(h, ir.Var(b, span), span) for h, b in zip(held, read)]
        if stop is None:
            return [*start, cells]
        return [*start, ir.Assign(stop, ir.Const(False, BOOL, span), span), cells]

    def mesh_query_loops(self, query: MeshQuery, index: ir.Sym, body_node: cst.BaseSuite,
                         node: cst.CSTNode, max_dist: ir.Expr | None) -> list[ir.Stmt]:
        """The leaves whose boxes the query's shape touches (a while loop: the walk skips the subtrees
        it does not), and in each the faces (a Bvh's items) it touches; `index` each such one. A ray's
        tests read max_dist (+inf without one: `for item in query`)."""
        span = self.span(node)
        body, stop = self.query_body(body_node)
        mesh = ir.Var(query.mesh, span)
        held = [self.new_temp(v.type) for v in query.variables()]  # the loop's own copies, as for a grid
        shape: tuple[ir.Expr, ...] = tuple(ir.Var(h, span) for h in held)
        if query.shape in ("ray", "capsule"):
            shape += (max_dist if max_dist is not None else ir.Const(float("inf"), FLOAT32, span),)
        leaf, k = self.new_temp(INT32), self.new_temp(INT32)
        held_root = self.new_temp(INT32) if query.root is not None else None
        root: ir.Expr = ir.Var(held_root, span) if held_root is not None else ir.Const(-1, INT32, span)

        def op(name: str, *args: ir.Expr, t: object = INT32) -> ir.OpCall:
            return ir.OpCall(name, args, (), t, span)  # type: ignore[arg-type]

        def next_leaf(after: ir.Expr) -> ir.Assign:
            return ir.Assign(leaf, op(NEXT_LEAF[query.shape], mesh, after, root, *shape), span)

        zero = ir.Const(0, INT32, span)
        skip = ir.If(op("lt", ir.Var(index, span), zero, t=BOOL), (ir.Continue(span),), (), span)
        faces = ir.For(k, op("mesh_leaf_begin", mesh, ir.Var(leaf, span)), op("mesh_leaf_end", mesh, ir.Var(
            leaf, span)), ir.Const(1, INT32, span), (ir.Assign(index, op(ITEM_TEST[query.kind, query.shape], mesh, ir.Var(k, span), *shape),
                                                               span), skip, *body), span)
        after = (ir.If(ir.Var(stop, span), (ir.Break(span),), (), span),) if stop is not None else ()
        walk = ir.While(op("ge", ir.Var(leaf, span), zero, t=BOOL), (faces, *after, next_leaf(ir.Var(leaf, span))),
                        span)
        out: list[ir.Stmt] = [*(ir.Assign(h, ir.Var(v, span), span) for h, v in zip(held, query.variables()))]
        if held_root is not None and query.root is not None:
            out.append(ir.Assign(held_root, ir.Var(query.root, span), span))
        out.append(next_leaf(ir.Const(-1, INT32, span)))
        if stop is not None:
            out.append(ir.Assign(stop, ir.Const(False, BOOL, span), span))
        return [*out, walk]

    def query_break(self, span: Span) -> list[ir.Stmt] | None:
        """A `break` directly in a query's body (no loop of its own between): set the flag, leave."""
        if not self.query_depths or self.loop_depth != self.query_depths[-1]:
            return None
        flag = self.query_breaks[-1]
        if flag is None:
            flag = self.new_temp(BOOL)
            self.query_breaks[-1] = flag
        return [ir.Assign(flag, ir.Const(True, BOOL, span), span), ir.Break(span)]

