"""Lowering of calls: binding arguments to an op's parameters, running its rule.

Mixed into `FunctionChecker`. Arguments are bound like Python binds them
(positionals, then keywords); each parameter kind decides whether the argument
becomes an IR operand or a compile-time attribute.
"""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn, cast

import libcst as cst

from .. import ir
from ..ops import API_OPS, OPS, REQUIRED, Bound, FuncRef, KeptTypes, OpSpec, Param, RuleError
from ..ops import PER_LANE_WRITES, coop, decompositions, random, spatial, stack, value_tiles, warp_names
from ..ops.arrays import ATOMIC_UPDATES
from ..ops.elementwise import OPERATOR_BUILTINS
from ..ops.volumes import VOLUME_OPS
from ..ir.types import BOOL, BUILTIN_STRUCT_CALLS, BUILTIN_STRUCTS, ArrayT, FunctionT, MatT, Scalar, StackT, TileT, Type, VecT, component_dtype, describe
from . import annotations as ann
from . import binding_values, consts
from . import generics
from . import hash_grids
from . import volumes as volume_calls
from . import local_consts
from . import warp_library
from . import static_items
from . import suggest
from .lower_math_rewrites import MATH_REWRITES
from .lowering_host import LoweringHost
from .statement_walk import names_in
from .ranges import wrap_int
from .resolve import MATH_CONSTANTS, factory_func, value_constant

if TYPE_CHECKING:
    from .check import Lowered
    from .resolve import FuncDef, Scope

# Ops that read the kernel's block_dim as a hidden attribute.
BLOCK_DIM_OPS = {"tile", "untile"}
# Python builtins that are ops.
BUILTIN_OPS = {"min": "min", "max": "max", "abs": "abs", "print": "print"}
DTYPE_CALLS = {"float": "float32", "int": "int32", "bool": "bool"}
# Tile ops whose untyped literal operands are values of the result tile's dtype (0.1 filling a
# float64 tile is the double 0.1, not the float 0.1f).
LITERALS_TAKE_RESULT_DTYPE = {"tile_full", "tile_axpy", "tile_diag_add"}


# A rule is a pure function of what Bound holds (ops/core.py): the types a long kernel's statements
# meet are few, and running the rule again for each was a quarter of checking them. Accepted calls
# only: a rejection is reported where it happens.
_RULE_TYPES = KeptTypes()  # Bound.key() -> the rule's type


class Abort(Exception):
    """Unwinds the current statement after its diagnostic was reported."""


