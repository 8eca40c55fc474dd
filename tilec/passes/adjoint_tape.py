"""What the adjoint's tape stores, and what the reverse sweep recomputes instead.

Part of autodiff (autodiff.py drives; these functions read the derivation's state `ad`). The
forward replay pushes onto a per-lane tape every value an assignment may destroy (`overwritten`),
every branch taken and every loop's trip count; the reverse sweep pops them in reverse order
(`push`, `pop`). A value the reverse sweep can derive again from values that are the same there
(`recomputable`) needs no tape: a branch condition of that kind is re-evaluated, and a loop with
a constant step and recomputable bounds (`plan_fast_loop`) runs backwards with its trip count,
induction variable and single-assignment values derived again per iteration.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from .. import ir
from ..ops import OPS
from .views import array_base
from ..diagnostics import Span
from ..ir.types import ArrayT

if TYPE_CHECKING:
    from .autodiff import Adjoint

# Ops whose effect the replay must not repeat: not replayed, and an array they write is never
# read back by a recomputation.
EFFECTS = {"tile_store", "tile_atomic_add", "tile_store_indexed", "tile_atomic_add_indexed", "array_store",
           "array_store_part",
           "array_atomic_add", "array_atomic_sub", "atomic_add", "atomic_min", "atomic_max",
           "array_atomic_and", "array_atomic_or", "array_atomic_xor", "atomic_cas", "atomic_exch",
           "print", "print_tile", "print_format", "expect_eq", "expect_neq", "expect_near", "assert_",
           "volume_store_f", "volume_store_v", "volume_store_i"}  # the last: never replayed


def push(sym: ir.Sym, span: Span) -> ir.ExprStmt:
    return ir.ExprStmt(ir.OpCall("tape_push", (ir.Var(sym, span),), (), sym.type, span), span)


def pop(sym: ir.Sym, span: Span) -> ir.Assign:
    return ir.Assign(sym, ir.OpCall("tape_pop", (), (("type", sym.type),), sym.type, span), span)


def recomputable(ad: Adjoint, e: ir.Expr, extra: Iterable[ir.Sym] = ()) -> bool:
    """e reads only values that are the same in the reverse sweep: never-reassigned symbols,
    induction variables in scope, `extra`, and arrays this kernel never writes."""
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Var):
            t = x.sym.type
            if isinstance(t, ArrayT):
                continue
            if not (x.sym in ad.stable or x.sym in ad.loop_vars or x.sym in extra):
                return False
        elif isinstance(x, ir.OpCall):
            if OPS[x.op].effect or x.op in ("tape_pop", "tid", "lane"):
                return False
            base = array_base(x.args[0]) if x.args else None
            if isinstance(base, ir.Var) and base.sym in ad.written_arrays:
                return False
        elif isinstance(x, ir.Call):
            return False
    return True


def plan_fast_loop(ad: Adjoint, s: ir.For) -> list[ir.Assign] | None:
    """Statements recomputed per reverse iteration, or None when the loop needs the tape."""
    body, close = split_close(s.body)
    if close or not isinstance(s.step, ir.Const) or s.step.value == 0:
        return None
    if not all(recomputable(ad, b) for b in (s.start, s.stop)):
        return None
    ad.loop_vars.append(s.var)
    recomputed: list[ir.Assign] = []
    defined: set[ir.Sym] = set()
    outside = _reads_outside(ad.fn.body, s)
    for stmt in body:
        if (isinstance(stmt, ir.Assign) and ad.sites.get(stmt.target) == 1
                and stmt.target not in outside and recomputable(ad, stmt.value, defined)):
            recomputed.append(stmt)
            defined.add(stmt.target)
    ad.loop_vars.pop()
    return recomputed


def is_close(s: ir.Stmt) -> bool:
    """The `if brk: break` that eliminate_jumps puts at the end of a loop body."""
    return isinstance(s, ir.If) and len(s.body) == 1 and isinstance(s.body[0], ir.Break) and not s.orelse


def split_close(body: Iterable[ir.Stmt]) -> tuple[tuple[ir.Stmt, ...], tuple[ir.Stmt, ...]]:
    body = tuple(body)
    if body and is_close(body[-1]):
        return body[:-1], body[-1:]
    return body, ()


def _reads_outside(body: tuple[ir.Stmt, ...], loop: ir.For) -> set[ir.Sym]:
    """Symbols read by statements of body other than `loop` and its contents."""
    reads: set[ir.Sym] = set()
    for s in body:
        if s is loop:
            continue
        for e in ir.stmt_exprs(s):
            reads |= {x.sym for x in ir.walk_expr(e) if isinstance(x, ir.Var)}
        for block in ir.child_blocks(s):
            reads |= _reads_outside(block, loop)
    return reads


def assignment_counts(fn: ir.Function) -> dict[ir.Sym, int]:
    """Assignments per symbol, counting those inside a loop twice (they may run many times)."""
    counts: dict[ir.Sym, int] = {}

    def visit(body: tuple[ir.Stmt, ...], in_loop: bool) -> None:
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


def assignment_sites(fn: ir.Function) -> dict[ir.Sym, int]:
    """Statements assigning each symbol (a loop header counts as one)."""
    sites: dict[ir.Sym, int] = {}
    for s in ir.walk_stmts(fn.body):
        targets = (s.target,) if isinstance(s, ir.Assign) else (s.targets if isinstance(s, ir.Unpack) else ())
        if isinstance(s, ir.For):
            targets = (s.var,)
        for t in targets:
            sites[t] = sites.get(t, 0) + 1
    return sites


def written_arrays(fn: ir.Function) -> set[ir.Sym]:
    written: set[ir.Sym] = set()
    for s in ir.walk_stmts(fn.body):
        for x in ir.stmt_exprs(s):
            for e in ir.walk_expr(x):
                base = array_base(e.args[0]) if isinstance(e, ir.OpCall) and e.op in EFFECTS and e.args else None
                if isinstance(base, ir.Var):
                    written.add(base.sym)
                if isinstance(e, ir.OpCall) and e.op == "native_call":  # the arrays a snippet may write
                    written |= {b.sym for k in e.attr("written", ()) if isinstance(b := array_base(e.args[k]), ir.Var)}
    return written


def overwritten(fn: ir.Function) -> set[ir.Sym]:
    """Symbols whose old value an assignment may destroy: assigned twice, or inside a loop."""
    counts: dict[ir.Sym, int] = {}

    def visit(body: tuple[ir.Stmt, ...], in_loop: bool) -> None:
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
