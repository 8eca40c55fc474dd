"""Lowering of Warp's value types in SIMT code: constructors, components, component writes, `@`.

Mixed into `FunctionChecker` before the other lowerings (it refines `lower_call`,
`lower_attribute`, `lower_subscript`, `make_op`, `lower_op` and `expr` and defers to them for
everything that is not a vector or matrix). Guarantees: `quat * quat` and `transform *
transform` become `quat_mul` / `transform_multiply`; a component write `v.x = e` becomes
`v = value_insert(v, e, 0)`; `a[i].x = e` writes that component of the element only
(`array_store_part`), `a[i].x += e` is an atomic add of a vector that is `e` in that component
only (Warp's `+=` on array elements is atomic), `a[i].x *= e` reads, combines and stores the
element; every other form is a diagnostic.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .. import ir
from ..ir.types import FLOAT32, INT32, ArrayT, MatT, Scalar, StructT, TileT, Type, VecT, describe, tuple_items
from ..diagnostics import Span
from ..ops.values import ATTRIBUTES, NOT_YET, is_value
from . import annotations as ann
from . import consts
from .enum_properties import VectorConstant
from .lowering_host import LoweringHost
from .value_slices import ValueSliceLowering

if TYPE_CHECKING:
    from .check import Lowered

FAMILY_PRODUCTS = {"quat": "quat_mul", "transform": "transform_multiply"}


class ValueLowering(ValueSliceLowering, LoweringHost):
    # ------------------------------------------------------------ calls

    def lower_call(self, node: cst.Call, tid_count: int = 1) -> Lowered:
        t = self.constructed_type(node.func)
        if t is not None:
            return self.lower_constructor(t, node)
        typed = self.type_of_value(node.func)
        if typed is not None:  # `type(x)(...)`, `a.dtype(...)`: Warp's generic code constructing x's type
            if isinstance(typed, Scalar):
                return ir.Const(0, typed, self.span(node)) if not node.args else self.lower_cast(typed.name, node)
            if is_value(typed):
                return self.lower_constructor(typed, node)
            if isinstance(typed, StructT) and tuple_items(typed) is None:  # `type(s)(a, b)` of a struct value
                return self.construct_struct(typed, node)
            self.fail("TC0401", f"unsupported syntax: constructing {describe(typed)}", node.func)
        api = self.scope.api_attr(node.func)
        if api in ("quat_identity", "transform_identity", "identity"):
            return self.lower_identity(api, node)
        if api == "quat_to_matrix":
            return self.lower_quat_to_matrix(node)
        if api in ("vector", "matrix") and self.sized_constructor(api, node):
            return self.lower_sized_constructor(node)
        if api in ("vector", "matrix") and any(a.keyword is None for a in node.args):
            return self.lower_inferred_constructor(api, node)
        if api in ("quaternion", "transformation"):
            return self.lower_rotation_constructor(api, node)
        if api in NOT_YET:
            self.fail("TC0430", f"`{api}` is a Warp builtin on vectors/matrices not supported by tilec yet", node.func)
        return super().lower_call(node, tid_count)

    def type_of_value(self, func: cst.BaseExpression) -> Type | None:
        """The type `type(x)` names (x's), or `a.dtype` (an array's element type, a vector's or matrix's
        scalar type), else None."""
        if isinstance(func, cst.Call) and isinstance(func.func, cst.Name) and func.func.value == "type" \
                and "type" not in self.env and len(func.args) == 1 and func.args[0].keyword is None:
            return cast(Type, self.expr(func.args[0].value).type)
        if isinstance(func, cst.Attribute) and func.attr.value == "dtype" and self.scope.api_attr(func) is None \
                and self.scope.host_origin(func) is None:
            inner = self.type_of_value(func.value)
            if inner is None and not (isinstance(func.value, cst.Name) and func.value.value in self.env):
                return None
            held = inner if inner is not None else cast(Type, self.expr(func.value).type)
            return held.dtype if isinstance(held, (ArrayT, VecT, MatT, TileT)) else None
        return None

    def constructed_type(self, func: cst.BaseExpression) -> VecT | MatT | None:
        """The vector/matrix type a call constructs (`wp.vec3(...)`, an alias `vec5(...)`), else None."""
        if isinstance(func, cst.Name) and func.value in self.env:
            return None
        try:
            t = ann.element_type(func, self.scope)
        except ann.AnnotationError:
            return None
        return t if is_value(t) else None

    @staticmethod
    def sized_constructor(api: str, node: cst.Call) -> bool:
        """`wp.vector(length=n, dtype=T)` / `wp.matrix(shape=(m, n), dtype=T)` (components optional)."""
        given = {a.keyword.value for a in node.args if a.keyword is not None}
        return given == {"length" if api == "vector" else "shape", "dtype"}

    def lower_sized_constructor(self, node: cst.Call) -> ir.OpCall:
        """Warp's `wp.vector(*components, length=n, dtype=T)` in a body: the type from the keywords,
        zeros without components."""
        keywords = node.with_changes(args=[a for a in node.args if a.keyword is not None])
        self.parsed.place_like(keywords, node)
        try:
            t = ann.element_type(keywords, self.scope)
        except ann.AnnotationError as e:
            self.fail("TC0303", f"{self.scope.api_attr(node.func)}: {e.message}", e.node if e.node is not keywords else node)
        if not isinstance(t, (VecT, MatT)):
            self.fail("TC0303", "a sized constructor needs a constant size and a dtype", node)
        components = node.with_changes(args=[a for a in node.args if a.keyword is None])
        self.parsed.place_like(components, node)
        return self.lower_constructor(t, components)

    def lower_inferred_constructor(self, api: str, node: cst.Call) -> ir.OpCall:
        """Warp's `wp.vector(x, y, z[, dtype=T])` and `wp.matrix(a, b, c, d, shape=(2, 2)[, dtype=T])`:
        the length from the components, the dtype from `dtype=` else from the first component (an
        untyped literal's: float32 or int32, as in Warp)."""
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        size = "length" if api == "vector" else "shape"
        unknown = sorted(set(keywords) - {"dtype", size})
        if unknown:
            self.fail("TC0303", f"{api}: unknown keyword `{unknown[0]}` (it takes `{size}` and `dtype`)",
                      keywords[unknown[0]])
        if api == "matrix" and "shape" not in keywords:
            self.fail("TC0303", "matrix: needs `shape=(rows, cols)` with its components", node)
        nodes = [a.value for a in node.args if a.keyword is None]
        args: list[ir.Expr] = [self.expr(n) for n in nodes]
        held = args[0].type if len(args) == 1 else None
        sized = size in keywords and self.constant_of(keywords[size]) != (
            held.length if isinstance(held, VecT) else (held.rows, held.cols) if isinstance(held, MatT) else None)
        if isinstance(held, VecT if api == "vector" else MatT) and not sized:  # (`length=` its own length, or none)
            # `wp.types.vector(v, dtype=wp.float16)`: v converted (its own dtype without `dtype=`)
            dtype = ann.dtype(keywords["dtype"], self.scope) if "dtype" in keywords else held.dtype
            if dtype is None:
                self.fail("TC0303", f"{api}: `dtype` must be a scalar type", keywords["dtype"])
            converted = replace(held, dtype=dtype)
            return cast(ir.OpCall, self.make_op("value_new", args, {"type": converted}, node, where=nodes))
        if not all(isinstance(a.type, Scalar) for a in args):
            self.fail("TC0303", f"{api}: takes scalar components", nodes[0])
        if "dtype" in keywords:
            dtype = ann.dtype(keywords["dtype"], self.scope)
            if dtype is None:
                self.fail("TC0303", f"{api}: `dtype` must be a scalar type", keywords["dtype"])
        else:
            first = cast(Scalar, args[0].type)
            dtype = first if not self.is_weak(args[0]) or first.kind == "bool" else FLOAT32 if first.is_float else INT32
        t: VecT | MatT = VecT(dtype, len(args))
        if "length" in keywords:  # one component fills them all
            length = self.constant_of(keywords["length"])
            if not (isinstance(length, int) and length > 0):
                self.fail("TC0303", "vector: `length` must be a positive constant", keywords["length"])
            t = VecT(dtype, length)
        if api == "matrix":
            shape = self.constant_of(keywords["shape"])
            if not (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(n, int) and n > 0 for n in shape)):
                self.fail("TC0303", "matrix: `shape` must be a constant (rows, cols)", keywords["shape"])
            t = MatT(dtype, shape[0], shape[1])
        call: ir.OpCall = self.make_op("value_new", args, {"type": t}, node, where=nodes)
        return replace(call, args=tuple(self.as_component(a, t.dtype) for a in call.args))

    def lower_rotation_constructor(self, api: str, node: cst.Call) -> ir.OpCall:
        """Warp's generic `wp.quaternion(x, y, z, w)` / `wp.quaternion(ijk, real)` / `wp.quaternion()` and
        `wp.transformation(p, q)` / `wp.transformation(*7 components)`, `dtype=` optional: the dtype from
        `dtype=`, else from the first argument (a vector's, or an untyped literal's float32)."""
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        nodes = [a.value for a in node.args if a.keyword is None]
        if api == "transformation":  # `wp.transformation(p=..., q=...)`
            nodes += _named_parts(nodes, keywords)
        unknown = sorted(set(keywords) - {"dtype"})
        if unknown:
            self.fail("TC0303", f"{api}: unknown keyword `{unknown[0]}` (it takes `dtype`" +
                      (", or `p` and `q`)" if api == "transformation" else ")"), keywords[unknown[0]])
        args: list[ir.Expr] = [self.expr(n) for n in nodes]
        if "dtype" in keywords:
            dtype = ann.dtype(keywords["dtype"], self.scope)
            if dtype is None or not dtype.is_float:
                self.fail("TC0303", f"{api}: `dtype` must be a float type", keywords["dtype"])
        elif args and isinstance(args[0].type, VecT):
            dtype = args[0].type.dtype
        elif args and isinstance(args[0].type, Scalar) and not self.is_weak(args[0]):
            dtype = args[0].type
        else:
            dtype = FLOAT32
        t = VecT(dtype, 4, "quat") if api == "quaternion" else VecT(dtype, 7, "transform")
        args = _identity_rotation(args, t, self.span(node))
        nodes += [node] * (len(args) - len(nodes))
        call: ir.OpCall = self.make_op("value_new", args, {"type": t}, node, where=nodes)
        return replace(call, args=tuple(self.as_component(a, t.dtype) for a in call.args))

    def lower_constructor(self, t: VecT | MatT, node: cst.Call) -> ir.OpCall:
        given = list(node.args)
        if any(a.keyword is not None for a in given):
            named = {a.keyword.value: a for a in given if a.keyword is not None}
            transform = isinstance(t, VecT) and t.family == "transform"
            given = [a for a in given if a.keyword is None]
            given += _named_parts(given, named) if transform else []  # `wp.transform(p=..., q=...)`
            if named:
                self.fail("TC0303", f"{t}: takes positional components only" + (
                    " (or `p=` and `q=`)" if transform else ""), node)
        args: list[ir.Expr] = [self.literal_local(a.value) or self.expr(a.value) for a in given]
        where: list[cst.CSTNode] = [a.value for a in given]
        if isinstance(t, VecT):
            args = _identity_rotation(args, t, self.span(node))
            where += [node] * (len(args) - len(where))
        call: ir.OpCall = self.make_op("value_new", args, {"type": t}, node, where=where)
        return replace(call, args=tuple(self.as_component(a, t.dtype) for a in call.args))

    def literal_local(self, node: cst.BaseExpression) -> ir.Const | None:
        """A local assigned once from a number (`x = 0.1`) as the untyped literal it holds: Warp's typed
        constructors take such a local at their own precision (`wp.vec3d(x, 0.0, 0.0)` holds 0.1 as a
        float64, measured), where arithmetic keeps it a float32."""
        value = self.local_constant(node) if isinstance(node, cst.Name) and node.value in self.env else None
        if value is None:
            return None
        return ir.Const(value, FLOAT32 if isinstance(value, float) else INT32, self.span(node), weak=True)

    def as_component(self, e: ir.Expr, dtype: Scalar) -> ir.Expr:
        """An untyped literal as a component of the given dtype."""
        if self.is_weak(e) and isinstance(e.type, Scalar):
            literal = cast(float, e.value)  # an untyped scalar literal: an int, float or bool
            value = float(literal) if dtype.is_float else int(literal)
            return ir.Const(value, dtype, e.span)
        return e

    def lower_identity(self, api: str, node: cst.Call) -> ir.OpCall:
        """wp.quat_identity(dtype), wp.transform_identity(dtype), wp.identity(n, dtype): constants."""
        kw = {a.keyword.value if a.keyword else f"#{i}": a.value for i, a in enumerate(node.args)}
        dtype_node = kw.get("dtype", kw.get("#1" if api == "identity" else "#0"))
        dt = FLOAT32 if dtype_node is None else ann.dtype(dtype_node, self.scope)
        if dt is None or not dt.is_float:
            self.fail("TC0303", f"{api}: `dtype` must be a float type", dtype_node or node)
        span = self.span(node)
        if api == "identity":
            n_node = kw.get("n", kw.get("#0"))
            n = consts.NOT_CONST if n_node is None else self.constant_of(n_node)
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                self.fail("TC0305", "identity: `n` must be a positive compile-time integer", n_node or node)
            t: VecT | MatT
            t, values = MatT(dt, n, n), [float(i == j) for i in range(n) for j in range(n)]
        elif api == "quat_identity":
            t, values = VecT(dt, 4, "quat"), [0.0, 0.0, 0.0, 1.0]
        else:
            t, values = VecT(dt, 7, "transform"), [0.0] * 6 + [1.0]
        args = tuple(ir.Const(v, dt, span) for v in values)
        return ir.OpCall("value_new", args, (("type", t),), t, span)

    def lower_quat_to_matrix(self, node: cst.Call) -> Lowered:
        """wp.quat_to_matrix(q): the matrix whose columns are the basis vectors rotated by q (Warp's
        definition), built from quat_rotate so its adjoint and reference come with it."""
        if len(node.args) != 1 or node.args[0].keyword is not None:
            self.fail("TC0303", "quat_to_matrix: takes one quaternion", node)
        q: ir.Expr = self.expr(node.args[0].value)
        if not (isinstance(q.type, VecT) and q.type.family == "quat"):
            self.fail("TC0303", f"quat_to_matrix: `q` must be a quaternion, got {describe(q.type)}", node.args[0])
        span, dt = self.span(node), q.type.dtype
        axes = [ir.OpCall("value_new", tuple(ir.Const(float(k == j), dt, span) for k in range(3)),
                          (("type", VecT(dt, 3)),), VecT(dt, 3), span) for j in range(3)]
        columns = [self.make_op("quat_rotate", [q, axis], {}, node, where=[node.args[0].value] * 2) for axis in axes]
        return self.make_op("matrix_from_cols", columns, {}, node, where=[node.args[0].value] * 3)

    def make_op(self, op: str, operands: list[ir.Expr], attrs: dict[str, Any], node: cst.CSTNode,
                where: Sequence[cst.CSTNode | None] | None = None) -> Lowered:
        return self.family_product(super().make_op(op, operands, attrs, node, where))

    def lower_op(self, op: str, node: cst.Call, extra_attrs: dict[str, Any] | None = None) -> Lowered:
        return self.family_product(super().lower_op(op, node, extra_attrs))

    def family_product(self, call: Lowered) -> Lowered:
        if isinstance(call, ir.OpCall) and call.op == "mul" and isinstance(call.type, VecT) and \
                call.type.family in FAMILY_PRODUCTS and all(a.type == call.type for a in call.args):
            return replace(call, op=FAMILY_PRODUCTS[call.type.family])
        return call

    # ------------------------------------------------------------ expressions

    def constant_value(self, value: object, node: cst.CSTNode) -> ir.Expr:
        """A compile-time value as an expression: a number, or a vector or matrix constant an enum's property
        gives (enum_properties.VectorConstant: its constructor, inlined)."""
        if isinstance(value, VectorConstant):
            return replace(self.lower_constructor(cast("VecT | MatT", value.type), value.call), span=self.span(node))
        if isinstance(value, (VecT, MatT)):
            self.fail("TC0401", f"unsupported syntax: the type {describe(value)} where a value is expected", node)
        return self.const_expr(value, node)

    def lower_name(self, node: cst.Name) -> Lowered:
        """A module constant `G = wp.constant(wp.vec3(0.0, -9.8, 0.0))` is its constructor, inlined."""
        call = self.scope.value_constants.get(node.value)
        if call is not None and node.value not in self.env:
            t = cast("VecT | MatT", self.constructed_type(call.func))  # resolve made it from a constructor
            return replace(self.lower_constructor(t, call), span=self.span(node))
        return super().lower_name(node)

    def expr(self, node: cst.BaseExpression) -> Lowered:
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            left, right = self.expr(node.left), self.expr(node.right)
            if not (is_value(left.type) or is_value(right.type)):
                self.fail("TC0401", "unsupported syntax: the `@` operator (use wp.tile_matmul)", node.operator)
            if not (isinstance(left.type, MatT) or isinstance(right.type, MatT)):
                self.fail("TC0201", f"`@` of {describe(left.type)} and {describe(right.type)}: one operand must "
                          "be a matrix", node.operator)
            return self.make_op("mul", [left, right], {}, node, where=[node.left, node.right])
        return super().expr(node)

    def lower_attribute(self, node: cst.Attribute) -> Lowered:
        member = self.scope.enum_member(node)
        if member is not None and not (isinstance(node.value, cst.Name) and node.value.value in self.env):
            return ir.Const(int(member), INT32, self.span(node))  # an IntEnum / IntFlag member: Warp's int32
        root: cst.BaseExpression = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name) and root.value in self.scope.enum_classes and root.value not in self.env:
            value = self.scope.constant(node)  # `Joint.SPHERICAL.num_coords`, `Joint.REVOLUTE.axes`: a property
            if value is not consts.NOT_CONST:
                return self.constant_value(value, node)
        owner = node.value.value if isinstance(node.value, cst.Name) and node.value.value not in self.env else None
        held = self.scope.host_members.get(owner, {}).get(node.attr.value) if owner is not None else None
        if held is not None:  # `JointType.FREE = mujoco.mjtJoint.mjJNT_FREE`: a host library's value
            self.refuse_host_value(f"{owner}.{node.attr.value}", held, node)
        if owner in self.scope.class_constants:  # a plain class's constant attribute, as Warp reads it
            value = self.scope.class_member(node)
            if value is consts.NOT_CONST:
                self.fail("TC0301", f"unknown name `{owner}.{node.attr.value}`: tilec reads a plain class's "
                          "attributes bound to int, float or bool constants", node)
            dtype = self.scope.class_member_dtype(node)
            return ir.Const(value, dtype, self.span(node)) if dtype is not None else self.const_expr(value, node)
        if self.scope.api_attr(node) is not None or self.scope.host_origin(node) is not None:
            return super().lower_attribute(node)
        base: ir.Expr = self.expr(node.value)
        if node.attr.value == "ndim" and isinstance(base.type, (ArrayT, TileT)):  # Warp's `a.ndim`: a constant
            return self.const_expr(base.type.ndim, node)
        if not is_value(base.type):
            self.fail("TC0401", f"unsupported syntax: attribute `.{node.attr.value}` of {describe(base.type)}",
                      node.attr)
        return self.value_attribute(base, node)

    def value_attribute(self, base: ir.Expr, node: cst.Attribute) -> Lowered:
        t, attr = base.type, node.attr.value
        if isinstance(t, VecT) and t.family == "transform" and attr in ("p", "q"):
            op = "transform_get_translation" if attr == "p" else "transform_get_rotation"
            return self.make_op(op, [base], {}, node, where=[node.value])
        index = self.attribute_index(t, node)
        return self.make_op("value_extract", [base, ir.Const(index, INT32, self.span(node.attr))], {}, node,
                            where=[node.value, node.attr])

    def attribute_index(self, t: Type, node: cst.Attribute) -> int:
        attr = node.attr.value
        index = ATTRIBUTES.get(attr)
        if not isinstance(t, VecT) or t.family not in ("vec", "quat") or index is None or index >= t.length:
            names = [n for n, i in ATTRIBUTES.items() if isinstance(t, VecT) and i < t.length
                     and t.family in ("vec", "quat")] + (["p", "q"] if getattr(t, "family", "") == "transform" else [])
            hint = f"; it has {', '.join('.' + n for n in names)}" if names else "; index it instead"
            self.fail("TC0301", f"{describe(t)} has no component `.{attr}`{hint}", node.attr)
        return index

    def lower_subscript(self, node: cst.Subscript) -> Lowered:
        if (isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape") or \
                self.indexed_name(node.value) or (isinstance(node.value, cst.Subscript) and self.indexed_chain(node)):
            return super().lower_subscript(node)  # `a.shape[k]`, an indexed array's element (`a[i][j]` too)
        base: ir.Expr = self.expr(node.value)
        if is_value(base.type):
            items = self.subscript_items(node)
            if any(isinstance(i, cst.Slice) for i in items):  # v[a:b], m[i, a:b] (value_slices.py)
                return self.lower_value_slice(base, node, items)
            idx_nodes = self.index_nodes(node)
            indices = self.component_indices(base.type, idx_nodes)
            return self.make_op("value_extract", [base] + indices, {}, node, where=[node.value] + idx_nodes)
        if isinstance(base.type, ArrayT):
            return self.lower_array_subscript(base, node)
        from ..ir.types import TileT

        if isinstance(base.type, TileT):
            return self.lower_tile_subscript(base, node)
        self.fail("TC0401", f"unsupported syntax: indexing {describe(base.type)}", node)

    def component_indices(self, t: Type, idx_nodes: list[cst.BaseExpression]) -> list[ir.Expr]:
        """Index expressions of a component; a constant negative index counts from the end."""
        sizes = (t.rows, t.cols) if isinstance(t, MatT) else (cast(VecT, t).length,)  # a value type
        out: list[ir.Expr] = []
        for k, n in enumerate(idx_nodes):
            e = self.index(n)
            if isinstance(e, ir.Const):  # typed: a literal index must not adapt to the component dtype
                index = cast(int, e.value)  # an integer (index() checked)
                value = index + sizes[k] if k < len(sizes) and -sizes[k] <= index < 0 else index
                e = ir.Const(value, e.type, e.span)
            out.append(e)
        return out

    # ------------------------------------------------------------ component writes

    def store_transform_part(self, holder: ir.Expr, target: cst.Attribute, value: ir.Expr, node: cst.CSTNode,
                             aug: Any) -> list[ir.Stmt]:
        """`t.p = v` / `t.q = r` (and `t.p += v`) on a transform variable: t becomes wp.transform(p, q) with
        that part replaced; on an array element (`a[i].p = v`), that part's components are written (or
        added atomically), as Warp writes them."""
        if self.is_array_element(holder) and aug in (None, cst.Add, cst.Subtract):
            return self.store_element_transform_part(cast(ir.OpCall, holder), target, value, node, aug)
        if not isinstance(holder, ir.Var):
            self.fail("TC0401", f"unsupported syntax: assigning `.{target.attr.value}` of a transform that is no "
                      "local variable; build a new one with wp.transform(p, q)", target.attr)
        parts = [self.make_op(op, [holder], {}, target) for op in ("transform_get_translation", "transform_get_rotation")]
        k = 0 if target.attr.value == "p" else 1
        value_node = getattr(node, "value", node)
        if aug is not None:
            from .lower_expr import BINOPS

            value = self.make_op(BINOPS[aug], [parts[k], value], {}, node, where=[target, value_node])
        if value.type != parts[k].type:
            self.fail("TC0201", f"cannot assign {describe(value.type)} to `.{target.attr.value}` of "
                      f"{describe(holder.type)} (it holds {describe(parts[k].type)})", value_node)
        parts[k] = value
        new = self.make_op("value_new", parts, {"type": holder.type}, node, where=[target, value_node])
        return [ir.Assign(holder.sym, new, self.span(node))]

    def store_element_transform_part(self, element: ir.OpCall, target: cst.Attribute, value: ir.Expr,
                                     node: cst.CSTNode, aug: Any) -> list[ir.Stmt]:
        t = cast(VecT, element.type)
        k = 0 if target.attr.value == "p" else 1
        part = VecT(t.dtype, 3) if k == 0 else VecT(t.dtype, 4, "quat")
        value_node = getattr(node, "value", node)
        if value.type != part:
            self.fail("TC0201", f"cannot assign {describe(value.type)} to `.{target.attr.value}` of {describe(t)} "
                      f"(it holds {describe(part)})", value_node)
        array, elem_idx = element.args[0], list(element.args[1:])
        where: list[cst.CSTNode] = [target.value, value_node]
        span = self.span(node)
        if aug is not None:  # `a[i].p += v`: atomic, as Warp's += on an array element
            zero = ir.Const(0.0, VecT(t.dtype, 4, "quat") if k == 0 else VecT(t.dtype, 3), span)
            delta = self.make_op("value_new", [value, zero] if k == 0 else [zero, value], {"type": t}, node, where=where)
            op = "array_atomic_add" if aug is cst.Add else "array_atomic_sub"
            return [ir.ExprStmt(self.make_op(op, [array, delta] + elem_idx, {}, node, where=where), span)]
        held = self.new_temp(part)  # evaluated once (a draw in it advances its state once)
        stmts: list[ir.Stmt] = [ir.Assign(held, value, span)]
        for c in range(part.length):  # each component of the part, at its place in the transform's seven
            component = self.make_op("value_extract", [ir.Var(held, span), ir.Const(c, INT32, span)], {}, node,
                                     where=where)
            call = self.make_op("array_store_part", [array, component] + elem_idx + [ir.Const(3 * k + c, INT32, span)],
                                {}, node, where=where)
            stmts.append(ir.ExprStmt(call, span))
        return stmts

    def store_value_component(self, target: cst.Subscript | cst.Attribute, value: ir.Expr, node: cst.CSTNode,
                              aug: Any) -> list[ir.Stmt]:
        """`v.x = e`, `v[i] = e`, `m[i, j] = e`, `m[i] = row`, their `op=` forms, and the same on an
        array element (`a[i].x += e`). aug: the libcst operator class of an `op=`, or None."""
        container = target.value
        holder: ir.Expr = self.expr(container)
        if not is_value(holder.type):
            if isinstance(target, cst.Attribute):
                self.fail("TC0401", "unsupported syntax: assignment to an attribute", target)
            self.fail("TC0401", f"unsupported syntax: element write into {describe(holder.type)}", target)
        t: VecT | MatT = holder.type
        if isinstance(target, cst.Subscript):
            items = self.subscript_items(target)
            if any(isinstance(i, cst.Slice) for i in items):  # v[a:b] = w (value_slices.py)
                return self.store_value_slice(holder, target, value, node, aug, items)
        if isinstance(target, cst.Attribute):
            if isinstance(t, VecT) and t.family == "transform" and target.attr.value in ("p", "q"):
                return self.store_transform_part(holder, target, value, node, aug)
            indices: list[ir.Expr] = [ir.Const(self.attribute_index(t, target), INT32, self.span(target.attr))]
            where: list[cst.BaseExpression] = [container, target.attr]
        else:
            idx_nodes = self.index_nodes(target)
            indices = self.component_indices(t, idx_nodes)
            where = [container] + idx_nodes
        if isinstance(holder, ir.OpCall) and holder.op == "value_extract" and isinstance(holder.args[0].type, MatT):
            indices = list(holder.args[1:]) + indices  # m[i][j] = e writes m[i, j]
            t = holder.args[0].type
            holder = holder.args[0]
        value_node = getattr(node, "value", node)
        part = self.make_op("value_extract", [holder] + indices, {}, target, where=where)
        if aug is not None and not (self.is_array_element(holder) and aug in (cst.Add, cst.Subtract)):
            from .lower_expr import BINOPS

            value = self.make_op(BINOPS[aug], [part, value], {}, node, where=[target, value_node])
        value = self.as_component(value, t.dtype) if isinstance(part.type, Scalar) else value
        if value.type != part.type:
            self.fail("TC0201", f"cannot assign {describe(value.type)} to a component of {describe(t)} (it holds "
                      f"{describe(part.type)})", value_node)
        if isinstance(holder, ir.Var):
            self.assign_counts[holder.sym.name] = self.assign_counts.get(holder.sym.name, 0) + 1
            new = self.make_op("value_insert", [holder, value] + indices, {}, node, where=[container, value_node])
            return [ir.Assign(holder.sym, new, self.span(node))]
        if isinstance(holder, ir.OpCall) and self.is_array_element(holder):
            array, elem_idx = holder.args[0], list(holder.args[1:])
            if aug in (cst.Add, cst.Subtract):  # atomic, as Warp's += on an array element
                zero = ir.Const(0.0, t, self.span(node))
                delta = self.make_op("value_insert", [zero, value] + indices, {}, node, where=[container, value_node])
                op = "array_atomic_add" if aug is cst.Add else "array_atomic_sub"
                call = self.make_op(op, [array, delta] + elem_idx, {}, node, where=[container, value_node])
                return [ir.ExprStmt(call, self.span(node))]
            if aug is not None:  # a[i].x *= e: read, combine, write the component back
                new = self.make_op("value_insert", [holder, value] + indices, {}, node, where=[container, value_node])
                call = self.make_op("array_store", [array, new] + elem_idx, {}, node, where=[container, value_node])
                return [ir.ExprStmt(call, self.span(node))]
            call = self.make_op("array_store_part", [array, value] + elem_idx + indices, {}, node,
                                where=[container, value_node])  # a[i].x = e writes that component only
            return [ir.ExprStmt(call, self.span(node))]
        if isinstance(holder, ir.OpCall) and holder.op == "tile_extract" and isinstance(holder.args[0], ir.Var):
            return self.store_tile_element_part(holder, value, indices, node, [container, value_node])
        self.fail("TC0401", "unsupported syntax: a component write into a temporary value; assign it to a "
                  "variable first", target)

    def store_tile_element_part(self, element: ir.OpCall, value: ir.Expr, indices: list[ir.Expr], node: cst.CSTNode,
                                where: list[cst.CSTNode]) -> list[ir.Stmt]:
        """`t[i][c] = e` / `t[i][r] = row` on a tile of vectors or matrices (Warp's form): the element
        with that component (or row) replaced, written back with the tile's element write."""
        tile, elem_idx = cast(ir.Var, element.args[0]), list(element.args[1:])  # a tile variable (the caller checked)
        new = self.make_op("value_insert", [element, value] + indices, {}, node, where=where)
        call = self.make_op("tile_setitem", [tile, new] + elem_idx, {}, node, where=where)
        self.note_mutation(tile.sym, node)
        self.note_inplace(tile.sym)
        return [ir.Assign(tile.sym, call, self.span(node))]

    @staticmethod
    def is_array_element(e: ir.Expr) -> bool:
        return isinstance(e, ir.OpCall) and e.op == "array_load"


__all__ = ["ValueLowering"]


def _named_parts(positional: list[Any], named: dict[str, Any]) -> list[Any]:
    """A transform's parts given by Warp's names (`p=`, `q=`) after its positional ones, taken out of
    `named`: the ones the positional leave, when all of those are named; else none."""
    taken = []
    for k in ["p", "q"][len(positional):]:
        if k not in named:
            break
        taken.append(named.pop(k))
    return taken


def _identity_rotation(args: list[ir.Expr], t: VecT, span: Span) -> list[ir.Expr]:
    """A transform's parts with Warp's default rotation when only its translation `p` is given (Warp's
    `q=None`: the identity quaternion)."""
    if t.family != "transform" or len(args) != 1 or not (isinstance(args[0].type, VecT) and args[0].type.length == 3):
        return args
    q = VecT(t.dtype, 4, "quat")
    identity = ir.OpCall("value_new", tuple(ir.Const(v, t.dtype, span) for v in (0.0, 0.0, 0.0, 1.0)),
                         (("type", q),), q, span)
    return [*args, identity]
