"""One lane: the adjoint of a kernel run by cooperating lanes -> the same adjoint run as one lane.

Expects an adjoint kernel derived with lanes=True (autodiff.py). With a single lane per block
`lane_sum` (the sum of every lane's partial adjoint) and `leader_only` (a value in the leader
lane, zero elsewhere) are the identity, so each call is replaced by its operand. The normalizer
had bound a lane op's elementwise operand to a temporary; a temporary read once, in an
elementwise position of a later statement of its block, with nothing in between writing what it
reads, is put back there (the emitter fuses it into that statement's loop, as it does where no
lane op ever stood). The result is then simplified and tidied (adjoint_tidy.py).
The build derives each kernel's adjoint once and takes the CPU's one-lane form from it here.
"""
from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Any, Callable, TypeGuard

from .. import ir
from ..ir.types import NONE, TileT
from ..ops import MUTATES, OPS
from ..ops.build import zeros
from .adjoint_tidy import tidy_adjoint
from .effects import thread_varying
from .simplify import simplify_function
from .view_adds import fold_view_adds

LANE_OPS = {"lane_sum", "leader_only"}


def one_lane(adjoint: ir.Function, lane_takes: AbstractSet[ir.Sym] = frozenset()) -> ir.Function:
    """lane_takes: symbols of element takes only cooperating lanes need (autodiff.adjoint_kernel):
    with one lane they read the element and zero it, without an atomic exchange."""
    bound: set[ir.Sym] = set()
    assigned_ops: set[str] = set()  # the ops assignments apply (the rewrites at the end look for two)
    for s in ir.walk_stmts(adjoint.body):
        if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall):
            assigned_ops.add(s.value.op)
            if s.value.op in LANE_OPS:
                bound.add(s.target)
                bound |= {a.sym for a in s.value.args if isinstance(a, ir.Var)}  # the operand bound for it
    body = _strip(adjoint.body, lane_takes)
    body = _fuse_all(body, _single_tiles(body, bound))
    fn = tidy_adjoint(simplify_function(replace(adjoint, body=body)))
    # Then every tile assigned and read once, and chains of updates, put back into their reader
    # (the tidied adjoint has fewer assignments to each partial adjoint than the derivation had):
    # each such statement is a loop of its own. Chains only without exits (break, continue,
    # return): an exit between two links would leave the first link's value observable.
    tiles = _assigned_tiles(fn.body)
    if tiles:
        exits = any(isinstance(s, (ir.Break, ir.Continue, ir.Return)) for s in ir.walk_stmts(fn.body))
        fn = replace(fn, body=_fuse_all(fn.body, _single_tiles(fn.body, tiles), chains=not exits))
    # The last two rewrites fold an assignment of tile_view_add / tile_matmul, which nothing above
    # creates (they are statements, never fused into another): without one they change nothing,
    # and their counts of reads and assignments were two more walks of the whole adjoint.
    if "tile_view_add" in assigned_ops:
        fn = fold_view_adds(fn)
    if "tile_matmul" not in assigned_ops:
        return fn
    reads = ir.use_counts(fn.body)
    products = {t for t, n in ir.assign_counts(fn.body).items() if n == 1 and reads.get(t) == 1}
    return replace(fn, body=_matmul_in_place(fn.body, products))


def _single_tiles(body: tuple[ir.Stmt, ...], candidates: AbstractSet[ir.Sym]) -> set[ir.Sym]:
    """The candidates that are tiles assigned once and read once in body."""
    reads, assigned = ir.use_counts(body), ir.assign_counts(body)  # one walk each, not one per candidate
    return {t for t in candidates if reads.get(t) == 1 and isinstance(t.type, TileT) and assigned.get(t) == 1}


def _fuse_all(body: tuple[ir.Stmt, ...], single: set[ir.Sym], chains: bool = False) -> tuple[ir.Stmt, ...]:
    """_fuse's rounds, until a round changes nothing or changes nothing after passing a candidate over."""
    while True:
        rounds = _Rounds()
        fused = _fuse(body, single, rounds, chains)
        if fused == body:
            return body
        body = fused
        if not rounds.again:
            return body


