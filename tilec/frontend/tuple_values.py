"""Tuples as local values, as Warp 1.19 has them: `t = (x, 2.0, v)` or `t = f(...)` of a func
returning several values, then `t[0]` (a constant index, negative too), `len(t)` /
`wp.static(len(t))`, `a, b = t`, `t2 = t`, and tuples passed to funcs (`f(t)`, `f((a, b))`)
whose parameter is `tuple[wp.vec3, float]`, `tuple[int, ...]` or `Any`.

A tuple lives in the front end only: each of its items is a variable of its own (`t.0`, `t.1`, ...
in the IR), so every later pass, the adjoint included, sees scalars, vectors and matrices. A name
bound to a tuple stays one (rebinding assigns the same variables, the item types unchanged, so a
tuple rebound in a branch or loop is one set of variables). Passed to a func, a tuple is a struct
value of `types.tuple_struct` (its fields "0", "1", ...): the call spreads it into one argument
per item as it spreads a struct, and the func's parameter is a tuple name again. Using the whole
tuple as any other value (an operand, returning it) is a diagnostic.
"""
from __future__ import annotations

from typing import cast

import libcst as cst

from .. import ir
from ..ir.types import ArrayT, MatT, Scalar, StructT, VecT, describe, tuple_items, tuple_struct
from . import consts, warp_library
from ..ir.structs import struct_leaves
from .lower_structs import StructElement, StructValue
from .lowering_host import LoweringHost


