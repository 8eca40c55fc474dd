"""Facts about kernels that the backends and the loader need."""
from __future__ import annotations

from .. import ir
from ..ir.types import TileT

# Ops whose result depends on, or whose effect happens once per, lane.
LANE_OPS = {"tile", "untile", "tile_additem", "tile_subitem", "tile_scatter_add", "tile_scatter_masked",
            "tile_from_thread", "tile_bit_and_inplace", "tile_bit_or_inplace", "tile_bit_xor_inplace"}
PER_LANE_ATOMICS = {"array_atomic_add", "array_atomic_sub", "atomic_add", "atomic_min", "atomic_max"}


def _exprs(fn: ir.Function):
    for s in ir.walk_stmts(fn.body):
        for e in ir.stmt_exprs(s):
            yield from ir.walk_expr(e)


def calls(fn: ir.Function) -> set:
    return {e.func for e in _exprs(fn) if isinstance(e, ir.Call)} | {
        e.attr("op") for e in _exprs(fn) if isinstance(e, ir.OpCall) and e.op in ("tile_map", "tile_reduce")}


def needs_lanes(fn: ir.Function, funcs: dict, tiled: bool) -> bool:
    """True when the body must run as block_dim cooperating lanes."""
    for e in _exprs(fn):
        if isinstance(e, ir.OpCall) and (e.op in LANE_OPS or (tiled and e.op in PER_LANE_ATOMICS)):
            return True
    return any(name in funcs and needs_lanes(funcs[name], funcs, tiled) for name in calls(fn))


def is_tiled(fn: ir.Function, funcs: dict) -> bool:
    if fn.tiled:
        return True
    return any(name in funcs and is_tiled(funcs[name], funcs) for name in calls(fn))


def tid_count(fn: ir.Function) -> int:
    counts = [e.attr("count") for e in _exprs(fn) if isinstance(e, ir.OpCall) and e.op == "tid"]
    return max(counts, default=0)


def tile_bytes(fn: ir.Function, funcs: dict) -> int:
    """Bytes of tile locals in fn and (conservatively) everything it calls."""
    seen = set()
    total = 0
    for s in ir.walk_stmts(fn.body):
        targets = (s.target,) if isinstance(s, ir.Assign) else getattr(s, "targets", ())
        for sym in targets:
            if sym not in seen and isinstance(sym.type, TileT):
                seen.add(sym)
                total += sym.type.nbytes
    return total + sum(tile_bytes(funcs[n], funcs) for n in calls(fn) if n in funcs)


def shared_bytes(fn: ir.Function) -> int:
    return sum(s.type.nbytes for s, where in fn.storage if where == "shared")