class CallLowering(LoweringHost):
    def fail(self, code: str, message: str, node: cst.CSTNode, **kw: Any) -> NoReturn:
        self.diags.error(code, message, self.span(node), **kw)
        raise Abort()

    # ------------------------------------------------------------ dispatch

    def lower_call(self, node: cst.Call, tid_count: int = 1) -> Lowered:
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.func_values and func.value not in self.env:
            return self.call_function_value(self.func_values[func.value], node, tid_count)
        picked = self.function_value(func) if isinstance(func, cst.Call) or (
            isinstance(func, cst.Name) and func.value in self.scope.host_values and func.value not in self.env) else None
        if picked is not None:  # `wp.static(OPS[op])(x)`
            return self.call_function_value(picked, node, tid_count)
        if (isinstance(func, cst.Call) and self.scope.api_attr(func.func) == "grad") or (
                isinstance(func, cst.Name) and func.value in self.grad_wrappers and func.value not in self.env):
            return self.lower_grad_call(node)  # grad_calls.py
        if isinstance(func, cst.Call) and self.scope.api_attr(func.func) == "static":
            made = self.static_factory_func(func)
            if made is not None:  # `wp.static(make_update(block_size))(...)`
                return self.lower_func_call(made, node)
            self.fail("TC0305", "static: tilec calls the function `wp.static(D[key])` picks when D is a module-level "
                      "dict literal the file never changes and the key a constant, or `wp.static(make(...))` of a "
                      "factory of funcs; this one is not", func)
        api = self.scope.api_attr(func)
        if api is not None:
            return self.lower_api_call(api, node, tid_count)
        method = self.scope.class_method(func)
        if method is not None and not (isinstance(func, cst.Attribute) and cst.ensure_type(func.value, cst.Name).value
                                       in self.env):
            return self.lower_func_call(method, node)  # `C.from_values(...)`: a class's @wp.func (resolve.py)
        self.refuse_host_name(func)
        if isinstance(node.func, cst.Name):
            name = node.func.value
            local = self.env.get(name)
            if local is not None and (name in self.scope.funcs or name in self.scope.native_funcs):
                self.fail("TC0405", f"`{name}` is a local variable here, {describe(local.sym.type)} bound at line "
                          f"{local.span.line}, which hides the function `{name}`", node.func,
                          help="give the local another name")
            if name in self.scope.funcs and name not in self.env:
                return self.lower_func_call(name, node)
            if name in self.scope.structs and name not in self.env:
                return self.construct_struct(self.scope.structs[name], node)
            if name in DTYPE_CALLS and name not in self.env:
                return self.lower_cast(DTYPE_CALLS[name], node)
            alias = self.scope.type_aliases.get(name)
            if isinstance(alias, Scalar) and name not in self.env:  # `dt = wp.float64; dt(x)`
                return self.lower_cast(alias.name, node)
            if name == "print" and name not in self.env:
                return self.lower_print(node)  # printing.py: strings too
            if name == "len" and name not in self.env:
                return self.lower_len(node)
            if name in BUILTIN_OPS and name not in self.env:
                reduction = warp_library.vector_reduction(name, node)
                if reduction is not None:
                    return self.lower_func_call(reduction, node)
                return self.lower_op(BUILTIN_OPS[name], node)
            if name in self.scope.native_funcs and name not in self.env:
                return self.lower_native_call(name, node)
            if name == "range":
                self.fail("TC0401", "unsupported syntax: range() outside a for loop", node)
            if name in self.scope.kernels:
                self.fail("TC0408", f"kernel `{name}` cannot be called from device code; launch it from the host", node)
            known = [*self.scope.funcs, *BUILTIN_OPS, *DTYPE_CALLS]
            hint = self.scope.unbrought.get(name) or (
                f"Warp's module does not export `{name}`, so Warp too reads it only as "
                f"`{self.scope.api_prefix()}{name}`" if name in warp_names.WARP_NOT_EXPORTED
                else suggest.did_you_mean(name, known))
            self.fail("TC0301", f"unknown function `{name}`", node.func, help=hint)
        self.fail("TC0401", "unsupported syntax: this kind of call", node.func)

    def lower_native_call(self, name: str, node: cst.Call) -> ir.Expr:
        """A call of a @wp.func_native (native_funcs.py): its scalar and array arguments, by position, of
        the parameters' types (a literal takes the parameter's), as Warp matches a func's."""
        from .native_funcs import NativeError, values_only

        try:
            native = self.module.native(self.scope.native_funcs[name], self.scope.native_homes.get(name, self.scope),
                                        self.span(node))
        except NativeError as e:
            self.fail("TC0401", f"unsupported syntax: `{name}` is a @wp.func_native (a C++/CUDA snippet) tilec "
                      f"cannot compile: {e}", node.func, help="write it as a @wp.func in Python")
        if any(a.keyword is not None or a.star for a in node.args):
            self.fail("TC0408", f"`{name}`: a @wp.func_native takes its arguments by position", node)
        if len(node.args) != len(native.params):
            self.fail("TC0408", f"{name}: expects {len(native.params)} argument(s), got {len(node.args)}", node)
        args = []
        for arg, (pname, ptype) in zip(node.args, native.params):
            value = self.retype_literal(self.expr(arg.value), ptype)
            if value.type != ptype:
                self.fail("TC0201", f"`{name}` takes `{pname}` as {describe(ptype)}, got {describe(value.type)}",
                          arg.value)
            args.append(value)
        written = tuple(k for k, (pname, _) in enumerate(native.params) if pname in native.written)
        attrs = (("func", native.name), ("source", name), ("adjoint", native.adj_snippet is not None),
                 ("replay", native.replay_snippet is not None), ("written", written),
                 ("values_only", values_only(native)))
        return ir.OpCall("native_call", tuple(args), attrs, native.ret, self.span(node))

    def refuse_host_name(self, node: cst.BaseExpression) -> None:
        """`np.exp(x)`, `math.pi`: a host module's name in device code, with the API's spelling."""
        origin = self.scope.host_origin(node)
        base = node.value if isinstance(node, cst.Attribute) else node
        if origin is not None and not (isinstance(base, cst.Name) and base.value in self.env):
            self.fail("TC0301", suggest.host_hint(origin[0], origin[1], [*API_OPS, *MATH_CONSTANTS],
                                                  self.scope.api_prefix().rstrip(".") or "wp"), node)

    def static_factory_func(self, static: cst.Call) -> str | None:
        """`wp.static(make(args))` of a module-level factory of funcs (func_factories.py): the name of the func
        it makes for these arguments (made once per spelling), or None when it is no factory's call."""
        inner = static.args[0].value if len(static.args) == 1 else None
        if not (isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value in
                self.scope.factories and inner.func.value not in self.env):
            return None
        key = f"wp.static({cst.Module([]).code_for_node(inner)})"
        if key not in self.scope.funcs:
            why = factory_func(self.scope, key, inner, self.parsed, self.diags)
            if why is not None:
                self.fail("TC0305", f"static: tilec cannot tell the func `{inner.func.value}(...)` gives here: {why}",
                          inner)
        return key

    def lower_api_call(self, api: str, node: cst.Call, tid_count: int) -> Lowered:
        from ..ir.types import DTYPE_NAMES

        if api in DTYPE_NAMES:
            return self.lower_cast(DTYPE_NAMES[api].name, node)
        if api in BUILTIN_STRUCTS:  # `wp.MeshQueryPoint()`: a builtin's result struct, zeroed
            return self.construct_struct(BUILTIN_STRUCTS[api], node)
        if api in BUILTIN_STRUCT_CALLS:  # mesh_queries.py: a struct of the walk's face
            return self.mesh_query(api, node, None)
        if api == "mesh_get":  # mesh_queries.py: a struct of the mesh's arrays
            return self.mesh_view(node)
        if api == "constant":
            value = self.scope.constant(node.args[0].value) if len(node.args) == 1 else consts.NOT_CONST
            if value is consts.NOT_CONST:
                self.fail("TC0305", "wp.constant() needs a compile-time value", node)
            return self.const_expr(value, node)
        if api == "static":
            return self.lower_static(node)
        if api == "zeros" and node is not self.local_array_call:
            self.fail("TC0401", "unsupported syntax: wp.zeros in a kernel makes a local array, which is bound to a name "
                      "(`a = wp.zeros(shape=(2, 3), dtype=float)`)", node)
        if api in ("print", "printf"):  # printing.py
            return self.lower_print(node) if api == "print" else self.lower_printf(node)
        if api == "tid":
            return self.lower_op("tid", node, extra_attrs={"count": tid_count})
        if api == "tile_view" and any(self.slice_call(i) for a in node.args[1:] if a.keyword is None or
                                      a.keyword.value == "offset" for i in self.offset_items(a.value)):
            return self.lower_tile_view_slices(node)
        if api in random.DRAWING:
            return self.lower_draw(api, node)
        if api == "tile_query_valid" or api in hash_grids.TILED_NEXT:
            return self.tiled_query_step(api, node)  # tiled_queries.py
        if api in hash_grids.QUERY_CALLS or api in hash_grids.NEXT_CALLS:
            self.refuse_query_call(api, node)  # hash_grids.py: their loops take them
        if api in volume_calls.GRADIENTS or api in volume_calls.GENERIC:  # volumes.py
            return self.lower_volume_call(api, node)
        if api == "hash_grid_point_id" or api == "bvh_get_group_root" or api in spatial.MESH_OPS \
                or api in VOLUME_OPS:
            self.note_id_argument(api, node)  # hash_grids.py: a parameter the loader checks
        if api == "sample_cdf":
            return self.lower_sample_cdf(node)
        if api == "texture_sample":  # textures.py
            return self.lower_texture_sample(node)
        if api == "tile":  # lower_tile_expand.py: a vector/matrix spread over rows as Warp's default
            return self.lower_wp_tile(node)
        if api == "untile":
            return self.lower_wp_untile(node)
        if api == "tile_matmul" and self.runtime_matmul_scalars(node):  # lower_matmul_scalars.py
            return self.lower_scaled_matmul(node)
        if api == "len":
            return self.lower_len(node)
        if api == "cast":  # Warp's cast reinterprets the bits (tilec's conversion op is float(x), wp.int32(x))
            return self.lower_op("bitcast", node)
        if api in warp_library.IN_PLACE:
            self.fail("TC0401", f"unsupported syntax: `{api}` updates its first argument in place and returns nothing: "
                      "call it as a statement", node, help=f"`wp.{warp_library.IN_PLACE[api]}(...)` returns the copy")
        if warp_library.provides(api, self.scope):  # Warp's Python-written builtins: tilec's source of them
            return self.lower_func_call(warp_library.PREFIX + api, node)
        reduction = warp_library.vector_reduction(api, node)
        if reduction is not None:
            return self.lower_func_call(reduction, node)
        indexed = self.indexed_atomic(api, node)
        if indexed is not None:
            return indexed
        if api in ATOMIC_UPDATES:
            return self.lower_atomic_update(api, node)
        if api in OPERATOR_BUILTINS:
            return self.lower_operator_builtin(api, node)
        if api in decompositions.FACTORS:  # check.py's unpacking lowers them
            names = decompositions.FACTORS[api].names
            self.fail("TC0303", f"`{api}` returns {len(names)} factors; unpack them where it "
                      f"is called (`{', '.join(names)} = wp.{api}(A)`)", node)
        if api in ("add", "sub", "mul", "div", "neg") or api in API_OPS:
            return self.lower_op(api, node)
        if api in MATH_REWRITES:  # lower_math_rewrites.py
            return self.lower_math_rewrite(api, node)
        if warp_names.is_warp_builtin(api):
            note = warp_names.note(api)
            self.fail("TC0430", f"`{api}` is a Warp builtin not supported by tilec yet", node.func,
                      notes=(note,) if note else (), help=warp_names.HELP.get(api))
        from ..ir.types import DTYPE_NAMES

        known = suggest.same_kind(api, [*API_OPS, *DTYPE_NAMES, "constant"])
        what = "tile API operation" if suggest.is_tile_name(api) else "tile API function"
        self.fail("TC0302", f"unknown {what} `{api}`", node.func,
                  help=suggest.did_you_mean(api, known, self.scope.api_prefix()))

    def lower_static(self, node: cst.Call) -> ir.Expr:
        """`wp.static(expr)` as a value."""
        per_iteration = self.static_by_loop_variables(node)
        if per_iteration is not None:
            return per_iteration
        value = self.static_value(node)
        if isinstance(value, (tuple, str)):
            self.fail("TC0401", f"unsupported syntax: a {'tuple' if isinstance(value, tuple) else 'string'} from "
                      "wp.static() used as a value (tuples work as shapes and offsets, strings in comparisons)",
                      node.args[0].value)
        return self.constant_value(value, node)

    def static_value(self, node: cst.Call) -> object:
        """`wp.static(expr)` evaluated now, as Warp evaluates it when it builds the module: literals,
        module constants, locals assigned once from constants, a factory's arguments, arithmetic,
        comparisons (strings too), `and`/`or`/`not`, len() of a tile, vector, matrix or constant tuple, an item of a
        module-level dict literal (static_items.py)."""
        if len(node.args) != 1 or node.args[0].keyword is not None:
            self.fail("TC0303", "static: takes exactly one positional argument", node)
        arg = node.args[0].value
        table_item = self.static_item(node)  # (len() of a local: constant_of's lookup)
        value = self.scope.constant(table_item) if table_item is not None else self.constant_of(arg)
        if value is consts.NOT_CONST:
            self.fail("TC0305", "static: tilec evaluates only expressions of literals and constants (names, "
                      "arithmetic, comparisons, tuples, wp.constant, a dict literal's item, an enum member's "
                      "property, a plain function's result) and len() of a tile, vector, matrix or constant tuple; this one is not",
                      arg)
        return value

    def static_by_loop_variables(self, node: cst.Call) -> ir.Expr | None:
        """`wp.static(expr)` of the variables of loops over constant ranges (`s += wp.static(i * 2)`):
        Warp unrolls such loops, so expr is a constant in each copy. Here it is that constant picked by
        the variables' values; None where static_cases finds no such expression."""
        found = self.static_cases(node)
        if found is None:
            return None
        names, cases = found
        span = self.span(node)
        variables = [ir.Var(self.env[name].sym, span) for name in names]

        def holds(combo: tuple[int, ...]) -> ir.Expr:
            tests = [self.make_op("eq", [v, ir.Const(c, v.type, span)], {}, node) for v, c in zip(variables, combo)]
            return cast(ir.Expr, functools.reduce(lambda a, b: self.make_op("and_", [a, b], {}, node), tests))

        return self.picked([(holds(combo), self.const_expr(value, node)) for combo, value in cases[:-1]],
                           self.const_expr(cases[-1][1], node), node)

    def static_cases(self, node: cst.Call) -> tuple[list[str], list[tuple[tuple[int, ...], object]]] | None:
        """(the loop variables `wp.static(expr)` names, [(their values, expr's value)] for every
        combination, at most 64) where expr is constant once those variables are (unrolled_range);
        None when expr is constant alone or names anything else that is not constant."""
        if len(node.args) != 1 or node.args[0].keyword is not None or self.constant_of(node.args[0].value) \
                is not consts.NOT_CONST:
            return None
        arg = node.args[0].value
        ranges = {name: r for name in names_in(arg) for r in [self.unrolled_range(name)] if r is not None}
        names = sorted(ranges)
        if not names or math.prod(len(ranges[name]) for name in names) > 64:
            return None
        cases = []
        for combo in itertools.product(*(ranges[name] for name in names)):
            value = self.constant_with(arg, dict(zip(names, combo)))
            if value is consts.NOT_CONST or isinstance(value, (tuple, str)):
                return None
            cases.append((combo, value))
        return (names, cases) if cases else None

    def unrolled_range(self, name: str) -> range | None:
        """The constant range a loop variable runs over, while it holds the value its loop set (Warp
        unrolls such a loop: the variable is a constant in each copy); None for any other name."""
        found = self.loop_values.get(name)
        return found[1] if found is not None and self.assign_counts.get(name) == found[0] else None

    def picked(self, cases: Sequence[tuple[ir.Expr, ir.Expr]], otherwise: ir.Expr, node: cst.CSTNode) -> ir.Expr:
        """The value of the first case whose test holds, else `otherwise`: a chain of selects."""
        for test, value in reversed(cases):
            otherwise = cast(ir.Expr, self.make_op("where", [test, value, otherwise], {}, node))
        return otherwise

    def static_item(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """`wp.static(D[key])` of a module-level dict literal the file never changes: the item's
        expression (static_items.py); the key may be a local constant or a factory's argument."""
        if not (isinstance(node, cst.Call) and self.scope.api_attr(node.func) == "static" and len(node.args) == 1
                and node.args[0].keyword is None and isinstance(node.args[0].value, cst.Subscript)):
            return None
        sub = node.args[0].value
        name = sub.value.value if isinstance(sub.value, cst.Name) and sub.value.value not in self.env else ""
        table = self.scope.literal_dicts.get(name)
        if table is None or len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
            return None
        key = static_items.key_value(sub.slice[0].slice.value, self.constant_of)
        if key is consts.NOT_CONST:
            return None
        found = static_items.item(table, key, self.scope.constant)
        if found is None:
            self.fail("TC0305", f"static: `{name}` has no item {key!r}", sub.slice[0])
        return found

    def static_len(self, node: cst.BaseExpression) -> object:
        """`len(t)` of a local tile (its first extent), vector or matrix (rows), or of a vector or matrix
        constant (a module's, a factory's argument), or of a constant tuple or string: static in Warp too."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
                and "len" not in self.env and len(node.args) == 1 and node.args[0].keyword is None
                and isinstance(node.args[0].value, cst.Name)):
            return consts.NOT_CONST
        from ..ir.types import MatT, TileT, VecT

        name = node.args[0].value.value
        t: object = None
        if name in self.env or name in self.tuple_vars:
            count = self.tuple_len(node.args[0].value)
            if count is not None:
                return count
            t = self.env[name].sym.type
        elif isinstance(self.scope.constants.get(name), (tuple, str)):  # `wp.static(len(SIZES) == 3)`: Python's len
            return len(cast("tuple[object, ...] | str", self.scope.constants[name]))
        elif name in self.scope.value_constants:
            t = ann.element_type(self.scope.value_constants[name].func, self.scope)
        if isinstance(t, TileT) and t.shape and isinstance(t.shape[0], int):
            return t.shape[0]
        if isinstance(t, VecT):
            return t.length
        if isinstance(t, MatT):
            return t.rows
        return consts.NOT_CONST

    def lower_cast(self, dtype_name: str, node: cst.Call) -> ir.Expr:
        from ..ir.types import SCALARS

        target = SCALARS[dtype_name]
        if len(node.args) != 1 or node.args[0].keyword is not None:
            self.fail("TC0303", f"{dtype_name}() takes exactly one positional argument", node)
        value: ir.Expr = self.expr(node.args[0].value)
        if isinstance(value, ir.Const):
            return ir.Const(_convert(value.value, target), target, self.span(node))
        if value.type == target:
            return value
        spec = OPS["cast"]
        b = Bound(op=dtype_name, types={"a": value.type}, attrs={"dtype": target})
        self.run_rule(spec, b, {"a": node.args[0].value}, node)
        return ir.OpCall("cast", (value,), (("dtype", target),), target, self.span(node))

    # ------------------------------------------------------------ binding

    def bind(self, spec: OpSpec, node: cst.Call) -> tuple[dict[str, cst.BaseExpression],
                                                          list[cst.BaseExpression]]:
        """Map call arguments to parameters: ({param: cst expr}, [variadic cst exprs])."""
        params = list(spec.params)
        bound: dict[str, cst.BaseExpression] = {}
        variadic: list[cst.BaseExpression] = []
        positional = [a for a in node.args if a.keyword is None]
        keyword = [a for a in node.args if a.keyword is not None]
        if spec.name in coop.INDICES_FIRST:
            positional, keyword = self.indices_last(spec, node, positional, keyword)
        if spec.variadic:
            # f(op, *args) and friends: the required params come first, the rest is *args.
            lead = positional[: len([p for p in params if p.default is REQUIRED])]
            for p, a in zip(params, lead):
                bound[p.name] = a.value
            variadic = [a.value for a in positional[len(lead):]]
        else:
            if len(positional) > len(params):
                self.fail("TC0303", f"{spec.name}: takes at most {len(params)} positional argument(s), "
                          f"got {len(positional)}", positional[len(params)])
            for p, a in zip(params, positional):
                bound[p.name] = a.value
        names = {p.name for p in params}
        for a in keyword:
            kw = cast(cst.Name, a.keyword)  # a keyword argument
            key = kw.value
            position = warp_names.WARP_KEYWORDS.get(spec.name, {}).get(key)
            if key not in names and position is not None and position < len(params) and not spec.variadic:
                key = params[position].name  # Warp's name for it (`wp.pow(x=..., y=...)`)
            if key not in names:
                self.fail("TC0303", f"{spec.name}: unknown keyword argument `{key}`", kw,
                          help=suggest.did_you_mean(key, names))
            if key in bound:
                self.fail("TC0303", f"{spec.name}: argument `{key}` given twice", kw)
            bound[key] = a.value
        for p in params:
            if p.name not in bound and p.default is REQUIRED:
                self.fail("TC0303", f"{spec.name}: missing argument `{p.name}`", node)
        return bound, variadic

    def indices_last(self, spec: OpSpec, node: cst.Call, positional: list[cst.Arg],
                     keyword: list[cst.Arg]) -> tuple[list[cst.Arg], list[cst.Arg]]:
        """Warp's `(a, i[, j...], value[, has_value][, atomic])` as `(a, value[, has_value], i, j...)`,
        a positional `atomic` passed as the keyword; the tile's rank says how many indices there are."""
        if not positional:
            return positional, keyword
        first: ir.Expr = self.expr(positional[0].value)
        after = [p.name for p in spec.params if p.kind == "value"][1:]  # value[, has_value]
        tail = len(after)
        n = first.type.ndim if isinstance(first.type, TileT) else max(0, len(positional) - 1 - tail)
        idx, rest = positional[1:1 + n], positional[1 + n:]
        if len(rest) < tail:
            wanted = " and ".join(f"`{name}`" for name in after)
            self.fail("TC0303", f"{spec.name}: needs {n} index(es), then {wanted}", node)
        extra = rest[tail:]
        named = [p.name for p in spec.params if p.kind == "const"]
        if len(extra) > len(named):
            self.fail("TC0303", f"{spec.name}: too many arguments", extra[len(named)])
        keyword = keyword + [a.with_changes(keyword=cst.Name(name)) for name, a in zip(named, extra)]
        return [positional[0]] + rest[:tail] + idx, keyword

    def lower_operator_builtin(self, api: str, node: cst.Call) -> Lowered:
        """`wp.mod(a, b)`, `wp.bit_and(a, b)`, `wp.pos(x)`, ...: the operator they are, positional operands."""
        op, count = OPERATOR_BUILTINS[api]
        if len(node.args) != count or any(arg.keyword is not None or arg.star for arg in node.args):
            self.fail("TC0303", f"{api}: takes {count} operand(s) by position", node)
        operands = [arg.value for arg in node.args]
        return self.expr(operands[0]) if op is None else self.apply(op, operands, node)

    def indexed_atomic(self, api: str, node: cst.Call) -> Lowered | None:
        """`wp.atomic_add(a, i, j, v)` (any atomic) of an indexed array parameter: the op on its base array's
        element (indexed.py); None for any other call."""
        nodes = [arg.value for arg in node.args]
        if not nodes or not (api in ATOMIC_UPDATES or api in ("atomic_add", "atomic_min", "atomic_max")) \
                or any(arg.keyword is not None for arg in node.args):
            return None
        place = self.indexed_place(nodes[0], nodes[1:-1], node)
        if place is None:
            return None
        base, gathered = place
        value = self.expr(nodes[-1])
        if api in ATOMIC_UPDATES:  # the augmented store's op: the value before the indices
            return self.make_op(ATOMIC_UPDATES[api], [base, value, *gathered], {}, node,
                                where=[nodes[0], nodes[-1], *nodes[1:-1]])
        return self.make_op(api, [base, *gathered, value], {}, node, where=nodes)

    def lower_atomic_update(self, api: str, node: cst.Call) -> Lowered:
        """`wp.atomic_sub(a, i[, j...], value)`: the augmented store's op (value, then the indices)."""
        if any(arg.keyword is not None or arg.star for arg in node.args):
            self.fail("TC0304", f"{api}: takes its arguments by position (the array, its indices, the value)", node)
        nodes = [arg.value for arg in node.args]
        array = self.expr(nodes[0]) if nodes else None
        if array is None or not isinstance(array.type, ArrayT):
            self.fail("TC0304", f"{api}: its first argument must be an array", nodes[0] if nodes else node)
        if len(nodes) != array.type.ndim + 2:
            self.fail("TC0304", f"{api}: needs {array.type.ndim} index(es) and a value for a {array.type.ndim}-d "
                      f"array, got {len(nodes) - 1} argument(s) after the array", node)
        indices = [self.index(i) for i in nodes[1:-1]]
        return self.make_op(ATOMIC_UPDATES[api], [array, self.expr(nodes[-1]), *indices], {}, node,
                            where=[nodes[0], nodes[-1], *nodes[1:-1]])

    def lower_op(self, op: str, node: cst.Call, extra_attrs: dict[str, Any] | None = None) -> Lowered:
        """Bind, lower and type-check one op call; returns (OpCall, mutated params)."""
        spec = OPS[op]
        bound, variadic = self.bind(spec, node)
        b = Bound(op=op)
        args: list[ir.Expr] = []
        attrs: list[tuple[str, Any]] = []
        where: dict[str, Any] = dict(bound)
        for p in spec.params:
            arg = bound.get(p.name)
            if p.kind == "value":
                if arg is None:
                    if p.default is not REQUIRED and p.default is not None:
                        c = self.const_expr(p.default, node)
                        b.types[p.name], b.consts[p.name] = c.type, c.value
                        b.weak.add(p.name)
                        args.append(c)
                    continue
                e: ir.Expr = self.expr(arg)
                b.types[p.name] = e.type
                if isinstance(e, ir.Const):
                    b.consts[p.name] = e.value
                    if self.is_weak(e):
                        b.weak.add(p.name)
                args.append(e)
            elif p.kind == "offset":
                items = [] if arg is None else self.offset_items(arg)
                exprs = [self.expr(i) for i in items]
                b.offsets[p.name] = [e.type for e in exprs]
                b.consts[p.name] = [e.value if isinstance(e, ir.Const) else None for e in exprs]
                args.extend(exprs)
                attrs.append((f"{p.name}_count", len(exprs)))
            elif p.kind == "func":
                b.funcs[p.name] = self.func_ref(cast(cst.BaseExpression, arg))  # func params are required
                attrs.append((p.name, None))  # filled in after the rule (the instance name)
            else:
                value = p.default if arg is None else self.attr_value(p, arg, spec)
                b.attrs[p.name] = value
                attrs.append((p.name, value))
        for i, arg in enumerate(variadic):
            e = self.expr(arg)
            b.variadic.append(e.type)
            value = e.value if isinstance(e, ir.Const) else None
            if value is None and op == "tile_arange":  # its bounds must fold: `stop = 3` does
                value = self.local_constant(arg)
            b.variadic_consts.append(value)
            if self.is_weak(e):
                b.variadic_weak.add(i)
            args.append(e)
        if variadic:
            where["args"] = variadic[0]
            where["indices"] = variadic[0]
            where.update({f"arg{i}": arg for i, arg in enumerate(variadic)})
        for key, value in (extra_attrs or {}).items():
            b.attrs[key] = value
            attrs = [(k, v) for k, v in attrs if k != key] + [(key, value)]
        if op in PER_LANE_WRITES or op in coop.ALIASES or op in stack.LANE_OPS:
            self.lane_ops = True  # each lane's own operands: the kernel runs as block_dim lanes
        if op in BLOCK_DIM_OPS:
            b.attrs["block_dim"] = self.block_dim
            attrs.append(("block_dim", self.block_dim))
            self.lane_ops = True
        if spec.elementwise and args and not variadic and all(isinstance(a, ir.Const) for a in args):
            folded = self.fold(op, args, node)
            if folded is not None:
                return folded
        if op == "tile_assign":
            args = _convert_assigned(args, b)
        if op == "tile_reshape" and args:
            self.warn_strided_reshape(args[0], cast(cst.CSTNode, bound.get("a") or node))
        result = self.run_rule(spec, b, where, node)
        attrs = [(k, b.funcs[k].name if k in b.funcs else v) for k, v in attrs]
        if op in ("tile_arange",):
            args = []
            attrs.append(("args", tuple(b.variadic_consts)))
        if spec.elementwise:
            args = self.adapt_literals(args, result)
        elif op in LITERALS_TAKE_RESULT_DTYPE and isinstance(result, TileT):
            held = cast(Scalar, component_dtype(result.dtype))  # a literal filling a vec3 tile fills each
            # component
            args = [ir.Const(_convert(a.value, held), held, a.span, weak=False)
                    if self.is_weak(a) and isinstance(a.type, Scalar) else a for a in args]
        if isinstance(result, (TileT, StackT)) or any(isinstance(a.type, (TileT, StackT)) for a in args):
            self.uses_tiles = True  # a tile stack is shared by the block's lanes as a tile is
        op = coop.ALIASES.get(op, op)  # wp.tile_add_inplace(t, i, v) is t[i] += v
        call = ir.OpCall(op, tuple(args), tuple(attrs), result if result is not None else _NONE(), self.span(node))
        return call

    def run_rule(self, spec: OpSpec, b: Bound, where: dict[str, Any], node: cst.CSTNode) -> Type | None:
        from ..ir.types import StructT

        for name, t in list(b.types.items()) + [(f"arg{i}", t) for i, t in enumerate(b.variadic)]:
            held = getattr(t, "dtype", t)
            if isinstance(held, StructT):
                target = where.get(name)
                self.fail("TC0201", f"{spec.name}: {describe(t)} cannot be an operand here; use its fields",
                          target if target is not None else node)
        key = b.key()
        if key is not None:
            known = _RULE_TYPES.get(key)
            if known is not KeptTypes.MISSING:
                return known  # type: ignore[no-any-return]  # a Type or None, as kept below
        try:
            value_tiles.refuse(b)
            result = spec.rule(b)
            if key is not None:
                _RULE_TYPES.keep(key, result)
            return result
        except RuleError as e:
            target = where.get(e.arg) if e.arg else None
            self.fail(e.code, e.message, target if target is not None else node)
        except (TypeError, ValueError):
            if self.generic:
                self.fail("TC0111", f"{spec.name}: cannot be checked with symbolic shapes; "
                          "annotate concrete extents", node)
            raise

    def adapt_literals(self, args: list[ir.Expr], result: Type | None) -> list[ir.Expr]:
        """Untyped literal operands take the dtype of the op's typed operands (not a condition's bool:
        `x if c else 0.5` of a float64 x is where(c, x, 0.5) with 0.5 a float64)."""
        typed = [a.type for a in args if not self.is_weak(a) and isinstance(a.type, (Scalar, TileT))
                 and component_dtype(a.type.dtype if isinstance(a.type, TileT) else a.type) != BOOL]
        if not typed:
            return args
        typed_dtype = typed[0].dtype if isinstance(typed[0], TileT) else typed[0]
        target = cast(Scalar, component_dtype(typed_dtype))  # vec3 tile: float32
        out = []
        for a in args:
            if self.is_weak(a) and isinstance(a.type, Scalar) and a.type != target and target.kind != "bool":
                a = ir.Const(_convert(a.value, target), target, a.span, weak=False)
            out.append(a)
        return out

    # ------------------------------------------------------------ argument kinds

    def offset_items(self, arg: cst.BaseExpression) -> list[cst.BaseExpression]:
        if isinstance(arg, cst.Tuple):
            return [el.value for el in arg.elements]
        if isinstance(arg, cst.Name) and arg.value not in self.env:
            value = self.scope.constants.get(arg.value)
            if isinstance(value, tuple):
                return [cst.Integer(str(v)) if isinstance(v, int) else arg for v in value]
        return [arg]

    def dtype_attribute(self, arg: cst.BaseExpression) -> Type | None:
        """`A.dtype` of an array or tile variable (Warp's `dtype=A.dtype` in a generic kernel): its
        element type; else None."""
        if not (isinstance(arg, cst.Attribute) and arg.attr.value == "dtype" and isinstance(arg.value, cst.Name)):
            return None
        binding = self.env.get(arg.value.value)
        t = getattr(getattr(binding, "sym", None), "type", None)
        return t.dtype if isinstance(t, (ArrayT, TileT)) else None

    def attr_value(self, p: Param, arg: cst.BaseExpression, spec: OpSpec) -> Any:
        if p.kind == "shape":
            items = [el.value for el in arg.elements] if isinstance(arg, cst.Tuple) else None
            value = self.constant_of(arg) if items is None else tuple(self.shape_item(i) for i in items)
            if isinstance(value, int) and not isinstance(value, bool):
                return (value,)
            if isinstance(value, tuple) and all(_is_extent(v, self.generic) for v in value):
                return value
            self.fail("TC0108", f"{spec.name}: `{p.name}` must be a compile-time constant shape", arg)
        if p.kind == "dtype":
            held = self.dtype_attribute(arg)
            if held is not None:
                return held
            try:
                d = ann.element_type(arg, self.scope)  # a vec/mat type where value_tiles allows one
            except ann.AnnotationError as e:
                self.fail("TC0409", f"{spec.name}: `{p.name}`: {e.message}", e.node)
            if d is None:
                self.fail("TC0303", f"{spec.name}: `{p.name}` is not a dtype", arg)
            return d
        if p.kind == "storage":
            if isinstance(arg, cst.SimpleString) and arg.evaluated_value in ("register", "shared"):
                return arg.evaluated_value
            self.fail("TC0303", f"{spec.name}: storage must be \"register\" or \"shared\"", arg)
        if isinstance(arg, cst.Name) and arg.value == "None":
            return None
        if isinstance(arg, cst.SimpleString) and isinstance(p.default, str):  # precision="tf32"; the rule checks it
            return arg.evaluated_value
        value = self.constant_of(arg)
        if value is consts.NOT_CONST:
            self.fail("TC0305", f"{spec.name}: `{p.name}` must be a compile-time constant", arg)
        return value

    def shape_item(self, node: cst.BaseExpression) -> object:
        """One extent of a shape: a constant expression, or `t.shape[k]` of a tile."""
        value = self.constant_of(node)
        if value is not consts.NOT_CONST:
            return value
        try:
            e = self.expr(node)
        except Abort:
            return consts.NOT_CONST
        return e.value if isinstance(e, ir.Const) else consts.NOT_CONST

    def constant_of(self, node: cst.BaseExpression) -> Any:
        """node's compile-time value: literals, module constants, and locals assigned once from a
        constant (local_consts.py; a local never stands for the module constant it shadows)."""
        return self.constant_with(node, None)

    def constant_with(self, node: cst.BaseExpression, bound: dict[str, object] | None) -> Any:
        """constant_of, with `bound` names given a value (a loop variable's in one unrolled copy) and
        Python's float() / int() of them."""
        fn = getattr(getattr(self, "fd", None), "node", None)
        base: Callable[[cst.BaseExpression], object]
        if not isinstance(fn, cst.FunctionDef):
            if isinstance(node, cst.Name) and node.value in self.env:
                return consts.NOT_CONST
            base = self.module_lookup
        else:
            base = local_consts.local_lookup(fn, self.env, self.scope._lookup)

        def lookup(n: cst.BaseExpression) -> object:
            if bound and isinstance(n, cst.Name) and n.value in bound:
                return bound[n.value]
            if bound and isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in ("float", "int") \
                    and n.func.value not in self.env:  # Python's conversion, as Warp's wp.static runs it
                return binding_values.pure_call(n, lambda a: consts.evaluate(a, lookup))
            static = isinstance(n, cst.Call) and self.scope.api_attr(n.func) == "static" and len(n.args) == 1
            length = self.static_len(cast(cst.Call, n).args[0].value if static else n)
            if length is not consts.NOT_CONST:
                return length  # `shape=(wp.static(len(a)), N)`, `wp.static(len(v) == 3)`
            found = base(n)
            if found is consts.NOT_CONST and not (isinstance(n, cst.Name) and n.value in self.env):
                named = ann.element_type(n, self.scope)  # `wp.static(dtype == wp.float64)` in a factory
                return consts.NOT_CONST if named is None else named
            return found
        return consts.evaluate(node, lookup)

    def module_lookup(self, node: cst.BaseExpression) -> object:
        """The module's constants for consts.evaluate outside a func body: `D[key]` of a local `D` is none."""
        return consts.NOT_CONST if consts.subscripted_name(node) in self.env else self.scope._lookup(node)

    def local_constant(self, node: cst.BaseExpression) -> int | float | None:
        """The number a local name assigned once from a constant holds (`stop = 3`), else None."""
        if not isinstance(node, cst.Name):
            return None
        value = self.constant_of(node)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def func_ref(self, node: cst.BaseExpression) -> FuncRef:
        fv = self.function_value(node)
        api = fv.name if fv is not None and fv.kind == "api" else None
        if api is not None:
            op = OPERATOR_BUILTINS[api][0] if api in OPERATOR_BUILTINS else api  # `wp.mod`: the operator's op
            if op in OPS and OPS[op].elementwise:
                spec = OPS[op]

                def builtin_result(dtypes: tuple[Type, ...], spec: OpSpec = spec, op: str = op) -> Type:
                    if len(dtypes) != len(spec.params):
                        raise RuleError("TC0407", f"takes {len(spec.params)} argument(s), given {len(dtypes)}")
                    b = Bound(op=op, types={p.name: d for p, d in zip(spec.params, dtypes)})
                    try:
                        return cast(Type, spec.rule(b))  # an elementwise op's rule gives a type
                    except RuleError as e:  # drop the op-name prefix: the caller names the function
                        raise RuleError(e.code, e.message.removeprefix(f"{op}: "), e.arg) from None

                return FuncRef(op, True, builtin_result)
            self.fail("TC0407", f"`{api}` cannot be mapped over a tile", node)
        if fv is not None and fv.kind == "func":
            name = self.function_target(fv, node)
            holder: dict[str, str] = {}

            def user_result(dtypes: tuple[Type, ...]) -> Type:
                fn = self.module.instantiate(name, [(d, None) for d in dtypes], self.block_dim, node, self)
                if len(fn.params) != len(dtypes):
                    raise RuleError("TC0407", f"takes {len(fn.params)} argument(s), given {len(dtypes)}")
                holder["name"] = fn.name
                return fn.ret

            ref = _LazyName(name, holder, user_result)
            return ref
        self.fail("TC0407", "expected a builtin such as wp.exp or a @wp.func name", node)

    # ------------------------------------------------------------ functions as values

    def function_value(self, node: cst.BaseExpression, scope: Scope | None = None, hops: int = 0) -> FunctionT | None:
        """The function `node` names, if it names one: a @wp.func, a builtin (`wp.sin`), or a name
        bound to a function (`f = my_func`, a `wp.Function` parameter). `scope`: where a default
        parameter's expression is read (a func's own module), else the code being checked."""
        here = scope is None
        scope = scope or self.scope
        table_item = self.static_item(node) if here else None
        if table_item is not None:  # `wp.static(OPS["double"])`: the dict's value, a module-level name
            return self.function_value(table_item, scope)
        if (here and isinstance(node, cst.Call) and scope.api_attr(node.func) == "static" and len(node.args) == 1
                and node.args[0].keyword is None):
            return self.function_value(node.args[0].value)  # `wp.static(func)(3, 2)` in a kernel factory
        if isinstance(node, cst.Name):
            if here and (node.value in self.env or node.value in self.struct_vars):
                return None
            if here and node.value in self.func_values:
                return self.func_values[node.value]
            if node.value in scope.funcs:  # by the def's own name (a factory's `func` argument names another)
                fd = scope.funcs[node.value]
                return FunctionT("func", fd.name, id(fd))
            aliased = scope.host_values.get(node.value)
            if isinstance(aliased, (cst.Name, cst.Attribute)) and hops < 8:  # `TARGET = my_func` at module level
                return self.function_value(aliased, scope, hops + 1)
        api = scope.api_attr(node)
        if api is not None and _callable_api(api, scope):
            return FunctionT("api", api)
        return None

    def function_target(self, fv: FunctionT, node: cst.CSTNode) -> str:
        """The name a call through function value `fv` calls in this code: a @wp.func passed from a
        scope where its name means another def is refused, never called by the wrong name."""
        fd = self.scope.funcs.get(fv.name)
        if fd is None or id(fd) != fv.origin:
            self.fail("TC0401", f"unsupported syntax: the function `{fv.name}` is passed into code (another module "
                      "or a nested def) where that name is not the same function", node,
                      help="define the func beside the code that calls it")
        return fv.name

    def call_function_value(self, fv: FunctionT, node: cst.Call, tid_count: int) -> Lowered:
        """`g(x)` where `g` is a wp.Function parameter or `g = my_func`: a call of that function."""
        if fv.kind == "api":
            return self.lower_api_call(fv.name, node, tid_count)
        return self.lower_func_call(self.function_target(fv, node.func), node)

    def bind_function_value(self, target: cst.Name, fv: FunctionT, node: cst.CSTNode) -> list[ir.Stmt]:
        """`f = my_func`: `f` names that function from here on (no code: Warp has no function
        pointers, and neither do tilec's sources). Bound once, as in Warp."""
        name = target.value
        if name in self.env or name in self.func_values:
            self.fail("TC0405", f"`{name}` is already bound; a name bound to a function is bound once (Warp has "
                      "no function pointers)", target, help="use a new name")
        self.func_values[name] = fv
        return []

    # ------------------------------------------------------------ user funcs

    def lower_func_call(self, name: str, node: cst.Call) -> Lowered:
        fd = warp_library.func_def(self.scope, name)
        overloads = self.scope.func_overloads.get(name, [])
        arg_nodes = self.func_arguments(name, fd, node, overloaded=len(overloads) > 1 and fd in overloads)
        count = fd.returns_several
        if count is not None:
            self.fail("TC0303", f"`{name}` returns {count} values; unpack them where it is called "
                      f"(`{', '.join('abcdefgh'[:min(count, 8)])} = {name}(...)`)", node)
        args, where = self.argument_values(fd, arg_nodes, node)
        return self.call_func_with(name, fd, args, where, arg_nodes, node)

    def user_operator(self, op: str, operands: list[ir.Expr], node: cst.BinaryOperation) -> Lowered | None:
        """`a + b` where the module defines a @wp.func `add` taking the operands' types: a call of it, as
        in Warp (a user's operator overload, e.g. for a struct); None otherwise (the builtin operator)."""
        fd = self.scope.funcs.get(op)
        if fd is None or op in self.env or op in self.func_values or fd is self.fd:
            return None  # (in the func's own body Warp would recurse without end: the builtin there)
        if all(isinstance(e, ir.Const) for e in operands):
            return None  # constants fold as the builtin's
        got = [e.type for e in operands]
        for candidate in self.scope.func_overloads.get(op) or [fd]:
            declared = self.module.signature(candidate)
            if declared is not None and len(declared) == 2 and all(map(generics.accepts, declared, got)):
                break
        else:
            return None
        call = cst.Call(func=cst.Name(op), args=(cst.Arg(node.left), cst.Arg(node.right)))
        self.parsed.place_like(call, node)
        self.parsed.place_like(call.func, node.operator)
        where: list[cst.BaseExpression] = [node.left, node.right]
        return self.call_func_with(op, fd, operands, where, where, call)

    def call_func_with(self, name: str, fd: FuncDef, args: list[ir.Expr], where: list[cst.BaseExpression],
                       arg_nodes: Sequence[cst.CSTNode], node: cst.Call) -> Lowered:
        """The call of func `name` with lowered arguments (`where`: each one's source)."""
        refusal = warp_library.refusal(fd, args[0].type) if fd.library else None
        if refusal is not None:  # a library func's `Any` parameter given what Warp's builtin refuses
            self.fail("TC0201", refusal, where[0])
        returned = self.struct_returned(fd, node, arg_types=[a.type for a in args])
        if returned is not None:
            return self.call_struct_func(name, returned, args, where, node)
        fn = self.module.instantiate(name, [(a.type, a if self.is_weak(a) else None) for a in args],
                                     self.block_dim, node, self, where)
        args = [_retype(a, p.type) for a, p in zip(self.flatten_args(args, where), fn.params)]
        if fn.spatial_ids:
            self.pass_grid_ids(fn, args, node)
        for i in fn.byref:  # the callee updates this tile (or wp.ref parameter) in place: so does the caller's variable
            arg = args[i]
            if not isinstance(arg.type, TileT) and not isinstance(arg, ir.Var):
                self.fail("TC0401", f"unsupported syntax: `{name}` takes this argument by reference (`wp.ref`); "
                          "tilec passes a variable there", arg_nodes[i],
                          help="pass a variable and assign it back, e.g. `x = a[i]` ... `a[i] = x` (tilec does that "
                          "itself for an element or field indexed by names and numbers, in a call that is a "
                          "statement or an assignment's value)")
            if isinstance(arg, ir.Var) and not isinstance(arg.type, TileT):
                self.assign_counts[arg.sym.name] = self.assign_counts.get(arg.sym.name, 0) + 1
            if isinstance(arg, ir.OpCall) and arg.op in ("tile_slice", "tile_view", "tile_broadcast"):
                self.fail("TC0401", f"unsupported syntax: `{name}` updates this tile in place, and in Warp a "
                          "view passes its parent by reference; tilec's views are copies", arg_nodes[i],
                          help="update a variable and assign it back, e.g. `r = t[1]` ... `t[1] = r`")
            if isinstance(arg, ir.Var):
                self.note_mutation(arg.sym, node)
                self.note_inplace(arg.sym)
        if any(isinstance(a.type, (TileT, StackT)) for a in args) or isinstance(fn.ret, (TileT, StackT)):
            self.uses_tiles = True
        self.lane_ops = self.lane_ops or self.module.lane_funcs.get(fn.name, False)
        return ir.Call(fn.name, tuple(args), fn.ret, self.span(node))

    def func_arguments(self, name: str, fd: FuncDef, node: cst.Call,
                       overloaded: bool) -> list[cst.Arg | cst.Param]:
        """A func call's argument per parameter, in the def's order: the call's (by position, then by
        keyword), else the parameter itself where it has a default (Warp's `delta: float = 1.0`). An
        overloaded func (defined more than once) is chosen by its argument count: no defaults."""
        params = fd.node.params.params
        for arg in node.args:  # `f(*v)`: v's items (a call reached here, not through lower_call: `a, b = f(*v)`)
            if arg.star:
                node = self.spelled_out(node)
                break
        if overloaded and all(a.keyword is None for a in node.args):
            return list(node.args)
        if len(node.args) > len(params):
            self.fail("TC0408", f"{name}: expects {len(params)} argument(s), got {len(node.args)}", node)
        by_name = {p.name.value: i for i, p in enumerate(params)}
        ordered: list[cst.Arg | cst.Param | None] = [None] * len(params)
        for i, a in enumerate(node.args):
            idx = by_name.get(a.keyword.value) if a.keyword else i
            if idx is None:
                kw = cast(cst.Name, a.keyword)  # by_name misses only keywords
                self.fail("TC0303", f"{name}: unknown keyword argument `{kw.value}`", kw)
            if ordered[idx] is not None:
                self.fail("TC0303", f"{name}: parameter `{params[idx].name.value}` is given twice", a)
            ordered[idx] = a
        for i, p in enumerate(params):
            if ordered[i] is None and p.default is not None and not overloaded:
                ordered[i] = p
        missing = [params[i].name.value for i, a in enumerate(ordered) if a is None]
        if missing:
            self.fail("TC0408", f"{name}: expects {len(params)} argument(s), got {len(node.args)} (no value for "
                      f"{', '.join(f'`{m}`' for m in missing)})", node)
        return cast(list[cst.Arg | cst.Param], ordered)

    def argument_values(self, fd: FuncDef, given: list[cst.Arg | cst.Param],
                        call: cst.Call) -> tuple[list[ir.Expr], list[cst.BaseExpression]]:
        """The lowered arguments func_arguments bound, and where each is in the source (a default's:
        the call)."""
        return ([self.func_argument(fd, a, call) for a in given],
                [a.value if isinstance(a, cst.Arg) else call for a in given])

    def func_argument(self, fd: FuncDef, given: cst.Arg | cst.Param, call: cst.Call) -> ir.Expr:
        """The value of one argument: the call's expression, or the parameter's default, a compile-time
        constant of the func's module (an untyped literal, converted to the parameter's type)."""
        expr = given.value if isinstance(given, cst.Arg) else given.default
        assert expr is not None  # (func_arguments takes only parameters with one)
        fv = self.function_value(expr, None if isinstance(given, cst.Arg) else fd.scope or self.scope)
        if fv is not None:  # a function passed (to a `wp.Function` parameter): the instance is made for it
            return ir.Const(fv, fv, self.span(given.value if isinstance(given, cst.Arg) else call))
        if isinstance(given, cst.Arg):
            query = self.query_argument(expr) if isinstance(expr, cst.Name) else None  # hash_grids.py
            passed = query if query is not None else self.tuple_argument(expr)  # tuple_values.py
            return cast(ir.Expr, passed if passed is not None else self.expr(expr))
        home = fd.scope or self.scope
        value = home.constant(expr)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            made = value_constant(home, expr, fd.origin or self.parsed)
            built = ann.element_type(made.func, home) if made is not None else None
            if made is not None and isinstance(built, (VecT, MatT)):  # `scale: wp.vec3 = wp.vec3(1.0)`
                return replace(self.lower_constructor(built, made), span=self.span(call))
            self.fail("TC0305", f"the default of parameter `{given.name.value}` of `{fd.name}` must be a "
                      "compile-time number, vector or matrix for tilec (it is used by this call)", call)
        return self.const_expr(value, call)


class _LazyName(FuncRef):
    """A FuncRef whose name is the specialised instance, known after typing."""

    def __new__(cls, *a: object, **k: object) -> _LazyName:
        return object.__new__(cls)

    def __init__(self, source: str, holder: dict[str, str],
                 result: Callable[[tuple[Type, ...]], Type]) -> None:
        object.__setattr__(self, "builtin", False)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "_source", source)
        object.__setattr__(self, "_holder", holder)

    @property
    def name(self) -> str:  # noqa: D401 - the instance name once resolved
        holder: dict[str, str] = getattr(self, "_holder")
        source: str = getattr(self, "_source")
        return holder.get("name", source)