def _assigned_tiles(body: tuple[ir.Stmt, ...]) -> set[ir.Sym]:
    return {s.target for s in ir.walk_stmts(body) if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT)}


# Tiles read from memory: their scalar operands (offsets, indices of a view) are the same in every
# lane of a block by Warp's contract for tile operations, so the tile is too.
_LOADED = {"tile_load", "tile_load_indexed"}


def lanes_may_differ(adjoint: ir.Function) -> bool:
    """True when, in the lanes form, the lanes of one block can hold different partial adjoints of a
    tile (or of a value taken once per block): `t[i]` with i from wp.tid() under launch_tiled's lane
    index or launch()'s global thread index adds each lane's seed at its own element. The one-lane
    form would then keep only the leader's; such kernels keep the lanes form on the CPU too (run as
    one lane it is the same computation, as lane_sum and leader_only are the identity there)."""
    scalars = {s for s in thread_varying(adjoint) if not isinstance(s.type, TileT)}
    tiles: set[ir.Sym] = set()

    def varies(e: ir.Expr) -> bool:
        stack = [e]  # an explicit stack: expressions can be deeper than the recursion limit
        while stack:
            x = stack.pop()
            kind = type(x)  # exact classes: asked of every node of the adjoint, each round
            if kind is ir.Var:
                if x.sym in tiles or x.sym in scalars:  # type: ignore[union-attr]  # the kind was just tested
                    return True
            elif kind is ir.OpCall:
                op = x.op  # type: ignore[union-attr]
                if op in _LOADED:
                    continue
                if op == "tid" or op == "lane":
                    return True
                stack.extend(x.args)  # type: ignore[union-attr]
            elif kind is ir.Call:
                stack.extend(x.args)  # type: ignore[union-attr]
        return False

    def visit(body: tuple[ir.Stmt, ...], under: bool) -> None:
        for s in body:
            if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT) and s.target not in tiles and (
                    under or varies(s.value)):
                tiles.add(s.target)
            elif isinstance(s, ir.For):
                visit(s.body, under or any(varies(b) for b in (s.start, s.stop, s.step)))
            elif isinstance(s, (ir.If, ir.While)):
                inner = under or varies(s.cond)
                visit(s.body, inner)
                visit(getattr(s, "orelse", ()), inner)

    for _ in range(3):  # values carried around loops
        before = len(tiles)
        visit(adjoint.body, False)
        if len(tiles) == before:
            break  # a round that added nothing: the next would see the same set and add nothing either
    stack: list[ir.Expr] = []  # every node of every statement's expressions (walk_expr's walk, inline)
    for s in ir.walk_stmts(adjoint.body):
        stack.extend(ir.stmt_exprs(s))
        while stack:
            e = stack.pop()
            if type(e) is ir.OpCall:
                if e.op in LANE_OPS and any(varies(a) for a in e.args):
                    return True
                stack.extend(e.args)
            elif type(e) is ir.Call:
                stack.extend(e.args)
    return False


def _matmul_in_place(body: tuple[ir.Stmt, ...], products: set[ir.Sym]) -> tuple[ir.Stmt, ...]:
    """`p = tile_matmul(x, y)` (a product the lanes form kept apart) then `adj = adj + p`: the
    product accumulates into adj in place, `adj = tile_matmul(x, y, adj)`, as a one-lane
    derivation writes it (no product tile, no add)."""
    out = list(body)
    i = 0
    while i < len(out):
        s = out[i]
        if (isinstance(s, ir.Assign) and s.target in products and isinstance(s.value, ir.OpCall)
                and s.value.op == "tile_matmul" and len(s.value.args) == 2 and s.value.attr("beta") == 1.0):
            j = next((j for j in range(i + 1, len(out)) if s.target in _reads_stmt(out[j])), None)
            reader = out[j] if j is not None else None
            operands = ir.read_syms(s.value)
            if (isinstance(reader, ir.Assign) and isinstance(reader.value, ir.OpCall) and reader.value.op == "add"
                    and reader.target.type == s.target.type and reader.target not in operands
                    and {a.sym for a in reader.value.args if isinstance(a, ir.Var)} == {reader.target, s.target}
                    and all(isinstance(a, ir.Var) for a in reader.value.args)
                    and not (_writes(out[i + 1:j]) & operands)):
                assert j is not None  # a reader was found at j
                acc = ir.Var(reader.target, reader.span)
                out[j] = replace(reader, value=replace(s.value, args=s.value.args + (acc,)))
                del out[i]
                continue
        i += 1
    return tuple(_map_blocks(s, lambda block: _matmul_in_place(block, products)) for s in out)


