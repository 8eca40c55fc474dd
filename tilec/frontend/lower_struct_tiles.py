"""Tiles whose elements are `@wp.struct` values, lowered as one tile per leaf of the struct.

Mixed into `FunctionChecker` ahead of the other lowerings. A tile of structs never reaches the IR:
like a struct value (lower_structs.py) it is one tile per scalar, vector or matrix leaf
(`t.x`, `t.inner.y`; ir/structs.leaves), each an ordinary tile, so every later pass, the
autodiff included, sees plain tiles, and the gradient of a leaf is that tile's gradient.

An op over struct tiles is the same op once per leaf: the call is lowered again for each leaf path
with every struct-valued operand (an array of structs, a struct tile, a struct value, `dtype=S`)
replaced by that leaf (`subst`), so the op's own binding, rules and diagnostics apply. What Warp
1.19 takes (the probes behind STRUCT_TILE_OPS): loads, stores, atomic adds and their indexed forms,
tile_zeros / tile_empty / tile_full (not tile_ones: structs have no one), tile_from_thread,
tile_map over funcs of struct arguments, tile_reduce with a func of two structs (whole tiles only; a
tree of tile_maps, see struct_tile_reduce), tile_sum (field by field), `+` / `-` / `+=` / `-=`
(field by field), tile_sort of struct values, the layout ops and element reads / writes, and block
stacks (one stack per leaf; the first leaf's push and pop choose the slots of all). Every
other op given a struct tile (arithmetic but + and -, min/max/arg reductions, scans, matmul, casts,
...) is a diagnostic at the operand, before any C++ is written.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import libcst as cst

from .. import ir, naming
from ..ir.types import INT32, NONE, ArrayT, StackT, StructT, TileT, TupleT, Type, component_dtype, describe
from ..ops import OPS, Param, OpSpec
from . import annotations as ann
from . import structs
from .lower_structs import StructArray, StructElement, StructTile, StructValue
from .lowering_host import LoweringHost
from .statement_walk import names_in

if TYPE_CHECKING:
    from .check import Lowered

    # id(operand node) -> (the node, its struct-valued operand or the StructT of `dtype=S`)
    Carriers = dict[int, tuple[cst.BaseExpression, Lowered]]

# Ops Warp 1.19 applies to tiles of structs, each lowered once per leaf.
PER_LEAF_OPS = {
    "tile_load", "tile_store", "tile_atomic_add", "tile_load_indexed", "tile_store_indexed",
    "tile_atomic_add_indexed", "tile_zeros", "tile_empty", "tile_full", "tile_from_thread", "tile", "untile",
    "tile_sum", "tile_broadcast", "tile_view", "tile_squeeze", "tile_reshape", "tile_transpose", "tile_extract",
    "tile_assign", "tile_scatter_add", "tile_scatter_masked", "tile_setitem", "tile_additem", "tile_subitem",
    "add", "sub",
    "where",  # wp.where(cond, a, b) of two struct values (Warp 1.19 selects whole structs): field by field
    "tile_stack", "tile_stack_clear",  # a stack of structs: one stack per leaf (struct_stack_push / _pop)
}
# Fields Warp 1.19 does not accumulate (no atomic add for them): tile_atomic_add leaves them, tile_sum
# gives the first element's, `a + b` / `a - b` give a's (measured: bool, int8, uint8, int16, uint16).
NON_ACCUMULATING = {"bool", "int8", "uint8", "int16", "uint16"}
ACCUMULATING_OPS = {"tile_atomic_add", "tile_atomic_add_indexed", "tile_sum", "add", "sub"}


def accumulates(t: Type) -> bool:
    held = component_dtype(t)
    return held is None or held.name not in NON_ACCUMULATING


# Ops on a stack of structs lowered on their own (struct_stack_op): one slot for all of a struct's leaves.
STACK_FIELD_OPS = {"tile_stack_push", "tile_stack_count", "tile_stack_pop"}
# Operands that must hold the same elements as a struct-valued operand of the same op.
SAME_ELEMENT = {"a", "t", "src", "dst", "value", "b"}
# Ops that take a struct tile in one way only, lowered on their own below.
SPECIAL_OPS = {"tile_map", "tile_sort"}
# Ops that only move elements: a tile of structs holding arrays takes them (an array field's tile holds
# array descriptors, ir/structs.py), as Warp's tests sort and store tiles of array payloads.
MOVES_DESCRIPTORS = {"tile_load", "tile_store", "tile_zeros", "tile_sort"}
# Why Warp refuses an op on struct tiles, where the op has a struct-specific reason.
REFUSALS = {
    "tile_ones": "structs have no value for one; use tile_full with an explicit value",
    "neg": "Warp's unary tile operators do not take struct elements",
    "tile_scan_inclusive": "Warp 1.19 scans float32, int32 and uint32 tiles only",
    "tile_scan_exclusive": "Warp 1.19 scans float32, int32 and uint32 tiles only",
    "tile_scan_max_inclusive": "Warp 1.19 scans float32, int32 and uint32 tiles only",
    "tile_scan_min_inclusive": "Warp 1.19 scans float32, int32 and uint32 tiles only",
}


@dataclass(frozen=True)
class StructTileStmts:
    """An op over struct tiles that makes no value (a store, an in-place update): its per-leaf
    statements, which the statement that called it emits."""

    stmts: list[ir.Stmt]
    type = NONE


class StructTileLowering(LoweringHost):
    struct_subst: dict[int, Lowered]  # id(cst node) -> the IR value it lowers to while one leaf is lowered

    # ------------------------------------------------------------ substitution

    @contextlib.contextmanager
    def substituted(self, values: dict[int, Lowered]) -> Iterator[None]:
        old = getattr(self, "struct_subst", {})
        self.struct_subst = {**old, **values}
        try:
            yield
        finally:
            self.struct_subst = old

    def expr(self, node: cst.BaseExpression) -> Lowered:
        value = getattr(self, "struct_subst", {}).get(id(node))
        if value is not None:
            return value
        return super().expr(node)

    def attr_value(self, p: Param, arg: cst.BaseExpression, spec: OpSpec) -> Any:
        value = getattr(self, "struct_subst", {}).get(id(arg))
        if value is not None and p.kind == "dtype":
            return value
        return super().attr_value(p, arg, spec)

    def struct_ref(self, name: str, node: cst.CSTNode) -> Lowered:
        t = self.struct_vars[name]
        if not isinstance(t, (TileT, StackT)):
            return super().struct_ref(name, node)
        leaves: dict[str, ir.Expr] = {}
        for path, _ in structs.struct_leaves(cast(StructT, t.dtype)):
            b = self.env[f"{name}.{path}"]
            if b.poisoned:
                from .lower_call import Abort

                raise Abort()
            self.check_not_stale(f"{name}.{path}", node)
            leaves[path] = ir.Var(b.sym, self.span(node))
        return StructTile(t, leaves, name)

    def struct_candidate(self, node: cst.Call) -> bool:
        """Whether a call may take a struct-valued operand (a name of a struct variable or class)."""
        if not self.struct_vars and not self.scope.structs:
            return False
        names = set()
        for a in node.args:
            names |= names_in(a.value)  # (a superset of what may carry a struct)
        return any(n in self.struct_vars or n in self.scope.structs for n in names)

    def maybe_struct(self, node: cst.BaseExpression) -> bool:
        """Also an op over struct operands (`wp.tile_reduce(f, t)[0].mass`)."""
        if super().maybe_struct(node):
            return True
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        return isinstance(node, cst.Call) and self.struct_candidate(node)

    # ------------------------------------------------------------ ops

    def lower_op(self, op: str, node: cst.Call, extra_attrs: dict[str, Any] | None = None) -> Lowered:
        if not isinstance(node, cst.Call) or not self.struct_candidate(node):
            return super().lower_op(op, node, extra_attrs)
        spec = OPS[op]
        bound, variadic = self.bind(spec, node)
        values: dict[int, Lowered] = {}  # id(node) -> lowered operand, lowered once
        carriers: Carriers = {}  # id(node) -> (cst node, struct-valued operand)
        for p in spec.params:
            arg = bound.get(p.name)
            if arg is None:
                continue
            if p.kind == "value":
                values[id(arg)] = self.expr(arg)
                if isinstance(values[id(arg)], (StructTile, StructValue, StructElement, StructArray)):
                    carriers[id(arg)] = (arg, values[id(arg)])
            elif p.kind == "dtype":
                try:
                    held = ann.element_type(arg, self.scope)
                except ann.AnnotationError:
                    held = None
                if isinstance(held, StructT):
                    carriers[id(arg)] = (arg, held)
        for arg in variadic:
            values[id(arg)] = self.expr(arg)
            if isinstance(values[id(arg)], (StructTile, StructValue, StructElement, StructArray)):
                carriers[id(arg)] = (arg, values[id(arg)])
        plain = {k: v for k, v in values.items() if k not in carriers}
        if not carriers:
            with self.substituted(plain):
                return super().lower_op(op, node, extra_attrs)
        held = self.carried_struct(op, carriers, node)
        for p in spec.params:  # an array or tile beside a struct one must hold the same struct
            arg = bound.get(p.name)
            if p.kind == "value" and p.name in SAME_ELEMENT and id(arg) in plain and \
                    isinstance(plain[id(arg)].type, (ArrayT, TileT)):
                self.fail("TC0201", f"{op}: `{p.name}` is {describe(plain[id(arg)].type)}, but the other operand "
                          f"holds `{held}` structs", cast(cst.BaseExpression, arg))
        if op == "tile_map":
            return self.struct_tile_map(bound, variadic, values, node)
        if op == "tile_reduce":
            return self.struct_tile_reduce(bound, values, held, node)
        if op in STACK_FIELD_OPS:
            return self.struct_stack_op(op, bound, values, node)
        if op not in PER_LEAF_OPS and op != "tile_sort":
            if op not in REFUSALS and all(isinstance(v, StructT) for _, v in carriers.values()):
                with self.substituted(plain):  # `dtype=S` alone: the op's own rule names the dtype
                    return super().lower_op(op, node, extra_attrs)
            self.refuse_struct_tile_op(op, carriers, held)
        return self.per_leaf(op, node, extra_attrs, held, carriers, plain, bound)

    def carried_struct(self, op: str, carriers: Carriers, node: cst.CSTNode) -> StructT:
        """The one struct type every struct-valued operand holds, else a diagnostic."""
        held: dict[StructT, cst.BaseExpression] = {}
        for arg, v in carriers.values():
            t = v if isinstance(v, StructT) else v.type
            t = t.dtype if isinstance(t, (ArrayT, TileT, StackT)) else t
            held.setdefault(cast(StructT, t), arg)
        if len(held) > 1:
            (t0, _), (t1, a1) = list(held.items())[:2]
            self.fail("TC0201", f"{op}: operands hold different structs, `{t0}` and `{t1}`", a1)
        t = next(iter(held))
        if op not in MOVES_DESCRIPTORS:
            self.refuse_held_arrays(op, t, next(iter(held.values())))
        return t

    def refuse_held_arrays(self, op: str, t: StructT, at: cst.CSTNode) -> None:
        """A diagnostic when `t` holds arrays: its tiles only move (MOVES_DESCRIPTORS)."""
        arrays = [path for path, lt in structs.struct_leaves(t) if isinstance(lt, ArrayT)
                  and naming.indexed_param(path) is None]  # an indexed array once, not its index arrays
        if arrays:
            self.fail("TC0203", f"{op}: tiles of `{t}` structs, which hold arrays ({', '.join(arrays)}), are not "
                      f"supported by tilec here (it loads, stores, sorts and zeroes them: "
                      f"{', '.join(sorted(MOVES_DESCRIPTORS))})", at, help="tile the fields that are not arrays")

    def refuse_struct_tile_op(self, op: str, carriers: Carriers, held: StructT) -> None:
        arg, v = next(iter(carriers.values()))
        what = f"`{held}` structs" if isinstance(v, StructT) else describe(v if isinstance(v, StructT) else v.type)
        reason = REFUSALS.get(op, "Warp 1.19 takes struct tiles only in loads, stores, atomic adds, tile_zeros, "
                              "tile_full, tile_map, tile_sum, tile_sort values, + and -, the layout ops and "
                              "element access")
        name = op if op not in ("add", "sub", "mul", "div", "neg") else f"`{op}`"
        self.fail("TC0203", f"{name}: does not take {what} ({reason})", arg)

    def leaf_of(self, v: Lowered, path: str, lt: Type, node: cst.CSTNode) -> Lowered:
        """Leaf `path` of a struct-valued operand (the leaf type for `dtype=S`)."""
        if isinstance(v, StructT):
            return lt
        if isinstance(v, (StructValue, StructElement)):
            leaves = self.struct_leaf_values(v, node)
            if path not in leaves:
                self.fail("TC0312", f"field `{path}` of `{v.origin}` is used before it is assigned", node)
            return leaves[path]
        return v.leaves[path]

    def per_leaf(self, op: str, node: cst.Call, extra_attrs: dict[str, Any] | None, held: StructT,
                 carriers: Carriers, plain: dict[int, Lowered],
                 bound: dict[str, cst.BaseExpression]) -> Lowered:
        """The op once per leaf; a struct tile, a struct value or the statements they make."""
        results: dict[str, ir.Expr] = {}
        stmts: list[ir.Stmt] = []
        sort_keys = bound.get("keys") if op == "tile_sort" else None
        paths = structs.struct_leaves(held)
        for k, (path, lt) in enumerate(paths):
            subst = dict(plain)
            for key, (arg, v) in carriers.items():
                subst[key] = self.leaf_of(v, path, lt, arg)
            if sort_keys is not None and k < len(paths) - 1:  # each leaf sorted by a copy of the keys
                keys = plain[id(sort_keys)]
                tmp = self.new_temp(keys.type)
                stmts.append(ir.Assign(tmp, keys, self.span(node)))
                subst[id(sort_keys)] = ir.Var(tmp, self.span(node))
            if op in ACCUMULATING_OPS and not accumulates(lt):
                carried = self.carried_leaf(op, node, carriers, path, lt, bound)
                if carried is not None:
                    results[path] = carried
                continue
            with self.substituted(subst):
                call = super().lower_op(op, node, extra_attrs)
            mutated = self.mutated_args(call)
            if mutated:
                stmts += self.rebind_mutated(call, mutated, node)
            elif call.type == NONE:
                stmts.append(ir.ExprStmt(call, self.span(node)))
            else:
                results[path] = call
        if not results:
            return StructTileStmts(stmts)
        if stmts:
            self.fail("TC0401", f"unsupported syntax: {op} over struct tiles both updates and returns", node)
        first = next(iter(results.values()))
        if isinstance(first.type, StackT):  # a stack of structs: one stack per leaf
            return StructTile(StackT(held, first.type.capacity), results, f"{op}(...)")  # type: ignore[arg-type]
        if isinstance(first.type, TileT):
            return StructTile(TileT(held, first.type.shape), results, f"{op}(...)")
        return StructValue(held, results, f"{op}(...)")

    def carried_leaf(self, op: str, node: cst.Call, carriers: Carriers, path: str, lt: Type,
                     bound: dict[str, cst.BaseExpression]) -> Lowered:
        """A field Warp does not accumulate: an atomic add leaves it (None: no statement); tile_sum
        gives the first element's value, an axis sum the first slice along the axis (measured)."""
        if op != "tile_sum":
            return None
        leaf = next(v for _, v in carriers.values() if isinstance(v, StructTile)).leaves[path]
        ndim = cast(TileT, leaf.type).ndim  # a struct tile's leaf is a tile
        if bound.get("axis") is not None and ndim > 1:
            return self.first_slice(leaf, bound["axis"], node)
        first = self.make_op("tile_extract", [leaf] + [ir.Const(0, INT32, self.span(node))] * ndim, {},
                             node)
        return self.make_op("tile_full", [first], {"shape": (1,), "dtype": lt, "storage": "register"}, node)

    def first_slice(self, leaf: ir.Expr, axis_node: cst.BaseExpression, node: cst.CSTNode) -> Lowered:
        """`leaf[..., 0, ...]` with index 0 on `axis` (a tile_slice keeping every other axis)."""
        spec = OPS["tile_sum"]
        axis = self.attr_value(next(p for p in spec.params if p.name == "axis"), axis_node, spec)
        shape = cast(TileT, leaf.type).shape
        if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            self.fail("TC0106", f"tile_sum: axis {axis} is out of range for a {len(shape)}-d tile", axis_node)
        axis %= len(shape)
        keep = sum(1 << k for k in range(len(shape)) if k != axis)
        pairs = [ir.Const(v, INT32, self.span(node)) for k in range(len(shape)) for v in (0, int(k != axis))]
        out = shape[:axis] + shape[axis + 1:]
        return self.make_op("tile_slice", [leaf, ir.Const(keep, INT32, self.span(node))] + pairs, {"shape": out}, node)

    # ------------------------------------------------------------ stacks of structs

    def struct_stack_op(self, op: str, bound: dict[str, cst.BaseExpression], values: dict[int, Lowered],
                        node: cst.Call) -> Lowered:
        """push and count on a stack of structs (one stack per leaf): the first leaf's stack picks
        the slots and keeps the count; every other leaf is stored at those slots in the same call
        (tile_stack_push_fields), so the fields of one struct stay together whatever order a push
        gives the lanes, and the push's slot is a value as a plain push's."""
        stack = values[id(bound["s"])]
        if not isinstance(stack, StructTile) or not isinstance(stack.type, StackT):
            self.fail("TC0203", f"{op}: `s` must be a tile stack, got {describe(stack.type)}", bound["s"])
        paths = list(stack.leaves)
        first = stack.leaves[paths[0]]
        held = cast(StructT, stack.type.dtype)  # a stack of structs: StackT(StructT, capacity)
        if op == "tile_stack_count":
            return self.make_op(op, [first], {}, node)
        if op == "tile_stack_pop":
            self.fail("TC0401", "unsupported syntax: a pop from a stack of structs used as a value; unpack it "
                      "(`value, slot = wp.tile_stack_pop(s)`)", node)
        value = values[id(bound["value"])]
        if not isinstance(value, (StructValue, StructElement)) or value.type != held:
            self.fail("TC0201", f"tile_stack_push: `value` must be a `{held}` struct, got "
                      f"{describe(value.type)}", bound["value"])
        leaves = self.struct_leaf_values(value, node)
        has = self.expr(bound["has_value"])
        fields = [e for path in paths[1:] for e in (stack.leaves[path], leaves[path])]
        return self.make_op("tile_stack_push_fields", [first, leaves[paths[0]], has, *fields], {}, node)

    def unpack_struct_pop(self, target: cst.Tuple | cst.List, value_node: cst.BaseExpression,
                          node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`value, slot = wp.tile_stack_pop(s)` of a stack of structs: the first leaf's pop, the
        other leaves read at its slot (tile_stack_get); `value` becomes a struct. None: another
        unpacking."""
        stack = self.popped_struct_stack(value_node)
        if stack is None:
            return None
        names = [el.value for el in target.elements]
        if len(names) != 2 or not all(isinstance(n, cst.Name) for n in names):
            self.fail("TC0303", "cannot unpack a pop from a stack of structs into other than two names", node)
        value_name, slot_name = cast(list[cst.Name], names)
        span = self.span(node)
        paths = list(stack.leaves)
        held = cast(StructT, stack.type.dtype)
        temps = {path: self.new_temp(cast(StackT, stack.leaves[path].type).dtype) for path in paths}
        slot = self.new_temp(INT32)
        first = stack.leaves[paths[0]]
        pop = ir.OpCall("tile_stack_pop", (first,), (), TupleT((cast(StackT, first.type).dtype, INT32)), span)
        stmts: list[ir.Stmt] = [ir.Unpack((temps[paths[0]], slot), pop, span)]
        for path in paths[1:]:
            get = self.make_op("tile_stack_get", [stack.leaves[path], ir.Var(slot, span)], {}, value_node)
            stmts.append(ir.Assign(temps[path], get, span))
        popped = StructValue(held, {p: ir.Var(t, span) for p, t in temps.items()}, "tile_stack_pop(...)")
        stmts += self.bind_struct(value_name, popped, node)
        stmts.append(self.bind_name(slot_name, ir.Var(slot, span), node))
        return stmts

    def popped_struct_stack(self, value_node: cst.BaseExpression) -> StructTile | None:
        """The stack of structs `value_node` pops from (`wp.tile_stack_pop(s)`), else None."""
        if not (isinstance(value_node, cst.Call) and self.scope.api_attr(value_node.func) == "tile_stack_pop"
                and len(value_node.args) == 1 and isinstance(value_node.args[0].value, cst.Name)):
            return None
        name = value_node.args[0].value.value
        if not isinstance(self.struct_vars.get(name), StackT):
            return None
        stack = self.struct_ref(name, value_node.args[0].value)
        return stack if isinstance(stack, StructTile) else None

    def struct_tile_map(self, bound: dict[str, cst.BaseExpression], variadic: list[cst.BaseExpression],
                        values: dict[int, Lowered], node: cst.Call) -> Lowered:
        """tile_map(f, ...) with struct tiles or struct values among the operands: f's instance for
        the element types, mapped over the leaves (f's parameters are flattened leaf by leaf); a func
        returning a struct is one map per returned leaf (its per-field instances, lower_structs)."""
        fnode = bound.get("op")
        if not (isinstance(fnode, cst.Name) and fnode.value in self.scope.funcs):
            self.fail("TC0407", "tile_map: over struct tiles the function must be a @wp.func taking the struct",
                      fnode if fnode is not None else node)
        return self.map_struct_func(fnode, [values[id(a)] for a in variadic], list(variadic), node)

    def map_struct_func(self, fnode: cst.Name, operands: list[Lowered], arg_nodes: list[cst.BaseExpression],
                        node: cst.Call) -> Lowered:
        """tile_map of the @wp.func `fnode` over lowered operands (struct tiles, struct values, plain
        tiles and scalars; arg_nodes: where each came from, for diagnostics)."""
        name = fnode.value
        variadic = arg_nodes
        shapes = {v.type.shape for v in operands if isinstance(v.type, TileT)}
        if len(shapes) > 1:
            self.fail("TC0101", "tile_map: tile operands have different shapes: "
                      + ", ".join(describe(v.type) for v in operands if isinstance(v.type, TileT)), node)
        if not shapes:
            self.fail("TC0303", "tile_map: needs at least one tile after the function", node)
        shape = next(iter(shapes))
        elements: list[tuple[Type, object]] = [(v.type.dtype if isinstance(v.type, TileT) else v.type, None)
                                               for v in operands]
        flat: list[ir.Expr] = []
        for v, a in zip(operands, variadic):
            if isinstance(v, StructTile):
                flat += [v.leaves[p] for p, _ in structs.struct_leaves(cast(StructT, v.type.dtype))]
            elif isinstance(v, (StructValue, StructElement)):
                flat += self.flatten_args([v], [a])
            elif isinstance(v, StructArray):
                self.fail("TC0201", f"tile_map: {describe(v.type)} cannot be mapped over; load a tile of it", a)
            else:
                flat.append(v)
        fd = self.scope.funcs[name]
        returned = self.struct_returned(fd, node)
        projections: list[str | None] = ([None] if returned is None
                                         else [p for p, _ in structs.struct_leaves(returned)])
        maps: dict[str | None, ir.Expr] = {}
        for path in projections:
            fn = self.module.instantiate(name, elements, self.block_dim, node, self, list(variadic), project=path)
            if len(fn.params) != len(flat):
                self.fail("TC0407", f"tile_map: function `{name}` takes {len(fn.params)} leaf argument(s), "
                          f"given {len(flat)}", fnode)
            self.lane_ops = self.lane_ops or self.module.lane_funcs.get(fn.name, False)
            maps[path] = ir.OpCall("tile_map", tuple(flat), (("op", fn.name),), TileT(cast(Any, fn.ret), shape),
                                   self.span(node))
        self.uses_tiles = True
        if returned is None:
            return maps[None]
        return StructTile(TileT(returned, shape), cast("dict[str, ir.Expr]", maps), f"tile_map({name}, ...)")

    def struct_tile_reduce(self, bound: dict[str, cst.BaseExpression], values: dict[int, Lowered], held: StructT,
                           node: cst.Call) -> Lowered:
        """tile_reduce(f, t) of a struct tile (Warp 1.19: f a @wp.func taking two structs and returning
        one; whole tile only): a tree of tile_maps of f over halves of the flattened tile, an odd
        element folded in after its prefix is reduced. Warp combines in an unspecified order too, so
        f must be associative and commutative; the adjoint is each tile_map's (none in Warp 1.19)."""
        fnode, tnode = bound.get("op"), bound.get("a")
        t: Lowered = values.get(id(tnode))
        if not isinstance(t, StructTile):
            self.fail("TC0201", f"tile_reduce: `a` must be a tile of `{held}` structs, got {describe(t.type)}",
                      tnode if tnode is not None else node)
        if bound.get("axis") is not None:
            self.fail("TC0203", f"tile_reduce: does not take an axis over {describe(t.type)} (Warp 1.19 reduces "
                      "struct tiles whole)", bound["axis"])
        if not (isinstance(fnode, cst.Name) and fnode.value in self.scope.funcs):
            self.fail("TC0407", f"tile_reduce: over {describe(t.type)} the function must be a @wp.func taking "
                      f"two `{held}` values and returning one", fnode if fnode is not None else node)
        returned = self.struct_returned(self.scope.funcs[fnode.value], node)
        if returned != held:
            self.fail("TC0407", f"tile_reduce: function `{fnode.value}` must return `{held}` for {describe(t.type)}",
                      fnode)
        n = 1
        for extent in t.type.shape:
            if not isinstance(extent, int):  # a shape variable: the size of the reduction tree is unknown here
                self.fail("TC0111", "tile_reduce: cannot be checked with symbolic shapes; annotate concrete "
                          "extents", cast(cst.BaseExpression, tnode))
            n *= extent
        flat = t if t.type.ndim == 1 else self.struct_tile_leafwise(
            t, lambda leaf: self.make_op("tile_reshape", [leaf], {"shape": (n,)}, node))
        return self.reduce_halves(fnode, self.hoist(flat, node), n, cast(cst.BaseExpression, tnode), node)

    def hoist(self, t: StructTile, node: cst.CSTNode) -> StructTile:
        """Each leaf computed once into a temporary before the statement (each level of a reduction
        reads every leaf of the one before: as expressions they would grow exponentially)."""
        def bind(leaf: ir.Expr) -> ir.Expr:
            if isinstance(leaf, ir.Var):
                return leaf
            tmp = self.new_temp(leaf.type)
            self.struct_hoisted.append(ir.Assign(tmp, leaf, self.span(node)))
            return ir.Var(tmp, self.span(node))
        return self.struct_tile_leafwise(t, bind)

    # the hoisted temporaries of the statement being lowered, emitted before it (as random draws are);
    # set per statement by begin_statement_draws (every expression is lowered inside a statement)
    struct_hoisted: list[ir.Stmt]

    def begin_statement_draws(self) -> Any:  # (lower_random's SavedDraws, the hoisted): opaque to the caller
        saved = (super().begin_statement_draws(), getattr(self, "struct_hoisted", []))
        self.struct_hoisted = []
        return saved

    def end_statement_draws(self, saved: Any) -> None:
        super().end_statement_draws(saved[0])
        self.struct_hoisted = saved[1]

    def sequence_draws(self, node: cst.CSTNode, stmts: list[ir.Stmt], before: list[ir.Stmt] | None = None
                       ) -> list[ir.Stmt]:
        stmts = super().sequence_draws(node, stmts, before)
        if not self.struct_hoisted:
            return stmts
        if isinstance(node, (cst.While, cst.For)):
            header = node.test if isinstance(node, cst.While) else node.iter
            self.fail("TC0401", "unsupported syntax: tile_reduce of a struct tile in a loop header; reduce into "
                      "a variable before the loop", header)
        hoisted, self.struct_hoisted = self.struct_hoisted, []
        return hoisted + stmts

    def reduce_halves(self, fnode: cst.Name, t: StructTile, n: int, tnode: cst.BaseExpression,
                      node: cst.Call) -> StructTile:
        if n == 1:
            return t
        if n % 2:  # the even prefix reduced, then the last element folded in
            head = self.reduce_halves(fnode, self.struct_tile_part(t, 0, n - 1, node), n - 1, tnode, node)
            return self.hoist(self.map_struct_func(fnode, [head, self.struct_tile_part(t, n - 1, 1, node)],
                                                   [tnode, tnode], node), node)
        half = n // 2
        pairs = self.map_struct_func(fnode, [self.struct_tile_part(t, 0, half, node),
                                             self.struct_tile_part(t, half, half, node)], [tnode, tnode], node)
        return self.reduce_halves(fnode, self.hoist(pairs, node), half, tnode, node)

    def struct_tile_part(self, t: StructTile, start: int, length: int, node: cst.CSTNode) -> StructTile:
        """Elements start .. start+length of a 1-d struct tile, leaf by leaf (tile_views: vector and
        matrix leaves have no tile_slice)."""
        span = self.span(node)
        return self.struct_tile_leafwise(t, lambda leaf: ir.OpCall(
            "tile_view", (leaf, ir.Const(start, INT32, span)), (("offset_count", 1), ("shape", (length,))),
            TileT(cast(TileT, leaf.type).dtype, (length,)), span))

    def struct_tile_leafwise(self, t: StructTile, f: Callable[[ir.Expr], ir.Expr]) -> StructTile:
        leaves = {path: f(leaf) for path, leaf in t.leaves.items()}
        first = cast(TileT, next(iter(leaves.values())).type)  # a struct tile's leaves are tiles
        return StructTile(TileT(t.type.dtype, first.shape), leaves, t.origin)

    # ------------------------------------------------------------ expressions and statements

    def make_op(self, op: str, operands: list[Lowered], attrs: dict[str, Any], node: cst.CSTNode,
                where: Sequence[cst.CSTNode | None] | None = None) -> Lowered:
        tiles = [e for e in operands if isinstance(e, StructTile)]
        if not tiles:
            return super().make_op(op, operands, attrs, node, where)
        k = next(i for i, e in enumerate(operands) if isinstance(e, StructTile))
        at = cast(cst.CSTNode, where[k]) if where and k < len(where) and where[k] is not None else node
        if op not in ("add", "sub"):
            reason = REFUSALS.get(op, "Warp 1.19 adds and subtracts struct tiles field by field; no other "
                                  "arithmetic is defined on them")
            self.fail("TC0203", f"`{op}`: does not take {describe(tiles[0].type)} ({reason})", at)
        held = tiles[0].type
        self.refuse_held_arrays(f"`{op}`", cast(StructT, held.dtype), at)
        for i, e in enumerate(operands):
            if not isinstance(e, StructTile) or e.type != held:
                got = describe(e.type)
                self.fail("TC0201", f"`{op}` of {describe(held)} and {got}: both operands must be tiles of "
                          f"`{held.dtype}` of the same shape",
                          cast(cst.CSTNode, where[i]) if where and where[i] is not None else node)
        leaves = {path: super(StructTileLowering, self).make_op(op, [e.leaves[path] for e in operands], attrs, node,
                                                                where)
                  if accumulates(lt) else operands[0].leaves[path]  # a field Warp carries: the left operand's
                  for path, lt in structs.struct_leaves(cast(StructT, held.dtype))}
        return StructTile(held, leaves, f"{op}(...)")

    def lower_subscript(self, node: cst.Subscript) -> Lowered:
        is_shape = isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"  # `s.arr.shape[0]`
        if not is_shape and self.indexed_field(node.value) is not None:  # `s.data[i]`: StructLowering's
            return super().lower_subscript(node)
        if self.maybe_struct(node.value) and not is_shape:
            base = self.expr(node.value)
            if isinstance(base, StructTile):
                # its array fields are read from the array of structs: an element's held array would
                # have no adjoint here
                self.refuse_held_arrays("element access", cast(StructT, base.type.dtype), node)
                out: dict[str, ir.Expr] = {}
                for path, leaf in base.leaves.items():
                    with self.substituted({id(node.value): leaf}):
                        out[path] = super().lower_subscript(node)
                first = next(iter(out.values()))
                if isinstance(first.type, TileT):  # a row of a 2-d tile of structs
                    return StructTile(TileT(base.type.dtype, first.type.shape), out, f"{base.origin}[...]")
                return StructValue(cast(StructT, base.type.dtype), out, f"{base.origin}[...]")
        return super().lower_subscript(node)

    def store_struct_element(self, base: Lowered, target: cst.Subscript, value: Lowered, node: cst.CSTNode,
                             aug: Any) -> list[ir.Stmt]:
        """`t[i] = s`, `t[i] += s` on a tile of structs: the element's leaves written (else an array
        of structs, lower_structs)."""
        if not isinstance(base, StructTile):
            return super().store_struct_element(base, target, value, node, aug)
        where = node.value if hasattr(node, "value") else node
        self.refuse_held_arrays("element assignment", cast(StructT, base.type.dtype), target)
        if aug not in (None, cst.Add, cst.Subtract):
            self.fail("TC0203", f"a bitwise in-place update does not take an element of {describe(base.type)}",
                      getattr(node, "operator", node))
        if not isinstance(value, (StructValue, StructElement, StructTile)) or value.type not in (base.type.dtype,
                                                                                                 base.type):
            self.fail("TC0201", f"an element of {describe(base.type)} is assigned {describe(value.type)}", where)
        out: list[ir.Stmt] = []
        for path, lt in structs.struct_leaves(cast(StructT, base.type.dtype)):
            leaf = self.leaf_of(value, path, lt, where)
            with self.substituted({id(target.value): base.leaves[path]}):
                out += self.store_subscript(target, leaf, node, aug)
        return out

    def struct_tile_aug_assign(self, target: cst.Name, op: str, node: cst.AugAssign) -> list[ir.Stmt] | None:
        """`t += u` / `t -= u` on a struct tile: each leaf updated in place; None for other targets."""
        t = self.struct_vars.get(target.value)
        if not isinstance(t, TileT):
            return None
        current = self.struct_ref(target.value, target)
        value = self.make_op(op, [current, self.expr(node.value)], {}, node, where=[target, node.value])
        out: list[ir.Stmt] = []
        for path, leaf in current.leaves.items():
            sym = leaf.sym
            if op in ("add", "sub"):
                self.note_mutation(sym, node)
                self.note_inplace(sym)
            out.append(ir.Assign(sym, value.leaves[path], self.span(node)))
        return out

    def bind_struct(self, target: cst.Name, value: Lowered, node: cst.CSTNode) -> list[ir.Stmt]:
        stmts = super().bind_struct(target, value, node)
        for path, _ in structs.leaves(value.type) or []:
            # each leaf of a view or broadcast aliases its source's leaf, as a plain tile's (lower_views)
            self.track_view(f"{target.value}.{path}", value.leaves.get(path) if isinstance(value, StructTile) else None)
        if isinstance(value, StructTile):  # `storage="shared"` holds for every leaf, as bind_name keeps it
            for s in stmts:
                if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.attr("storage") == "shared":
                    self.storage[s.target] = "shared"
        return stmts

    def struct_call_stmts(self, call: Lowered, node: cst.CSTNode) -> list[ir.Stmt]:
        """The statements of a struct-valued call used as a statement: an op over struct tiles
        emits each leaf's op (a struct func's unused result has no effects: nothing)."""
        if isinstance(call, StructTileStmts):
            return list(call.stmts)
        if isinstance(call, StructTile):
            return [ir.ExprStmt(leaf, self.span(node)) for leaf in call.leaves.values()]
        return []


__all__ = ["StructTile", "StructTileLowering", "StructTileStmts"]