def _callable_api(api: str, scope: Scope) -> bool:
    """Whether `wp.<api>` is a builtin a call can name (not a constant, type or module attribute)."""
    return (api in API_OPS or api == "neg" or api in OPERATOR_BUILTINS or api in ATOMIC_UPDATES or api in MATH_REWRITES
            or api in random.DRAWING or warp_library.provides(api, scope))


def _is_extent(v: object, generic: bool) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (generic and isinstance(v, str))


def _NONE() -> Type:
    from ..ir.types import NONE

    return NONE


def _convert(value: Any, target: Scalar) -> int | float | bool:
    if target.is_float:
        return float(value)
    if target.kind == "bool":
        return bool(value)
    return wrap_int(int(value), target)


def _convert_assigned(args: list[ir.Expr], b: Bound) -> list[ir.Expr]:
    """`tile_assign(dst, src)` with scalar elements of another dtype converts src to dst's dtype
    element by element, as Warp 1.19 does (its assignment is a C++ conversion: floats round to
    nearest, ints wrap, floats truncate toward zero, the same values as numpy's astype); the
    conversion is a tile_astype, whose adjoint converts the gradient back. Other element types
    are left to the rule, which refuses a mismatch."""
    dst, src = args[0].type, args[1].type
    if not (isinstance(dst, TileT) and isinstance(src, TileT)) or dst.dtype == src.dtype:
        return args
    if not (isinstance(dst.dtype, Scalar) and isinstance(src.dtype, Scalar)):
        return args
    converted = TileT(dst.dtype, src.shape)
    b.types["src"] = converted
    astype = ir.OpCall("tile_astype", (args[1],), (("dtype", dst.dtype),), converted, args[1].span)
    return [args[0], astype, *args[2:]]


def _retype(arg: ir.Expr, want: Type) -> ir.Expr:
    if isinstance(arg, ir.Const) and isinstance(want, Scalar) and arg.type != want:
        return ir.Const(_convert(arg.value, want), want, arg.span)
    return arg


__all__ = ["CallLowering", "Abort"]

