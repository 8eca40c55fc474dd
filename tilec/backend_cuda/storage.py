"""GPU model: which tiles live in registers, spread over the block's threads (runtime
registers.h), and which in shared memory.

A tile can live in registers when every statement touching it needs only the calling thread's
own elements: elementwise maps, loads, stores, atomic adds, fills, casts and reshapes, the
result of a matmul, the input of a whole-tile reduction. Anything that reads other threads'
elements (matmul operands, transposes, broadcasts, axis reductions, indexing, per-lane writes,
the tape) keeps it in shared memory, as does an explicit `storage="shared"`.

The block's shared memory holds every other tile of the body at a 16-byte aligned offset, in
declaration order, then the scratch where register-tile reductions combine their partials
(`shared_layout`): the emitter lays it out so, and the budget (TC0109) counts it so.

Past a shared-memory budget, tiles move to global scratch, largest first (ties: the later declared
first), until what stays fits: each block then has a slice of a global buffer the launch allocates
(runtime global_scratch.h), holding the moved tiles at 16-byte aligned offsets in declaration order.
The reduction scratch always stays in shared memory.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from .. import ir
from ..codegen.cxx import local_syms
from ..passes.normalize import is_fusible
from ..ir.types import MatT, StackT, TileT, Type, VecT

# The GPU model treats these as copies (tiles are the block's, not a lane's).
IDENTITY_GPU = {"lane_sum", "leader_only"}
# Results a register tile can hold, computed from the thread's own elements.
REGISTER_RESULTS = {"tile_load", "tile_zeros", "tile_ones", "tile_full", "tile_empty", "tile_matmul",
                    "tile_astype", "tile_reshape", "tile_squeeze"}
# Whole-tile reductions whose input may be a register tile (the result, one element, is shared).
REGISTER_FOLDS = {"tile_sum", "tile_max", "tile_min"}
# Tile side effects whose tile operand (position 1) may be a register tile.
REGISTER_EFFECTS = {"tile_store", "tile_atomic_add"}


def register_tiles(fn: ir.Function) -> frozenset[ir.Sym]:
    """The tile symbols of fn's body that live in registers."""
    candidates: set[ir.Sym] = set()
    shared: set[ir.Sym] = set()
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT):
            candidates.add(s.target)
            _classify_assign(s.target, s.value, shared)
        elif isinstance(s, ir.ExprStmt) and _register_effect(s.expr):
            for i, a in enumerate(s.expr.args):
                if i != 1:
                    _all_shared(a, shared)
        else:
            for e in ir.stmt_exprs(s):
                _all_shared(e, shared)
            shared.update(getattr(s, "targets", ()))
    return frozenset(candidates - shared)


def is_register_fold(value: ir.Expr) -> TypeGuard[ir.OpCall]:
    return isinstance(value, ir.OpCall) and value.op in REGISTER_FOLDS and value.attr("axis") is None


def _register_effect(e: ir.Expr) -> TypeGuard[ir.OpCall]:
    return (isinstance(e, ir.OpCall) and e.op in REGISTER_EFFECTS and len(e.args) > 1
            and isinstance(e.args[1], ir.Var))


def without_identities(value: ir.Expr) -> ir.Expr:
    """The tile value under any lane_sum/leader_only, which the GPU model treats as copies."""
    while isinstance(value, ir.OpCall) and value.op in IDENTITY_GPU and isinstance(value.args[0].type, TileT):
        value = value.args[0]
    return value


def _classify_assign(target: ir.Sym, value: ir.Expr, shared: set[ir.Sym]) -> None:
    value = without_identities(value)
    if isinstance(value, ir.Var):
        return
    if is_fusible(value):
        _fused_operands(value, shared)
        return
    if isinstance(value, ir.OpCall) and value.op in REGISTER_RESULTS and value.attr("storage") != "shared":
        if value.op == "tile_matmul":
            _all_shared(value.args[0], shared)
            _all_shared(value.args[1], shared)
            accumulator = value.args[2] if len(value.args) > 2 else None
            if accumulator is not None and not (isinstance(accumulator, ir.Var) and accumulator.sym == target):
                shared.add(target)
                _all_shared(accumulator, shared)
            return
        for i, a in enumerate(value.args):
            if not (i == 0 and isinstance(a, ir.Var)):
                _all_shared(a, shared)
        return
    shared.add(target)
    if is_register_fold(value) and isinstance(value.args[0], ir.Var):
        return
    _all_shared(value, shared)