def _elementwise(e: ir.Expr) -> TypeGuard[ir.OpCall]:
    return isinstance(e, ir.OpCall) and isinstance(e.type, TileT) and OPS[e.op].elementwise


def _broadcast(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_broadcast" and all(isinstance(a, ir.Var) for a in e.args)


def _writes(stmts: list[ir.Stmt]) -> set[ir.Sym]:
    out: set[ir.Sym] = set()
    for s in ir.walk_stmts(stmts):
        out.update(ir.stmt_targets(s))
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.OpCall) and x.op in MUTATES:  # the operands it updates in place
                    names = MUTATES[x.op]
                    out |= {y for i, p in enumerate(OPS[x.op].params) if p.name in names and i < len(x.args)
                            for y in ir.read_syms(x.args[i])}
    return out


def _substitute(e: ir.Expr, sym: ir.Sym, value: ir.Expr) -> ir.Expr | None:
    """e with its elementwise-reachable read of sym replaced by value; None where sym sits elsewhere."""
    if isinstance(e, ir.Var):
        return value if e.sym == sym else e
    if not _elementwise(e):
        return None if sym in ir.read_syms(e) else e
    args = []
    for a in e.args:
        substituted = _substitute(a, sym, value)
        if substituted is None:
            return None
        args.append(substituted)
    return replace(e, args=tuple(args))


class _Rounds:
    """What one round of _fuse saw. A round leaves the statements before its position as they
    are, and decides each candidate on what follows it, nested blocks last: a candidate it passed
    over can only be folded after a later fold of the same round. When none was passed over
    before a fold, another round would fold nothing (on long kernels that round cost as much as
    the first)."""

    def __init__(self) -> None:
        self.passed_over = False  # a candidate was left in place (in the order the round visits them)
        self.again = False  # something was folded after that: another round may fold more


def _fuse(body: tuple[ir.Stmt, ...], single: set[ir.Sym], rounds: _Rounds, chains: bool = False) -> tuple[ir.Stmt, ...]:
    # A folded statement's place is emptied (None) rather than deleted: deleting from the list
    # moved everything after it, which made long kernels quadratic. Emptied places are all behind
    # the sweep's position, so the searches ahead never meet one.
    # chains: also fold `x = a` into a statement soon after that reads x once and assigns x again
    # (`x = a; x = x + c` -> `x = a + c`: the value of the first is read there only).
    out: list[ir.Stmt | None] = list(body)
    for i, s in enumerate(out):
        if not (isinstance(s, ir.Assign) and (
                _elementwise(s.value) or isinstance(s.value, ir.Var) or _broadcast(s.value))):
            continue
        if s.target in single:
            j = next((j for j in range(i + 1, len(out)) if s.target in _reads_stmt(out[j])), None)  # type: ignore[arg-type]
        elif chains and isinstance(s.target.type, TileT):
            reach = range(i + 1, min(len(out), i + 1 + _CHAIN_REACH))
            j = next((j for j in reach if s.target in _reads_stmt(out[j])), None)  # type: ignore[arg-type]
            later = out[j] if j is not None else None
            if not (isinstance(later, ir.Assign) and later.target is s.target
                    and ir.use_counts((later,)).get(s.target) == 1):
                continue
        else:
            continue
        reader = out[j] if j is not None else None
        operands = ir.read_syms(s.value) if isinstance(reader, ir.Assign) else set()
        if (isinstance(reader, ir.Assign) and (_elementwise(reader.value) or isinstance(reader.value, ir.Var))
                and reader.target not in operands
                and (j == i + 1 or not (_writes(out[i + 1:j]) & (operands | {s.target})))):  # type: ignore[arg-type]
            value = _substitute(reader.value, s.target, s.value)
            if value is not None and j is not None:
                out[j] = replace(reader, value=value)
                out[i] = None
                rounds.again = rounds.again or rounds.passed_over
                continue
        rounds.passed_over = True
    return tuple(_map_blocks(s, lambda block: _fuse(block, single, rounds, chains)) for s in out if s is not None)


