"""Lowering of Warp's scalar random draws (`wp.randf(rng)`, `randi`, `randu`, `randn`, the samplers of
points in shapes `wp.sample_unit_disk(rng)` ..., `wp.sample_cdf(rng, cdf)`).

Mixed into `FunctionChecker`. Warp's draws advance their state argument in place, so the same
`rng` drawn twice gives two values. Within one statement the draw op reads the state as it is at
that point and a temporary holds the state after it (`after = rand_advance(state, draws)`, put
before the statement); later reads of `rng` in the same statement read that temporary, in Python's
evaluation order (arguments before the call, left to right). After the statement `rng = after`,
unless the statement itself assigns `rng` (its assignment comes last, as in Warp). A draw in an
`if`/`elif` condition updates the state at the top of both arms. A state that is not a variable
(a call's result) is drawn from and dropped, as in Warp. Loop headers run more than once (while)
or once before a body that may not run (for), so a draw there is a diagnostic.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, NoReturn

import libcst as cst

from .. import ir
from ..diagnostics import Span
from ..ir.types import FLOAT32, INT32, UINT32, Type
from ..ops.random import DRAWS
from .parse import Parsed

# A statement's draw bookkeeping (pending_draws, draw_current, draw_origin), saved around a nested one.
SavedDraws = tuple[list[ir.Stmt], dict[ir.Sym, ir.Sym], dict[ir.Sym, ir.Sym]]


class RandomLowering:
    # Supplied by FunctionChecker (check.py, lower_*.py): declared for the type checker only.
    lower_op: Callable[..., ir.Expr]  # (op, call node) -> the checked expression (a draw: an ir.OpCall)
    make_op: Callable[..., ir.Expr]
    expr: Callable[[cst.BaseExpression], ir.Expr]
    parsed: Parsed
    retype_literal: Callable[[ir.Expr, Type], ir.Expr]
    span: Callable[[cst.CSTNode], Span]
    new_temp: Callable[[Type], ir.Sym]
    fail: Callable[..., NoReturn]
    # The statement being lowered: its draws' state updates, each state's latest temporary, and the
    # state each temporary stands for (begin_statement_draws sets them).
    pending_draws: list[ir.Stmt]
    draw_current: dict[ir.Sym, ir.Sym]
    draw_origin: dict[ir.Sym, ir.Sym]

    def lower_draw(self, op: str, node: cst.Call) -> ir.Expr:
        call = self.lower_op(op, node)
        assert isinstance(call, ir.OpCall), call  # a draw's rule gives its op call
        bounds = tuple(self.retype_literal(a, FLOAT32 if op == "poisson" else call.type)  # `0.0, 2.0`: the draw's dtype
                       for a in call.args[1:])
        call = ir.OpCall(call.op, call.args[:1] + bounds, call.attrs, call.type, call.span)
        state = call.args[0]
        if not isinstance(state, ir.Var):
            return call
        span = self.span(node)
        origin = self.draw_origin.get(state.sym, state.sym)
        after = self.new_temp(UINT32)
        advanced = ir.OpCall("poisson_state", (state, call.args[1]), (), UINT32, span) if op == "poisson" else \
            ir.OpCall("rand_advance", (state, ir.Const(DRAWS[op], INT32, span)), (), UINT32, span)
        self.pending_draws.append(ir.Assign(after, advanced, span))
        self.draw_current[origin] = after
        self.draw_origin[after] = origin
        return call

    def lower_sample_cdf(self, node: cst.Call) -> ir.Expr:
        """`wp.sample_cdf(state, cdf)`: Warp's `lower_bound(cdf, randf(state))`, one draw."""
        if len(node.args) != 2 or any(a.keyword is not None for a in node.args):
            self.fail("TC0303", "sample_cdf(state, cdf): takes the generator state and the array by position", node)
        draw_node = node.with_changes(args=[node.args[0]])
        self.parsed.place_like(draw_node, node)
        draw = self.lower_draw("randf", draw_node)
        return self.make_op("lower_bound", [self.expr(node.args[1].value), draw], {}, node,
                            where=[node.args[1].value, node.args[0].value])

    def drawn_state(self, sym: ir.Sym) -> ir.Sym | None:
        """The temporary holding sym's state after a draw earlier in this statement, or None."""
        return self.draw_current.get(sym)

    def begin_statement_draws(self) -> SavedDraws:
        saved = (self.pending_draws, self.draw_current, self.draw_origin)
        self.pending_draws, self.draw_current, self.draw_origin = [], {}, {}
        return saved

    def end_statement_draws(self, saved: SavedDraws) -> None:
        self.pending_draws, self.draw_current, self.draw_origin = saved

    def sequence_draws(self, node: cst.CSTNode, stmts: list[ir.Stmt], before: list[ir.Stmt] | None = None
                       ) -> list[ir.Stmt]:
        """The statement with its draws' state updates before and after it (see the module doc); `before`:
        parts of it lowered ahead of it (starred_args.py), which draw from the same states."""
        before = before or []
        if not self.draw_current:
            return before + stmts
        if isinstance(node, (cst.While, cst.For)):
            header = node.test if isinstance(node, cst.While) else node.iter
            self.fail("TC0401", "unsupported syntax: a random draw in a loop header (Warp would advance the "
                      "state when the header runs, not per iteration); draw into a variable before the loop",
                      header)
        updates = [ir.Assign(sym, ir.Var(after, stmts[0].span), stmts[0].span)
                   for sym, after in self.draw_current.items()]
        if isinstance(node, cst.If):
            (s,) = stmts
            assert isinstance(s, ir.If), s
            return self.pending_draws + before + [replace(s, body=tuple(updates) + s.body,
                                                          orelse=tuple(updates) + s.orelse)]
        assigned: set[ir.Sym] = set()
        for s in stmts:
            assigned |= {s.target} if isinstance(s, ir.Assign) else set(getattr(s, "targets", ()))
        return self.pending_draws + before + stmts + [u for u in updates if u.target not in assigned]
