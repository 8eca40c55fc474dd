"""Lowering of expressions: libcst expression -> typed IR expression.

Mixed into `FunctionChecker`. The frontend is a whitelist: any expression
form not handled here is an "unsupported syntax" diagnostic at its span.
Constant operands fold, so `2 * T` is a compile-time shape.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeGuard, cast

import libcst as cst

from .. import ir
from ..ops import OPS, Bound
from ..ir.types import BOOL, FLOAT32, INT32, NONE, ArrayT, MatT, Scalar, TileT, VecT, describe
from . import consts, suggest
from .lower_call import Abort
from .lowering_host import LoweringHost
from .ranges import int_range, wrap_int
from .resolve import MATH_CONSTANTS

if TYPE_CHECKING:
    from .check import Lowered

BINOPS = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "div",
    cst.FloorDivide: "floordiv", cst.Modulo: "mod", cst.Power: "pow", cst.BitAnd: "bit_and",
    cst.BitOr: "bit_or", cst.BitXor: "bit_xor", cst.LeftShift: "lshift", cst.RightShift: "rshift",
}  # fmt: skip
COMPARE = {
    cst.LessThan: "lt", cst.LessThanEqual: "le", cst.GreaterThan: "gt",
    cst.GreaterThanEqual: "ge", cst.Equal: "eq", cst.NotEqual: "ne",
}  # fmt: skip
def c_remainder(a: Any, b: Any) -> Any:
    """`a % b` in a kernel: C's remainder, with the dividend's sign (Warp's mod; Python's `%` takes
    the divisor's)."""
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(a, b)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "mod": c_remainder,
    "floordiv": operator.floordiv, "pow": operator.pow, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
    "bit_and": operator.and_, "bit_or": operator.or_, "bit_xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift,
}  # fmt: skip
# Math builtins on constants fold too, so `wp.sin(0.5)` stays an untyped constant like `0.5`.
FOLD_MATH: dict[str, Callable[..., Any]] = {
    "exp": math.exp, "log": math.log, "log2": math.log2, "log10": math.log10, "sin": math.sin,
    "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "sqrt": math.sqrt, "abs": abs, "erfc": math.erfc,
    "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "exp2": lambda x: 2.0 ** x,
    "sign": lambda x: (x > 0) - (x < 0), "min": min, "max": max, "atan2": math.atan2,
}  # fmt: skip
UNSUPPORTED = {
    cst.Lambda: "lambda", cst.ListComp: "list comprehensions", cst.SetComp: "set comprehensions",
    cst.DictComp: "dict comprehensions", cst.GeneratorExp: "generator expressions",
    cst.Dict: "dicts", cst.Set: "sets", cst.List: "lists", cst.FormattedString: "f-strings",
    cst.Await: "await", cst.Yield: "yield", cst.NamedExpr: "assignment expressions (:=)",
    cst.Imaginary: "complex numbers", cst.Ellipsis: "`...`", cst.ConcatenatedString: "strings",
    cst.SimpleString: "strings here", cst.Tuple: "tuples here", cst.StarredElement: "`*` unpacking",
}  # fmt: skip


MAX_ARRAY_DIMS = 4  # Warp's arrays have 1 to 4 dimensions


# The float constants of Python's math module and numpy's a kernel may read (Warp reads a module's globals)
HOST_CONSTANTS = {"math": ("pi", "e", "tau", "inf", "nan"), "numpy": ("pi", "e", "inf", "nan")}

