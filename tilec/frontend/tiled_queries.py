"""Warp's tiled queries: a block's shared walk of a mesh's or a Bvh's tree.

    query = wp.tile_bvh_query_aabb(bvh, low, high)       # or tile_bvh_query_ray(bvh, start, dir),
    while wp.tile_query_valid(query):                    #    tile_mesh_query_aabb(mesh, low, high)
        item = wp.untile(wp.tile_bvh_query_next(query))  # lane l: the step's l-th item, -1 past the last
        if item >= 0:
            ...

Mixed into `FunctionChecker`. Like a per-thread query (hash_grids.py) the query lives in the front
end: binding one evaluates its shape once (`query.a`, `query.b`) and sets its cursor (an int64: the
leaf and the position in it, runtime mesh_query.h) at the first item the shape touches, and `valid`
to true. `tile_..._next(query)` is a (block_dim,) int tile, lane l's element the l-th item from the
cursor (`mesh_batch_item`, -1 past the last); after its statement the cursor moves past those items
(`mesh_batch_advance`) and `valid` says whether the step found any, as Warp's tile_query_valid: true
until a step finds none. Each lane's item is found from the cursor by the lane itself, so the block
needs no shared state; the items come in the walk's order (Warp's order is unspecified).
"""
from __future__ import annotations

import libcst as cst

from .. import ir
from ..ir.types import BOOL, INT32, INT64
from ..ops import REQUIRED
from ..ops.spatial import VEC3F
from .hash_grids import TILED_NEXT, TILED_QUERIES, TiledQuery
from .lowering_host import LoweringHost


class TiledQueries(LoweringHost):
    def make_tiled_query(self, api: str, name: str, call: cst.Call, node: cst.CSTNode) -> list[ir.Stmt]:
        """`q = wp.tile_bvh_query_aabb(bvh, low, high)` (and the others): the shape, evaluated once, and
        the cursor at its first item."""
        kind, test = TILED_QUERIES[api]
        names = ("low", "high") if test == 0 else ("start", "dir")
        args = self.query_arguments(api, call, (("id", REQUIRED), *((n, REQUIRED) for n in names)))
        values = self.shape_values(api, args, ((key, VEC3F) for key in names))
        checked: list[ir.Stmt] = []
        mesh = self.id_variable(name, self.grid_id(args["id"], "float32", kind=kind), checked)
        query = self.kept_query(name, TiledQuery.named(name, mesh.sym, kind, test), node)
        assert isinstance(query, TiledQuery)  # (kept_query: the same kind of query)
        span = self.span(node)
        mesh_id = ir.Var(query.mesh, span)
        start = ir.OpCall("mesh_batch_start", (mesh_id, *values, ir.Const(test, INT32, span)), (), INT64, span)
        return [*checked, ir.Assign(query.a, values[0], span), ir.Assign(query.b, values[1], span),
                ir.Assign(query.cursor, start, span), ir.Assign(query.valid, ir.Const(True, BOOL, span), span)]

    def tiled_query_step(self, api: str, node: cst.Call) -> ir.Expr:
        """`wp.tile_query_valid(q)`: the query's `valid`; `wp.tile_bvh_query_next(q)` (and the others): the
        step's tile, the cursor and `valid` moved on after the statement (self.pending_aliases)."""
        given = self.query_arguments(api, node, (("query", REQUIRED),))["query"]
        kind = TILED_NEXT.get(api)
        query = self.grid_queries.get(given.value) if isinstance(given, cst.Name) \
            and given.value not in self.env else None
        if not isinstance(query, TiledQuery) or kind not in (None, query.kind):
            made = "tiled mesh or BVH query" if kind is None else "tiled mesh query" if kind == "mesh" else \
                "tiled BVH query"
            self.fail("TC0401", f"unsupported syntax: {api} takes the name a {made} (`wp.tile_"
                      f"{'mesh' if kind == 'mesh' else 'bvh'}_query_aabb(...)`, ...) is bound to", given)
        assert isinstance(given, cst.Name)  # (a query is bound to a name)
        span = self.span(node)
        if kind is None:
            return ir.Var(query.valid, span)
        if not self.in_simple_statement:  # (its cursor moves after the statement: a header has a body after it)
            self.fail("TC0401", f"unsupported syntax: {api} in the header of an `if`, `while` or `for`; step the "
                      f"query in a statement of its own (`items = wp.{api}({given.value})`)", node)
        if any(isinstance(s, ir.Assign) and s.target is query.cursor for s in self.pending_aliases):
            self.fail("TC0401", f"unsupported syntax: a second step of the query `{given.value}` in one statement "
                      "(Warp's would take two steps, in an order of its own)", node)
        mesh_id, cursor = ir.Var(query.mesh, span), ir.Var(query.cursor, span)
        shape = (ir.Var(query.a, span), ir.Var(query.b, span), ir.Const(query.test, INT32, span))

        def item(lane: ir.Expr) -> ir.OpCall:
            return ir.OpCall("mesh_batch_item", (mesh_id, cursor, lane, *shape), (), INT32, span)

        found = ir.OpCall("ge", (item(ir.Const(0, INT32, span)), ir.Const(0, INT32, span)), (), BOOL, span)
        moved = ir.OpCall("mesh_batch_advance", (mesh_id, cursor, ir.Const(self.block_dim, INT32, span), *shape), (),
                          INT64, span)
        self.pending_aliases += [ir.Assign(query.valid, found, span), ir.Assign(query.cursor, moved, span)]
        self.lane_ops = True
        lanes: ir.Expr = self.make_op("tile", [item(ir.OpCall("lane", (), (), INT32, span))],
                                      {"preserve_type": False, "block_dim": self.block_dim}, node)
        return lanes
