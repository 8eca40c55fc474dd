"""Tiles of zeros a CPU kernel stores: the array's elements zeroed in place.

Every adjoint of a `tile_store` reads the stored elements' adjoint and zeroes it (Warp's rule): `z =
tile_zeros(...)` then `tile_store(adj, z, offsets)`, a tile filled with zeros and then copied into
the array (in a softmax or layernorm adjoint, a tenth of each row's time went to the two passes and
the store's general path). `zero_stores` finds such pairs: z a tile of numbers assigned once, from
tile_zeros, and read once, by a tile_store a few statements on. The emitter then declares no z and
emits `tl::tile_store_zeros<Tile>(ctx, adj, check, offsets)` (memory.h), which writes zeros where
tile_store would have written z's elements, with the same bounds and partial-block rules.
"""
from __future__ import annotations

from .. import ir
from ..ir.types import Scalar, TileT
from .operand_views import read_once_by


def zero_stores(fn: ir.Function) -> dict[int, ir.Assign]:
    """{id of a tile_store statement: the assignment of the zeros it stores}."""
    found: dict[int, ir.Assign] = {}
    for body, _, zeros, j in read_once_by(fn, _zeros, _REACH):
        store = body[j]
        if not (isinstance(store, ir.ExprStmt) and isinstance(store.expr, ir.OpCall) and store.expr.op == "tile_store"):
            continue
        tile = store.expr.args[1]
        if isinstance(tile, ir.Var) and tile.sym == zeros.target:
            found[id(store)] = zeros
    return found


# Statements searched for the store of the zeros (in an adjoint it is the next one).
_REACH = 4


def _zeros(s: ir.Assign) -> bool:
    return isinstance(s.value, ir.OpCall) and s.value.op == "tile_zeros" and _number_tile(s.target.type)


def _number_tile(t: object) -> bool:
    """A tile of a computed scalar type (not a storage-only half): its zero is T(0)."""
    return isinstance(t, TileT) and t.is_concrete and isinstance(t.dtype, Scalar) and not t.dtype.storage_only
