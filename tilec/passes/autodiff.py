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
"""
from __future__ import annotations

from dataclasses import replace

from .. import ir, naming
from .effects import VARYING_OPS, check_adjoint, thread_varying
from .normalize import normalize_module
from .one_lane import one_lane
from .simplify import simplify_function
from .views import array_base, inline_array_locals
from ..ops import OPS, PER_LANE_WRITES
from ..ops.adjoints import RULES
from ..ops.build import call as C
from ..ops.build import const, zeros
from ..diagnostics import NotDifferentiable
from .structure import (_Fresh, eliminate_jumps, inline_calls, inline_tile_customs, refuse_custom_adjoints,
                        rename_straight_line)
from ..ir.types import BOOL, INT32, NONE, ArrayT, MatT, Scalar, TileT, VecT, component_dtype

EFFECTS = {"tile_store", "tile_atomic_add", "tile_store_indexed", "tile_atomic_add_indexed", "array_store",
           "array_store_part",
           "array_atomic_add", "array_atomic_sub", "atomic_add", "atomic_min", "atomic_max",
           "array_atomic_and", "array_atomic_or", "array_atomic_xor",
           "print", "print_format", "expect_eq", "expect_neq", "expect_near", "assert_"}  # the last: never replayed


def differentiable(t) -> bool:
    if isinstance(t, (VecT, MatT)):  # vectors and matrices of floats (ops/adjoints_values.py)
        return t.dtype.is_float
    return (isinstance(t, Scalar) and t.is_float) or (isinstance(t, TileT) and component_dtype(t.dtype).is_float)


def adjoint_kernel(kernel: ir.Function, module: ir.Module, lanes: bool = False, exact_only: bool = True,
                   lane_takes: set | None = None) -> ir.Function:
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
    funcs = {f.name: f for f in module.funcs}
    refuse_custom_adjoints(kernel, funcs)
    fn = inline_array_locals(inline_calls(kernel, funcs))
    fn = eliminate_jumps(fn)
    fn = rename_straight_line(fn)
    fn = _normalized(fn, module)
    if exact_only:
        check_adjoint(fn)  # exact, or refused with a TC05xx diagnostic (effects.py)
    builder = _Adjoint(fn, lanes)
    adjoint = _normalized(builder.run(), module)
    if lane_takes is not None:
        lane_takes |= builder.lane_takes
    if any(f.grad_funcs is not None for f in funcs.values()):
        adjoint = _normalized(inline_tile_customs(adjoint, funcs), module)
    adjoint = simplify_function(adjoint)
    return adjoint if lanes else one_lane(adjoint, builder.lane_takes)


def _normalized(fn: ir.Function, module: ir.Module) -> ir.Function:
    return normalize_module(replace(module, funcs=(), kernels=(fn,))).kernels[0]


class _Adjoint:
    def __init__(self, fn: ir.Function, lanes: bool = False):
        self.fn = fn
        self.lanes = lanes
        self.fresh = _Fresh(fn)
        self.adj: dict = {}
        self.adj_params = []
        for p in fn.params:
            a = ir.Sym(naming.adjoint_param(p.name), 0, p.type)
            self.adj_params.append(a)
            if isinstance(p.type, ArrayT) or differentiable(p.type):
                self.adj[p] = a
        self.pushed = _overwritten(fn)
        self.sites = _assignment_sites(fn)
        self.stable = set(fn.params) | {s for s, n in _assignment_counts(fn).items() if n == 1}
        self.written_arrays = _written_arrays(fn)
        self.varying = thread_varying(fn)  # values that may differ between threads
        self.loop_vars: list = []  # induction variables in scope (restored or recomputed in reverse)
        self.lane_takes: set = set()  # array_take results only cooperating lanes need (ops/adjoints.py)
        self.no_tape: set = set()  # symbols recomputed in the reverse sweep instead of saved
        self.recompute_cond: set = set()  # ids of Ifs whose condition is re-evaluated
        self.fast_loops: dict = {}  # id(For) -> statements recomputed at each reverse iteration
        self.out: list = []  # statements being emitted
        self.memo: dict = {}
        self.assigned = None  # the assignment being reversed, when its target holds its value
        self.cond_syms: dict = {}  # If -> the bool its forward replay saved
        self.count_syms: dict = {}  # loop -> its trip counter
        self.span = fn.span  # of the statement being reversed: generated code points back to it

    def run(self) -> ir.Function:
        forward = self.forward(self.fn.body)
        # The replay's copies of recomputed values are separate symbols: the reverse sweep derives
        # its own, so dead-code elimination can drop the replay's when nothing else needs them.
        shadows = {sym: self.fresh.sym(f"{sym.name}_replay", sym.type) for sym in self.no_tape}
        forward = list(ir.rename(forward, lambda sym: shadows.get(sym, sym)))
        self.out = []
        self.reverse(self.fn.body)
        # The GPU's tape has a fixed size per launch: a block checks it fit before its reverse sweep.
        ready = ir.ExprStmt(ir.OpCall("tape_ready", (), (), NONE, self.fn.span), self.fn.span)
        body = tuple(forward) + (ready,) + tuple(self.out)
        return replace(self.fn, name=f"{self.fn.name}_adjoint", params=self.fn.params + tuple(self.adj_params),
                       body=body)

    # ------------------------------------------------------------ helpers for rules

    def temp(self, t, name="_v") -> ir.Sym:
        return self.fresh.sym(name, t)

    def emit(self, stmt) -> None:
        self.out.append(_with_span(stmt, self.span))

    def val(self, e):
        """A variable (or constant) holding e's value in the reverse sweep."""
        if isinstance(e, (ir.Var, ir.Const)):
            return e
        key = e  # structural: ids of temporaries get recycled; equal pure expressions share a value
        if key not in self.memo:
            sym = self.temp(e.type)
            self.emit(ir.Assign(sym, e, e.span))
            self.memo[key] = ir.Var(sym, e.span)
        return self.memo[key]

    def result(self, e):
        """The call's result: the variable the statement being reversed assigned it to, or
        recomputed from its (restored) operands."""
        return self.known_result(e) or self.val(replace(e))

    def known_result(self, e):
        """The variable holding e's value when e is the whole value of the assignment being
        reversed and its target still holds it (never overwritten, or recomputed per iteration);
        else None."""
        if self.assigned is not None and e is self.assigned.value and self.assigned.target.type == e.type:
            return ir.Var(self.assigned.target, e.span)
        return None

    def varies(self, e) -> bool:
        """Whether e may differ between threads (an index selecting a thread's own element)."""
        return any((isinstance(x, ir.Var) and x.sym in self.varying) or (isinstance(x, ir.OpCall) and x.op in VARYING_OPS)
                   for x in ir.walk_expr(e))

    def fresh_zero(self, t) -> ir.Var:
        sym = self.temp(t, "_z")
        self.emit(ir.Assign(sym, zeros(t), None))
        return ir.Var(sym, None)

    def adj_array(self, e):
        if isinstance(e, ir.OpCall) and e.op == "array_view":  # a view's adjoint: that view of the adjoint
            inner = self.adj_array(e.args[0])
            return None if inner is None else replace(e, args=(inner,) + e.args[1:])
        if isinstance(e, ir.Var) and e.sym in self.adj and isinstance(e.sym.type, ArrayT):
            return ir.Var(self.adj[e.sym], e.span)
        return None

    def adj_of(self, sym: ir.Sym) -> ir.Sym:
        if sym not in self.adj:
            self.adj[sym] = self.fresh.sym(f"adj_{sym.name}", sym.type)
        return self.adj[sym]

    def accumulate_into(self, target, make) -> None:
        """adj(target) = make(adj(target)), for rules that update in place (element writes)."""
        if isinstance(target, ir.Var) and differentiable(target.type):
            adj = self.adj_of(target.sym)
            self.emit(ir.Assign(adj, make(ir.Var(adj, target.span)), target.span))

    def accumulate(self, target, contribution) -> None:
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

    def reduce_to(self, c, t):
        """A tile contribution onto a scalar (or vector/matrix) operand: summed, and counted once per block."""
        if isinstance(c.type, TileT) and (isinstance(t, Scalar) or (isinstance(t, (VecT, MatT)) and c.type.dtype == t)):
            total = C("tile_extract", C("tile_sum", self.val(c), axis=None), const(0, INT32))
            return C("leader_only", total)
        return c

    # ------------------------------------------------------------ forward replay

    def forward(self, body) -> list:
        out = []
        for s in body:
            out.extend(self.forward_stmt(s))
        return out

    def push(self, sym, span):
        return ir.ExprStmt(ir.OpCall("tape_push", (ir.Var(sym, span),), (), sym.type, span), span)

    def pop(self, sym, span):
        return ir.Assign(sym, ir.OpCall("tape_pop", (), (("type", sym.type),), sym.type, span), span)

    # ------------------------------------------------------------ recomputation instead of tape

    def recomputable(self, e, extra=()) -> bool:
        """e reads only values that are the same in the reverse sweep: never-reassigned symbols,
        induction variables in scope, `extra`, and arrays this kernel never writes."""
        for x in ir.walk_expr(e):
            if isinstance(x, ir.Var):
                t = x.sym.type
                if isinstance(t, ArrayT):
                    continue
                if not (x.sym in self.stable or x.sym in self.loop_vars or x.sym in extra):
                    return False
            elif isinstance(x, ir.OpCall):
                if OPS[x.op].effect or x.op in ("tape_pop", "tid", "lane"):
                    return False
                base = array_base(x.args[0]) if x.args else None
                if isinstance(base, ir.Var) and base.sym in self.written_arrays:
                    return False
            elif isinstance(x, ir.Call):
                return False
        return True

    def plan_fast_loop(self, s: ir.For):
        """Statements recomputed per reverse iteration, or None when the loop needs the tape."""
        body, close = _split_close(s.body)
        if close or not isinstance(s.step, ir.Const) or s.step.value == 0:
            return None
        if not all(self.recomputable(b) for b in (s.start, s.stop)):
            return None
        self.loop_vars.append(s.var)
        recomputed, defined = [], set()
        outside = _reads_outside(self.fn.body, s)
        for stmt in body:
            if (isinstance(stmt, ir.Assign) and self.sites.get(stmt.target) == 1
                    and stmt.target not in outside and self.recomputable(stmt.value, defined)):
                recomputed.append(stmt)
                defined.add(stmt.target)
        self.loop_vars.pop()
        return recomputed

    def forward_stmt(self, s) -> list:
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op in EFFECTS:
            return []  # an atomic whose old value is unused (effects.py refuses the others): not replayed
        if isinstance(s, ir.Assign):
            save = s.target in self.pushed and s.target not in self.no_tape
            return ([self.push(s.target, s.span)] if save else []) + [s]
        if isinstance(s, ir.Unpack):
            pre = [self.push(t, s.span) for t in s.targets if t in self.pushed or _is_sort(s)]
            return pre + [s]
        if isinstance(s, ir.ExprStmt):
            return [] if isinstance(s.expr, ir.OpCall) and s.expr.op in EFFECTS else [s]
        if isinstance(s, ir.If):
            if _is_close(s):
                return [s]
            c = self.temp(BOOL, "_c")
            self.cond_syms[id(s)] = c
            if self.recomputable(s.cond):
                self.recompute_cond.add(id(s))
                return [ir.Assign(c, s.cond, s.span),
                        replace(s, cond=ir.Var(c, s.span), body=tuple(self.forward(s.body)),
                                orelse=tuple(self.forward(s.orelse)))]
            # the decision is saved after the branch: the reverse sweep pops it first (LIFO)
            return [ir.Assign(c, s.cond, s.span),
                    replace(s, cond=ir.Var(c, s.span), body=tuple(self.forward(s.body)),
                            orelse=tuple(self.forward(s.orelse))),
                    self.push(c, s.span)]
        if isinstance(s, ir.For):
            recomputed = self.plan_fast_loop(s)
            if recomputed is not None:
                self.fast_loops[id(s)] = recomputed
                self.no_tape |= {r.target for r in recomputed}
                self.loop_vars.append(s.var)
                body = tuple(self.forward(s.body))
                self.loop_vars.pop()
                pre = [self.push(s.var, s.span)] if self.sites.get(s.var, 0) > 1 else []
                return pre + [replace(s, body=body)]
        if isinstance(s, (ir.For, ir.While)):
            count = self.temp(INT32, "_n")
            self.count_syms[id(s)] = count
            body, close = _split_close(s.body)
            inner = self.forward(body)
            if isinstance(s, ir.For):
                inner.append(self.push(s.var, s.span))
            inner.append(ir.Assign(count, C("add", ir.Var(count, s.span), const(1, INT32)), s.span))
            loop = replace(s, body=tuple(inner) + close)
            pre = [self.push(s.var, s.span)] if isinstance(s, ir.For) else []
            return pre + [ir.Assign(count, const(0, INT32), s.span), loop, self.push(count, s.span)]
        return [s]

    # ------------------------------------------------------------ reverse sweep

    def reverse(self, body) -> None:
        for s in reversed(tuple(body)):
            self.reverse_stmt(s)

    def nested(self, body) -> tuple:
        saved, self.out = self.out, []
        self.reverse(body)
        inner, self.out = self.out, saved
        return tuple(inner)

    def reverse_stmt(self, s) -> None:
        self.memo = {}
        self.span = s.span
        holds = isinstance(s, ir.Assign) and (s.target not in self.pushed or s.target in self.no_tape)
        self.assigned = s if holds else None
        if isinstance(s, ir.Assign):
            if s.target in self.pushed and s.target not in self.no_tape:
                self.emit(self.pop(s.target, s.span))
            if differentiable(s.target.type):
                self.propagate(s.value, self.take_adjoint(s.target, s.span))
        elif isinstance(s, ir.Unpack):
            if _is_sort(s):
                self.reverse_sort(s)
            elif (isinstance(s.value, ir.OpCall) and s.value.op == "tile_stack_pop"
                  and any(differentiable(t.type) for t in s.targets)):
                raise NotDifferentiable("tile_stack_pop: a float popped from a tile stack has no gradient path back "
                                        "to what was pushed (Warp drops it); tilec refuses the adjoint", s.span)
            else:
                for t in reversed(s.targets):
                    if t in self.pushed:
                        self.emit(self.pop(t, s.span))
        elif isinstance(s, ir.ExprStmt):
            if isinstance(s.expr, ir.OpCall) and s.expr.op in RULES:
                self.apply_rule(s.expr, None)
        elif isinstance(s, ir.If):
            if _is_close(s):
                return
            c = self.cond_syms[id(s)]
            if id(s) in self.recompute_cond:
                self.emit(ir.Assign(c, s.cond, s.span))
            else:
                self.emit(self.pop(c, s.span))
            self.emit(replace(s, cond=ir.Var(c, s.span), body=self.nested(s.body), orelse=self.nested(s.orelse)))
        elif isinstance(s, ir.For) and id(s) in self.fast_loops:
            self.reverse_fast_loop(s)
        elif isinstance(s, (ir.For, ir.While)):
            count = self.count_syms[id(s)]
            self.emit(self.pop(count, s.span))
            body, _ = _split_close(s.body)
            inner = self.nested(body)
            if isinstance(s, ir.For):
                inner = (self.pop(s.var, s.span),) + inner
            k = self.temp(INT32, "_k")
            zero, one = const(0, INT32), const(1, INT32)
            self.emit(ir.For(k, zero, ir.Var(count, s.span), one, inner, s.span))
            if isinstance(s, ir.For):
                self.emit(self.pop(s.var, s.span))

    def reverse_fast_loop(self, s: ir.For) -> None:
        """Iterations backwards with the trip count, induction variable and recomputable values
        derived again instead of read from the tape."""
        step = s.step.value
        span = s.span
        n = self.temp(INT32, "_n")
        distance = C("sub", s.stop, s.start) if step > 0 else C("sub", s.start, s.stop)
        magnitude = const(abs(step), INT32)
        trips = C("floordiv", C("add", distance, C("sub", magnitude, const(1, INT32))), magnitude)
        self.emit(ir.Assign(n, C("max", trips, const(0, INT32)), span))
        k = self.temp(INT32, "_k")
        last = C("sub", C("sub", ir.Var(n, span), const(1, INT32)), ir.Var(k, span))
        var_value = C("add", s.start, C("mul", last, s.step))
        self.loop_vars.append(s.var)
        inner = [ir.Assign(s.var, var_value, span)] + list(self.fast_loops[id(s)])
        inner += list(self.nested(s.body))
        self.loop_vars.pop()
        self.emit(ir.For(k, const(0, INT32), ir.Var(n, span), const(1, INT32), tuple(inner), span))
        if self.sites.get(s.var, 0) > 1:
            self.emit(self.pop(s.var, span))

    def reverse_sort(self, s: ir.Unpack) -> None:
        keys, vals = s.targets
        grads = []
        for t in (vals, keys):
            self.emit(self.pop(t, s.span))
        for t in (keys, vals):
            if differentiable(t.type):
                grads.append((t, self.take_adjoint(t, s.span)))
        for t, g in grads:
            un = C("tile_unsort_grad", ir.Var(keys, s.span), g)
            self.accumulate(ir.Var(t, s.span), un)

    def take_adjoint(self, sym: ir.Sym, span) -> ir.Var:
        """The adjoint of a value whose assignment is being reversed, then zeroed."""
        adj = self.adj_of(sym)
        total = ir.Var(adj, span)
        if self.lanes and isinstance(sym.type, TileT):
            total = C("lane_sum", total)
        g = self.temp(sym.type, "_g")
        self.emit(ir.Assign(g, total, span))
        self.emit(ir.Assign(adj, zeros(sym.type, span), span))
        return ir.Var(g, span)

    def propagate(self, e, g) -> None:
        if isinstance(e, ir.Var):
            self.accumulate(e, g)
        elif isinstance(e, ir.OpCall):
            self.apply_rule(e, g)

    def apply_rule(self, e: ir.OpCall, g) -> None:
        if e.type is not None and not differentiable(e.type) and e.op not in RULES_ON_EFFECTS:
            return
        rule = RULES.get(e.op)
        if rule is None:
            if OPS[e.op].adj_cpp is None:
                return  # not differentiable by nature (comparisons, bit ops, arg-reductions)
            raise NotDifferentiable(f"{e.op}: no adjoint rule", e.span)
        block_wide = self.lanes and isinstance(e.type, TileT) and e.op not in PER_LANE_WRITES
        for index, contribution in rule(self, e, g):
            if block_wide and isinstance(contribution.type, Scalar) and not (
                    isinstance(contribution, ir.OpCall) and contribution.op == "leader_only"):
                contribution = C("leader_only", contribution)  # every lane derived it from the block's tile
            self.accumulate(e.args[index], contribution)


