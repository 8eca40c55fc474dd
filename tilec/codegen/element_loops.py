"""Element-wise tile loops split into rows where a broadcast row or column is read.

A fused element-wise statement is one loop over the destination's elements e, and an operand
broadcast from a smaller tile reads its element `tl::broadcast_index(e)`: a division and a
remainder per element, behind which the C++ compiler does not vectorise the loop (the MLP's bias
and ReLU loops). Two broadcasts are common: a row added to every row (a bias) and a value per row
(a row's statistic). `split_extent` says when a loop is better written as rows r and columns c of
the destination's last extent L (e = r * L + c), and `broadcast_kind` which index such a
broadcast's source reads: c for a row (the source's last extent is the destination's, every other
extent 1), r for a column (the source's last extent 1, every other the destination's, right-aligned
as numpy aligns them). Other broadcasts keep broadcast_index(e).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence

from .. import ir, naming
from ..ir.types import FLOAT32, ArrayT, Scalar, TileT
from ..ops import OPS
from ..passes.normalize import is_fusible

# float32 functions with an in-range path in scalar.h: the function without its edge handling, the
# same bits inside the range, and a key past its limit outside it (reruns_in_range)
IN_RANGE = {"exp": "exp_in_range", "log": "log_in_range", "tanh": "tanh_in_range"}
ROW = "row"  # the source repeats along every axis but the last: it reads column c
COLUMN = "column"  # the source repeats along the last axis: it reads row r


def broadcast_kind(src: TileT, dst: TileT) -> str | None:
    """ROW, COLUMN or None for a broadcast of src to dst (both of concrete shape)."""
    if dst.ndim < 2 or src.ndim > dst.ndim or src.size == 1:
        return None
    shape = (1,) * (dst.ndim - src.ndim) + tuple(src.shape)  # right-aligned
    last = dst.shape[-1]
    if shape[-1] == last and all(d == 1 for d in shape[:-1]):
        return ROW
    if shape[-1] == 1 and tuple(shape[:-1]) == tuple(dst.shape[:-1]) and last != 1:
        return COLUMN
    return None


def split_extent(value: ir.Expr, tile: TileT) -> int | None:
    """The last extent L of `tile` when the fused element-wise `value` reads a row or column
    broadcast to `tile`'s shape (its loop then runs over rows and columns), else None."""
    if tile.ndim < 2 or not tile.is_concrete:
        return None
    for e in ir.walk_expr(value):
        if isinstance(e, ir.OpCall) and e.op == "tile_broadcast" and _broadcast_to(e, tile) is not None:
            return int(tile.shape[-1])
    return None


def _broadcast_to(e: ir.OpCall, tile: TileT) -> str | None:
    src, dst = e.args[0].type, e.type
    if not (isinstance(src, TileT) and isinstance(dst, TileT) and src.is_concrete and dst.is_concrete):
        return None
    if tuple(dst.shape) != tuple(tile.shape):
        return None
    return broadcast_kind(src, dst)


def element_reads(e: ir.Expr) -> tuple[dict[ir.Sym, int], set[ir.Sym]]:
    """The tiles the element loop of a fused element-wise `e` reads: ({read at the loop's own
    element: times}, {read at other elements: through a broadcast or an op that is not fused})."""
    direct: dict[ir.Sym, int] = {}
    elsewhere: set[ir.Sym] = set()

    def visit(x: ir.Expr, under: bool) -> None:
        if isinstance(x, ir.Var):
            if isinstance(x.sym.type, TileT):
                if under:
                    elsewhere.add(x.sym)
                else:
                    direct[x.sym] = direct.get(x.sym, 0) + 1
            return
        if isinstance(x, (ir.OpCall, ir.Call)):  # only a fused op reads its operands at its own element
            inner = under or not is_fusible(x) or x.op == "tile_broadcast"
            for a in x.args:
                visit(a, inner)

    visit(e, False)
    return direct, elsewhere


