"""Array effects of a kernel, and whether its adjoint can be exact.

Expects the IR the adjoint is derived from (funcs inlined, jumps eliminated, normalized). Every
array access is classified as a read (loads), an overwrite (plain stores), an accumulation
(atomic add/sub whose old value is unused) or an extreme (atomic min/max). `check_adjoint(fn)`
returns nothing when the adjoint is exact under these rules and raises `NotDifferentiable` with a
TC05xx warning otherwise (docs/gradients.md states the rules):

- the adjoint of an overwrite consumes the overwritten element's adjoint and zeroes it (done by
  the store's adjoint rule), so stores, restores and accumulations in any order within a thread
  are exact;
- a value read from an array the kernel also writes is different in the two states an adjoint
  launch may see (before the forward, or after it): the adjoint may carry it only where its value
  is not needed (sums, copies, stores, scaling by a constant). Any other use — a product, a
  nonlinear function, a branch, an index — is refused (TC0502);
- such a read, and a write next to another write or accumulation of the same array, must touch
  exactly the elements this thread writes (the same index expressions, or the same tile offsets
  and shape), unless the two provably never meet; otherwise one thread may touch an element
  another thread writes (TC0503). Elements selected without the thread index are the same in
  every thread (two threads writing them race in the forward itself);
- the old value an atomic returns depends on the order threads ran, and the adjoint's replay
  cannot repeat the atomic: using it is refused (TC0504);
- atomic min/max into a float array: the gradient belongs to the thread whose value won. The
  loader gives the adjoint the array's values after the launch (it runs the forward on copies
  first), so each thread can tell whether it won; that needs every access to the array to be the
  same extreme (a read or another update would see or change a value that depends on the order the
  threads ran), and the array reached directly, not through a view (TC0505);
- a store whose elements do not depend on the thread (`out[0] = ...`, a tile stored at fixed
  offsets), reached by every thread, of a value that does: every thread writes the element and
  which value lands depends on the order they ran in (TC0506). A store guarded by a condition on
  the thread (`if i == 0:`), or of a value the same in every thread, is fine.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, NoReturn, cast

from .. import ir
from ..ops import OPS
from ..ir.types import ArrayT, MatT, Scalar, TileT, Type, VecT, component_dtype
from ..diagnostics import NotDifferentiable, Span

READS = {"array_load": None, "tile_load": None, "tile_load_indexed": None, "lower_bound": None}
OVERWRITES = {"array_store", "array_store_part", "tile_store", "tile_store_indexed"}
ACCUMULATES = {"array_atomic_add", "array_atomic_sub", "atomic_add", "tile_atomic_add", "tile_atomic_add_indexed"}
EXTREMES = {"atomic_min", "atomic_max"}
SWAPS = {"atomic_cas", "atomic_exch"}  # not differentiable (as in Warp): refused on float arrays (TC0507)
ATOMICS = ACCUMULATES | EXTREMES
RETURN_OLD = ATOMICS | SWAPS  # ops returning the element's old value, which depends on thread order

# Operand positions whose values an op's adjoint rule never reads (ops/adjoints.py): a value
# that differs between the two launch states may pass through them. "all" = every operand.
VALUE_FREE: dict[str, str | tuple[int, ...]] = {
    "add": "all", "sub": "all", "neg": "all", "cast": "all", "tile_astype": "all", "tile_broadcast": "all",
    "tile_reshape": "all", "tile_squeeze": "all", "tile_transpose": "all", "tile_sum": "all",
    "tile_scan_inclusive": "all", "tile_scan_exclusive": "all", "tile_diag_add": (0, 1),
    "tile_view": (0,), "tile_matmul": (2,), "tile_store": (1,), "tile_atomic_add": (1,),
    "tile_store_indexed": (2,), "tile_atomic_add_indexed": (2,), "array_store": (1,), "array_store_part": (1,),
    "array_atomic_add": (1,), "array_atomic_sub": (1,), "tile_setitem": (0, 1), "tile_additem": (0, 1),
    "tile_subitem": (0, 1), "tile_assign": (0, 1), "tile_extract": (0,), "tile": (0,), "untile": (0,),
    "tile_full": (0,), "select": (1, 2), "where": (1, 2), "tile_fft": "all", "tile_ifft": "all",
}


@dataclass(frozen=True)
class Access:
    array: ir.Sym  # the array parameter
    kind: str  # "read", "overwrite", "accumulate" or "extreme"
    op: str
    footprint: Key  # what identifies the elements touched: index expressions, tile offsets and shape
    span: Span


Key = tuple[Any, ...]  # a structural key: nested tuples of names, constants and symbols


def _key(e: ir.Expr) -> Key:
    """A span-free structural key of an expression (equal keys: the same value in one thread)."""
    if isinstance(e, ir.Const):
        return ("const", e.value, str(e.type))
    if isinstance(e, ir.Var):
        return ("var", e.sym)
    if isinstance(e, ir.OpCall):
        return ("op", e.op, e.attrs, tuple(_key(a) for a in e.args))
    return ("call", e.func, tuple(_key(a) for a in e.args))


span_free_key = _key  # the key autodiff's memo of reverse-sweep values finds equal expressions by


def _offsets(e: ir.OpCall) -> tuple[ir.Expr, ...]:
    n = e.attr("offset_count") or 0
    return tuple(e.args[len(e.args) - n:]) if n else ()


def _footprint(e: ir.OpCall) -> Key:
    if e.op in ("array_load", "array_store", "array_atomic_add", "array_atomic_sub"):
        first = 1 if e.op == "array_load" else 2
        return ("element",) + tuple(_key(a) for a in e.args[first:])
    if e.op == "lower_bound":  # reads any element of its range: no box, overlapping every write
        return ("search",) + tuple(_key(a) for a in e.args[1:])
    if e.op == "array_store_part":  # the element's indices (the component's follow them)
        return ("element",) + tuple(_key(a) for a in e.args[2:2 + cast(ArrayT, e.args[0].type).ndim])
    if e.op in ("atomic_add", "atomic_min", "atomic_max"):
        return ("element",) + tuple(_key(a) for a in e.args[1:-1])
    ndim = cast(ArrayT, e.args[0].type).ndim
    offsets = tuple(_key(a) for a in _offsets(e)) or (("const", 0, "int32"),) * ndim
    if e.op in ("tile_load", "tile_load_indexed"):
        shape = cast(TileT, e.type).shape
    else:
        shape = cast(TileT, e.args[2 if "indexed" in e.op else 1].type).shape
    indexed = ("indexed", _key(e.args[1]), e.attr("axis")) if "indexed" in e.op else ()
    return ("tile", shape, offsets) + indexed


def _box(footprint: Key) -> list[tuple[Any, Any] | None] | None:
    """The elements a footprint touches as per-dimension [lo, hi) ranges, None for a dimension whose
    index is not a constant (None for the whole: a footprint of another kind)."""
    if footprint[0] == "element":
        coords = footprint[1:]
        sizes = (1,) * len(coords)
    elif footprint[0] == "tile" and len(footprint) == 3:  # a tile, not indexed
        coords, sizes = footprint[2], footprint[1]
    else:
        return None
    return [(c[1], c[1] + n) if c[0] == "const" and isinstance(n, int) else None for c, n in zip(coords, sizes)]


def disjoint(f1: Key, f2: Key) -> bool:
    """True when two footprints provably touch no common element, in any thread: along some dimension
    both are constant ranges that do not overlap (`out[i, 0]` and `out[j, 1]`, whatever i and j), or
    both elements' indices are k * v + c of one integer v with offsets k does not divide the difference of
    (`out[2 * i]` and `out[2 * j + 1]`: no two values of v meet)."""
    b1, b2 = _box(f1), _box(f2)
    if b1 is None or b2 is None or len(b1) != len(b2):
        return False
    if any(r1 is not None and r2 is not None and (r1[1] <= r2[0] or r2[1] <= r1[0]) for r1, r2 in zip(b1, b2)):
        return True
    if f1[0] != "element" or f2[0] != "element":
        return False
    for k1, k2 in zip(f1[1:], f2[1:]):
        a1, a2 = _affine(k1), _affine(k2)
        if a1 is not None and a2 is not None and a1[0] == a2[0] and a1[0] is not None and a1[1] == a2[1] != 0 \
                and (a1[2] - a2[2]) % a1[1] != 0:
            return True
    return False


def _affine(key: Key, depth: int = 0) -> tuple[Key | None, int, int] | None:
    """An integer index key as (v, k, c) for k * v + c of one variable v (None and k = 0: a constant c),
    else None."""
    if depth > 8:
        return None
    if key[0] == "const":
        return (None, 0, key[1]) if isinstance(key[1], int) and not isinstance(key[1], bool) else None
    if key[0] == "var":
        return (key, 1, 0) if isinstance(key[1].type, Scalar) and key[1].type.kind in ("int", "uint") else None
    if key[0] != "op" or key[1] not in ("add", "sub", "mul") or len(key[3]) != 2:
        return None
    left, right = _affine(key[3][0], depth + 1), _affine(key[3][1], depth + 1)
    if left is None or right is None:
        return None
    if key[1] == "mul":
        if left[0] is not None and right[0] is not None:
            return None
        v, scale = (left, right[2]) if right[0] is None else (right, left[2])
        return (v[0], v[1] * scale, v[2] * scale)
    sign = 1 if key[1] == "add" else -1
    if left[0] is not None and right[0] is not None and left[0] != right[0]:
        return None
    return (left[0] if left[0] is not None else right[0], left[1] + sign * right[1], left[2] + sign * right[2])


# Values that differ between threads whatever their operands: thread indices and atomics' old values.
# A read differs only where its indices do (elements every thread reads are the same for all).
VARYING_OPS = {"tid", "lane"} | RETURN_OLD


def thread_varying(fn: ir.Function, between_blocks: bool = False) -> set[ir.Sym]:
    """_thread_varying's answer, kept while fn lives (the exactness check and the derivation ask
    of the same kernel); a fresh set each call."""
    key = (id(fn), between_blocks)
    hit = _VARYING.get(key)
    if hit is None:
        hit = ir.keep_while_alive(_VARYING, fn, key, frozenset(_thread_varying(fn, between_blocks)))
    return set(hit)


_VARYING: dict[tuple[int, bool], frozenset[ir.Sym]] = {}  # (id(Function), between_blocks) -> its answer


def _thread_varying(fn: ir.Function, between_blocks: bool) -> set[ir.Sym]:
    """Symbols whose value may differ between threads: derived from wp.tid(), the lane, an atomic's
    old value or a read at such indices (directly, or by being assigned under a condition that is).

    between_blocks: only what may differ between the blocks of a tile kernel, taking the last of
    several values unpacked from wp.tid() as the lane (as in launch_tiled) and the lane as the same
    everywhere (a tile built from every lane's values is one value per block)."""
    varying: set[ir.Sym] = set()
    sources = VARYING_OPS - {"lane"} if between_blocks else VARYING_OPS
    sites: dict[ir.Sym, int] = {}
    for s in ir.walk_stmts(fn.body):
        if isinstance(s, ir.Assign):
            sites[s.target] = sites.get(s.target, 0) + 1
    everywhere: dict[ir.Sym, int] = {}  # each symbol's reads in fn: counted at the first block under a varying condition

    def varies(e: ir.Expr) -> bool:
        stack = [e]  # walk_expr's walk, inline: asked of every expression, three rounds
        while stack:
            x = stack.pop()
            kind = type(x)  # exact classes: asked of every node
            if kind is ir.Var:
                if x.sym in varying:  # type: ignore[union-attr]  # the kind was just tested
                    return True
            elif kind is ir.OpCall:
                if x.op in sources:  # type: ignore[union-attr]
                    return True
                stack.extend(x.args)  # type: ignore[union-attr]
            elif kind is ir.Call:
                stack.extend(x.args)  # type: ignore[union-attr]
        return False

    def visit(body: tuple[ir.Stmt, ...], under: bool) -> None:
        local: dict[ir.Sym, int] = ir.use_counts(body) if under else {}
        if under and not everywhere:  # (straight-line kernels never count: a full walk saved)
            everywhere.update(ir.use_counts(fn.body))
        for s in body:
            if isinstance(s, ir.Assign):
                if s.target in varying:
                    continue  # known already (a later round): nothing to add
                if varies(s.value):
                    varying.add(s.target)
                elif under:
                    # assigned once, from the same value in every thread, and read only in this block:
                    # the same in every thread that reads it, though only some threads run the block
                    confined = sites.get(s.target) == 1 and local.get(s.target, 0) == everywhere.get(s.target, 0)
                    if not confined:
                        varying.add(s.target)
            elif isinstance(s, ir.Unpack) and between_blocks and not under and isinstance(s.value, ir.OpCall) \
                    and s.value.op == "tid" and len(s.targets) > 1:
                varying.update(s.targets[:-1])
            elif isinstance(s, ir.Unpack) and (under or varies(s.value)):
                varying.update(s.targets)
            elif isinstance(s, ir.For):
                inner = under or any(varies(b) for b in (s.start, s.stop, s.step))
                if inner:
                    varying.add(s.var)
                visit(s.body, inner)
            elif isinstance(s, (ir.If, ir.While)):
                inner = under or varies(s.cond)
                visit(s.body, inner)
                visit(getattr(s, "orelse", ()), inner)

    for _ in range(3):  # values carried around loops
        before = len(varying)
        visit(fn.body, False)
        if len(varying) == before:
            break  # a round that added nothing: the next would see the same set and add nothing either
    return varying


def _mentions(footprint: object, syms: set[ir.Sym]) -> bool:
    if isinstance(footprint, tuple):
        if len(footprint) == 2 and footprint[0] == "var":
            return footprint[1] in syms
        return any(_mentions(x, syms) for x in footprint)
    return False


def _kind(op: str) -> str | None:
    if op in READS:
        return "read"
    if op in OVERWRITES:
        return "overwrite"
    if op in ACCUMULATES:
        return "accumulate"
    if op in EXTREMES:
        return "extreme"
    return None


def accesses(fn: ir.Function) -> list[Access]:
    """Every array access of fn, in source order."""
    out: list[Access] = []
    for s in ir.walk_stmts(fn.body):
        for top in ir.stmt_exprs(s):
            for e in ir.walk_expr(top):
                if isinstance(e, ir.OpCall) and (kind := _kind(e.op)) and isinstance(e.args[0], ir.Var):
                    out.append(Access(e.args[0].sym, kind, e.op, _footprint(e), e.span or s.span))
                elif isinstance(e, ir.OpCall) and e.op == "native_call":
                    out += _snippet_accesses(e, e.span or s.span)
    return out


def _snippet_accesses(e: ir.OpCall, span: Span) -> list[Access]:
    """A snippet (frontend/native_funcs.py) may read any element of each array it takes and write any
    of those its text may write (attr written): at one footprint of the call's operands, so that
    the same call's read and write never race each other while every other access of the array is
    checked against them."""
    from .views import array_base

    footprint = ("snippet", e.attr("func")) + tuple(_key(a) for a in e.args)
    out: list[Access] = []
    for k, a in enumerate(e.args):
        base = array_base(a)
        if isinstance(a.type, ArrayT) and isinstance(base, ir.Var):
            out.append(Access(base.sym, "read", e.op, footprint, span))
            if k in e.attr("written", ()):
                out.append(Access(base.sym, "overwrite", e.op, footprint, span))
    return out


def _differentiable(t: Type) -> bool:
    if isinstance(t, (VecT, MatT)):
        return t.dtype.is_float
    if isinstance(t, TileT):
        component = component_dtype(t.dtype)  # a tile of scalars, vectors or matrices (never of structs)
        return component is not None and component.is_float
    return isinstance(t, Scalar) and t.is_float


def _free_positions(e: ir.OpCall) -> set[int]:
    free = VALUE_FREE.get(e.op)
    if free == "all" or (e.op == "native_call" and not _differentiable(e.type)):  # a snippet's integer: no adjoint
        return set(range(len(e.args)))
    positions = set(free) if isinstance(free, tuple) else set()  # else None: no free position
    if e.op == "atomic_add":
        positions.add(len(e.args) - 1)
    if e.op == "mul":  # g * b goes to a: a's value only serves b's gradient
        positions |= {i for i in (0, 1) if not _differentiable(e.args[1 - i].type) or isinstance(e.args[1 - i], ir.Const)}
    if e.op == "div" and (isinstance(e.args[1], ir.Const) or not _differentiable(e.args[1].type)):
        positions.add(0)
    return positions


class _Taint:
    """Which values derive from reads of written arrays, and where such a value is needed."""

    def __init__(self, writes: dict[ir.Sym, list[Access]]):
        self.writes = writes  # array -> its write Accesses
        self.origin: dict[ir.Sym, Access] = {}  # sym -> the read Access its value derives from

    def of(self, e: ir.Expr) -> Access | None:
        """The read a value derives from (the first found), or None; reports needed uses."""
        if isinstance(e, ir.Var):
            return self.origin.get(e.sym)
        if isinstance(e, ir.Const):
            return None
        found: Access | None = None
        free: set[int] | None = None  # the positions a derived value may pass: asked only of one that does
        for i, a in enumerate(e.args):
            t = self.of(a)
            if t is not None:
                if isinstance(e, ir.OpCall) and e.op in _rules():
                    free = _free_positions(e) if free is None else free
                    if i not in free:
                        self.needed(t, e.span, f"`{e.op}`")
                found = found or t
        if isinstance(e, ir.OpCall) and e.op in READS and isinstance(e.args[0], ir.Var):
            fp = _footprint(e)
            if any(not disjoint(w.footprint, fp) for w in self.writes.get(e.args[0].sym, ())):
                found = found or Access(e.args[0].sym, "read", e.op, fp, e.span)
        return found

    def needed(self, read: Access, span: Span, why: str) -> NoReturn:
        raise _Needed(read, span, why)


def _rules() -> dict[str, Any]:
    from ..ops.adjoints import RULES  # the op table's adjoint rules (imported on first use)

    return RULES


class _Needed(Exception):
    def __init__(self, read: Access, span: Span, why: str):
        self.read, self.span, self.why = read, span, why


def _taint_body(body: tuple[ir.Stmt, ...], taint: _Taint) -> None:
    for s in body:
        if isinstance(s, ir.Assign):
            t = taint.of(s.value)
            if t is not None:
                taint.origin[s.target] = t
        elif isinstance(s, ir.Unpack):
            t = taint.of(s.value)
            if t is not None:
                for target in s.targets:
                    taint.origin[target] = t
        elif isinstance(s, ir.ExprStmt):
            taint.of(s.expr)
        elif isinstance(s, (ir.If, ir.While)):
            t = taint.of(s.cond)
            if t is not None:
                taint.needed(t, s.cond.span or s.span, "a condition")
        elif isinstance(s, ir.For):
            for bound in (s.start, s.stop, s.step):
                t = taint.of(bound)
                if t is not None:
                    taint.needed(t, s.span, "a loop bound")
        elif isinstance(s, ir.Return) and s.value is not None:
            taint.of(s.value)
        for block in ir.child_blocks(s):
            _taint_body(block, taint)


def _line(span: Span) -> str:
    return f"line {span.line}"


def _refuse(code: str, message: str, span: Span) -> NoReturn:
    raise NotDifferentiable(message, span, code)


def _used_syms(fn: ir.Function) -> set[ir.Sym]:
    used: set[ir.Sym] = set()
    for s in ir.walk_stmts(fn.body):
        for top in ir.stmt_exprs(s):
            used |= {x.sym for x in ir.walk_expr(top) if isinstance(x, ir.Var)}
    return used


def _first_use(fn: ir.Function, sym: ir.Sym) -> Span:
    for s in ir.walk_stmts(fn.body):
        for top in ir.stmt_exprs(s):
            if any(isinstance(x, ir.Var) and x.sym == sym for x in ir.walk_expr(top)):
                return s.span
    return fn.span


def check_adjoint(fn: ir.Function) -> None:
    """Raises NotDifferentiable (TC0502-TC0505) unless fn's adjoint is exact (module docstring)."""
    found = accesses(fn)
    writes: dict[ir.Sym, list[Access]] = {}
    for a in found:
        if a.kind != "read":
            writes.setdefault(a.array, []).append(a)
    used = _used_syms(fn)
    for s in ir.walk_stmts(fn.body):  # atomics whose old value is used
        for top in ir.stmt_exprs(s):
            for e in ir.walk_expr(top):
                if not (isinstance(e, ir.OpCall) and e.op in RETURN_OLD and isinstance(e.args[0], ir.Var)):
                    continue
                if e.op in SWAPS and _differentiable(cast(ArrayT, e.args[0].type).dtype):
                    _refuse("TC0507", f"`{e.op}` on `{e.args[0].sym.name}`, an array of floats, has no adjoint "
                            "(Warp's neither): which value it leaves depends on the order the threads ran in",
                            e.span)
                if isinstance(s, ir.ExprStmt) and top is e:
                    continue
                if isinstance(s, ir.Assign) and s.value is e and s.target not in used:
                    continue
                name = e.args[0].sym.name
                where = f" at line {_first_use(fn, s.target).line}" if isinstance(s, ir.Assign) else ""
                _refuse("TC0504", f"the old value `{e.op}` returns from `{name}` (line {e.span.line}) is used"
                        f"{where}: it depends on the order the threads ran in, and an adjoint launch cannot repeat "
                        "the atomic to learn it", e.span)
    _check_extremes(fn, found)
    varying = thread_varying(fn)
    _check_racing_stores(fn.body, varying, thread_varying(fn, between_blocks=True), False)
    first = _first_positions(found)
    for a in found:  # each thread must touch only elements no other thread writes
        for w in writes.get(a.array, ()):
            if w is a or (a.kind == w.kind and a.kind in ("accumulate", "extreme")) or (a.kind != "read" and first(a) > first(w)):
                continue
            # elements that no thread index selects are the same in every thread: another thread
            # writing them is a race in the forward itself
            per_thread = _mentions(w.footprint, varying) or _mentions(a.footprint, varying)
            if per_thread and w.footprint != a.footprint and not disjoint(w.footprint, a.footprint):
                what = "read" if a.kind == "read" else "written"
                _refuse("TC0503", f"`{a.array.name}` is {what} at line {a.span.line} at other elements than the "
                        f"kernel writes at line {w.span.line} (different indices, offsets or shape): one thread may "
                        "touch an element another thread writes, and the adjoint cannot be exact", a.span)
    taint = _Taint(writes)
    try:
        for _ in range(2):  # twice: values carried around loops
            _taint_body(fn.body, taint)
    except _Needed as n:
        w = next(w for w in writes[n.read.array] if not disjoint(w.footprint, n.read.footprint))
        _refuse("TC0502", f"the adjoint needs the value of `{n.read.array.name}` read at line {n.read.span.line} "
                f"(in {n.why} at line {n.span.line}), but the kernel also writes `{n.read.array.name}` at line "
                f"{w.span.line}: an adjoint launch sees the array either before or after that write, so it "
                "cannot know the value read", n.read.span)


def _varies(e: ir.Expr, varying: set[ir.Sym]) -> bool:
    return any((isinstance(x, ir.Var) and x.sym in varying) or (isinstance(x, ir.OpCall) and x.op in VARYING_OPS)
               for x in ir.walk_expr(e))


def _check_racing_stores(body: tuple[ir.Stmt, ...], varying: set[ir.Sym], block_varying: set[ir.Sym],
                         guarded: bool) -> None:
    """TC0506: a store every thread reaches, at elements no thread index selects, of a value that
    differs between threads (guarded: under a condition or loop bound that differs between threads).
    A tile is one value per block: a tile store races only when the tile differs between blocks."""
    for s in body:
        if not guarded:
            for top in ir.stmt_exprs(s):
                for e in ir.walk_expr(top):
                    if not (isinstance(e, ir.OpCall) and e.op in OVERWRITES and isinstance(e.args[0], ir.Var)
                            and _differentiable(cast(ArrayT, e.args[0].type).dtype)):
                        continue
                    at = 2 if e.op == "tile_store_indexed" else 1
                    value, where = e.args[at], e.args[1:at] + e.args[at + 1:]
                    differs = _varies(value, block_varying if e.op != "array_store" else varying)
                    if differs and not any(_varies(a, varying) for a in where):
                        name = e.args[0].sym.name
                        _refuse("TC0506", f"every thread stores to the same element(s) of `{name}` at line "
                                f"{e.span.line} (the indices do not depend on the thread) a value that differs "
                                "between threads: which value lands depends on the order the threads ran in, so "
                                f"no gradient is right; index by the thread, store under `if i == 0:`, or use "
                                "an atomic (`wp.atomic_add`, `wp.atomic_max`)", e.span)
        if isinstance(s, (ir.If, ir.While)):
            inner = guarded or _varies(s.cond, varying)
        elif isinstance(s, ir.For):
            inner = guarded or any(_varies(b, varying) for b in (s.start, s.stop, s.step))
        else:
            continue
        for block in ir.child_blocks(s):
            _check_racing_stores(block, varying, block_varying, inner)


def _first_positions(found: list[Access]) -> Callable[[Access], int]:
    """A function: where an access equal to a first occurs in found (what found.index answers),
    asked only of the pairs that need it. Candidates share a span-free key, so spans are compared
    (and resolved) only between accesses that agree in everything else, as found.index would."""
    by_key: dict[Key, list[int]] = {}
    for i, a in enumerate(found):
        by_key.setdefault((a.array, a.kind, a.op, a.footprint), []).append(i)
    memo: dict[int, int] = {}

    def first(a: Access) -> int:
        at = memo.get(id(a))
        if at is None:
            at = memo[id(a)] = next(j for j in by_key[(a.array, a.kind, a.op, a.footprint)]
                                    if found[j] is a or found[j] == a)
        return at

    return first


def _check_extremes(fn: ir.Function, found: list[Access]) -> None:
    """atomic_min/max into a float array: exact when nothing else touches the array (TC0505)."""
    from .views import array_base

    extreme = {a.array for a in found if a.kind == "extreme"}
    for s in ir.walk_stmts(fn.body):
        for top in ir.stmt_exprs(s):
            for e in ir.walk_expr(top):
                if not (isinstance(e, ir.OpCall) and e.args and isinstance(e.args[0], ir.OpCall)
                        and e.args[0].op == "array_view"):
                    continue
                base = array_base(e.args[0])
                if e.op in EXTREMES and _differentiable(e.type):
                    _refuse("TC0505", f"`{e.op}` into a view of an array (line {e.span.line}): its gradient "
                            "is routed to the winning thread only for an array parameter itself; pass the "
                            "array and index it fully", e.span)
                if isinstance(base, ir.Var) and base.sym in extreme and _differentiable(cast(ArrayT, base.sym.type).dtype):
                    _refuse("TC0505", f"`{base.sym.name}` is updated by an atomic min/max and also used through "
                            f"a view at line {e.span.line}: the gradient goes to the thread whose value won, "
                            "which is exact only when every access to the array is the same extreme", e.span)
    for a in found:
        if a.kind != "extreme" or not _differentiable(cast(ArrayT, a.array.type).dtype):
            continue
        other = next((b for b in found if b.array == a.array and b.op != a.op), None)
        if other is not None:
            what = {"read": "read", "overwrite": "stored to", "accumulate": "accumulated into"}.get(
                other.kind, f"updated by `{other.op}`")
            _refuse("TC0505", f"`{a.op}` into `{a.array.name}` (line {a.span.line}) and `{a.array.name}` is also "
                    f"{what} at line {other.span.line}: the gradient of `{a.op}` goes to the thread whose "
                    "value won, which is exact only when every access to the array is the same extreme",
                    other.span if other.span.line >= a.span.line else a.span)


def extreme_params(kernel: ir.Function, funcs: dict[str, ir.Function]) -> list[str]:
    """Names of the float array parameters a kernel (with its funcs) updates with atomic_min/max:
    their adjoint reads the values the forward left (the loader computes them on copies)."""
    from .structure import inline_calls

    found = accesses(inline_calls(kernel, funcs, lift_maps=False))
    names = {a.array.name for a in found if a.kind == "extreme" and _differentiable(cast(ArrayT, a.array.type).dtype)}
    return [p.name for p in kernel.params if p.name in names]


def written_arrays(fn: ir.Function) -> set[ir.Sym]:
    return {a.array for a in accesses(fn) if a.kind != "read" and isinstance(a.array.type, ArrayT)}


def written_params(kernel: ir.Function, funcs: dict[str, ir.Function]) -> list[str]:
    """Names of the array parameters a kernel (with the funcs it calls) writes, in order."""
    from .structure import inline_calls

    written = written_arrays(inline_calls(kernel, funcs, lift_maps=False))
    return [p.name for p in kernel.params if p in written]


def stored_descriptors(kernel: ir.Function, funcs: dict[str, ir.Function]) -> list[str]:
    """Names of the array fields of arrays of structs (arrays of descriptors, ir/structs.py) whose
    descriptors the kernel stores (a tile of structs stored), not only the arrays they hold."""
    from .structure import inline_calls

    stored: set[ir.Sym] = set()
    for s in ir.walk_stmts(inline_calls(kernel, funcs, lift_maps=False).body):
        for x in ir.stmt_exprs(s):
            for e in ir.walk_expr(x):
                if isinstance(e, ir.OpCall) and OPS[e.op].effect and e.args and isinstance(e.args[0], ir.Var):
                    t = e.args[0].sym.type
                    if isinstance(t, ArrayT) and isinstance(t.dtype, ArrayT):
                        stored.add(e.args[0].sym)
    return [p.name for p in kernel.params if p in stored]


__all__ = ["VARYING_OPS", "Access", "accesses", "check_adjoint", "disjoint", "extreme_params", "stored_descriptors", "thread_varying", "written_arrays", "written_params"]
