"""`wp.grad(f)(args)`: the gradient of a func or builtin returning a float, taken in forward code
(Warp 1.19): each float input's adjoint for an output adjoint of 1, one value for one input, a
tuple for several (`db, da = wp.grad(wp.atan2)(b, a)`).

Mixed into `FunctionChecker`. Each input's gradient is a `grad_of` op over the call's arguments,
naming what is differentiated (no op of the table: it lives only between the checker and
passes/grad_calls.py, which the pipeline runs next); that pass derives a func computing it from the
target's adjoint (the same derivation kernels get) and calls that instead. The result is an ordinary value:
a kernel differentiating through it gets the second derivative (Warp treats it as a constant).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import libcst as cst

from .. import ir
from ..ir.types import FunctionT, MatT, Scalar, VecT, component_dtype, describe
from ..ops.build import zeros
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .check import Lowered


class GradCalls(LoweringHost):
    grad_wrappers: dict[str, cst.Call]  # name -> the `wp.grad(f)` call it is bound to

    def bind_grad_wrapper(self, target: cst.Name, value: cst.BaseExpression) -> bool:
        """`g = wp.grad(f)`: g names f's gradient from here on (Warp's GradWrapper); False for other values."""
        if not (isinstance(value, cst.Call) and self.scope.api_attr(value.func) == "grad"):
            return False
        if target.value in self.env or target.value in self.grad_wrappers:
            self.fail("TC0405", f"`{target.value}` is already bound; a name bound to a function is bound once "
                      "(Warp has no function pointers)", target)
        self.grad_wrappers[target.value] = value
        return True

    def grad_items(self, node: cst.BaseExpression) -> list[ir.Expr] | None:
        """The gradients `wp.grad(f)(args)` (or `g(args)` after `g = wp.grad(f)`) gives, one per input;
        None for any other expression."""
        if not isinstance(node, cst.Call):
            return None
        if isinstance(node.func, cst.Name) and node.func.value in self.grad_wrappers and node.func.value not in self.env:
            wrapper = self.grad_wrappers[node.func.value]
        elif isinstance(node.func, cst.Call) and self.scope.api_attr(node.func.func) == "grad":
            wrapper = node.func
        else:
            return None
        if len(wrapper.args) != 1 or wrapper.args[0].keyword is not None:
            self.fail("TC0303", "wp.grad takes one function", wrapper)
        target = self.function_value(wrapper.args[0].value)
        if not isinstance(target, FunctionT) or target.kind not in ("func", "api"):
            self.fail("TC0303", "wp.grad takes a @wp.func or a builtin (`wp.grad(my_func)(x)`)", wrapper.args[0])
        call = cst.Call(func=wrapper.args[0].value, args=node.args)
        self.parsed.place_like(call, node)
        inner = self.lower_call(call)
        if not isinstance(inner, (ir.Call, ir.OpCall)):  # a builtin of constants folds: no call is left
            self.fail("TC0430", "wp.grad of a call tilec folds to a constant (all its arguments are constants)",
                      node, help="pass a variable")
        if not (isinstance(inner.type, Scalar) and inner.type.is_float):
            self.fail("TC0430", f"wp.grad of a function returning {describe(inner.type)}: tilec takes the gradient "
                      "of one returning a float", node)
        for arg, where in zip(inner.args, node.args):
            if not isinstance(arg.type, (Scalar, VecT, MatT)):
                self.fail("TC0430", f"wp.grad of a function taking {describe(arg.type)}: tilec takes the gradient "
                          "with respect to scalars, vectors and matrices", where)
        attrs: tuple[tuple[str, Any], ...] = (
            ("func", inner.func) if isinstance(inner, ir.Call) else ("op", inner.op),
            ("op_attrs", inner.attrs if isinstance(inner, ir.OpCall) else ()))
        self.module.grad_calls = True
        span = self.span(node)
        items: list[ir.Expr] = []
        for k, arg in enumerate(inner.args):
            dtype = component_dtype(arg.type)
            if dtype is not None and dtype.is_float:
                items.append(ir.OpCall("grad_of", inner.args, (*attrs, ("index", k)), arg.type, span))
            else:  # an integer input's adjoint: zero, as in Warp
                items.append(zeros(arg.type, span))
        return items

    def lower_grad_call(self, node: cst.Call) -> Lowered:
        """`wp.grad(f)(x)` (or `g(x)`) used as one value."""
        items = self.grad_items(node)
        assert items is not None  # (lower_call's test)
        if len(items) != 1:
            self.fail("TC0303", f"wp.grad of a function of {len(items)} inputs gives {len(items)} values; unpack "
                      f"them (`{', '.join('abcdefgh'[:min(len(items), 8)])} = wp.grad(f)(...)`)", node)
        return items[0]