def builtin_only(e: ir.Expr) -> bool:
    """Nothing but element-wise builtins and broadcasts in the fused element-wise `e`: no user func
    (it may print, or take the locks of an atomic add), nothing that reads another element of a
    tile, or memory."""
    return all(_builtin(x) for x in ir.walk_expr(e))


def _builtin(e: ir.Expr) -> bool:
    if isinstance(e, ir.Call):
        return False
    if not isinstance(e, ir.OpCall):
        return True
    if e.op == "tile_map":
        name = e.attr("op")
        return isinstance(name, str) and name in OPS and OPS[name].elementwise
    return e.op == "tile_broadcast" or (e.op in OPS and OPS[e.op].elementwise)


def reruns_in_range(assignments: Sequence[tuple[ir.Sym, ir.Expr]], in_range_funcs: Collection[str] = ()) -> bool:
    """Whether the element loop of `assignments` (target, value; in the loop body's order) may take
    the in-range paths of float32 exp, log and tanh (IN_RANGE) and run a second time with the full-range
    functions when an argument fell outside: a value takes one of them, all call builtins only, and none
    reads memory or what the loop writes at or after its own statement (the C++ variable of its
    own target or a later one: a second run would read the first run's values; a tile written
    before it in the body is written again before it is read). A tile_map of a func in
    `in_range_funcs` (in_range_func) counts as a builtin taking one. A second run then computes what
    the first one did, provided no row the loop reads in place shares memory with the row it writes
    (rows_read_by: the emitter tests that at run time)."""
    takes_one = False
    names = [naming.cxx_var(target) for target, _ in assignments]
    for at, (_, value) in enumerate(assignments):
        written_from_here = set(names[at:])
        for x in ir.walk_expr(value):
            if isinstance(x, ir.Var):
                if isinstance(x.sym.type, ArrayT) or naming.cxx_var(x.sym) in written_from_here:
                    return False
            elif isinstance(x, ir.OpCall) and x.op == "tile_map" and x.attr("op") in in_range_funcs:
                takes_one = True
            elif not _builtin(x):
                return False
            elif isinstance(x, ir.OpCall) and isinstance(x.type, TileT) and x.type.dtype == FLOAT32:
                takes_one = takes_one or x.op in IN_RANGE or (x.op == "tile_map" and x.attr("op") in IN_RANGE)
    return takes_one


def rows_read_by(assignments: Sequence[tuple[ir.Sym, ir.Expr]], rows: Collection[ir.Sym]) -> list[ir.Sym]:
    """The tiles among `rows` (read in place from an array row: row_views.py) that the values read,
    in first-read order."""
    found: list[ir.Sym] = []
    for _, value in assignments:
        for x in ir.walk_expr(value):
            if isinstance(x, ir.Var) and x.sym in rows and x.sym not in found:
                found.append(x.sym)
    return found


def in_range_func(fn: ir.Function) -> bool:
    """Whether a func gets an in-range variant (its float32 exp, log and tanh on their in-range paths;
    backend_cpu/emit.py) that reruns_in_range's loops may call: it takes one of them, its parameters
    and result are scalars passed by value, and its body is assignments, ifs and returns of builtins
    only: no call, no memory, no draw, nothing that running twice would repeat (a rerun loop calls
    it again)."""
    if fn.byref or not isinstance(fn.ret, Scalar) or not all(isinstance(p.type, Scalar) for p in fn.params):
        return False
    takes_one = False
    for s in ir.walk_stmts(fn.body):
        if not isinstance(s, (ir.If, ir.Assign, ir.Return)):
            return False
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if (isinstance(x, ir.Var) and not isinstance(x.sym.type, Scalar)) or not _builtin(x):
                    return False
                if isinstance(x, ir.OpCall) and x.op in IN_RANGE and x.type == FLOAT32:
                    takes_one = True
    return takes_one
