"""Products a CPU adjoint adds into per-thread sums: multiplied straight into the sums.

A matmul adjoint adds each product into an array, `z = tile_matmul(a, b)` then
`tile_atomic_add(adj, z, row, col)`: the product is written to z, then read again and added into
the array's tile (a read-modify-write of memory the product could have accumulated into).
`matmul_adds` finds such pairs where the add goes into an array the entry point sums per thread
(tile_sums.py proved nothing else in the kernel touches it): z a float/double tile assigned once,
from a fresh product (alpha 1, no accumulator), read once, by an add a few statements on, with
nothing in between writing what the product reads (it is computed where the add stands).
The emitter then declares no z and emits `tl::tile_matmul_add(ctx, adj, a, b, row, col)`
(matmul_adds.h), which multiplies into the thread's sums of that tile (or, on the launch's only
worker, into the array's tile when its rows are contiguous), C += a b, else does as before.
"""
from __future__ import annotations

from collections.abc import Collection

from .. import ir
from ..ir.types import FLOAT32, FLOAT64, TileT
from ..passes.fuse_tiles import writes_of
from .operand_views import read_once_by


def matmul_adds(fn: ir.Function, summed: Collection[ir.Sym]) -> dict[int, ir.Assign]:
    """{id of a tile_atomic_add statement: the matmul assignment before it it absorbs}."""
    if not summed:
        return {}
    found: dict[int, ir.Assign] = {}
    for body, i, first, j in read_once_by(fn, _product, _REACH):
        z, second = first.target, body[j]
        if not (isinstance(second, ir.ExprStmt) and isinstance(second.expr, ir.OpCall)
                and second.expr.op == "tile_atomic_add"):
            continue
        target, tile = second.expr.args[0], second.expr.args[1]
        if not (isinstance(target, ir.Var) and target.sym in summed and isinstance(tile, ir.Var) and tile.sym == z):
            continue
        if writes_of(list(body[i + 1:j])) & ir.read_syms(first.value):  # the product is computed at the add
            continue
        found[id(second)] = first
    return found


# Statements searched for the add of a product: the GEMM adjoint's adj_A add comes after the
# adj_B product and add (a bound keeps the search linear).
_REACH = 4


def _product(s: ir.Assign) -> bool:
    return _fresh_product(s.value) and _float_tile(s.target.type) and s.target.type == s.value.type


def _fresh_product(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_matmul" and len(e.args) == 2 and e.attr("alpha") in (None, 1.0)


def _float_tile(t: object) -> bool:
    return isinstance(t, TileT) and t.is_concrete and t.ndim == 2 and t.dtype in (FLOAT32, FLOAT64)
