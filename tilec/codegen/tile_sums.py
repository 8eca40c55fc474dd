"""Which arrays a CPU adjoint's entry point sums per worker thread (runtime_headers/tilec/tile_sums.h).

Expects the CPU form of an adjoint kernel (normalized IR). Returns the array parameters, in
parameter order, with the tile type their sums are kept in. An array qualifies when

1. the kernel's only use of it is `tile_atomic_add` statements whose old values nobody reads: no
   load, store, element atomic, view, call or shape of it. No block can then see another block's
   adds during the launch, so adding them at the launch's end changes nothing but the order of the
   float additions (the entry point also checks at run time that no other argument shares its
   memory: tile_sums.h);
2. every add is a float32 or float64 tile of one shape, the shape of the sums' tiles (float16 sums
   would round at each add where the array's own adds do);
3. some add's offsets do not depend on every block coordinate (`wp.tid()`): the blocks that differ
   only in the others add into the same tiles, the repeated read-modify-writes of the array the
   sums replace by one. An array each tile of which one block adds (the MLP's dX: its offset
   follows the block's row) would gain only a copy, and keeps its direct adds.

Condition 3 is a heuristic of cost; 1 and 2 are what make the sums exact up to summation order.
"""
from __future__ import annotations

from .. import ir
from ..ir.types import FLOAT32, FLOAT64, ArrayT, TileT


def summed_arrays(fn: ir.Function) -> dict[ir.Sym, TileT]:
    arrays = {p for p in fn.params if isinstance(p.type, ArrayT) and p.type.dtype in (FLOAT32, FLOAT64)}
    adds: dict[ir.Sym, list[ir.OpCall]] = {p: [] for p in arrays}
    for s in ir.walk_stmts(fn.body):
        e = s.expr if isinstance(s, ir.ExprStmt) else None
        if isinstance(e, ir.OpCall) and e.op == "tile_atomic_add" and isinstance(e.args[0], ir.Var):
            if e.args[0].sym in arrays:
                adds[e.args[0].sym].append(e)
    if not any(adds.values()):
        return {}  # nothing added to an array: the walks below would find nothing
    uses = ir.use_counts(fn.body)  # every read of a symbol, an add's array operand included
    deps = _block_dependence(fn)
    coords: frozenset[int] = frozenset().union(*deps.values())
    out: dict[ir.Sym, TileT] = {}
    for p in fn.params:
        if p not in arrays or not adds[p] or uses.get(p, 0) != len(adds[p]):
            continue  # not added to, or used otherwise too
        tiles = {e.args[1].type for e in adds[p]}
        tile = tiles.pop()
        if tiles or not isinstance(tile, TileT) or tile.dtype != _dtype(p) or not tile.is_concrete:
            continue
        if not coords or any(not _offset_deps(e, deps) >= coords for e in adds[p]):
            out[p] = tile
    return out


def _dtype(array: ir.Sym) -> object:
    assert isinstance(array.type, ArrayT)
    return array.type.dtype


def _offset_deps(add: ir.OpCall, deps: dict[ir.Sym, frozenset[int]]) -> frozenset[int]:
    """The block coordinates an add's offsets depend on."""
    out: frozenset[int] = frozenset()
    for a in add.args[2:]:
        for sym in ir.read_syms(a):
            out |= deps.get(sym, frozenset())
    return out


def _block_dependence(fn: ir.Function) -> dict[ir.Sym, frozenset[int]]:
    """Symbol -> the `wp.tid()` coordinates its value depends on through assignments (not through
    control flow: a cost heuristic, not a proof). Iterated to a fixed point for loops; without a
    loop, every value a statement reads was assigned before it, so one walk is the fixed point."""
    deps: dict[ir.Sym, frozenset[int]] = {}
    loops = any(isinstance(s, (ir.For, ir.While)) for s in ir.walk_stmts(fn.body))
    changed = True
    while changed:
        changed = False
        for s in ir.walk_stmts(fn.body):
            found: list[tuple[ir.Sym, frozenset[int]]] = []
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tid":
                found.append((s.target, frozenset({0})))
            elif isinstance(s, ir.Unpack) and isinstance(s.value, ir.OpCall) and s.value.op == "tid":
                found += [(t, frozenset({k})) for k, t in enumerate(s.targets)]
            elif isinstance(s, (ir.Assign, ir.Unpack)):
                value = _union(deps, ir.read_syms(s.value))
                found += [(t, value) for t in ir.stmt_targets(s)] if value else []
            elif isinstance(s, ir.For):
                value = _union(deps, {r for e in ir.stmt_exprs(s) for r in ir.read_syms(e)})
                if value:
                    found.append((s.var, value))
            for sym, value in found:
                known = deps.get(sym)
                if known is None or not value <= known:
                    deps[sym] = value if known is None else known | value
                    changed = True
        changed = changed and loops
    return deps


def _union(deps: dict[ir.Sym, frozenset[int]], syms: set[ir.Sym]) -> frozenset[int]:
    """The coordinates the symbols depend on (most depend on none: no set is made for them)."""
    out: frozenset[int] = frozenset()
    for sym in syms:
        d = deps.get(sym)
        if d:
            out = out | d
    return out
