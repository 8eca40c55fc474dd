"""tile_max / tile_min gradients a CPU adjoint adds into another tile: added in place.

The adjoint of `m = tile_max(a)` is `t = tile_extreme_grad(a, g)` (g at each group's first
maximum, zero elsewhere), and a's adjoint gathers it with the others: `s = u + t`. Written as it
stands, the emitter zeroes t, puts g into it, then runs a loop adding u and t (a softmax adjoint's
rows spent a tenth of their time there). `extreme_adds` finds such pairs: t a float or double tile
assigned once and read once, by an `add` of t and another operand a few statements on, into a tile
of t's type that is neither a nor g, with nothing in between writing a or g (the gradient is taken
where the add stands). The emitter then declares no t and emits `s = u` and
`tl::tile_extreme_grad_add(ctx, s, a, g, axis, is_max)` (grads.h): g added at each group's first
extreme. The sums round as before; an element away from the extremes keeps u's value (u + 0
turned a -0.0 into +0.0).
"""
from __future__ import annotations

from collections.abc import Collection

from .. import ir
from ..ir.types import FLOAT32, FLOAT64, TileT
from ..passes.fuse_tiles import writes_of
from .operand_views import read_once_by


def extreme_adds(fn: ir.Function, written_elsewhere: Collection[ir.Sym] = ()) -> dict[int, tuple[ir.Assign, ir.Expr]]:
    """{id of the add's assignment: (the gradient's assignment it absorbs, the add's other operand)};
    written_elsewhere: tiles whose element loop writes another place (row_views.py), never a sum."""
    found: dict[int, tuple[ir.Assign, ir.Expr]] = {}
    for body, i, first, j in read_once_by(fn, _gradient, _REACH):
        t, second = first.target, body[j]
        if not isinstance(second, ir.Assign) or second.target.type != t.type or second.target in written_elsewhere:
            continue
        other = _other_operand(second.value, t)
        gradient_reads = ir.read_syms(first.value)
        if other is None or second.target in gradient_reads:
            continue
        if writes_of(list(body[i + 1:j])) & gradient_reads:  # the gradient is taken at the add
            continue
        found[id(second)] = (first, other)
    return found


# Statements searched for the add of a gradient (in a softmax adjoint it is the next one).
_REACH = 4


def _gradient(s: ir.Assign) -> bool:
    return isinstance(s.value, ir.OpCall) and s.value.op == "tile_extreme_grad" and _float_tile(s.target.type)


def _other_operand(value: ir.Expr, t: ir.Sym) -> ir.Expr | None:
    """u where value is `add(u, t)` or `add(t, u)` and u does not read t, else None."""
    if not (isinstance(value, ir.OpCall) and value.op == "add" and len(value.args) == 2):
        return None
    left, right = value.args
    for mine, other in ((right, left), (left, right)):
        if isinstance(mine, ir.Var) and mine.sym == t and t not in ir.read_syms(other):
            return other
    return None


def _float_tile(t: object) -> bool:
    return isinstance(t, TileT) and t.is_concrete and t.dtype in (FLOAT32, FLOAT64)
