"""One lane: the adjoint of a kernel run by cooperating lanes -> the same adjoint run as one lane.

Expects an adjoint kernel derived with lanes=True (autodiff.py), or its block_tile_form (lane_ops.py:
the lane ops on tiles already taken out and their temporaries folded). With a single lane per block
`lane_sum` (the sum of every lane's partial adjoint) and `leader_only` (a value in the leader
lane, zero elsewhere) are the identity, so each call is replaced by its operand and the
temporaries bound for them are put back into their elementwise readers (lane_ops.py). The result
is then simplified and tidied (adjoint_tidy.py).
The build derives each kernel's adjoint once and takes the CPU's one-lane form from it here.
"""
from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet

from .. import ir
from ..ir.types import TileT
from .adjoint_tidy import tidy_adjoint
from .effects import thread_varying
from .fuse_tiles import (fold_single_use, map_blocks, per_element, reads_of, single_use_tiles, spread_broadcasts,
                         writes_of)
from .lane_ops import LANE_OPS, block_tile_form, strip_lane_ops
from .simplify import simplify_function
from .view_adds import fold_view_adds


def one_lane(adjoint: ir.Function, lane_takes: AbstractSet[ir.Sym] = frozenset()) -> ir.Function:
    """lane_takes: symbols of element takes only cooperating lanes need (autodiff.adjoint_kernel):
    with one lane they read the element and zero it, without an atomic exchange."""
    tidied, _, assigned_ops = tidy_one_lane(block_tile_form(adjoint), lane_takes)
    return cpu_rewrites(tidied, assigned_ops)


def tidy_one_lane(adjoint: ir.Function, lane_takes: AbstractSet[ir.Sym] = frozenset()
                  ) -> tuple[ir.Function, bool, frozenset[str]]:
    """The one-lane form before cpu_rewrites, of block_tile_form's adjoint (its tile lane ops and
    their temporaries gone: what is left to strip binds no tile); whether nothing was taken out (no
    lane op, no take: the result is then the lanes adjoint tidied, which the GPU can run too); the
    ops adjoint's assignments apply."""
    assigned_ops = frozenset(s.value.op for s in ir.walk_stmts(adjoint.body)
                             if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall))
    body = strip_lane_ops(adjoint.body, lane_takes)
    unchanged = body is adjoint.body
    # Unchanged: the derivation's simplified adjoint, which block_tile_form's folds left nothing
    # dead in; otherwise a stripped take may leave a dead read.
    fn = tidy_adjoint(adjoint if unchanged else simplify_function(replace(adjoint, body=body)))
    # Then every tile assigned and read once, and chains of updates, put back into their reader
    # (the tidied adjoint has fewer assignments to each partial adjoint than the derivation had):
    # each such statement is a loop of its own. Chains only without exits (break, continue,
    # return): an exit between two links would leave the first link's value observable.
    tiles = ir.assigned_tiles(fn.body)
    if tiles:
        chains = not ir.has_exits(fn.body)
        body = fold_single_use(fn.body, single_use_tiles(fn.body, tiles), chains=chains, foldable=per_element)
        fn = replace(fn, body=spread_broadcasts(body))
    return fn, unchanged, assigned_ops


def cpu_rewrites(fn: ir.Function, assigned_ops: frozenset[str]) -> ir.Function:
    """The one-lane form's last rewrites, for the CPU's emitter: an assignment of tile_view_add /
    tile_matmul folded into its reader. Nothing tidy_one_lane does creates one (they are statements,
    never fused into another): without one among assigned_ops they change nothing, and their counts
    of reads and assignments were two more walks of the whole adjoint."""
    if "tile_view_add" in assigned_ops:
        fn = fold_view_adds(fn)
    if "tile_matmul" not in assigned_ops:
        return fn
    reads = ir.use_counts(fn.body)
    products = {t for t, n in ir.assign_counts(fn.body).items() if n == 1 and reads.get(t) == 1}
    return replace(fn, body=_matmul_in_place(fn.body, products))


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
            j = next((j for j in range(i + 1, len(out)) if s.target in reads_of(out[j])), None)
            reader = out[j] if j is not None else None
            operands = ir.read_syms(s.value)
            if (isinstance(reader, ir.Assign) and isinstance(reader.value, ir.OpCall) and reader.value.op == "add"
                    and reader.target.type == s.target.type and reader.target not in operands
                    and {a.sym for a in reader.value.args if isinstance(a, ir.Var)} == {reader.target, s.target}
                    and all(isinstance(a, ir.Var) for a in reader.value.args)
                    and not (writes_of(out[i + 1:j]) & operands)):
                assert j is not None  # a reader was found at j
                acc = ir.Var(reader.target, reader.span)
                out[j] = replace(reader, value=replace(s.value, args=s.value.args + (acc,)))
                del out[i]
                continue
        i += 1
    return tuple(map_blocks(s, lambda block: _matmul_in_place(block, products)) for s in out)
