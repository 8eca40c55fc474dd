"""Lowering of `@wp.struct` values: struct parameters, locals, constructors, field reads and
writes, arrays of structs, struct arguments of funcs.

Mixed into `FunctionChecker`. A struct never reaches the IR: a struct-typed name is one symbol
per scalar or array leaf (`p.inner.x`, see structs.leaves), and an array of structs is one array
per scalar leaf, a strided view of that field (the loader passes numpy field views). So every
later pass, the autodiff included, sees plain scalars and arrays: a gradient through a struct
field is the gradient of that leaf. The values below live only while a statement is lowered.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .. import ir, naming
from ..ir.types import BUILTIN_STRUCT_CALLS, BUILTIN_STRUCTS, ArrayT, FieldT, FunctionT, GridQueryT, IndexedT, MatT, Scalar, StructT, TileT, Type, VecT, describe, tuple_items
from ..ops.values import is_value
from . import structs, suggest, warp_library
from .indexed import READ_ONLY, IndexedValue
from .lowering_host import LoweringHost
from .tuple_returns import return_sources, tuple_annotation
from .values_only import effect_of

if TYPE_CHECKING:
    from .check import Lowered
    from .resolve import FuncDef, Scope


@dataclass(frozen=True)
class StructValue:
    """A struct value: its leaves by dotted path (an array field not yet assigned is absent)."""

    type: StructT
    leaves: dict[str, ir.Expr]  # dotted path -> IR expr
    origin: str  # how a diagnostic names it: `p`, `s.inner`, `MyStruct()`


@dataclass(frozen=True)
class StructArray:
    """An array of structs: one IR array (a field view) per scalar leaf."""

    type: ArrayT
    leaves: dict[str, ir.Expr]  # dotted path -> IR expr of an ArrayT
    origin: str


@dataclass(frozen=True)
class StructElement:
    """`a[i, j]` of an array of structs (or a nested struct field of one): read or written per leaf."""

    type: StructT
    array: StructArray
    prefix: str  # dotted path of this (nested) struct inside the array's element, "" or "inner."
    subscript: cst.Subscript  # the indexing, lowered again for each leaf it touches
    origin: str


@dataclass(frozen=True)
class StructTile:
    """A tile of structs: one IR tile per leaf (lower_struct_tiles.py)."""

    type: TileT  # TileT(StructT, shape)
    leaves: dict[str, ir.Expr]  # dotted path -> IR expr of a TileT
    origin: str


STRUCTISH = (StructValue, StructArray, StructElement, StructTile)


def _sub(leaves: dict[str, ir.Expr], field: str) -> dict[str, ir.Expr]:
    return {k[len(field) + 1:]: v for k, v in leaves.items() if k.startswith(field + ".")}


class StructLowering(LoweringHost):
    # ------------------------------------------------------------ names

    def bind_struct_param(self, p: cst.Param, t: Any, params: list[ir.Sym]) -> bool:
        """A struct or array-of-structs parameter: one parameter symbol per leaf."""
        flat = structs.leaves(t)
        if flat is None:
            return False
        name = p.name.value
        self.struct_vars[name] = t
        for path, lt in flat:
            sym = ir.Sym(f"{name}.{path}", 0, lt)
            self.env[sym.name] = self.new_binding(sym, self.span(p.name), ())
            params.append(sym)
        return True

    def struct_ref(self, name: str, node: cst.CSTNode) -> Lowered:
        """The value a struct-typed name holds now."""
        t = self.struct_vars[name]
        leaves: dict[str, ir.Expr] = {}
        for path, _ in _leaves(t):
            b = self.env.get(f"{name}.{path}")
            if b is not None and b.poisoned:
                from .lower_call import Abort

                raise Abort()
            if b is not None:
                leaves[path] = ir.Var(b.sym, self.span(node))
        if isinstance(t, ArrayT):
            return StructArray(t, leaves, name)
        return StructValue(cast(StructT, t), leaves, name)  # a struct tile's name: StructTileLowering.struct_ref

    # ------------------------------------------------------------ reads

    def lower_attribute(self, node: cst.Attribute) -> Lowered:
        if self.maybe_struct(node.value):
            base = self.expr(node.value)
            if isinstance(base, (StructValue, StructElement)):
                return self.struct_field(base, node)
            if isinstance(base, StructArray):
                self.fail("TC0401", f"unsupported syntax: attribute `.{node.attr.value}` of {describe(base.type)}; "
                          "index it first", node.attr)
        return super().lower_attribute(node)

    def lower_subscript(self, node: cst.Subscript) -> Lowered:
        is_shape = isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"  # `s.arr.shape[0]`
        held = None if is_shape else self.indexed_field(node.value)
        if held is not None:  # `s.data[i]`, `ps[k].data[i]`: an indexed array field read element by element
            return self.gather_indexed(held.origin, held.base, held.indices, node)
        if self.maybe_struct(node.value) and not is_shape:
            base = self.expr(node.value)
            if isinstance(base, StructArray):
                return self.struct_subscript(base, node)
            if isinstance(base, STRUCTISH):
                self.fail("TC0401", f"unsupported syntax: indexing {describe(base.type)}; read a field", node)
        return super().lower_subscript(node)

    def maybe_struct(self, node: cst.BaseExpression) -> bool:
        """Whether an expression may be struct-valued: it starts at a struct-typed name or calls a
        constructor or a func (only then is it lowered here first, and again by the other lowerings)."""
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        if isinstance(node, cst.Call):
            api = self.scope.api_attr(node.func)
            if api is not None:  # `wp.MeshQueryPoint()`, `wp.mesh_query_point(...)`
                return api in BUILTIN_STRUCTS or api in BUILTIN_STRUCT_CALLS or api == "mesh_get"
            return isinstance(node.func, cst.Name) and (node.func.value in self.scope.structs
                                                        or node.func.value in self.scope.funcs)
        return isinstance(node, cst.Name) and (node.value in self.struct_vars or any(  # a tuple holding a struct
            isinstance(sym.type, StructT) for sym in self.tuple_vars.get(node.value, ())))

    def indexed_field(self, node: cst.CSTNode) -> IndexedValue | None:
        """`s.data` / `ps[k].data` where the field is an indexed array: its base and index arrays
        (struct leaves, ir/structs.py); None for any other expression."""
        if not (isinstance(node, cst.Attribute) and self.maybe_struct(node.value)):
            return None
        base = self.expr(node.value)
        if not isinstance(base, (StructValue, StructElement)):
            return None
        attr = node.attr.value
        ft = base.type.field(attr)
        if not isinstance(ft, IndexedT):
            return None
        paths = [attr] + [naming.index_param(attr, k) for k in range(ft.ndim)]
        if isinstance(base, StructElement):
            parts = [self.lower_array_subscript(base.array.leaves[base.prefix + p], base.subscript) for p in paths]
        else:
            if attr not in base.leaves:
                self.fail("TC0312", f"field `{attr}` of `{base.origin}` is read before it is assigned", node)
            parts = [base.leaves[p] for p in paths]
        return IndexedValue(ft, parts[0], parts[1:], f"{base.origin}.{attr}")

    def struct_field(self, base: StructValue | StructElement, node: cst.Attribute) -> Lowered:
        """`v.field` of a struct value or of an element of an array of structs."""
        attr = node.attr.value
        t = base.type
        ft = t.field(attr)
        if ft is None:
            names = [f for f, _ in t.fields]
            self.fail("TC0311", f"struct `{t.name}` has no field `{attr}` (its fields: {', '.join(names)})",
                      node.attr, help=suggest.did_you_mean(attr, names))
        origin = f"{base.origin}.{attr}"
        if isinstance(ft, IndexedT):  # read only through indexed_field: `s.data[i]`, `s.data.shape[k]`
            self.fail("TC0401", f"unsupported syntax: indexed array `{origin}` used here; "
                      + READ_ONLY.format(name=origin), node)
        if isinstance(base, StructElement):
            path = base.prefix + attr
            if isinstance(ft, StructT):
                return StructElement(ft, base.array, path + ".", base.subscript, origin)
            return self.lower_array_subscript(base.array.leaves[path], base.subscript)
        if isinstance(ft, StructT):
            return StructValue(ft, _sub(base.leaves, attr), origin)
        if isinstance(ft, ArrayT) and isinstance(ft.dtype, StructT):
            return StructArray(ft, _sub(base.leaves, attr), origin)
        if attr not in base.leaves:
            self.fail("TC0312", f"field `{attr}` of `{base.origin}` is read before it is assigned (an array "
                      "field of a struct made in the kernel has no value until one is assigned)", node)
        return base.leaves[attr]

    def struct_subscript(self, base: StructArray, node: cst.Subscript) -> StructElement | StructArray:
        """`a[i]` of an array of structs: an element when every axis is indexed, else a view of each leaf."""
        items = self.subscript_items(node)
        if len(items) == base.type.ndim and not any(isinstance(i, cst.Slice) for i in items):
            for i in items:
                self.index(i)  # diagnose the indices once, even when no field is read
            return StructElement(cast(StructT, base.type.dtype), base, "", node, f"{base.origin}[...]")
        views = {path: self.lower_array_subscript(leaf, node) for path, leaf in base.leaves.items()}
        ndim = next(iter(views.values())).type.ndim
        return StructArray(ArrayT(base.type.dtype, ndim), views, f"{base.origin}[...]")

    def struct_leaf_values(self, value: Lowered, node: cst.CSTNode) -> dict[str, ir.Expr]:
        """Every leaf of a struct value (an element of an array of structs is read leaf by leaf)."""
        if isinstance(value, StructElement):
            out = {}
            for path, _ in structs.struct_leaves(value.type):
                leaf = value.array.leaves[value.prefix + path]
                out[path] = self.lower_array_subscript(leaf, value.subscript)
            return out
        return dict(value.leaves)

    def flatten_args(self, args: list[Lowered], arg_nodes: list[cst.BaseExpression]) -> list[ir.Expr]:
        """Call arguments with each struct argument spread into its leaves, in leaf order, and
        without the functions passed (they are no parameters of the instance)."""
        out: list[ir.Expr] = []
        for a, n in zip(args, arg_nodes):
            if isinstance(a.type, FunctionT):  # a function passed: the callee's instance is made for it
                continue
            if isinstance(a.type, GridQueryT):  # a hash-grid query passed: its variables (hash_grids.py)
                out += self.query_leaves(cast(ir.Const, a))
                continue
            if not isinstance(a, STRUCTISH):
                out.append(a)
                continue
            values = self.struct_leaf_values(a, n)
            for path, _ in _leaves(a.type):
                if path not in values:
                    self.fail("TC0312", f"field `{path}` of `{a.origin}` is passed before it is assigned", n)
                out.append(values[path])
        return out

    def refuse_struct_operand(self, value: Lowered, node: cst.CSTNode) -> Lowered:
        if isinstance(value, STRUCTISH):
            self.fail("TC0201", f"{describe(value.type)} cannot be used here; read one of its fields "
                      f"({', '.join(f for f, _ in _fields(cast('StructT | ArrayT', value.type)))})", node)
            # (not a struct tile: StructTileLowering.make_op takes those before this check)
        return value

    # ------------------------------------------------------------ constructors

    def construct_struct(self, t: StructT, node: cst.Call) -> StructValue:
        """`MyStruct()` (every field zero, as Warp zero-initialises) or every field given,
        positionally or by keyword (Warp 1.19 takes all or none)."""
        names = [f for f, _ in t.fields]
        given: dict[str, cst.BaseExpression] = {}
        for i, arg in enumerate(node.args):
            if arg.keyword is None:
                if i >= len(names):
                    self.fail("TC0303", f"`{t.name}` has {len(names)} field(s), given {len(node.args)} values", arg)
                given[names[i]] = arg.value
            else:
                key = arg.keyword.value
                if key not in names:
                    self.fail("TC0311", f"struct `{t.name}` has no field `{key}` (its fields: {', '.join(names)})",
                              arg.keyword, help=suggest.did_you_mean(key, names))
                given[key] = arg.value
        if given and len(given) != len(names):
            missing = [n for n in names if n not in given]
            self.fail("TC0303", f"`{t.name}(...)` takes no values or all {len(names)} fields (as in Warp); "
                      f"missing: {', '.join(missing)}", node)
        leaves: dict[str, ir.Expr] = {}
        for fname, ft in t.fields:
            if fname in given and isinstance(ft, IndexedT):
                self.fail("TC0401", f"unsupported syntax: a value for the indexed array field `{t.name}.{fname}`; "
                          "tilec reads an indexed array field of a struct parameter only", given[fname])
            if fname in given:
                assert not isinstance(ft, IndexedT)  # refused above
                value = self.checked_field_value(t, fname, ft, self.expr(given[fname]), given[fname])
                if isinstance(value, STRUCTISH):
                    leaves.update({f"{fname}.{k}": v for k, v in self.struct_leaf_values(value, node).items()})
                else:
                    leaves[fname] = value
            elif isinstance(ft, StructT):
                inner = self.construct_struct(ft, cst.Call(func=node.func))
                leaves.update({f"{fname}.{k}": v for k, v in inner.leaves.items()})
            elif isinstance(ft, Scalar):
                zero = 0.0 if ft.is_float else (False if ft.kind == "bool" else 0)
                leaves[fname] = ir.Const(zero, ft, self.span(node))
            elif isinstance(ft, (VecT, MatT)):  # a zero vector / matrix, as Warp zero-initialises
                zero = 0.0 if ft.dtype.is_float else 0
                leaves[fname] = ir.OpCall("value_new", tuple(ir.Const(zero, ft.dtype, self.span(node))
                                                             for _ in range(ft.length)),
                                          (("type", ft),), ft, self.span(node))
        return StructValue(t, leaves, f"{t.name}()")

    def checked_field_value(self, t: StructT, fname: str, ft: Type, value: Lowered, node: cst.CSTNode) -> Lowered:
        """`value` as field `fname` of `t` holds it (literals adapt), or a diagnostic naming both types."""
        if isinstance(ft, Scalar) and self.is_weak(value):
            if isinstance(value.type, Scalar) and value.type.is_float and not ft.is_float:
                self.fail("TC0201", f"field `{t.name}.{fname}` is {describe(ft)}, the value is a float", node)
            return self.retype_literal(value, ft)
        if value.type != ft:
            self.fail("TC0201", f"field `{t.name}.{fname}` is {describe(ft)}, the value is {describe(value.type)}",
                      node)
        return value

    # ------------------------------------------------------------ writes

    def bind_struct(self, target: cst.Name, value: Lowered, node: cst.CSTNode) -> list[ir.Stmt]:
        """`s = <struct value>`: a copy, leaf by leaf (structs are values, as in Warp)."""
        name = target.value
        if isinstance(value, StructArray):
            self.fail("TC0401", "unsupported syntax: binding an array of structs to a new name; index the "
                      "parameter directly", node)
        old = self.struct_vars.get(name)
        if old is None and name in self.env:
            self.fail("TC0405", f"`{name}` was {describe(self.env[name].sym.type)} and cannot become "
                      f"{describe(value.type)}", target)
        if old is not None and old != value.type:
            self.fail("TC0405", f"`{name}` was {describe(old)} and cannot become {describe(value.type)}", target)
        values = self.struct_leaf_values(value, node)
        self.struct_vars[name] = value.type
        return self.assign_leaves(name, value.type, values, node)

    def assign_leaves(self, prefix: str, t: Type, values: dict[str, ir.Expr], node: cst.CSTNode) -> list[ir.Stmt]:
        """Every leaf assigned as one parallel assignment: `s = f(s)` reads the old `s` throughout."""
        targets: list[tuple[ir.Sym, ir.Expr]] = []
        for path, lt in _leaves(t):
            if path not in values:
                continue
            key = f"{prefix}.{path}"
            b = self.env.get(key)
            if b is None:
                b = self.new_binding(ir.Sym(key, 0, lt), self.span(node), self.path)
                self.env[key] = b
            targets.append((b.sym, self.retype_literal(values[path], lt)))
        written = {sym for sym, _ in targets}
        reads_target = any(isinstance(sub, ir.Var) and sub.sym in written
                           for _, value in targets for sub in ir.walk_expr(value))
        if not reads_target or len(targets) < 2:
            return [ir.Assign(sym, value, self.span(node)) for sym, value in targets]
        temps = [(sym, self.new_temp(sym.type), value) for sym, value in targets]
        stmts: list[ir.Stmt] = [ir.Assign(tmp, value, self.span(node)) for _, tmp, value in temps]
        return stmts + [ir.Assign(sym, ir.Var(tmp, self.span(node)), self.span(node)) for sym, tmp, _ in temps]

    def store_field(self, target: cst.Attribute, value_node: cst.BaseExpression, node: cst.CSTNode,
                    aug: str | None = None) -> list[ir.Stmt]:
        """`s.x = v`, `s.inner = t`, `a[i].x = v`, and `+=`/`-=` (`aug`: the binary op's name)."""
        base = self.expr(target.value)
        if not isinstance(base, (StructValue, StructElement)) and is_value(base.type):  # s.pos.x = e
            from .lower_expr import BINOPS

            op_cls = None if aug is None else next(k for k, v in BINOPS.items() if v == aug)
            return self.store_value_component(target, self.expr(value_node), node, op_cls)
        if not isinstance(base, (StructValue, StructElement)):
            if isinstance(base, StructArray):
                self.fail("TC0401", f"unsupported syntax: assignment to a field of {describe(base.type)}; "
                          "index it first", target)
            self.fail("TC0401", f"unsupported syntax: assignment to an attribute of {describe(base.type)} held in a "
                      "struct field", target, help="assign the whole field, e.g. `s.pos = v` after updating `v`")
        t, attr = base.type, target.attr.value
        ft = t.field(attr)
        if ft is None:
            names = [f for f, _ in t.fields]
            self.fail("TC0311", f"struct `{t.name}` has no field `{attr}` (its fields: {', '.join(names)})",
                      target.attr, help=suggest.did_you_mean(attr, names))
        if isinstance(ft, IndexedT):
            self.fail("TC0401", f"unsupported syntax: assignment to the indexed array field `{attr}`; "
                      + READ_ONLY.format(name=f"{base.origin}.{attr}"), target)
        if isinstance(base, StructElement) and isinstance(ft, ArrayT):  # its descriptor is read-only (ir/structs.py)
            self.fail("TC0401", f"unsupported syntax: assignment to the array field `{attr}` of an element of "
                      f"{describe(base.array.type)}; write the elements of the array it holds "
                      f"(`{base.origin}.{attr}[j] = v`)", target)
        value = self.expr(value_node)
        if aug is not None:
            if not isinstance(ft, (Scalar, VecT, MatT)):
                self.fail("TC0401", f"unsupported syntax: augmented assignment to {describe(ft)} field", target)
            if isinstance(base, StructElement) and aug in ("add", "sub"):  # an atomic, as `a[i] += v` is
                return self.store_element_leaf(base, attr, ft, value, node, value_node,
                                               "array_atomic_add" if aug == "add" else "array_atomic_sub")
            value = self.make_op(aug, [self.struct_field(base, target), value], {}, node, where=[target, value_node])
        value = self.checked_field_value(t, attr, ft, value, value_node)
        if isinstance(base, StructElement):
            if isinstance(ft, StructT):  # every field read before any is written, as one struct copy
                out: list[ir.Stmt] = []
                temps: dict[str, ir.Sym] = {}
                for path, v in self.struct_leaf_values(value, node).items():
                    temps[path] = self.new_temp(v.type)
                    out.append(ir.Assign(temps[path], v, self.span(node)))
                return out + [stmt for path, lt in structs.struct_leaves(ft)
                              for stmt in self.store_element_leaf(base, f"{attr}.{path}", lt,
                                                                  ir.Var(temps[path], self.span(node)), node,
                                                                  value_node, "array_store")]
            return self.store_element_leaf(base, attr, ft, value, node, value_node, "array_store")
        root, path = self.struct_root(target)
        if isinstance(ft, StructT):
            return self.assign_leaves(f"{root}.{path}", ft, self.struct_leaf_values(value, node), node)
        key = f"{root}.{path}"
        b = self.env.get(key)
        if b is None:  # an array field assigned for the first time
            b = self.new_binding(ir.Sym(key, 0, ft), self.span(node), self.path)
            self.env[key] = b
        return [ir.Assign(b.sym, value, self.span(node))]

    def store_struct_element(self, base: Lowered, target: cst.Subscript, value: Lowered, node: cst.CSTNode,
                             aug: Any) -> list[ir.Stmt]:
        """`a[i] = s`: every field of the element written (an array of structs only, no `+=`)."""
        if not isinstance(base, StructArray) or aug is not None:
            what = "`+=`/`-=` on an element of an array of structs" if aug is not None else \
                f"element write into {describe(base.type)}"
            self.fail("TC0401", f"unsupported syntax: {what}; update its fields instead", target)
        element = self.struct_subscript(base, target)
        if not isinstance(element, StructElement):
            self.fail("TC0401", "unsupported syntax: assignment to a view of an array of structs", target)
        if not isinstance(value, (StructValue, StructElement)) or value.type != element.type:
            self.fail("TC0201", f"an element of {describe(base.type)} is {describe(element.type)}, the value is "
                      f"{describe(value.type)}", getattr(node, "value", node))
        out: list[ir.Stmt] = []
        temps: dict[str, ir.Sym] = {}
        for path, v in self.struct_leaf_values(value, node).items():
            temps[path] = self.new_temp(v.type)
            out.append(ir.Assign(temps[path], v, self.span(node)))
        for path, lt in structs.struct_leaves(element.type):
            out += self.store_element_leaf(element, path, lt, ir.Var(temps[path], self.span(node)), node, target,
                                           "array_store")
        return out

    def store_element_leaf(self, base: StructElement, path: str, lt: Type, value: ir.Expr, node: cst.CSTNode,
                           value_node: cst.CSTNode, op: str) -> list[ir.Stmt]:
        leaf = base.array.leaves[base.prefix + path]
        indices = [self.index(i) for i in self.subscript_items(base.subscript)]
        call = self.make_op(op, [leaf, self.retype_literal(value, lt)] + indices, {}, node,
                            where=[base.subscript, value_node])
        return [ir.ExprStmt(call, self.span(node))]

    def is_struct_target(self, target: cst.BaseExpression) -> bool:
        """Whether an assignment target `x.f` / `a[i].f` / `s.inner.f` starts at a struct-typed name."""
        node = target
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        return isinstance(node, cst.Name) and node.value in self.struct_vars

    def struct_root(self, target: cst.Attribute) -> tuple[str, str]:
        """(variable name, dotted field path) of `s.a.b` where `s` is a struct-typed name."""
        parts = []
        node: cst.BaseExpression = target
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name) or node.value not in self.struct_vars:
            self.fail("TC0401", "unsupported syntax: assignment to a field of a temporary struct", target)
        return node.value, ".".join(reversed(parts))


