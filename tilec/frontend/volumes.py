"""Warp's sparse volumes as its users write them:

    uvw = wp.volume_world_to_index(volume, x)
    d = wp.volume_sample_f(volume, uvw, wp.Volume.LINEAR)          # or volume_sample(..., dtype=float)
    d = wp.volume_sample_grad_f(volume, uvw, wp.Volume.LINEAR, g)  # g: a vec3 variable, written

Mixed into `FunctionChecker`. The typed builtins (`volume_sample_f`, `_v`, `_i`, `volume_lookup_*`,
`volume_store_*`, the transforms) are ops of the table (ops/volumes.py); here: Warp's generic spellings
(`volume_sample`, `volume_lookup`, `volume_store` with a `dtype` or a value) mapped to them, and
`volume_sample_grad_f` (or `volume_sample_grad(..., dtype=float)`), whose `grad` argument is written:
lowered before its statement (hoist_volume_gradients) into one walk of the sample's corners
(`volume_sample_grad4`: the sample and its gradient), `grad` assigned the gradient; the call then reads
the sample. A volume's id is checked as a mesh's (hash_grids.py grid_id: a parameter the
loader checks, or a value checked where it is read).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from .. import ir
from ..ir.types import FLOAT32, INT32, Scalar, VecT, describe
from ..ops import REQUIRED
from ..ops.volumes import VEC3F
from . import annotations as ann
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .check import Lowered

GRADIENTS = ("volume_sample_grad_f", "volume_sample_grad")
GENERIC = ("volume_sample", "volume_lookup", "volume_store")
BY_TYPE = {"volume_sample": {FLOAT32: "volume_sample_f", VEC3F: "volume_sample_v", INT32: "volume_sample_i"},
           "volume_lookup": {FLOAT32: "volume_lookup_f", VEC3F: "volume_lookup_v", INT32: "volume_lookup_i"},
           "volume_store": {FLOAT32: "volume_store_f", VEC3F: "volume_store_v", INT32: "volume_store_i"}}
PARAMS = {"volume_sample": ("id", "uvw", "sampling_mode", "dtype"), "volume_lookup": ("id", "i", "j", "k", "dtype"),
          "volume_store": ("id", "i", "j", "k", "value"), "volume_sample_grad_f": ("id", "uvw", "sampling_mode", "grad"),
          "volume_sample_grad": ("id", "uvw", "sampling_mode", "grad", "dtype")}
TYPES = "float, wp.vec3f or wp.int32 (tilec's volumes hold one of those)"


class VolumeLowering(LoweringHost):
    hoisted: dict[cst.Call, ir.Expr]  # (mesh_queries.py's): calls lowered before their statement -> their value

    def volume_id(self, node: cst.BaseExpression) -> ir.Expr:
        return self.grid_id(node, "any", kind="volume")

    def lower_volume_call(self, api: str, node: cst.Call) -> Lowered:
        """Warp's generic volume builtins, and a `volume_sample_grad_f` lowered before its statement."""
        if api in GRADIENTS:
            if node not in self.hoisted:
                self.fail("TC0401", f"unsupported syntax: wp.{api} in a while loop's condition (it writes its `grad` "
                          "argument)", node, help="call it in a statement before the loop and again at its end")
            return self.hoisted[node]
        args = self.query_arguments(api, node, tuple((name, REQUIRED) for name in PARAMS[api]))
        if api == "volume_store":
            value = self.expr(args["value"])
            op = BY_TYPE[api].get(value.type) if isinstance(value, (ir.Const, ir.Var, ir.OpCall, ir.Call)) else None
            if op is None:
                self.fail("TC0201", f"volume_store: `value` must be a {TYPES}, got {describe(value.type)}", args["value"])
            coords = [self.retype_literal(self.expr(args[n]), INT32) for n in "ijk"]
            return self.make_op(op, [self.volume_id(args["id"]), *coords, value], {}, node)
        op = self.volume_op(api, args["dtype"])
        if api == "volume_lookup":
            coords = [self.retype_literal(self.expr(args[n]), INT32) for n in "ijk"]
            return self.make_op(op, [self.volume_id(args["id"]), *coords], {}, node)
        operands = [self.volume_id(args["id"]), self.expr(args["uvw"])]
        if op != "volume_sample_i":  # (an int volume's sample is its nearest voxel's)
            operands.append(self.retype_literal(self.expr(args["sampling_mode"]), INT32))
        return self.make_op(op, operands, {}, node)

    def volume_op(self, api: str, dtype: cst.BaseExpression) -> str:
        try:
            t = ann.annotation(dtype, self.scope)
        except ann.AnnotationError:
            t = None
        op = BY_TYPE[api].get(t) if isinstance(t, (Scalar, VecT)) else None
        if op is None:
            self.fail("TC0201", f"{api}: `dtype` must be {TYPES}", dtype)
        return op

    def hoist_volume_gradients(self, node: cst.CSTNode) -> list[ir.Stmt]:
        """The `volume_sample_grad_f` calls of a statement (an `if`'s test), lowered before it: its `grad`
        variable assigned the sample's gradient, the sample held; the call then reads the sample."""
        if "volume_sample_grad" not in self.parsed.source or isinstance(node, cst.While):
            return []
        pending: list[cst.CSTNode] = [node.test] if isinstance(node, cst.If) else [node] if isinstance(
            node, cst.BaseSmallStatement) else []
        out: list[ir.Stmt] = []
        while pending:  # (a loop, not recursion: an expression may nest deeper than Python's stack)
            n = pending.pop()
            api = self.scope.api_attr(n.func) if isinstance(n, cst.Call) else None
            if api in GRADIENTS:
                out += self.volume_gradient(api, cast(cst.Call, n))
            pending += reversed(n.children)
        return out

    def volume_gradient(self, api: str, call: cst.Call) -> list[ir.Stmt]:
        args = self.query_arguments(api, call, tuple((name, REQUIRED) for name in PARAMS[api]))
        if api == "volume_sample_grad" and self.volume_op("volume_sample", args["dtype"]) != "volume_sample_f":
            self.fail("TC0430", "volume_sample_grad: tilec takes the gradient of a float volume's samples only "
                      "(dtype=float)", args["dtype"])
        span = self.span(call)
        held: list[ir.Stmt] = []
        operands: list[ir.Expr] = []
        for value in (self.volume_id(args["id"]), self.expr(args["uvw"]),
                      self.retype_literal(self.expr(args["sampling_mode"]), INT32)):
            if isinstance(value, (ir.Var, ir.Const)):
                operands.append(value)
                continue
            temp = self.new_temp(value.type)
            held.append(ir.Assign(temp, value, span))
            operands.append(ir.Var(temp, span))
        target = args["grad"]
        if not (isinstance(target, cst.Name) and target.value in self.env):
            self.fail("TC0401", f"unsupported syntax: {api}: `grad` is written to: it must be a variable bound before "
                      "the call", target, help="bind it first, e.g. `grad = wp.vec3()`")
        assert isinstance(target, cst.Name)  # (checked above)
        both = self.make_op("volume_sample_grad4", operands, {}, call)
        assert isinstance(both, ir.OpCall)  # (a value op)
        held_both = self.new_temp(both.type)
        parts = [ir.OpCall("value_extract", (ir.Var(held_both, span), ir.Const(k, INT32, span)), (), FLOAT32, span)
                 for k in range(4)]
        grad = ir.OpCall("value_new", tuple(parts[1:]), (("type", VEC3F),), VEC3F, span)
        self.hoisted[call] = parts[0]
        return [*held, ir.Assign(held_both, both, span), ir.Assign(self.declare(target, VEC3F, target), grad, span)]
