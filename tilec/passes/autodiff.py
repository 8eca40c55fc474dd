"""Autodiff: a kernel -> its reverse-mode adjoint kernel, in the same typed IR.

Expects normalized IR without func calls or jumps (see structure.py; the
normalizer runs again here so every non-elementwise op is a statement).
Produces a kernel taking the forward parameters then one adjoint per
parameter. Its body replays the forward computation (without stores and
atomics) while saving, on a per-lane tape, every value an assignment
overwrites, every branch taken and every loop's trip count; then it walks the
statements backwards, restoring those values and applying each op's adjoint
rule (ops/adjoints.py). The driver owns accumulation into adjoint variables,
their zeroing, and the reduction of tile contributions onto scalars.

Where each concern lives:
- this file: `adjoint_kernel` (the structure passes, the exactness check, the derivation,
  normalize and simplify) and the driver `Adjoint`: the state of one derivation, the two sweeps
  over a body, and what op rules call (`val`, `result`, `emit`, `accumulate`, ...);
- adjoint_statements.py: replay and reverse of assignments, unpacks, expression statements;
- adjoint_control_flow.py: replay and reverse of branches and loops;
- adjoint_tape.py: what the tape stores and what the reverse sweep recomputes instead;
- ops/adjoints.py: the adjoint rule of each op.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable

from .. import ir, naming
from .adjoint_control_flow import forward_if, forward_loop, reverse_if, reverse_loop
from .adjoint_statements import differentiable, forward_statement, reverse_statement
from .adjoint_tape import EFFECTS, assignment_counts, assignment_sites, overwritten, written_arrays
from .effects import VARYING_OPS, Key, check_adjoint, span_free_key, thread_varying
from .normalize import normalize_module
from .lane_ops import fold_lane_temporaries, strip_lane_ops, tile_lane_bound
from .one_lane import one_lane
from .simplify import simplify_function
from .views import inline_array_locals
from ..ops import OPS, PER_LANE_WRITES
from ..ops.adjoints import RULES
from ..ops.build import call as C
from ..ops.build import const, zeros
from ..diagnostics import NotDifferentiable, Span
from .structure import (_Fresh, eliminate_jumps, inline_calls, inline_tile_customs, refuse_custom_adjoints,
                        rename_straight_line, resolve_replay_values)
from ..ir.types import INT32, NONE, ArrayT, MatT, Scalar, TileT, Type, VecT


def adjoint_kernel(kernel: ir.Function, module: ir.Module, lanes: bool = False, exact_only: bool = True,
                   lane_takes: set[ir.Sym] | None = None) -> ir.Function:
    """The adjoint of `kernel`; raises NotDifferentiable with a warning diagnostic.

    lanes: the kernel runs as cooperating lanes. Each lane then holds a partial adjoint of
    every tile (the adjoint is the sum over lanes): per-lane contributions (element reads,
    untile) stay in their lane without a barrier, so they may sit under lane-dependent
    branches; contributions of block-wide tile statements are added by the leader only; and a
    tile's adjoint is summed over lanes where its (block-wide) assignment is reversed.

    exact_only: refuse (NotDifferentiable, TC05xx) an adjoint that effects.py cannot prove exact;
    False derives it anyway (to verify the IR of every construct in tests).

    lane_takes: filled with the symbols of element takes (array_take) that only the lanes need,
    which the one-lane form (one_lane.py) turns back into a plain read and zeroing.
    """
    derivation = derive(kernel, module, lanes, exact_only)
    if lane_takes is not None:
        lane_takes |= derivation.lane_takes
    adjoint = derivation.finished(module)
    return adjoint if lanes else one_lane(adjoint, derivation.lane_takes)


@dataclass
class Derivation:
    """A derived adjoint before it is normalized and simplified (`finished`)."""

    adjoint: ir.Function  # the sweeps' output, replay values resolved
    lane_takes: set[ir.Sym]  # see adjoint_kernel
    customs: bool  # funcs with a registered adjoint (inline_tile_customs) are to be inlined

    def finished(self, module: ir.Module, strip_tile_lane_ops: bool = False) -> ir.Function:
        """The adjoint normalized and simplified. strip_tile_lane_ops (lanes derivations without
        customs only): the lane ops on tiles taken out first, which gives lane_ops.block_tile_form
        of the finished lanes adjoint without the temporaries the normalizer binds for them (half
        of a tile adjoint's statements) being made and then folded back."""
        adjoint, bound = self.adjoint, set()
        if strip_tile_lane_ops:
            assert not self.customs, adjoint.name  # inline_tile_customs expects the lanes form normalized
            bound = tile_lane_bound(adjoint.body)
            adjoint = replace(adjoint, body=strip_lane_ops(adjoint.body, tiles_only=True))
        adjoint = _normalized(adjoint, module)
        if self.customs:
            adjoint = _normalized(inline_tile_customs(adjoint, {f.name: f for f in module.funcs}), module)
        adjoint = simplify_function(adjoint)
        # the derivation's own temporaries for lane ops, as block_tile_form folds them
        return fold_lane_temporaries(adjoint, bound) if bound else adjoint


def derive(kernel: ir.Function, module: ir.Module, lanes: bool = False, exact_only: bool = True) -> Derivation:
    """adjoint_kernel's derivation, before the adjoint is normalized and simplified."""
    funcs = {f.name: f for f in module.funcs}
    refuse_custom_adjoints(kernel, funcs)
    fn = inline_array_locals(inline_calls(kernel, funcs))
    fn = eliminate_jumps(fn)
    fn = rename_straight_line(fn)
    fn = _normalized(fn, module)
    if exact_only:
        check_adjoint(fn)  # exact, or refused with a TC05xx diagnostic (effects.py)
    builder = Adjoint(fn, lanes)
    adjoint = resolve_replay_values(builder.run())
    return Derivation(adjoint, builder.lane_takes, any(f.grad_funcs is not None for f in funcs.values()))


def _normalized(fn: ir.Function, module: ir.Module) -> ir.Function:
    return normalize_module(replace(module, funcs=(), kernels=(fn,))).kernels[0]


class Adjoint:
    """One derivation: the state the sweeps share, and the interface op rules call as `ad`."""

    def __init__(self, fn: ir.Function, lanes: bool = False):
        self.fn = fn
        self.lanes = lanes
        self.fresh = _Fresh(fn)
        self.adj: dict[ir.Sym, ir.Sym] = {}
        self.adj_params: list[ir.Sym] = []
        for p in fn.params:
            a = ir.Sym(naming.adjoint_param(p.name), 0, p.type)
            self.adj_params.append(a)
            if isinstance(p.type, ArrayT) or differentiable(p.type):
                self.adj[p] = a
        self.pushed = overwritten(fn)  # the tape (adjoint_tape.py)
        self.sites = assignment_sites(fn)
        self.stable = set(fn.params) | {s for s, n in assignment_counts(fn).items() if n == 1}
        self.written_arrays = written_arrays(fn)
        self.varying = thread_varying(fn)  # values that may differ between threads
        self.loop_vars: list[ir.Sym] = []  # induction variables in scope (restored or recomputed in reverse)
        self.lane_takes: set[ir.Sym] = set()  # array_take results only cooperating lanes need (ops/adjoints.py)
        self.no_tape: set[ir.Sym] = set()  # symbols recomputed in the reverse sweep instead of saved
        self.recompute_cond: set[int] = set()  # ids of Ifs whose condition is re-evaluated
        self.fast_loops: dict[int, list[ir.Assign]] = {}  # id(For) -> statements recomputed at each reverse iteration
        self.out: list[ir.Stmt] = []  # statements being emitted
        self.memo: dict[Key, list[tuple[ir.Expr, ir.Var]]] = {}  # span-free key -> (expression, its variable)
        self.assigned: ir.Assign | None = None  # the assignment being reversed, when its target holds its value
        self.cond_syms: dict[int, ir.Sym] = {}  # If -> the bool its forward replay saved
        self.count_syms: dict[int, ir.Sym] = {}  # loop -> its trip counter
        self.span: Span = fn.span  # of the statement being reversed: generated code points back to it
        self.natives_reversed: set[int] = set()  # ids of the native_calls whose adjoint the sweep ran

    def run(self) -> ir.Function:
        forward = self.forward(self.fn.body)
        # The replay's copies of recomputed values are separate symbols: the reverse sweep derives
        # its own, so dead-code elimination can drop the replay's when nothing else needs them.
        # Numbered in a fixed order (a set of symbols iterates in hash order, which varies per run).
        shadows = {sym: self.fresh.sym(f"{sym.name}_replay", sym.type)
                   for sym in sorted(self.no_tape, key=lambda s: (s.name, s.id))}
        forward = list(ir.rename(forward, lambda sym: shadows.get(sym, sym)))
        self.out = []
        self.reverse(self.fn.body)
        # The GPU's tape has a fixed size per launch: a block checks it fit before its reverse sweep.
        ready = ir.ExprStmt(ir.OpCall("tape_ready", (), (), NONE, self.fn.span), self.fn.span)
        body = tuple(forward) + (ready,) + tuple(self.out)
        return replace(self.fn, name=f"{self.fn.name}_adjoint", params=self.fn.params + tuple(self.adj_params),
                       body=body)

    # ------------------------------------------------------------ helpers for rules

    def temp(self, t: Type, name: str = "_v") -> ir.Sym:
        return self.fresh.sym(name, t)

    def emit(self, stmt: ir.Stmt) -> None:
        self.out.append(_with_span(stmt, self.span))

    def val(self, e: ir.Expr) -> ir.Var | ir.Const:
        """A variable (or constant) holding e's value in the reverse sweep."""
        if isinstance(e, (ir.Var, ir.Const)):
            return e
        # Structural (ids of temporaries get recycled): equal pure expressions share a value. Found
        # by a span-free key, then compared whole: hashing the expression would hash its spans,
        # which resolves them, and a clean `tilec check` needs no source position otherwise.
        bucket = self.memo.setdefault(span_free_key(e), [])
        for known, var in bucket:
            if known == e:
                return var
        sym = self.temp(e.type)
        self.emit(ir.Assign(sym, e, e.span))
        bucket.append((e, ir.Var(sym, e.span)))
        return bucket[-1][1]

    def result(self, e: ir.OpCall) -> ir.Var | ir.Const:
        """The call's result: the variable the statement being reversed assigned it to, or
        recomputed from its (restored) operands."""
        return self.known_result(e) or self.val(replace(e))

    def known_result(self, e: ir.Expr) -> ir.Var | None:
        """The variable holding e's value when e is the whole value of the assignment being
        reversed and its target still holds it (never overwritten, or recomputed per iteration);
        else None."""
        if self.assigned is not None and e is self.assigned.value and self.assigned.target.type == e.type:
            return ir.Var(self.assigned.target, e.span)
        return None

    def varies(self, e: ir.Expr) -> bool:
        """Whether e may differ between threads (an index selecting a thread's own element)."""
        return any((isinstance(x, ir.Var) and x.sym in self.varying) or (isinstance(x, ir.OpCall) and x.op in VARYING_OPS)
                   for x in ir.walk_expr(e))

    def fresh_zero(self, t: Type) -> ir.Var:
        sym = self.temp(t, "_z")
        self.emit(ir.Assign(sym, zeros(t), None))  # type: ignore[arg-type]  # span filled in by emit
        return ir.Var(sym, None)  # type: ignore[arg-type]  # span filled in where a statement reads it

    def adj_array(self, e: ir.Expr) -> ir.Expr | None:
        if isinstance(e, ir.OpCall) and (e.op == "array_view" or (e.op == "array_load" and isinstance(e.type, ArrayT))):
            # a view's adjoint: that view of the adjoint; an array held in an array of structs
            # (`ps[i].data`): the array the adjoint descriptors hold at the same element
            inner = self.adj_array(e.args[0])
            return None if inner is None else replace(e, args=(inner,) + e.args[1:])
        if isinstance(e, ir.Var) and e.sym in self.adj and isinstance(e.sym.type, ArrayT):
            return ir.Var(self.adj[e.sym], e.span)
        return None

    def adj_of(self, sym: ir.Sym) -> ir.Sym:
        if sym not in self.adj:
            self.adj[sym] = self.fresh.sym(f"adj_{sym.name}", sym.type)
        return self.adj[sym]

    def accumulate_into(self, target: ir.Expr, make: Callable[[ir.Var], ir.Expr]) -> None:
        """adj(target) = make(adj(target)), for rules that update in place (element writes)."""
        if isinstance(target, ir.Var) and differentiable(target.type):
            adj = self.adj_of(target.sym)
            self.emit(ir.Assign(adj, make(ir.Var(adj, target.span)), target.span))

    def accumulate(self, target: ir.Expr, contribution: ir.Expr) -> None:
        if isinstance(target, ir.Const) or not differentiable(target.type):
            return
        contribution = self.reduce_to(contribution, target.type)
        if isinstance(target, ir.Var):
            adj = self.adj_of(target.sym)
            if self.lanes and isinstance(target.type, TileT):
                contribution = C("leader_only", contribution)  # block-wide work, counted once
            self.emit(ir.Assign(adj, C("add", ir.Var(adj, target.span), contribution), target.span))
        else:
            g = self.val(contribution)
            self.propagate(target, g)

    def reduce_to(self, c: ir.Expr, t: Type) -> ir.Expr:
        """A tile contribution onto a scalar (or vector/matrix) operand: summed, and counted once per block."""
        if isinstance(c.type, TileT) and (isinstance(t, Scalar) or (isinstance(t, (VecT, MatT)) and c.type.dtype == t)):
            total = C("tile_extract", C("tile_sum", self.val(c), axis=None), const(0, INT32))
            return C("leader_only", total)
        return c

    # ------------------------------------------------------------ the two sweeps

    def forward(self, body: Iterable[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in body:
            out.extend(self.forward_stmt(s))
        return out

    def forward_stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.If):
            return forward_if(self, s)
        if isinstance(s, (ir.For, ir.While)):
            return forward_loop(self, s)
        return forward_statement(self, s)

    def reverse(self, body: Iterable[ir.Stmt]) -> None:
        for s in reversed(tuple(body)):
            self.reverse_stmt(s)

    def nested(self, body: Iterable[ir.Stmt]) -> tuple[ir.Stmt, ...]:
        saved, self.out = self.out, []
        self.reverse(body)
        inner, self.out = self.out, saved
        return tuple(inner)

    def reverse_stmt(self, s: ir.Stmt) -> None:
        self.memo = {}
        self.span = s.span
        holds = isinstance(s, ir.Assign) and (s.target not in self.pushed or s.target in self.no_tape)
        self.assigned = s if holds and isinstance(s, ir.Assign) else None
        if isinstance(s, ir.If):
            reverse_if(self, s)
        elif isinstance(s, (ir.For, ir.While)):
            reverse_loop(self, s)
        else:
            reverse_statement(self, s)

    # ------------------------------------------------------------ adjoints of values

    def take_adjoint(self, sym: ir.Sym, span: Span) -> ir.Var:
        """The adjoint of a value whose assignment is being reversed, then zeroed."""
        adj = self.adj_of(sym)
        total: ir.Expr = ir.Var(adj, span)
        if self.lanes and isinstance(sym.type, TileT):
            total = C("lane_sum", total)
        g = self.temp(sym.type, "_g")
        self.emit(ir.Assign(g, total, span))
        self.emit(ir.Assign(adj, zeros(sym.type, span), span))
        return ir.Var(g, span)

    def propagate(self, e: ir.Expr, g: ir.Expr) -> None:
        if isinstance(e, ir.Var):
            self.accumulate(e, g)
        elif isinstance(e, ir.OpCall):
            self.apply_rule(e, g)

    def apply_rule(self, e: ir.OpCall, g: ir.Expr | None) -> None:
        if e.type is not None and not differentiable(e.type) and e.op not in RULES_ON_EFFECTS:
            return
        rule = RULES.get(e.op)
        if e.op == "native_call":
            self.natives_reversed.add(id(e))
        if rule is None:
            if OPS[e.op].adj_cpp is None:
                return  # not differentiable by nature (comparisons, bit ops, arg-reductions)
            raise NotDifferentiable(f"{e.op}: no adjoint rule", e.span)
        block_wide = self.lanes and isinstance(e.type, TileT) and e.op not in PER_LANE_WRITES
        for index, contribution in rule(self, e, g):
            if block_wide and isinstance(contribution.type, (Scalar, VecT, MatT)) and not (
                    isinstance(contribution, ir.OpCall) and contribution.op == "leader_only"):
                contribution = C("leader_only", contribution)  # every lane derived it from the block's tile
                # (a vector or matrix too: tile_full(value=v) of a vec3 counted it block_dim times)
            self.accumulate(e.args[index], contribution)


RULES_ON_EFFECTS = EFFECTS | {"native_call"}  # a snippet's adj_snippet runs whatever it returns


def _with_span(stmt: ir.Stmt, span: Span) -> ir.Stmt:
    """stmt with every missing span filled in (rules build some nodes without one)."""
    # Built directly, and stmt itself where nothing is missing: dataclasses.replace per emitted
    # statement was a tenth of a derivation.
    if type(stmt) is ir.Assign:
        value = _expr_with_span(stmt.value, span)
        if value is stmt.value and stmt.span is not None:
            return stmt
        return ir.Assign(stmt.target, value, stmt.span or span)
    if type(stmt) is ir.ExprStmt:
        expr = _expr_with_span(stmt.expr, span)
        if expr is stmt.expr and stmt.span is not None:
            return stmt
        return ir.ExprStmt(expr, stmt.span or span)
    return stmt


def _expr_with_span(e: ir.Expr, span: Span) -> ir.Expr:
    if isinstance(e, (ir.Const, ir.Var)):
        return e if e.span is not None else replace(e, span=span)
    e = ir.with_args(e, tuple(_expr_with_span(a, span) for a in e.args))
    return e if e.span is not None else replace(e, span=span)