def _fields(t: StructT | ArrayT) -> tuple[tuple[str, FieldT], ...]:
    return cast(StructT, t.dtype).fields if isinstance(t, ArrayT) else t.fields


class StructReturns(LoweringHost):
    """Funcs returning a struct: one instance per scalar field, each returning that field (the
    field is a plain scalar to every later pass, its adjoint included). The body runs once per
    field, so such a func must have no effects (array writes, atomics, prints): refused otherwise."""

    def struct_returned(self, fd: FuncDef, node: cst.CSTNode, depth: int = 0,
                        arg_types: Sequence[object] = (), item: int | None = None) -> StructT | None:
        """The StructT a func's `-> S` annotation names, else None; without an annotation, the struct
        every `return` of its body gives (Warp infers it: `s = S()` ... `return s`; `type(p)(...)`:
        the struct p is, from `arg_types`, the call's or instance's parameter types). item: the struct
        item `item` of a func returning several values is (`-> tuple[S, wp.vec3]`, `return s, v`)."""
        from . import annotations as ann

        returns = fd.node.returns
        if returns is not None and item is not None:
            items = tuple_annotation(returns.annotation)
            if items is None or item >= len(items):
                return None
            returns = cst.Annotation(items[item])
        if returns is None:
            scope = getattr(fd, "scope", None) or self.scope
            found: set[StructT | None] = set()
            for name in (fd.return_sources if item is None else return_sources(fd, item)):
                if name.startswith("#"):  # `type(p)(...)`
                    k = int(name[1:])
                    given = arg_types[k] if k < len(arg_types) else None
                    found.add(given if isinstance(given, StructT) and tuple_items(given) is None else None)
                elif name in scope.structs:
                    found.add(scope.structs[name])
                elif name in scope.funcs and depth < 8 and scope.funcs[name] is not fd:
                    found.add(self.struct_returned(scope.funcs[name], node, depth + 1))
                elif _builtin_result(scope, name) is not None:
                    found.add(_builtin_result(scope, name))
                else:
                    found.add(None)
            return found.pop() if len(found) == 1 else None
        try:
            t = ann.annotation(returns.annotation, getattr(fd, "scope", None) or self.scope)
        except ann.AnnotationError:
            return None  # the callee's own check reports it
        return t if isinstance(t, StructT) else None

    def call_struct_func(self, name: str, t: StructT, args: list[Lowered], where: list[cst.BaseExpression],
                         node: cst.Call) -> Lowered:
        from .lower_call import _retype

        flat_leaves = structs.struct_leaves(t)
        self.refuse_array_fields(name, t, node)
        types: list[tuple[Type, object]] = [(a.type, a if self.is_weak(a) else None) for a in args]
        calls: dict[str, ir.Expr] = {}
        for at, (path, _) in enumerate(flat_leaves):
            fn = self.module.instantiate(name, types, self.block_dim, node, self, where, project=path)
            if fn.byref:
                self.fail("TC0401", f"unsupported syntax: `{name}` returns a struct and updates a tile argument "
                          "in place", node)
            fn = self.one_with_effects(name, fn, at == len(flat_leaves) - 1, "returns a struct", "field", node)
            flat = [_retype(a, p.type) for a, p in zip(self.flatten_args(args, where), fn.params)]
            if fn.spatial_ids:  # a mesh or grid id it queries: the caller's own (hash_grids.py)
                self.pass_grid_ids(fn, flat, node)
            calls[path] = ir.Call(fn.name, tuple(flat), fn.ret, self.span(node))
            self.lane_ops = self.lane_ops or self.module.lane_funcs.get(fn.name, False)
        return StructValue(t, calls, f"{name}(...)")

    def one_with_effects(self, name: str, fn: ir.Function, with_effects: bool, gives: str, per: str,
                         node: cst.Call) -> ir.Function:
        """Instance `fn` of a func that gives its result through several instances: as it is where it
        makes the func's effects (`with_effects`: the last one the caller calls) or has none, else its
        twin without them (values_only.py); a diagnostic where a value depends on an effect."""
        funcs = {f.name: f for f in self.module.order}
        effect = effect_of(fn, funcs)
        if effect is None or with_effects:
            return fn
        if fn.grad_funcs is not None or fn.custom_adjoint is not None or fn.replay_func is not None:
            why = f"a custom adjoint (line {effect.span.line} has an effect)"
        else:
            twin = self.module.values_only(fn, replaces=True)
            if isinstance(twin, ir.Function):
                return twin
            why = f"effects, and line {twin.span.line} depends on one (an array it writes, or an effect's result)"
        self.fail("TC0401", f"unsupported syntax: `{name}` {gives} and has {why}; tilec evaluates such a func "
                  f"once per {per}, making its effects in one of them only", node,
                  help="return the values and write the arrays in the caller")

    def struct_item_field(self, value: Lowered, path: str, node: cst.Return) -> ir.Expr:
        """Field `path` of the struct a `return` gives (or of its struct item, `return s, v`), for the
        instance that returns that field."""
        if not isinstance(value, STRUCTISH) or isinstance(value, StructArray):
            self.fail("TC0410", f"returns {describe(value.type)} where the func's other returns give a struct",
                      cast(cst.BaseExpression, node.value))  # (a return with an item has a value)
        values = self.struct_leaf_values(value, node)
        if path not in values:
            self.fail("TC0312", f"field `{path}` of `{value.origin}` is returned before it is assigned",
                      cast(cst.BaseExpression, node.value))
        return values[path]

    def refuse_array_fields(self, name: str, t: StructT, node: cst.CSTNode) -> None:
        arrays = [path for path, lt in structs.struct_leaves(t) if isinstance(lt, ArrayT)]
        if arrays:
            self.fail("TC0401", f"unsupported syntax: `{name}` returns `{t.name}`, which holds arrays "
                      f"({', '.join(arrays)}); a func may return a struct of scalars and nested structs", node)

    def struct_return(self, value: Lowered, node: cst.Return) -> ir.Expr | None:
        """The value one instance of a struct-returning func returns: its field `self.project`
        (None: the body is checked without being emitted)."""
        t = self.struct_returned(self.fd, node, arg_types=self.param_types)
        if t is None:
            self.fail("TC0410", f"returning {describe(value.type)} from a func needs the return annotation "
                      f"`-> {value.type}`", cast(cst.BaseExpression, node.value),  # a struct value
                      help="without one, tilec reads the struct from returns of `S(...)`, of a func returning "
                      "one, of a struct parameter, or of a local assigned one of those")
        if value is None or not isinstance(value, (StructValue, StructElement)) or value.type != t:
            got = "nothing" if value is None else describe(value.type)
            self.fail("TC0410", f"returns {got} but the function is annotated to return {describe(t)}",
                      node.value if node.value is not None else node)
        if self.project is None:
            self.returns.append((t, node))
            return None
        return self.struct_item_field(value, self.project, node)


