"""Normalize: IR -> IR where every non-elementwise tile op or func call is a statement.

Expects checked IR. Guarantees: the operands of a non-elementwise op and of a
func call are variables or scalar expressions; tile-valued elementwise trees
(arithmetic, math, tile_map) stay nested so the emitter fuses them into one
loop; a `while` condition that needed hoisting is re-evaluated each iteration.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TypeGuard

from .. import ir
from ..ops import MUTATES, OPS
from ..ir.types import BOOL, TileT, Type


def normalize_module(module: ir.Module) -> ir.Module:
    funcs = tuple(_Normalizer(fn).run() for fn in module.funcs)
    kernels = tuple(_Normalizer(fn).run() for fn in module.kernels)
    return replace(module, funcs=funcs, kernels=kernels)


# Ops read per element inside a fused loop without being elementwise in the op table:
# a broadcast reads its operand through an index map instead of materialising a copy.
FUSIBLE_EXTRA = {"tile_map", "tile_broadcast"}


def is_fusible(e: ir.Expr) -> TypeGuard[ir.OpCall]:
    """An op producing a tile that is emitted per element inside one loop."""
    # Exact classes and a set of names: every pass and emitter asks this of every node.
    return type(e) is ir.OpCall and e.op in _FUSIBLE_OPS and type(e.type) is TileT


_FUSIBLE_OPS = frozenset(name for name, spec in OPS.items() if spec.elementwise) | FUSIBLE_EXTRA


class _Normalizer:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.counter = max([0] + [s.id for s in ir.defined_syms(fn)])

    def run(self) -> ir.Function:
        return replace(self.fn, body=self.block(self.fn.body))

    def temp(self, t: Type) -> ir.Sym:
        self.counter += 1
        return ir.Sym("_tmp", self.counter, t)

    def block(self, body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            out.extend(self.stmt(s))
        return tuple(out)

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        pre: list[ir.Stmt] = []
        # A simple statement already normal is kept (no copy); branches and loops are rebuilt.
        if isinstance(s, (ir.Assign, ir.Unpack)):
            v = self.top(s.value, pre)
            return pre + [s if v is s.value else replace(s, value=v)]
        if isinstance(s, ir.ExprStmt):
            v = self.top(s.expr, pre)
            return pre + [s if v is s.expr else replace(s, expr=v)]
        if isinstance(s, ir.Return) and s.value is not None:
            v = self.operand(s.value, pre)
            return pre + [s if v is s.value else replace(s, value=v)]
        if isinstance(s, ir.If):
            c = self.operand(s.cond, pre)
            return pre + [replace(s, cond=c, body=self.block(s.body), orelse=self.block(s.orelse))]
        if isinstance(s, ir.For):
            start, stop, step = (self.operand(e, pre) for e in (s.start, s.stop, s.step))
            return pre + [replace(s, start=start, stop=stop, step=step, body=self.block(s.body))]
        if isinstance(s, ir.While):
            c = self.operand(s.cond, pre)
            if not pre:
                return [replace(s, body=self.block(s.body))]
            # while c: B  ==>  while True: pre; if not c: break; B
            exit_ = ir.If(ir.OpCall("not_", (c,), (), BOOL, c.span), (ir.Break(s.span),), (), s.span)
            true = ir.Const(True, BOOL, s.span)
            return [ir.While(true, tuple(pre) + (exit_,) + self.block(s.body), s.span)]
        return [s]

    def top(self, e: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        """A statement's own expression: may itself be a non-elementwise op."""
        if isinstance(e, ir.OpCall):
            keep_tree = is_fusible(e)
            args = tuple(self.fused(a, pre) if keep_tree else self.operand(a, pre) for a in e.args)
            if e.op in MUTATES:
                args = self.unaliased(e, args, pre)
            return ir.with_args(e, args)
        if isinstance(e, ir.Call):
            return ir.with_args(e, tuple(self.operand(a, pre) for a in e.args))
        return e

    def unaliased(self, e: ir.OpCall, args: tuple[ir.Expr, ...], pre: list[ir.Stmt]) -> tuple[ir.Expr, ...]:
        """An op updating an operand in place (`tile_matmul(a, b, out)`) reads its other operands as
        they were before: one that is, or views, the updated tile is copied first."""
        names = [p.name for p in OPS[e.op].params if p.kind == "value"]
        updated = {i for i, n in enumerate(names) if n in MUTATES[e.op]}
        copied = list(args)
        for m in updated:
            updated_arg = e.args[m] if m < len(e.args) else None
            if not isinstance(updated_arg, ir.Var):
                continue
            target = updated_arg.sym
            for i, original in enumerate(e.args):
                if i in updated or not isinstance(original.type, TileT):
                    continue
                if any(isinstance(x, ir.Var) and x.sym == target for x in ir.walk_expr(original)):
                    copy = self.temp(original.type)
                    pre.append(ir.Assign(copy, copied[i], original.span))
                    copied[i] = ir.Var(copy, original.span)
        return tuple(copied)

    def fused(self, e: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        """An operand inside an elementwise tree: nested elementwise ops stay."""
        if is_fusible(e):
            return ir.with_args(e, tuple(self.fused(a, pre) for a in e.args))
        return self.operand(e, pre)

    def operand(self, e: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        """An operand of a non-fusible context: tiles become variables."""
        if isinstance(e, (ir.Const, ir.Var)):
            return e
        needs_var = isinstance(e.type, TileT) or isinstance(e, ir.Call) or (
            isinstance(e, ir.OpCall) and OPS[e.op].effect)
        inner = self.top(e, pre) if needs_var else (
            ir.with_args(e, tuple(self.operand(a, pre) for a in e.args)))
        if not needs_var:
            return inner
        sym = self.temp(e.type)
        pre.append(ir.Assign(sym, inner, e.span))
        return ir.Var(sym, e.span)
