"""Facts about kernels that the backends and the loader need."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from .. import ir
from ..ir.types import StackT, TileT

# Ops whose result depends on, or whose effect happens once per, lane.
LANE_OPS = {"tile", "untile", "tile_additem", "tile_subitem", "tile_scatter_add", "tile_scatter_masked",
            "tile_from_thread", "tile_bit_and_inplace", "tile_bit_or_inplace", "tile_bit_xor_inplace",
            "tile_stack_push", "tile_stack_pop", "tile_stack_push_fields", "tile_stack_get"}
PER_LANE_ATOMICS = {"array_atomic_add", "array_atomic_sub", "atomic_add", "atomic_min", "atomic_max",
                    "array_atomic_and", "array_atomic_or", "array_atomic_xor", "atomic_cas", "atomic_exch"}


def all_exprs(fn: ir.Function) -> Iterator[ir.Expr]:
    """Every expression node of fn's statements, nested blocks included."""
    for s in ir.walk_stmts(fn.body):
        for e in ir.stmt_exprs(s):
            yield from ir.walk_expr(e)


def _ops_and_calls(fn: ir.Function) -> tuple[frozenset[str], frozenset[str], int]:
    """(the ops fn's body calls, the funcs it calls or maps, the most indices a `wp.tid()` unpacks),
    in one walk: kept while fn lives, as each fact below, for every backend and the manifest, asks
    again."""
    hit = _SUMMARIES.get(id(fn))
    if hit is not None:
        return hit
    ops: set[str] = set()
    called: set[str] = set()
    tids = 0
    stack: list[ir.Expr] = []  # every node of every statement's expressions: an explicit stack, not a
    # generator per node (the facts are sets: the order of the walk does not matter)
    pop, extend, add_op = stack.pop, stack.extend, ops.add
    for s in ir.walk_stmts(fn.body):
        extend(ir.stmt_exprs(s))
        while stack:
            e = pop()
            kind = type(e)
            if kind is ir.OpCall:
                op = e.op  # type: ignore[union-attr]  # the kind was just tested
                add_op(op)
                if op in ("tile_map", "tile_reduce"):
                    called.add(e.attr("op"))  # type: ignore[union-attr]
                elif op == "tid":
                    tids = max(tids, e.attr("count"))  # type: ignore[union-attr]
                extend(e.args)  # type: ignore[union-attr]
            elif kind is ir.Call:
                called.add(e.func)  # type: ignore[union-attr]
                extend(e.args)  # type: ignore[union-attr]
    return ir.keep_while_alive(_SUMMARIES, fn, id(fn), (frozenset(ops), frozenset(called), tids))


_SUMMARIES: dict[int, tuple[frozenset[str], frozenset[str], int]] = {}  # id(Function) -> _ops_and_calls(Function); dropped with the Function


def ops_called(fn: ir.Function) -> frozenset[str]:
    """The ops fn's body calls (not those of funcs it calls)."""
    return _ops_and_calls(fn)[0]


def calls(fn: ir.Function) -> set[str]:
    return set(_ops_and_calls(fn)[1])