class TupleValues(LoweringHost):
    tuple_vars: dict[str, list[ir.Sym]]  # name -> its items' variables

    def tuple_items(self, value_node: cst.BaseExpression) -> list[ir.Expr] | None:
        """The items `value_node` makes, if it makes a tuple (a tuple display, a call of a func returning
        several values, a name bound to a tuple), else None."""
        if isinstance(value_node, cst.Tuple):
            return [self.expr(el.value) for el in value_node.elements]
        if isinstance(value_node, cst.Name) and value_node.value in self.tuple_vars:
            return [self.item_value(s, value_node) for s in self.tuple_vars[value_node.value]]
        func = self.called_func(value_node) if isinstance(value_node, cst.Call) else None
        if func is None:
            return None
        count = warp_library.func_def(self.scope, func).returns_several
        if count is None:
            return None
        return list(self.unpacked_call(func, count, cast(cst.Call, value_node)))

    def bind_tuple_param(self, p: cst.Param, t: object, params: list[ir.Sym]) -> bool:
        """A func parameter that is a tuple: one parameter per item, and the name a tuple of them."""
        items = tuple_items(t)
        if items is None:
            return False
        name = p.name.value
        syms = [ir.Sym(f"{name}.{k}", 0, item) for k, item in enumerate(items)]  # type: ignore[arg-type]  # values
        for sym in syms:
            if isinstance(sym.type, StructT):  # a struct item: its leaves are the parameters
                self.struct_vars[sym.name] = sym.type
                for path, lt in struct_leaves(sym.type):
                    leaf = ir.Sym(f"{sym.name}.{path}", 0, lt)
                    self.env[leaf.name] = self.new_binding(leaf, self.span(p.name), ())
                    params.append(leaf)
                continue
            self.env[sym.name] = self.new_binding(sym, self.span(p.name), ())
            params.append(sym)
        self.tuple_vars[name] = syms
        return True

    def item_value(self, sym: ir.Sym, node: cst.CSTNode) -> ir.Expr:
        """A tuple's item: its variable, or (a struct item) the struct value its leaves hold."""
        if isinstance(sym.type, StructT):
            return cast(ir.Expr, self.struct_ref(sym.name, node))
        return ir.Var(sym, self.span(node))

    def tuple_argument(self, node: cst.BaseExpression) -> StructValue | None:
        """A func's argument that is a tuple (a tuple name, a tuple display, a call of a func returning
        several values) as the struct value the call spreads; None for any other argument."""
        items = self.tuple_items(node)
        if items is None:
            return None
        self.check_tuple_items(items, node)
        items = [self.retype_literal(item, item.type) for item in items]  # a literal item: its own type, as in Warp
        t: StructT = tuple_struct([item.type for item in items])
        leaves: dict[str, ir.Expr] = {}
        for k, item in enumerate(items):
            if isinstance(item.type, StructT):  # a struct item: its leaves, under its position
                leaves.update({f"{k}.{path}": v for path, v in self.struct_leaf_values(item, node).items()})
            else:
                leaves[str(k)] = item
        return StructValue(t, leaves, self.parsed.tree.code_for_node(node))

    def check_tuple_items(self, items: list[ir.Expr], value_node: cst.BaseExpression) -> None:
        for item, where in zip(items, _item_nodes(value_node, len(items))):
            struct = isinstance(item.type, StructT) and tuple_items(item.type) is None and \
                isinstance(item, (StructValue, StructElement)) and \
                not any(isinstance(lt, ArrayT) for _, lt in struct_leaves(item.type))  # (values only: no array fields)
            if not (isinstance(item.type, (Scalar, VecT, MatT)) or struct):
                self.fail("TC0401", f"unsupported syntax: a tuple holding {describe(item.type)} (tilec's tuples hold "
                          "scalars, vectors, matrices and structs of those)", where if where is not None else value_node)

    def bind_tuple(self, target: cst.Name, value_node: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`t = (a, b)`: the items assigned to t's variables; None when the value is no tuple."""
        grads = self.grad_items(value_node)  # `t = wp.grad(wp.atan2)(y, x)` (grad_calls.py), lowered once
        if grads is not None and len(grads) == 1:  # one input's gradient is a value
            return [self.bind_name(target, grads[0], node)]
        items = grads if grads is not None else self.tuple_items(value_node)
        if items is None:
            return None
        name = target.value
        if name in self.env:
            self.fail("TC0405", f"`{name}` was {describe(self.env[name].sym.type)} and cannot become a tuple", target)
        self.check_tuple_items(items, value_node)
        items = [self.retype_literal(item, item.type) for item in items]  # a literal item: its own type, as in Warp
        syms = self.tuple_vars.get(name)
        if syms is None:
            syms = [ir.Sym(f"{name}.{k}", 0, item.type) for k, item in enumerate(items)]
            self.tuple_vars[name] = syms
        elif [s.type for s in syms] != [i.type for i in items]:
            self.fail("TC0405", f"`{name}` was a tuple of ({', '.join(str(s.type) for s in syms)}) and cannot become "
                      f"a tuple of ({', '.join(str(i.type) for i in items)})", target)
        span = self.span(node)
        evaluated: list[ir.Stmt] = []  # all items first, as Python evaluates them
        stores: list[ir.Stmt] = []
        for sym, item in zip(syms, items):
            if isinstance(sym.type, StructT):  # a struct item: each leaf through a temporary, then its variable
                self.struct_vars[sym.name] = sym.type
                held: dict[str, ir.Expr] = {}
                for path, value in self.struct_leaf_values(item, node).items():
                    temp = self.new_temp(value.type)
                    evaluated.append(ir.Assign(temp, value, span))
                    held[path] = ir.Var(temp, span)
                stores += self.assign_leaves(sym.name, sym.type, held, node)
                continue
            temp = self.new_temp(item.type)
            evaluated.append(ir.Assign(temp, item, span))
            stores.append(ir.Assign(sym, ir.Var(temp, span), span))
        return evaluated + stores

    def tuple_item(self, node: cst.Subscript) -> ir.Expr | None:
        """`t[k]` of a tuple name: item k (a constant; -1 the last), else None."""
        if not (isinstance(node.value, cst.Name) and node.value.value in self.tuple_vars
                and node.value.value not in self.env):
            return None
        syms = self.tuple_vars[node.value.value]
        index = node.slice[0].slice.value if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) else None
        k = self.constant_of(index) if index is not None else consts.NOT_CONST
        if k is consts.NOT_CONST and isinstance(index, cst.Name):
            chosen = self.item_by_loop_variable(node.value.value, syms, index, node)
            if chosen is not None:
                return chosen
        if not isinstance(k, int) or isinstance(k, bool):
            self.fail("TC0305", f"a tuple's index must be a compile-time integer (`{node.value.value}` holds "
                      f"{len(syms)} values)", node.slice[0] if node.slice else node)
        if not -len(syms) <= k < len(syms):
            self.fail("TC0106", f"index {k} is out of range for the tuple `{node.value.value}` of {len(syms)} values",
                      node.slice[0])
        return self.item_value(syms[k], node)

    def item_by_loop_variable(self, name: str, syms: list[ir.Sym], index: cst.Name,
                              node: cst.Subscript) -> ir.Expr | None:
        """`t[i]` where i is the variable of a loop over a constant range, not assigned since the loop
        set it (Warp unrolls such a loop, so i is a constant in each copy): the item i selects, as a
        chain of selects over the values the range gives; None when i is no such variable."""
        values = self.unrolled_range(index.value)
        if values is None:
            return None
        outside = [v for v in values if not -len(syms) <= v < len(syms)]
        if outside:
            self.fail("TC0106", f"index {outside[0]} (a value of the loop's `{index.value}`) is out of range for the "
                      f"tuple `{name}` of {len(syms)} values", index)
        chosen = [syms[v] for v in values] or syms[:1]
        if any(isinstance(s.type, StructT) for s in chosen):
            self.fail("TC0305", f"`{name}[{index.value}]`: the loop selects struct items; index the tuple with "
                      "constants", index)
        if len({s.type for s in chosen}) > 1:
            self.fail("TC0305", f"`{name}[{index.value}]`: the items the loop selects are of different types "
                      f"({', '.join(sorted({str(s.type) for s in chosen}))}); index the tuple with constants",
                      index)
        span = self.span(node)
        loop_var = self.expr(index)
        cases = [(self.make_op("eq", [loop_var, ir.Const(v, loop_var.type, span)], {}, node), ir.Var(sym, span))
                 for v, sym in zip(values[:-1], chosen[:-1])]
        return self.picked(cases, ir.Var(chosen[-1], span), node)

    def tuple_len(self, node: cst.BaseExpression) -> int | None:
        """len(t) of a tuple name."""
        if isinstance(node, cst.Name) and node.value in self.tuple_vars and node.value not in self.env:
            return len(self.tuple_vars[node.value])
        return None

    def unpack_tuple(self, names: list[cst.Name], value_node: cst.BaseExpression, node: cst.CSTNode) -> list[ir.Stmt] | None:
        """`a, b = t` of a tuple name; None for any other value."""
        if not (isinstance(value_node, cst.Name) and value_node.value in self.tuple_vars):
            return None
        syms = self.tuple_vars[value_node.value]
        if len(syms) != len(names):
            self.fail("TC0303", f"cannot unpack the tuple `{value_node.value}` of {len(syms)} values into {len(names)} "
                      "names", node)
        out: list[ir.Stmt] = []
        for n, sym in zip(names, syms):
            if isinstance(sym.type, StructT):
                out += self.bind_struct(n, self.struct_ref(sym.name, n), node)
            else:
                out.append(self.bind_name(n, ir.Var(sym, self.span(n)), node))
        return out


def _item_nodes(value_node: cst.BaseExpression, count: int) -> list[cst.BaseExpression | None]:
    if isinstance(value_node, cst.Tuple):
        return [el.value for el in value_node.elements]
    return [None] * count