def _leaves(t: Type) -> list[tuple[str, Type]]:
    """structs.leaves of a type that has them (a struct, an array or a tile of structs)."""
    return cast("list[tuple[str, Type]]", structs.leaves(t))


class TupleReturns(LoweringHost):
    """Funcs returning several values (`return a, b`, `-> tuple[...]`), unpacked by the caller
    (`x, y = f(...)`): Warp's multiple return values. As for a func returning a struct, each value is
    one instance of the func returning that item alone (`project` "#k"), so every later pass, its
    adjoint included, sees funcs of one result; the body runs once per item, so such a func must have
    no effects (array writes, atomics, prints) and update no tile in place."""

    def unpacked_call(self, name: str, count: int, node: cst.Call) -> list[Lowered]:
        """The `count` values of `name(...)`, one call of an item's instance each, in order; a struct
        item (`-> tuple[S, wp.vec3]`) is a StructValue of one instance per field ("#k:path")."""
        fd = warp_library.func_def(self.scope, name)
        arg_nodes = self.func_arguments(name, fd, node, overloaded=False)
        args, where = self.argument_values(fd, arg_nodes, node)
        types: list[tuple[Type, object]] = [(a.type, a if self.is_weak(a) else None) for a in args]
        structs_returned = [self.struct_returned(fd, node, arg_types=[a.type for a in args], item=k)
                            for k in range(count)]
        projects: list[str] = []  # one instance each; the last one makes the func's effects (values_only.py)
        for k, t in enumerate(structs_returned):
            if t is not None:
                self.refuse_array_fields(name, t, node)
            projects += [f"#{k}"] if t is None else [f"#{k}:{path}" for path, _ in structs.struct_leaves(t)]
        calls = iter([self.item_call(name, types, args, where, project, project == projects[-1], node)
                      for project in projects])
        values: list[Lowered] = []
        for k, t in enumerate(structs_returned):
            if t is None:
                values.append(next(calls))
                continue
            values.append(StructValue(t, {path: next(calls) for path, _ in structs.struct_leaves(t)},
                                      f"{name}(...)[{k}]"))
        return values

    def item_call(self, name: str, types: list[tuple[Type, object]], args: list[Lowered],
                  where: list[cst.BaseExpression], project: str, with_effects: bool, node: cst.Call) -> ir.Call:
        """The call of the instance of `name` that returns one of its several values (or one field of one);
        without the func's effects unless `with_effects`."""
        from .lower_call import _retype

        fn = self.module.instantiate(name, types, self.block_dim, node, self, where, project=project)
        if fn.byref:
            self.fail("TC0401", f"unsupported syntax: `{name}` returns several values and updates a tile argument "
                      "in place; tilec evaluates such a func once per value", node,
                      help="return the values and write the tiles in the caller")
        fn = self.one_with_effects(name, fn, with_effects, "returns several values", "value", node)
        flat = self.flatten_args(args, where)
        self.lane_ops = self.lane_ops or self.module.lane_funcs.get(fn.name, False)
        return ir.Call(fn.name, tuple(_retype(a, p.type) for a, p in zip(flat, fn.params)), fn.ret, self.span(node))

    def returned_values(self, node: cst.Return, count: int) -> list[Lowered]:
        """The values a `return` of a func returning `count` values gives: `return a, b`, or the items of
        `return g(x)` of a func returning as many, or of a tuple variable (`return t`)."""
        if isinstance(node.value, (cst.Call, cst.Name)):
            items = self.tuple_items(node.value)
            if items is not None and len(items) == count:
                return list(items)
        return [self.expr(self.returned_item(node, k, count)) for k in range(count)]

    def returned_item(self, node: cst.Return, k: int, count: int) -> cst.BaseExpression:
        """Item k of a `return a, b` of a func returning `count` values."""
        if not isinstance(node.value, cst.Tuple) or len(node.value.elements) != count:
            self.fail("TC0410", "a func returning several values returns them all at every `return` "
                      "(`return a, b`)", node.value if node.value is not None else node)
        return node.value.elements[k].value


def _builtin_result(scope: Scope, callee: str) -> StructT | None:
    """The struct a Warp builtin a func returns the result of gives (`wp.mesh_query_point(...)`: its
    MeshQueryPoint), or None."""
    root, _, attr = callee.rpartition(".")
    api = attr if root in scope.api_aliases else scope.api_names.get(callee) if not root else None
    return BUILTIN_STRUCTS[BUILTIN_STRUCT_CALLS[api]] if api in BUILTIN_STRUCT_CALLS else None
