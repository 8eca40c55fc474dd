"""Warp's mesh queries that return a struct, as its users write them:

    q = wp.mesh_query_point(mesh, x, max_dist)     # or _no_sign, _sign_normal, _sign_parity, _sign_winding_number
    far = wp.mesh_query_furthest_point_no_sign(mesh, x, min_dist)
    if q.result:
        p = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    hit = wp.mesh_query_ray(mesh, start, direction, max_t)

Mixed into `FunctionChecker`. The result is a struct value (`wp.MeshQueryPoint`,
`wp.MeshQueryRay`: ir.types.BUILTIN_STRUCTS) whose fields are internal ops of the face one walk of
the mesh's tree found (-1: none; ops/spatial.py, runtime mesh_query.h): `result` is face >= 0, `face`
the face (0 when none, as Warp's), u, v, t and the ray's sign are recomputed from the face (their
gradients in the point, the ray's start and direction are those ops' adjoints), a point's sign is
the rays' vote or the weighted normal's. Every field of a miss is zero, as in Warp.

Bound to a name (`q = ...`), the arguments and the walk are evaluated once, before the fields; a
query read in place (`wp.mesh_query_point(...).face`) walks once per field it reads.

Warp's older forms write the fields to the caller's variables and return whether a face was found:

    hit = wp.mesh_query_point(mesh, x, max_dist, sign, face, u, v)     # or a statement, or an `if` test

The call is lowered before its statement (hoist_mesh_queries): the query, then on a hit the
variables assigned (a miss leaves them as they were, as Warp's); the call itself reads `result`.
"""
from __future__ import annotations

from typing import Any, cast

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import BOOL, BUILTIN_STRUCT_CALLS, BUILTIN_STRUCTS, FLOAT32, INT32, INT64, ArrayT, StructT, describe
from ..ops import REQUIRED
from ..ops.spatial import VEC3F
from .lower_structs import StructValue
from .lowering_host import LoweringHost

POINT_ARGS: tuple[tuple[str, Any], ...] = (("id", REQUIRED), ("point", REQUIRED), ("max_dist", REQUIRED))
RAY_ARGS: tuple[tuple[str, Any], ...] = (("id", REQUIRED), ("start", REQUIRED), ("dir", REQUIRED),
                                         ("max_t", REQUIRED), ("root", -1))
# api -> (its parameters with their defaults, how a point is signed); its struct: BUILTIN_STRUCT_CALLS
QUERIES: dict[str, tuple[tuple[tuple[str, Any], ...], str | None]] = {
    "mesh_query_point": (POINT_ARGS, "rays"),
    "mesh_query_point_no_sign": (POINT_ARGS, None),
    "mesh_query_point_sign_normal": ((*POINT_ARGS, ("epsilon", 1.0e-3)), "normal"),
    # Warp signs by the rays' vote for a mesh built without winding-number support (the loader's
    # Mesh refuses that support), whatever the accuracy and threshold
    "mesh_query_point_sign_winding_number": ((*POINT_ARGS, ("accuracy", 2.0), ("threshold", 0.5)), "rays"),
    "mesh_query_point_sign_parity": ((*POINT_ARGS, ("n_sample", 1), ("perturbation_scale", 0.1)), "parity"),
    "mesh_query_furthest_point_no_sign": ((("id", REQUIRED), ("point", REQUIRED), ("min_dist", REQUIRED)), "furthest"),
    "mesh_query_ray": (RAY_ARGS, None),
}
INTS = ("root", "n_sample")
# What `wp.mesh_get(id)` gives (Warp's Mesh struct as kernels read it): the mesh's arrays
MESH_VIEW = StructT("Mesh", (("points", ArrayT(VEC3F, 1)), ("velocities", ArrayT(VEC3F, 1)),
                             ("indices", ArrayT(INT32, 1))))
assert QUERIES.keys() == BUILTIN_STRUCT_CALLS.keys()
# How many inputs a query takes before the older form's variables (its required parameters)
INPUTS = {api: sum(default is REQUIRED for _, default in params) for api, (params, _) in QUERIES.items()}
VECTORS = ("point", "start", "dir")
# The older forms' variables, after the query's inputs: (parameter, the field written to it)
POINT_OUTS = (("inside", "sign"), ("face", "face"), ("bary_u", "u"), ("bary_v", "v"))
LEGACY_OUTS: dict[str, tuple[tuple[str, str], ...]] = {
    **{api: POINT_OUTS for api in QUERIES if api.startswith("mesh_query_point")},
    "mesh_query_point_no_sign": POINT_OUTS[1:],
    "mesh_query_furthest_point_no_sign": POINT_OUTS[1:],
    "mesh_query_ray": (("t", "t"), ("bary_u", "u"), ("bary_v", "v"), ("sign", "sign"), ("normal", "normal"),
                       ("face", "face")),
}