def with_callees(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> Iterator[ir.Function]:
    """fn, then each func of the module it calls or maps, directly or through others, once."""
    seen: set[str] = set()
    pending = [fn]
    while pending:
        f = pending.pop()
        yield f
        for name in _ops_and_calls(f)[1]:
            if name in funcs and name not in seen:
                seen.add(name)
                pending.append(funcs[name])


def needs_lanes(fn: ir.Function, funcs: Mapping[str, ir.Function], tiled: bool) -> bool:
    """True when the body must run as block_dim cooperating lanes."""
    for f in with_callees(fn, funcs):
        ops = _ops_and_calls(f)[0]
        if not ops.isdisjoint(LANE_OPS) or (tiled and not ops.isdisjoint(PER_LANE_ATOMICS)):
            return True
    return False


# Tile ops whose active elements, in the partial last block of a SIMT launch, depend only on
# active elements under Warp's rule (element e belongs to lane e % block_dim; the missing lanes'
# elements are inactive): creation, loads, maps and elementwise arithmetic, conversions that keep
# the row-major order, the lane <-> element transfers, and the stores, reductions and scans the CPU
# runtime masks (runtime_headers/tilec/lanes.h: Ctx::live). Every other tile op reads elements at
# other positions, which Warp leaves unset there: see partial_block_limit. `t[i] = x` (tile_setitem,
# additem, subitem) is not here: a thread may write an inactive element, and the adjoint would read
# that element's adjoint, which an unmasked broadcast (tile_sum's adjoint) fills.
PARTIAL_SAFE_TILE_OPS = {
    "tile", "untile", "tile_zeros", "tile_ones", "tile_full", "tile_arange", "tile_empty", "tile_load",
    "tile_store", "tile_atomic_add", "tile_map", "tile_astype", "tile_reshape", "tile_squeeze",
    "tile_add_inplace", "tile_sub_inplace", "tile_bit_and_inplace", "tile_bit_or_inplace",
    "tile_bit_xor_inplace", "tile_sum", "tile_max",
    "tile_min", "tile_reduce", "tile_argmax", "tile_argmin", "tile_scan_inclusive", "tile_scan_exclusive",
    "tile_scan_max_inclusive", "tile_scan_min_inclusive", "tile_stack", "tile_stack_push", "tile_stack_pop",
    "tile_stack_count", "tile_stack_clear",
}


def partial_block_limit(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> int:
    """The most elements of a tile that an op outside PARTIAL_SAFE_TILE_OPS reads or makes (0:
    none). A SIMT launch whose last block has at least that many lanes has every such tile active
    (element e < lanes belongs to lane e), so its result is defined; one with fewer is refused."""
    most = 0
    for e in (e for f in with_callees(fn, funcs) for e in all_exprs(f)):
        if not isinstance(e, ir.OpCall):
            continue
        if e.op in PARTIAL_SAFE_TILE_OPS:
            continue
        tiles = [t for t in (getattr(a, "type", None) for a in e.args) if isinstance(t, TileT)]
        result_shape = e.type.shape if isinstance(e.type, TileT) else None
        # an elementwise op on tiles, unless it broadcasts one (reading it at other positions)
        if not e.op.startswith("tile") and e.op not in ("extreme_take", "lane_sum", "leader_only") and not any(
                t.size > 1 and t.shape != result_shape for t in tiles):
            continue
        for t in (e.type, *tiles):
            if isinstance(t, TileT):
                most = max(most, t.size)
    return most


# The float functions runtime_headers/tilec/scalar.h writes branch-free for the vectoriser: a tile
# loop applying one is a long chain of dependent vector operations per element, which runs ~1.5x
# faster 16 floats wide (AVX-512) than 8.
VECTOR_MATH = frozenset({"exp", "log", "tanh"})


def calls_vector_math(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> bool:
    """Whether fn, or a func it calls or maps, applies one of VECTOR_MATH."""
    for f in with_callees(fn, funcs):
        ops, mapped_or_called, _ = _ops_and_calls(f)  # wp.exp is an op, or a tile_map's function
        if not (VECTOR_MATH.isdisjoint(ops) and VECTOR_MATH.isdisjoint(mapped_or_called)):
            return True
    return False


def reads_live_ids(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> bool:
    """Whether fn, or a func it calls, checks an id read from a value against the launch's live objects
    (ops/spatial.py live_id): the loader sets the table first (runtime live_ids.h)."""
    return any("live_id" in ops_called(f) for f in with_callees(fn, funcs))


def is_tiled(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> bool:
    return any(f.tiled for f in with_callees(fn, funcs))


def tid_count(fn: ir.Function) -> int:
    return _ops_and_calls(fn)[2]


def tile_bytes(fn: ir.Function, funcs: Mapping[str, ir.Function]) -> int:
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
    stacks = {s for s in ir.defined_syms(fn) if isinstance(s.type, StackT) and s not in fn.params}  # shared memory too
    return sum(_block_nbytes(s) for s, where in fn.storage if where == "shared") + sum(_block_nbytes(s) for s in stacks)


def _block_nbytes(sym: ir.Sym) -> int:
    """The bytes of a tile (fn.storage names tile symbols) or a block stack."""
    assert isinstance(sym.type, (TileT, StackT)), sym
    return sym.type.nbytes


# How each array op touches its first operand (the array); `array_shape` and `array_valid` do not touch data.
ARRAY_ACCESS = {
    "array_load": "read", "tile_load": "read", "tile_load_indexed": "read", "lower_bound": "read",
    "array_store": "write", "array_store_part": "write", "tile_store": "write", "tile_store_indexed": "write",
    "array_atomic_add": "accumulate", "array_atomic_sub": "accumulate", "atomic_add": "accumulate",
    "tile_atomic_add": "accumulate", "tile_atomic_add_indexed": "accumulate",
    "atomic_min": "write", "atomic_max": "write", "atomic_cas": "write", "atomic_exch": "write",
    "array_shape": None, "array_valid": None,
}


def array_access(fn: ir.Function) -> dict[str, list[str]]:
    """Array parameter name -> sorted kinds of access ("read", "write", "accumulate"). An array
    reaching anything else (a call, an op not listed) counts as read and written."""
    from ..ir.types import ArrayT

    params = {p for p in fn.params if isinstance(p.type, ArrayT)}
    out: dict[str, set[str]] = {p.name: set() for p in params}

    def visit(e: ir.Expr, how: str = "read") -> None:
        if isinstance(e, ir.Var) and e.sym in params:
            out[e.sym.name].update(("read", "write") if how == "unknown" else (how,))
        elif isinstance(e, ir.OpCall):
            first = e.args[0] if e.args else None
            if isinstance(first, ir.Var) and first.sym in params:
                kind = ARRAY_ACCESS.get(e.op, "unknown")
                if kind is not None:
                    out[first.sym.name].update(("read", "write") if kind == "unknown" else (kind,))
                rest = e.args[1:]
            else:
                rest = e.args
            for a in rest:
                visit(a, "unknown")
        elif isinstance(e, ir.Call):
            for a in e.args:
                visit(a, "unknown")

    for s in ir.walk_stmts(fn.body):
        for e in ir.stmt_exprs(s):
            visit(e, "unknown")
    return {name: sorted(kinds) for name, kinds in sorted(out.items())}