def _fused_operands(e: ir.Expr, shared: set[ir.Sym]) -> None:
    """Tiles a fused elementwise loop reads at the loop's own element may be registers; tiles read
    through a broadcast, and tiles inside scalar operands, may not."""
    if isinstance(e, ir.Var):
        return
    if isinstance(e, ir.OpCall) and is_fusible(e):
        if e.op == "tile_broadcast":
            _all_shared(e, shared)
            return
        for a in e.args:
            _fused_operands(a, shared)
        return
    _all_shared(e, shared)


def _all_shared(e: ir.Expr, shared: set[ir.Sym]) -> None:
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Var) and isinstance(x.type, TileT):
            shared.add(x.sym)


@dataclass(frozen=True)
class SharedLayout:
    """Where a body's shared tiles live in its block's dynamic shared memory."""

    tiles: tuple[tuple[ir.Sym, int], ...]  # ((Sym, byte offset), ...) in declaration order
    scratch_offset: int | None  # where register-tile reductions combine partials, if any do
    total: int  # bytes of shared memory the block needs
    global_tiles: tuple[tuple[ir.Sym, int], ...] = ()  # ((Sym, byte offset in the block's global scratch slice), ...), past the budget
    global_total: int = 0  # bytes of the block's global scratch slice


REDUCTION_SCRATCH_BYTES = 8  # per thread


def _nbytes(sym: ir.Sym) -> int:
    """The bytes of a tile or block stack kept in block memory."""
    assert isinstance(sym.type, (TileT, StackT)), sym
    return sym.type.nbytes


def shared_layout(fn: ir.Function, registers: frozenset[ir.Sym] | None = None, budget: int | None = None) -> SharedLayout:
    """fn's block memory: every tile not in registers in shared memory, or, with a budget (bytes),
    as many as fit, the rest in global scratch (largest first, see the module docstring)."""
    registers = register_tiles(fn) if registers is None else registers
    placed = [sym for sym in local_syms(fn) if isinstance(sym.type, (TileT, StackT)) and sym not in registers]
    folded = [s.value.args[0].type for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign)
              and is_register_fold(s.value) and isinstance(s.value.args[0], ir.Var) and s.value.args[0].sym in registers]
    # one partial per thread, 8 bytes per component (a vec3 tile's partial is a vec3)
    partials = 0
    if folded:
        assert fn.block_dim is not None, fn.name  # the checker sets every function's block_dim
        partials = max(_partial_bytes(t) for t in folded) * fn.block_dim
    moved: set[ir.Sym] = set()
    if budget is not None:
        need = sum(_aligned(_nbytes(sym)) for sym in placed) + partials
        order = sorted(range(len(placed)), key=lambda i: (-_nbytes(placed[i]), -i))
        for i in order:
            if need <= budget:
                break
            moved.add(placed[i])
            need -= _aligned(_nbytes(placed[i]))
    tiles, offset = _packed([sym for sym in placed if sym not in moved])
    scratch = offset if folded else None
    global_tiles, global_total = _packed([sym for sym in placed if sym in moved])
    return SharedLayout(tiles, scratch, offset + partials, global_tiles, global_total)


def placed_type(sym: ir.Sym) -> TileT | StackT:
    """The type of a symbol shared_layout places: a tile or a block stack."""
    assert isinstance(sym.type, (TileT, StackT)), sym
    return sym.type


def _partial_bytes(t: Type) -> int:
    """One thread's partial of a fold of a register tile of type t: 8 bytes per component."""
    assert isinstance(t, TileT), t  # register tiles are tiles
    return REDUCTION_SCRATCH_BYTES * (t.dtype.length if isinstance(t.dtype, (VecT, MatT)) else 1)


def _packed(syms: list[ir.Sym]) -> tuple[tuple[tuple[ir.Sym, int], ...], int]:
    """((sym, offset), ...) at 16-byte aligned offsets in order, and the bytes they take."""
    out: list[tuple[ir.Sym, int]] = []
    offset = 0
    for sym in syms:  # a block stack: elements and count
        out.append((sym, offset))
        offset = _aligned(offset + placed_type(sym).nbytes)
    return tuple(out), offset


def _aligned(offset: int) -> int:
    return -(-offset // 16) * 16