RULES_ON_EFFECTS = EFFECTS


def _reads_outside(body, loop) -> set:
    """Symbols read by statements of body other than `loop` and its contents."""
    reads = set()
    for s in body:
        if s is loop:
            continue
        for e in ir.stmt_exprs(s):
            reads |= {x.sym for x in ir.walk_expr(e) if isinstance(x, ir.Var)}
        for block in ir.child_blocks(s):
            reads |= _reads_outside(block, loop)
    return reads


def _with_span(node, span):
    """node with every missing span filled in (rules build some nodes without one)."""
    if isinstance(node, (ir.Const, ir.Var)):
        return node if node.span is not None else replace(node, span=span)
    if isinstance(node, (ir.OpCall, ir.Call)):
        node = replace(node, args=tuple(_with_span(a, span) for a in node.args))
        return node if node.span is not None else replace(node, span=span)
    if isinstance(node, ir.Assign):
        return replace(node, value=_with_span(node.value, span), span=node.span or span)
    if isinstance(node, ir.ExprStmt):
        return replace(node, expr=_with_span(node.expr, span), span=node.span or span)
    return node


def _is_sort(s) -> bool:
    return isinstance(s, ir.Unpack) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_sort"


def _is_close(s) -> bool:
    """The `if brk: break` that eliminate_jumps puts at the end of a loop body."""
    return isinstance(s, ir.If) and len(s.body) == 1 and isinstance(s.body[0], ir.Break) and not s.orelse


