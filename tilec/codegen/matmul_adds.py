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
from .operand_views import bodies, next_reader, read_write_counts


def matmul_adds(fn: ir.Function, summed: Collection[ir.Sym]) -> dict[int, ir.Assign]:
    """{id of a tile_atomic_add statement: the matmul assignment before it it absorbs}."""
    if not summed:
        return {}
    reads, writes = read_write_counts(fn)
    found: dict[int, ir.Assign] = {}
    for body in bodies(fn.body):
        for i, first in enumerate(body):
            if not (isinstance(first, ir.Assign) and _fresh_product(first.value)):
                continue
            z = first.target
            if not (reads.get(z, 0) == 1 and writes.get(z, 0) == 1 and _float_tile(z.type) and z.type == first.value.type):
                continue
            j = next_reader(body, i, z, _REACH)
            second = body[j] if j is not None else None
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


def _fresh_product(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_matmul" and len(e.args) == 2 and e.attr("alpha") in (None, 1.0)


def _float_tile(t: object) -> bool:
    return isinstance(t, TileT) and t.is_concrete and t.ndim == 2 and t.dtype in (FLOAT32, FLOAT64)