_CHAIN_REACH = 8  # statements searched for a chain's next link (a bound keeps the sweep linear)


_BLOCKS = {ir.If: ("body", "orelse"), ir.For: ("body",), ir.While: ("body",)}


def _map_blocks(s: ir.Stmt, f: Callable[[tuple[ir.Stmt, ...]], tuple[ir.Stmt, ...]]) -> ir.Stmt:
    """s with f applied to each statement list nested directly in it."""
    if type(s) not in _BLOCKS:
        return s
    blocks: dict[str, Any] = {name: f(getattr(s, name)) for name in _BLOCKS[type(s)]}
    return replace(s, **blocks)


def _reads_stmt(s: ir.Stmt) -> set[ir.Sym]:
    if isinstance(s, ir.Assign):  # most statements: no nested block
        return ir.read_syms(s.value)
    out: set[ir.Sym] = set()
    for x in ir.walk_stmts((s,)):
        for e in ir.stmt_exprs(x):
            out |= ir.read_syms(e)
    return out


def _expr(e: ir.Expr) -> ir.Expr:
    kind = type(e)  # exact classes: asked of every node of the adjoint
    while kind is ir.OpCall and e.op in LANE_OPS:  # type: ignore[union-attr]  # the kind was just tested
        e = e.args[0]  # type: ignore[union-attr]
        kind = type(e)
    if kind is ir.OpCall or kind is ir.Call:
        return ir.with_args(e, tuple([_expr(a) for a in e.args]))  # type: ignore[union-attr,arg-type]
    return e


def _strip(body: tuple[ir.Stmt, ...], lane_takes: AbstractSet[ir.Sym]) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Assign) and s.target in lane_takes and isinstance(s.value, ir.OpCall) \
                and s.value.op == "array_take":
            adj, *idx = s.value.args
            load = ir.OpCall("array_load", (adj, *idx), (), s.value.type, s.value.span)
            store = ir.OpCall("array_store", (adj, zeros(s.value.type, s.span), *idx), (), NONE, s.span)
            out += [replace(s, value=load), ir.ExprStmt(store, s.span)]
            continue
        if type(s) is ir.Assign:  # most statements: built directly where a lane op went
            value = _expr(s.value)
            s = s if value is s.value else ir.Assign(s.target, value, s.span)
        elif isinstance(s, (ir.Assign, ir.Unpack)):
            value = _expr(s.value)
            s = s if value is s.value else replace(s, value=value)
        elif isinstance(s, ir.ExprStmt):
            expr = _expr(s.expr)
            s = s if expr is s.expr else replace(s, expr=expr)
        elif isinstance(s, ir.Return):
            s = replace(s, value=None if s.value is None else _expr(s.value))
        elif isinstance(s, ir.If):
            s = replace(s, cond=_expr(s.cond), body=_strip(s.body, lane_takes), orelse=_strip(s.orelse, lane_takes))
        elif isinstance(s, ir.For):
            s = replace(s, start=_expr(s.start), stop=_expr(s.stop), step=_expr(s.step), body=_strip(s.body, lane_takes))
        elif isinstance(s, ir.While):
            s = replace(s, cond=_expr(s.cond), body=_strip(s.body, lane_takes))
        out.append(s)
    return tuple(out)
