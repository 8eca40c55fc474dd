"""The storage Warp 1.19 would print for a tile (`print(t)`: `... = tile(shape=(4,3), storage=shared)`).

Warp's label is its own storage of the tile, not tilec's (which picks registers or shared memory
for its own reasons): `storage="shared"` where the program asks; the results of tile_view,
tile_squeeze, tile_reshape, tile_matmul and the linear-algebra ops, which Warp makes shared; a
broadcast, copy or cast keeps its operand's; anything else is a register tile.
"""
from __future__ import annotations

from .. import ir

# Ops whose result Warp 1.19 makes a shared tile (their value functions in warp/_src/builtins.py).
WARP_SHARED_RESULTS = {"tile_view", "tile_squeeze", "tile_reshape", "tile_diag_add", "tile_matmul", "tile_cholesky",
                       "tile_cholesky_solve", "tile_lower_solve", "tile_upper_solve"}
# Ops whose result keeps the storage of their first operand.
KEEPS_STORAGE = {"tile_broadcast", "tile_astype"}


def warp_storage(fn: ir.Function, value: ir.Expr) -> str:
    """'shared' or 'register': how Warp would label `value`, a tile operand of print in fn."""
    defs: dict[ir.Sym, ir.Expr] = {}
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.Assign):
            defs.setdefault(s.target, s.value)  # the first definition: a loop's later ones keep its storage
    seen: set[ir.Sym] = set()
    while True:
        if isinstance(value, ir.Var):
            if fn.storage_of(value.sym) == "shared":
                return "shared"
            if value.sym in seen or value.sym not in defs:
                return "register"
            seen.add(value.sym)
            value = defs[value.sym]
        elif isinstance(value, ir.OpCall):
            if value.attr("storage") == "shared" or value.op in WARP_SHARED_RESULTS:
                return "shared"
            if value.op in KEEPS_STORAGE and value.args:
                value = value.args[0]
                continue
            return "register"
        else:
            return "register"