class ExprLowering(LoweringHost):
    def expr(self, node: cst.BaseExpression) -> Lowered:
        value = consts.literal(node)
        if value is not consts.NOT_CONST:
            return self.const_expr(value, node)
        if isinstance(node, cst.Name):
            return self.lower_name(node)
        if isinstance(node, cst.BinaryOperation):
            op = BINOPS.get(type(node.operator))
            if op is None:
                self.fail("TC0401", "unsupported syntax: the `@` operator (use wp.tile_matmul)", node.operator)
            if op not in self.scope.funcs:
                return self.apply(op, [node.left, node.right], node)
            operands = [self.expr(node.left), self.expr(node.right)]
            overloaded = self.user_operator(op, operands, node)  # lower_call.py: the module's own `add`, ...
            if overloaded is not None:
                return overloaded
            return self.make_op(op, operands, {}, node, where=[node.left, node.right])
        if isinstance(node, cst.UnaryOperation):
            return self.lower_unary(node)
        if isinstance(node, cst.Comparison):
            return self.lower_compare(node)
        if isinstance(node, cst.BooleanOperation):
            op = "and_" if isinstance(node.operator, cst.And) else "or_"
            operands = [self.expr(node.left), self.expr(node.right)]
            types = [e.type for e in operands]
            if all(isinstance(t, Scalar) for t in types) and types[0] != types[1] and (
                    BOOL in types or not any(self.is_weak(e) for e in operands)):  # `i >= 0 and flags[i] & MASK`: each one's truth, as Warp
                operands = [self.truth(e, n) for e, n in zip(operands, (node.left, node.right))]
            return self.make_op(op, operands, {}, node, where=[node.left, node.right])
        if isinstance(node, cst.IfExp):
            return self.apply("where", [node.test, node.body, node.orelse], node)
        if isinstance(node, cst.Call):
            call = self.lower_call(node)
            if OPS.get(getattr(call, "op", ""), None) is not None and self.mutated_args(call):
                self.fail("TC0408", f"{self.op_name(call)}: updates its argument in place; call it as a statement", node)
            return call
        if isinstance(node, cst.Attribute):
            return self.lower_attribute(node)
        if isinstance(node, cst.Subscript):
            return self.lower_subscript(node)
        what = UNSUPPORTED.get(type(node), type(node).__name__)
        self.fail("TC0401", f"unsupported syntax: {what}", node)

    # ------------------------------------------------------------ leaves

    def const_expr(self, value: object, node: cst.CSTNode) -> ir.Const:
        if isinstance(value, bool):
            t = BOOL
        elif isinstance(value, int):
            t = INT32
        elif isinstance(value, float):
            t = FLOAT32
        else:
            what = "a tuple" if isinstance(value, tuple) else f"a {type(value).__name__}"  # e.g. (-8) ** 0.5: complex
            self.fail("TC0401", f"unsupported syntax: {what} constant here", node)
        return ir.Const(value, t, self.span(node), weak=True)

    def is_weak(self, e: ir.Expr) -> TypeGuard[ir.Const]:
        return isinstance(e, ir.Const) and e.weak

    def lower_name(self, node: cst.Name) -> Lowered:
        name = node.value
        if name in self.struct_vars:
            return self.struct_ref(name, node)
        binding = self.env.get(name)
        if binding is not None:
            if binding.poisoned:
                raise Abort()
            if self.indexed_name(node):
                self.refuse_indexed(name, node)
            self.check_not_stale(name, node)
            drawn = self.drawn_state(binding.sym)  # a random state drawn from earlier in this statement
            return ir.Var(drawn or binding.sym, self.span(node))
        if name in self.scope.constants:
            value = self.scope.constants[name]
            if isinstance(value, tuple):
                self.fail("TC0401", f"unsupported syntax: tuple constant `{name}` used as a value", node)
            typed = self.scope.typed_constants.get(name)
            if typed is not None:  # `N = wp.constant(wp.int32(0))`: the constant has that dtype, as in Warp
                if typed.kind in ("int", "uint") and not isinstance(value, bool):
                    lo, hi = int_range(typed)
                    if not lo <= cast(int, value) <= hi:  # Warp wraps it silently; a cast would hide it from ranges.py
                        self.fail("TC0112", f"module constant `{name}` = {value} does not fit in {typed.name} "
                                  f"[{lo}, {hi}]", node)
                return ir.Const(value, typed, self.span(node), weak=False)
            return self.const_expr(value, node)
        if name in self.scope.funcs or name in self.scope.kernels or name in self.func_values:
            self.fail("TC0408", f"`{name}` is a function; call it, or pass it to wp.tile_map or to a func's "
                      "`wp.Function` parameter", node)
        if name in self.scope.api_aliases:
            self.fail("TC0401", f"unsupported syntax: the module `{name}` used as a value", node)
        host_constant = self.host_constant(node)
        if host_constant is not None:
            return host_constant
        self.refuse_host_name(node)
        if name in self.scope.host_values:
            self.refuse_host_value(name, self.scope.host_values[name], node)
        known = [*(n for n, b in self.env.items() if not b.poisoned), *self.scope.constants]
        hint = self.scope.unbrought.get(name) or (
            f"Warp's constants need their module as values: `{self.scope.api_prefix()}{name}`"
            if name in MATH_CONSTANTS else suggest.did_you_mean(name, known))
        self.fail("TC0301", f"unknown name `{name}`", node, help=hint)

    def refuse_host_value(self, shown: str, value: cst.BaseExpression, node: cst.CSTNode) -> NoReturn:
        """TC0433 at a read of `shown`, bound to `value` (a module's or a class's), which is no compile-time
        constant (`S = len(x)`, `FREE = mujoco.mjtJoint.mjJNT_FREE`): where it is bound, and to what."""
        text = " ".join(self.parsed.tree.code_for_node(value).split())
        self.fail("TC0433", f"`{shown}` is bound at {self.parsed.where(value)} to `{text}`, a value tilec cannot "
                  "compute when it compiles (it evaluates literals, module constants and arithmetic on them)",
                  node, help="make it such a constant, or pass the value to the kernel as an argument")

    def lower_attribute(self, node: cst.Attribute) -> Lowered:
        api = self.scope.api_attr(node)
        if api is not None:
            if api in MATH_CONSTANTS:
                return self.const_expr(MATH_CONSTANTS[api], node)
            self.fail("TC0302", f"`{api}` is not a value of the tile API", node)
        host_constant = self.host_constant(node)
        if host_constant is not None:
            return host_constant
        self.refuse_host_name(node)
        base = self.expr(node.value)
        attr = node.attr.value
        self.fail("TC0401", f"unsupported syntax: attribute `.{attr}` of {describe(base.type)}", node.attr)

    def host_constant(self, node: cst.Name | cst.Attribute) -> ir.Const | None:
        """`math.pi`, `np.inf`, from-imported `pi`: the constant, as Warp reads a float of a module's global."""
        origin = self.scope.host_origin(node)
        if origin is not None and origin[1] in HOST_CONSTANTS.get(origin[0], ()):
            return self.const_expr(MATH_CONSTANTS[origin[1]], node)
        return None

    def lower_subscript(self, node: cst.Subscript) -> Lowered:
        # a.shape[i] and t.shape[i]
        if isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return self.lower_shape(node)
        if self.indexed_name(node.value):
            return self.lower_indexed_subscript(cast(cst.Name, node.value).value, node)
        chain = self.indexed_chain(node) if isinstance(node.value, cst.Subscript) else None
        if chain is not None:  # `a[i][j]` of an indexed array: its element a[i, j]
            base, gathered = self.indexed_element(chain[0], chain[1], node)
            return self.make_op("array_load", [base, *gathered], {}, node, where=[node.value, *chain[1]])
        base = self.expr(node.value)
        if isinstance(base.type, ArrayT):
            return self.lower_array_subscript(base, node)
        if isinstance(base.type, TileT):
            return self.lower_tile_subscript(base, node)
        self.fail("TC0401", f"unsupported syntax: indexing {describe(base.type)}", node)

    def index_nodes(self, node: cst.Subscript) -> list[cst.BaseExpression]:
        out: list[cst.BaseExpression] = []
        for el in node.slice:
            if not isinstance(el.slice, cst.Index):
                self.fail("TC0401", "unsupported syntax: slices (use wp.tile_view)", el)
            out.append(el.slice.value)
        if len(out) == 1 and isinstance(out[0], cst.Tuple):
            out = [e.value for e in out[0].elements]
        return out

    def index(self, node: cst.BaseExpression) -> ir.Expr:
        e: ir.Expr = self.expr(node)
        if not (isinstance(e.type, Scalar) and e.type.is_integral):
            self.fail("TC0203", f"indices must be integers, got {describe(e.type)}", node)
        return e

    def lower_shape(self, node: cst.Subscript) -> Lowered:
        shape_of = cast(cst.Attribute, node.value)  # `x.shape` (lower_subscript checked)
        idx = self.index_nodes(node)
        axis = self.scope.constant(idx[0]) if len(idx) == 1 else consts.NOT_CONST
        if not isinstance(axis, int):
            self.fail("TC0305", "the axis of `.shape[...]` must be a compile-time integer", node)
        if self.indexed_name(shape_of.value):
            return self.lower_indexed_shape(cast(cst.Name, shape_of.value).value, axis, node)
        held = self.indexed_field(shape_of.value)  # `s.data.shape[k]`, an indexed array field
        if held is not None:
            return self.indexed_value_shape(held, axis, node)
        base = self.shaped(self.expr(shape_of.value))
        if isinstance(base.type, TileT):
            if not -base.type.ndim <= axis < base.type.ndim:
                self.fail("TC0106", f"axis {axis} is out of range for a {base.type.ndim}-d tile", idx[0])
            extent = base.type.shape[axis]
            if not isinstance(extent, int):
                if self.generic:  # a shape variable: usable in shapes while the body is checked generically
                    return ir.Const(extent, INT32, self.span(node), weak=True)
                self.fail("TC0108", f"extent `{extent}` is a shape variable, not a constant", node)
            return self.const_expr(extent, node)
        if isinstance(base.type, ArrayT) and base.type.ndim <= axis < MAX_ARRAY_DIMS:
            # Warp's arrays hold 4 extents, the unused ones 0: its tests read them (`sub.shape[1]` of a 1-d view)
            self.diags.error("TC0106", f"axis {axis} is out of range for a {base.type.ndim}-d array; Warp reads 0 "
                             "there (its arrays hold 4 extents), and so does tilec", self.span(idx[0]),
                             severity="warning")
            return ir.Const(0, INT32, self.span(node))
        if isinstance(base.type, ArrayT):
            return self.make_op("array_shape", [base], {"axis": axis}, node, where=idx)
        self.fail("TC0401", f"unsupported syntax: `.shape` of {describe(base.type)}", node)

    @staticmethod
    def shaped(base: Lowered) -> Lowered:
        """What `.shape` and len() read of a value: an array of structs (lower_structs.StructArray) by one
        of its fields' views, which share its shape."""
        leaves = getattr(base, "leaves", None)
        if isinstance(base.type, ArrayT) and isinstance(leaves, dict) and leaves:
            return cast(ir.Expr, next(iter(leaves.values())))
        return base

    def lower_len(self, node: cst.Call) -> Lowered:
        """`len(x)` (also `wp.len(x)`): a vector's, quaternion's or transform's length and a matrix's or
        tile's rows (compile-time constants, as in Warp), an array's first extent."""
        if len(node.args) != 1 or node.args[0].keyword is not None:
            self.fail("TC0303", "len() takes one argument", node)
        arg = node.args[0].value
        if self.indexed_name(arg):
            return self.lower_indexed_shape(cast(cst.Name, arg).value, 0, node)
        held = self.indexed_field(arg)
        if held is not None:
            return self.indexed_value_shape(held, 0, node)
        count = self.tuple_len(arg)
        if count is not None:
            return self.const_expr(count, node)
        base = self.shaped(self.expr(arg))
        t = base.type
        if isinstance(t, (VecT, MatT)):
            return self.const_expr(t.length if isinstance(t, VecT) else t.rows, node)
        if isinstance(t, TileT):
            if isinstance(t.shape[0], int):
                return self.const_expr(t.shape[0], node)
            if self.generic:
                return ir.Const(t.shape[0], INT32, self.span(node), weak=True)
            self.fail("TC0108", f"extent `{t.shape[0]}` is a shape variable, not a constant", node)
        if isinstance(t, ArrayT):
            return self.make_op("array_shape", [base], {"axis": 0}, node)
        self.fail("TC0203", f"len() of {describe(t)}: it takes a vector, matrix, tile or array", arg)

    # ------------------------------------------------------------ operators

    def lower_unary(self, node: cst.UnaryOperation) -> Lowered:
        if isinstance(node.operator, cst.Plus):
            return self.expr(node.expression)
        op = {cst.Minus: "neg", cst.Not: "not_", cst.BitInvert: "invert"}[type(node.operator)]
        return self.apply(op, [node.expression], node)

    def lower_compare(self, node: cst.Comparison) -> Lowered:
        left = node.left
        result: Lowered = None
        for target in node.comparisons:
            op = COMPARE.get(type(target.operator))
            if op is None:
                self.fail("TC0401", "unsupported syntax: `is` / `in` comparisons", target.operator)
            operands = [self.expr(left), self.expr(target.comparator)]
            part = self.make_op(op, self.compared(operands), {}, node, where=[left, target.comparator])
            result = part if result is None else self.make_op("and_", [result, part], {}, node)
            left = target.comparator
        return result

    def compared(self, operands: list[ir.Expr]) -> list[ir.Expr]:
        """A comparison's operands, scalars of two dtypes converted to one as C++ converts them (and
        Warp compares them: `d < radius` of a float and an int compares floats, `i < n` of an int32
        and a uint32 unsigned ints); arithmetic of mixed dtypes stays an error, as in Warp."""
        a, b = operands
        if not (isinstance(a.type, Scalar) and isinstance(b.type, Scalar)) or a.type == b.type \
                or self.is_weak(a) or self.is_weak(b) or "bool" in (a.type.kind, b.type.kind):
            return operands
        common = _common_dtype(a.type, b.type)
        return [e if e.type == common else ir.OpCall("cast", (e,), (("dtype", common),), common, e.span)
                for e in operands]

    def truth(self, e: ir.Expr, node: cst.BaseExpression) -> ir.Expr:
        """A scalar as a bool: itself if one, else whether it is nonzero."""
        if e.type == BOOL:
            return e
        zero = ir.Const(0.0 if isinstance(e.type, Scalar) and e.type.is_float else 0, e.type, self.span(node))
        return cast(ir.Expr, self.make_op("ne", [e, zero], {}, node, where=[node, node]))

    def apply(self, op: str, operand_nodes: list[cst.BaseExpression], node: cst.CSTNode) -> Lowered:
        operands = [self.expr(n) for n in operand_nodes]
        return self.make_op(op, operands, {}, node, where=operand_nodes)

    def make_op(self, op: str, operands: list[ir.Expr], attrs: dict[str, Any], node: cst.CSTNode,
                where: Sequence[cst.CSTNode | None] | None = None) -> Lowered:
        """An op call from already-lowered operands (no keyword binding), folded when constant."""
        for i, e in enumerate(operands):
            at = where[i] if where and i < len(where) and where[i] is not None else node
            self.refuse_struct_operand(e, cast(cst.CSTNode, at))
        spec = OPS[op]
        folded = self.fold(op, operands, node)
        if folded is not None:
            return folded
        b = Bound(op=op, attrs=dict(attrs))
        names = [p.name for p in spec.params if p.kind == "value"]
        where_map: dict[str, cst.CSTNode | None] = {}
        for i, e in enumerate(operands):
            src = where[i] if where and i < len(where) else None
            if i < len(names):
                b.types[names[i]] = e.type
                if isinstance(e, ir.Const):
                    b.consts[names[i]] = e.value
                if self.is_weak(e):
                    b.weak.add(names[i])
                where_map[names[i]] = src
            else:
                b.variadic.append(e.type)
                b.variadic_consts.append(e.value if isinstance(e, ir.Const) else None)
                if self.is_weak(e):
                    b.variadic_weak.add(i - len(names))
                where_map[f"arg{i - len(names)}"] = src
        result = self.run_rule(spec, b, where_map, node)
        if spec.elementwise:
            operands = self.adapt_literals(operands, result)
        if isinstance(result, TileT):
            self.uses_tiles = True
        # an effect's rule gives None: its call has the type NONE, as lower_op gives it (`x = wp.printf()`: TC0303)
        return ir.OpCall(op, tuple(operands), tuple(attrs.items()), result if result is not None else NONE,
                         self.span(node))

    def fold(self, op: str, operands: list[ir.Expr], node: cst.CSTNode) -> ir.Const | None:
        if not all(isinstance(e, ir.Const) for e in operands) or len(operands) > 2:
            return None
        consts_ = cast(list[ir.Const], operands)  # all constants (checked above)
        values: list[Any] = [e.value for e in consts_]
        weak = all(e.weak for e in consts_)
        types = {e.type for e in consts_}
        if len(types) > 1 and not weak and not any(e.weak for e in consts_):
            return None
        try:
            if op == "neg":
                value = -values[0]
            elif op == "not_":
                value = not values[0]
            elif op == "div":
                a, b = values
                value = a / b if isinstance(a, float) or isinstance(b, float) else int(a / b)
            elif op in ("and_", "or_"):
                value = (values[0] and values[1]) if op == "and_" else (values[0] or values[1])
                value = bool(value)
            elif op in FOLD and len(values) == 2:
                value = consts.apply_bounded(FOLD[op], values[0], values[1], node)
            elif op in FOLD_MATH and all(e.weak for e in consts_):
                value = FOLD_MATH[op](*values)
                if op in ("floor", "ceil", "trunc"):
                    value = float(value) if any(isinstance(v, float) for v in values) else value
            else:
                return None
        except (ArithmeticError, ValueError, TypeError):
            return None
        if isinstance(value, bool) or op in COMPARE.values():
            return ir.Const(bool(value), BOOL, self.span(node), weak=True)
        typed = [e.type for e in consts_ if not e.weak]
        if typed:
            t = cast(Scalar, typed[0])  # a constant's type is a scalar
            value = float(value) if t.is_float else int(value)
            if t.kind in ("int", "uint") and all(isinstance(v, int) for v in values):
                value = wrap_int(cast(int, value), t)  # typed integer arithmetic wraps as it does at run time
            return ir.Const(value, t, self.span(node), weak=False)
        return self.const_expr(value, node)


def _common_dtype(a: Scalar, b: Scalar) -> Scalar:
    """C++'s usual arithmetic conversions of two scalar dtypes (float16 and bfloat16 compute in float32)."""
    if a.is_float or b.is_float:
        widest = max((x for x in (a, b) if x.is_float), key=lambda x: x.bits)
        return FLOAT32 if widest.bits == 16 else widest
    a, b = (INT32 if x.bits < 32 else x for x in (a, b))  # integer promotion
    if a == b:
        return a
    if a.kind == b.kind:
        return a if a.bits > b.bits else b
    unsigned, signed = (a, b) if a.kind == "uint" else (b, a)
    return unsigned if unsigned.bits >= signed.bits else signed