class MeshQueries(LoweringHost):
    hoisted: dict[cst.Call, ir.Expr]  # older-form calls lowered before their statement -> their result

    def bind_mesh_query(self, target: cst.Name, value_node: cst.BaseExpression,
                        node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`q = wp.mesh_query_point(...)`: the arguments and the walk evaluated once; None for other values."""
        api = self.scope.api_attr(value_node.func) if isinstance(value_node, cst.Call) else None
        if api not in QUERIES:
            return None
        assert isinstance(value_node, cst.Call)  # (api)
        if self.is_legacy_query(value_node) or value_node in self.hoisted:
            return None  # (its result, a bool, is bound as any value)
        held: list[ir.Stmt] = []
        value = self.mesh_query(api, value_node, held)
        return held + self.bind_struct(target, value, node)

    def is_legacy_query(self, node: cst.CSTNode) -> bool:
        """A query call of Warp's older form: its variables given (all by position at least, as no
        struct form takes so many, or one by keyword)."""
        api = self.scope.api_attr(node.func) if isinstance(node, cst.Call) else None
        if api not in QUERIES:
            return False
        assert isinstance(node, cst.Call)  # (api)
        outs = {name for name, _ in LEGACY_OUTS[api]}
        positional = sum(a.keyword is None for a in node.args)
        return positional >= INPUTS[api] + len(outs) or any(
            a.keyword is not None and a.keyword.value in outs for a in node.args)

    def hoist_mesh_queries(self, node: cst.CSTNode) -> list[ir.Stmt]:
        """The older-form queries of a statement (an `if`'s test), lowered before it; the calls then read
        their results (`self.hoisted`)."""
        if "mesh_query" not in self.parsed.source:  # (most files: no walk of every statement)
            return []
        pending: list[cst.CSTNode] = [node.test] if isinstance(node, (cst.If, cst.While)) else [node] if isinstance(
            node, cst.BaseSmallStatement) else []
        calls: list[cst.Call] = []
        while pending:  # (a loop, not recursion: an expression may nest deeper than Python's stack)
            n = pending.pop()
            if self.is_legacy_query(n):
                calls.append(cast(cst.Call, n))
            pending += reversed(n.children)
        out: list[ir.Stmt] = []
        for call in calls:
            if isinstance(node, cst.While):
                self.fail("TC0401", "unsupported syntax: a query of Warp's older form (writing its results to "
                          "variables) in a while loop's condition", call, help="use the struct form: "
                          "`q = wp.mesh_query_point(mesh, p, max_dist)`, then `q.face`, `q.u`, ...")
            out += self.legacy_mesh_query(call)
        return out

    def legacy_mesh_query(self, call: cst.Call) -> list[ir.Stmt]:
        api = self.scope.api_attr(call.func)
        assert api is not None  # (is_legacy_query)
        params, _ = QUERIES[api]
        outs = LEGACY_OUTS[api]
        count = INPUTS[api]  # the inputs, the variables (required too), the inputs with defaults
        given = self.query_arguments(api, call, (*params[:count], *((n, REQUIRED) for n, _ in outs), *params[count:]))
        held: list[ir.Stmt] = []
        value = self.mesh_query_value(api, {k: v for k, v in given.items() if k not in dict(outs)}, call, held)
        span = self.span(call)
        writes: list[ir.Stmt] = []
        for param, field in outs:
            target = given[param]
            if not (isinstance(target, cst.Name) and target.value in self.env):
                self.fail("TC0401", f"unsupported syntax: {api}: `{param}` is written to: it must be a variable "
                          "bound before the call", target, help="bind it first, e.g. `face = int(0)`")
            assert isinstance(target, cst.Name)  # (checked above)
            leaf = value.leaves[field]
            writes.append(ir.Assign(self.declare(target, leaf.type, target), leaf, span))
        self.hoisted[call] = value.leaves["result"]
        return [*held, ir.If(value.leaves["result"], tuple(writes), (), span)]

    def mesh_query(self, api: str, call: cst.Call, held: list[ir.Stmt] | None) -> Any:
        """The query's struct value (or, for one lowered before its statement, its result); with `held`,
        its arguments and face assigned to temporaries appended there."""
        if call in self.hoisted:
            return self.hoisted[call]
        if self.is_legacy_query(call):
            self.fail("TC0401", f"unsupported syntax: {api} of Warp's older form (writing its results to variables) "
                      "here; tilec takes it as a statement, as an assignment's value or as an `if` test", call)
        params, _ = QUERIES[api]
        return self.mesh_query_value(api, self.query_arguments(api, call, params), call, held)

    def mesh_query_value(self, api: str, args: dict[str, cst.BaseExpression], call: cst.Call,
                         held: list[ir.Stmt] | None) -> StructValue:
        params, signed = QUERIES[api]
        struct = BUILTIN_STRUCT_CALLS[api]
        span = self.span(call)
        mesh = self.held(self.grid_id(args["id"], "float32", kind="mesh"), held, span)
        values: dict[str, ir.Expr] = {}
        for name, default in params[1:]:
            given = args.get(name)
            values[name] = self.held(self.mesh_query_operand(api, name, given, default, span), held, span)

        def op(name: str, t: Any, *operands: ir.Expr) -> ir.OpCall:
            return ir.OpCall(name, (mesh, *operands), (), t, span)

        def k(value: int) -> ir.Const:
            return ir.Const(value, INT32, span)

        if struct == "MeshQueryRay":
            start, direction = values["start"], values["dir"]
            face = self.held(op("mesh_ray_face", INT32, start, direction, values["max_t"], values["root"]), held, span)
            leaves: dict[str, ir.Expr] = {field: op("mesh_ray_hit", FLOAT32, face, start, direction, k(which))
                      for which, field in enumerate(("t", "u", "v", "sign"))}
            leaves["normal"] = op("mesh_eval_face_normal", VEC3F, face)
        else:
            point = values["point"]
            sign: ir.Expr = ir.Const(0.0, FLOAT32, span)
            weight = "mesh_closest_weight"
            if signed == "normal":  # one walk: its face and sign as one code
                code = self.held(op("mesh_closest_signed", INT64, point, values["max_dist"], values["epsilon"]), held,
                                 span)
                face = self.held(ir.OpCall("mesh_signed_face", (code,), (), INT32, span), held, span)
                sign = ir.OpCall("mesh_signed_sign", (code,), (), FLOAT32, span)
            elif signed == "furthest":
                face = self.held(op("mesh_furthest_face", INT32, point, values["min_dist"]), held, span)
                weight = "mesh_furthest_weight"
            else:
                face = self.held(op("mesh_closest_face", INT32, point, values["max_dist"]), held, span)
                if signed == "rays":
                    sign = op("mesh_inside_rays", FLOAT32, face, point)
                elif signed == "parity":
                    sign = op("mesh_parity_sign", FLOAT32, face, point, values["n_sample"],
                              values["perturbation_scale"])
            leaves = {"sign": sign, **{field: op(weight, FLOAT32, face, point, k(which))
                                       for which, field in enumerate(("u", "v"))}}
        leaves.update(result=ir.OpCall("ge", (face, k(0)), (), BOOL, span),
                      face=ir.OpCall("max", (face, k(0)), (), INT32, span))
        t = BUILTIN_STRUCTS[struct]
        return StructValue(t, {name: leaves[name] for name, _ in t.fields}, f"{api}(...)")

    def mesh_view(self, call: cst.Call) -> StructValue:
        """`wp.mesh_get(id)`: a struct value of the mesh's arrays (points, velocities, indices)."""
        mesh = self.grid_id(self.query_arguments("mesh_get", call, (("id", REQUIRED),))["id"], "float32", kind="mesh")
        span = self.span(call)
        leaves: dict[str, ir.Expr] = {name: ir.OpCall(f"mesh_{name}", (mesh,), (), cast(ArrayT, t), span)
                                      for name, t in MESH_VIEW.fields}
        return StructValue(MESH_VIEW, leaves, "mesh_get(...)")

    def held(self, value: ir.Expr, held: list[ir.Stmt] | None, span: Span) -> ir.Expr:
        """value, or (with `held`) a temporary assigned it there: read by every field, evaluated once."""
        if held is None or isinstance(value, (ir.Var, ir.Const)):
            return value
        temp = self.new_temp(value.type)
        held.append(ir.Assign(temp, value, span))
        return ir.Var(temp, span)

    def mesh_query_operand(self, api: str, name: str, node: cst.BaseExpression | None, default: Any,
                           span: Span) -> ir.Expr:
        """A query's operand other than the id, checked: a vec3f point, start or direction, a float32 distance."""
        if node is None:
            return ir.Const(default, INT32 if name in INTS else FLOAT32, span)
        value: ir.Expr = self.expr(node)
        wanted = VEC3F if name in VECTORS else INT32 if name in INTS else FLOAT32
        if self.is_weak(value) and wanted != VEC3F and isinstance(value.value, (int, float)) and not (
                wanted == INT32 and isinstance(value.value, float)):
            value = self.retype_literal(value, wanted)
        if value.type != wanted:
            self.fail("TC0201", f"{api}: `{name}` must be {describe(wanted)}, got {describe(value.type)}", node)
        return value