def _split_close(body) -> tuple:
    body = tuple(body)
    if body and _is_close(body[-1]):
        return body[:-1], body[-1:]
    return body, ()


def _assignment_counts(fn: ir.Function) -> dict:
    """Assignments per symbol, counting those inside a loop twice (they may run many times)."""
    counts: dict = {}

    def visit(body, in_loop):
        for s in body:
            targets = (s.target,) if isinstance(s, ir.Assign) else (s.targets if isinstance(s, ir.Unpack) else ())
            if isinstance(s, ir.For):
                targets = (s.var,)
            for t in targets:
                counts[t] = counts.get(t, 0) + (2 if in_loop or isinstance(s, ir.For) else 1)
            for block in ir.child_blocks(s):
                visit(block, in_loop or isinstance(s, (ir.For, ir.While)))

    visit(fn.body, False)
    return counts


def _assignment_sites(fn: ir.Function) -> dict:
    """Statements assigning each symbol (a loop header counts as one)."""
    sites: dict = {}
    for s in ir.walk_stmts(fn.body):
        targets = (s.target,) if isinstance(s, ir.Assign) else (s.targets if isinstance(s, ir.Unpack) else ())
        if isinstance(s, ir.For):
            targets = (s.var,)
        for t in targets:
            sites[t] = sites.get(t, 0) + 1
    return sites


def _written_arrays(fn: ir.Function) -> set:
    written = set()
    for s in ir.walk_stmts(fn.body):
        for x in ir.stmt_exprs(s):
            for e in ir.walk_expr(x):
                if isinstance(e, ir.OpCall) and e.op in EFFECTS and e.args and \
                        isinstance(array_base(e.args[0]), ir.Var):
                    written.add(array_base(e.args[0]).sym)
    return written


def _overwritten(fn: ir.Function) -> set:
    """Symbols whose old value an assignment may destroy: assigned twice, or inside a loop."""
    counts: dict = {}

    def visit(body, in_loop):
        for s in body:
            targets = (s.target,) if isinstance(s, ir.Assign) else (s.targets if isinstance(s, ir.Unpack) else ())
            for t in targets:
                counts[t] = counts.get(t, 0) + (2 if in_loop else 1)
            if isinstance(s, ir.If):
                visit(s.body, in_loop)
                visit(s.orelse, in_loop)
            elif isinstance(s, (ir.For, ir.While)):
                visit(s.body, True)

    visit(fn.body, False)
    return {t for t, n in counts.items() if n > 1}
