"""Adjoint tidy: IR -> IR without the copies and zero fills the reverse sweep's bookkeeping leaves.

Expects a simplified adjoint kernel (autodiff.py) that runs as one lane (the CPU form: no
`lane_sum`, no `leader_only`); every local starts as zero, as the emitters declare them. Three
rewrites, each exact (the kernel computes the same values, bit for bit):

* Moves. Reversing an assignment takes its target's adjoint, `g = adj; adj = 0`, and hands g to
  the operands' rules. When nothing in between touches adj, the rules read adj itself and the
  zeroing moves after their last read of g; when the last of them adds g straight back
  (`adj = adj + g`: the adjoint of an in-place accumulation such as `tile_matmul(a, b, acc)`), the
  take, the zeroing and the add all go.
* Copies. `t = y` of a tile t assigned nowhere else, all of whose reads follow it in the same
  statement list, with y not written after it there: the reads take y, the copy goes. A copy
  whose next use is an elementwise update `x = x + c` folds into it: `x = y + c`.
* Known zeros. A tile known to be zero (a local before its first write, or after `x = zeros`)
  that is accumulated into is assigned instead: `x = x + c` becomes `x = c`, and
  `x = tile_matmul(a, b, x)` becomes the fresh product `tile_matmul(a, b)` (no read of x).
* Dead zero fills. `x = zeros` whose value nothing reads afterwards (flow-sensitive liveness,
  loops included) goes, unless it is the symbol's only assignment (IR reads a defined symbol).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import overload

from .. import ir
from ..ir.types import TileT


def tidy_adjoint(fn: ir.Function) -> ir.Function:
    if ir.has_exits(fn.body):
        return fn  # the flow analyses below assume structured control flow without exits
    if not any(isinstance(t.type, TileT) for s in ir.walk_stmts(fn.body) for t in ir.stmt_targets(s)):
        return fn  # each rewrite is of a tile assignment: a kernel without one is already tidy
    index = _Index()
    body = _moves(fn.body, _Counts(fn.body, fn.params, index), index)
    body, _ = _known_zeros(body, frozenset(_locals(replace(fn, body=body))))
    body = _drop_dead_fills_of(body)
    body = _forward_copies(body, _Counts(body, fn.params, index), index)
    return replace(fn, body=_drop_dead_fills_of(body))


def _drop_dead_fills_of(body: Sequence[ir.Stmt]) -> tuple[ir.Stmt, ...]:
    counts = ir.assign_counts(body)
    sole = {t for t, n in counts.items() if n == 1}  # keep a symbol's only definition
    return _drop_dead_fills(body, frozenset(), frozenset(sole))[0]


# ---------------------------------------------------------------- helpers


def _is_zeros(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_zeros" and not e.args


def _reads(stmts: Iterable[ir.Stmt]) -> set[ir.Sym]:
    """Every symbol the statements (nested blocks included) read."""
    out: set[ir.Sym] = set()
    for s in ir.walk_stmts(stmts):
        for e in ir.stmt_exprs(s):
            out |= ir.read_syms(e)
    return out


def _writes(stmts: Iterable[ir.Stmt]) -> set[ir.Sym]:
    return {t for s in ir.walk_stmts(stmts) for t in ir.stmt_targets(s)}


class _Index:
    """Each statement's reads (symbol -> count) and writes (a set), nested blocks included,
    computed once per statement object (the passes below ask about the same statements often)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[ir.Stmt, dict[ir.Sym, int], frozenset[ir.Sym]]] = {}

    def of(self, s: ir.Stmt) -> tuple[dict[ir.Sym, int], frozenset[ir.Sym]]:
        hit = self._memo.get(id(s))
        if hit is None or hit[0] is not s:
            if type(s) is ir.Assign:  # most statements: one expression, no nested block to walk
                reads = ir.read_counts(s.value)
                writes: frozenset[ir.Sym] = frozenset((s.target,))
            else:
                reads = ir.use_counts((s,))
                writes = frozenset(t for x in ir.walk_stmts((s,)) for t in ir.stmt_targets(x))
            hit = (s, reads, writes)
            self._memo[id(s)] = hit
        return hit[1], hit[2]

    def reads(self, s: ir.Stmt) -> dict[ir.Sym, int]:
        return self.of(s)[0]

    def writes(self, s: ir.Stmt) -> frozenset[ir.Sym]:
        return self.of(s)[1]


class _Counts:
    """How often each symbol is read and assigned (an assignment's or unpacking's target) in a
    function body: counted once per pass, not once per candidate (long kernels were quadratic)."""

    def __init__(self, body: Sequence[ir.Stmt], params: Iterable[ir.Sym], index: _Index) -> None:
        self.params = frozenset(params)
        self.reads: dict[ir.Sym, int] = {}
        for s in body:
            _add(self.reads, index.reads(s))
        self.assigns: dict[ir.Sym, int] = {}
        for s in ir.walk_stmts(body):
            targets = (s.target,) if isinstance(s, ir.Assign) else set(s.targets) if isinstance(s, ir.Unpack) else ()
            for t in targets:
                self.assigns[t] = self.assigns.get(t, 0) + 1


class _Block:
    """Reads and writes of one statement list, in total and in the prefix a sweep has passed,
    kept current as rewrites replace a region of it: the counts of the statements after position
    i are the total less the prefix less statement i."""

    def __init__(self, body: Sequence[ir.Stmt], index: _Index) -> None:
        self.index = index
        self.reads: dict[ir.Sym, int] = {}
        self.writes: dict[ir.Sym, int] = {}
        self.before_reads: dict[ir.Sym, int] = {}
        self.before_writes: dict[ir.Sym, int] = {}
        for s in body:
            self._count(s, self.reads, self.writes, 1)

    def _count(self, s: ir.Stmt, reads: dict[ir.Sym, int], writes: dict[ir.Sym, int], sign: int) -> None:
        r, w = self.index.of(s)
        get = reads.get  # _add, inline: every statement of a sweep is counted in and out
        for sym, n in r.items():
            reads[sym] = get(sym, 0) + sign * n
        get = writes.get
        for sym in w:
            writes[sym] = get(sym, 0) + sign

    def passed(self, s: ir.Stmt) -> None:
        self._count(s, self.before_reads, self.before_writes, 1)

    def replaced(self, old: Iterable[ir.Stmt], new: Iterable[ir.Stmt]) -> None:
        for s in old:
            self._count(s, self.reads, self.writes, -1)
        for s in new:
            self._count(s, self.reads, self.writes, 1)

    def reads_after(self, sym: ir.Sym, at: Iterable[ir.Stmt]) -> int:
        """Reads of sym in the statements after `at` (the statements at the sweep's position)."""
        return self.reads.get(sym, 0) - self.before_reads.get(sym, 0) - sum(self.index.reads(s).get(sym, 0) for s in at)

    def written_after(self, sym: ir.Sym, at: Iterable[ir.Stmt]) -> bool:
        return (self.writes.get(sym, 0) - self.before_writes.get(sym, 0)
                - sum(sym in self.index.writes(s) for s in at)) > 0


class _Splicing:
    """A statement list that a sweep rewrites front to back, as list-like as the sweeps need.
    The statements before the sweep's position are final (`done`); from the position on they are
    kept reversed (`rest`), so replacing the region at the position changes the end of a list
    instead of moving everything after the region (a splice per rewrite made long kernels
    quadratic)."""

    def __init__(self, body: Iterable[ir.Stmt]) -> None:
        self.done: list[ir.Stmt] = []
        self.rest: list[ir.Stmt] = list(body)[::-1]

    def __len__(self) -> int:
        return len(self.done) + len(self.rest)

    @overload
    def __getitem__(self, k: int) -> ir.Stmt: ...
    @overload
    def __getitem__(self, k: slice) -> list[ir.Stmt]: ...
    def __getitem__(self, k: int | slice) -> ir.Stmt | list[ir.Stmt]:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            assert step == 1, k
            return [self[x] for x in range(start, stop)]
        assert k >= 0, k
        n = len(self.done)
        return self.done[k] if k < n else self.rest[len(self.rest) - 1 - (k - n)]

    def at(self, k: int) -> ir.Stmt:
        """self[k] for k at or after the sweep's position (no slice test, no done-or-rest test)."""
        return self.rest[len(self.rest) - 1 - (k - len(self.done))]

    def splice(self, start: int, end: int, new: Iterable[ir.Stmt]) -> None:
        """self[start:end] = new, where start is the sweep's position."""
        assert start == len(self.done), (start, len(self.done))
        del self.rest[len(self.rest) - (end - start):]
        self.rest.extend(reversed(tuple(new)))

    def advance(self) -> None:
        """The sweep moves past the statement at its position."""
        self.done.append(self.rest.pop())

    def statements(self) -> tuple[ir.Stmt, ...]:
        return tuple(self.done) + tuple(reversed(self.rest))


def _add(total: dict[ir.Sym, int], counts: Mapping[ir.Sym, int], sign: int = 1) -> None:
    get = total.get
    for k, n in counts.items():
        total[k] = get(k, 0) + sign * n


def _last_reader(body: _Splicing, sym: ir.Sym, reads: int, index: _Index, start: int = 0) -> int:
    """The position in body of the statement holding the last of sym's `reads` reads from start on."""
    seen = 0
    for k in range(start, len(body)):
        seen += index.reads(body.at(k)).get(sym, 0)
        if seen >= reads:
            return k
    raise AssertionError("fewer reads than counted")


def _locals(fn: ir.Function) -> set[ir.Sym]:
    """Tile symbols assigned in the body that are not parameters: zero until first written."""
    params = set(fn.params)
    return {t for t in _writes(fn.body) if t not in params and isinstance(t.type, TileT)}


def _with_blocks(s: ir.Stmt, fix: Callable[[tuple[ir.Stmt, ...]], tuple[ir.Stmt, ...]]) -> ir.Stmt:
    if isinstance(s, ir.If):
        return replace(s, body=fix(s.body), orelse=fix(s.orelse))
    if isinstance(s, (ir.For, ir.While)):
        return replace(s, body=fix(s.body))
    return s


# ---------------------------------------------------------------- moves


def _moves(stmts: Sequence[ir.Stmt], counts: _Counts, index: _Index) -> tuple[ir.Stmt, ...]:
    """Sweeps the statement list, applying each move where it is found, until a sweep finds none.

    A sweep leaves the statements before its position as they are, and decides each candidate on
    what follows it. So a candidate it passed over can only become a move through a later move of
    the same sweep; where no candidate was passed over before a move, the next sweep would find
    nothing (a second sweep over a long kernel was a quarter of the pass)."""
    statements = tuple(_with_blocks(s, lambda b: _moves(b, counts, index)) for s in stmts)
    again = True
    while again:
        again = passed_over = False
        block = _Block(statements, index)
        body = _Splicing(statements)
        i = 0
        while i < len(body) - 1:
            new = _move_at(body, i, counts, index, block)
            if new is None:
                here = body.at(i)
                passed_over = passed_over or _may_take(here)
                block.passed(here)
                body.advance()
                i += 1
                continue
            end, new_region = new
            block.replaced(body[i:end], new_region)
            body.splice(i, end, new_region)
            again = again or passed_over
        statements = body.statements()
    return statements


def _may_take(s: ir.Stmt) -> bool:
    """The first test of _move_at: a tile copy (the take `g = adj`) that a move may start at."""
    return isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and isinstance(s.target.type, TileT)


def _move_at(body: _Splicing, i: int, counts: _Counts, index: _Index,
             block: _Block) -> tuple[int, tuple[ir.Stmt, ...]] | None:
    """(end, replacement): body[i:end] is to become the replacement; or None. No slice of the
    rest of the body per candidate (that alone made long kernels quadratic)."""
    take, fill = body.at(i), body.at(i + 1)
    if not (isinstance(take, ir.Assign) and isinstance(take.value, ir.Var) and isinstance(take.target.type, TileT)):
        return None  # (_may_take's test)
    g, adj = take.target, take.value.sym
    if g == adj or g.type != adj.type or g in counts.params or counts.assigns.get(g, 0) != 1:
        return None
    if not (isinstance(fill, ir.Assign) and fill.target == adj and _is_zeros(fill.value)):
        return None
    reads = block.reads_after(g, (take, fill))
    if reads != counts.reads.get(g, 0):
        return None  # g is read somewhere else: keep it
    if not reads:
        return None  # an unread take: simplify's business
    last = _last_reader(body, g, reads, index, i + 2)
    for k in range(i + 2, last):
        s = body.at(k)
        if adj in index.reads(s) or adj in index.writes(s) or g in index.writes(s):
            return None
    end = body.at(last)
    rename = lambda sym: adj if sym == g else sym  # noqa: E731
    if _adds_back(end, adj, g):
        return last + 1, ir.rename(body[i + 2:last], rename)
    if adj in index.reads(end) or adj in index.writes(end) or g in index.writes(end):
        return None
    return last + 1, ir.rename(body[i + 2:last + 1], rename) + (fill,)


def _adds_back(s: ir.Stmt, adj: ir.Sym, g: ir.Sym) -> bool:
    """s is `adj = adj + g` (or g + adj)."""
    if not (isinstance(s, ir.Assign) and s.target == adj and isinstance(s.value, ir.OpCall) and s.value.op == "add"):
        return False
    args = s.value.args
    return (len(args) == 2 and isinstance(args[0], ir.Var) and isinstance(args[1], ir.Var)
            and {args[0].sym, args[1].sym} == {adj, g} and args[0].sym != args[1].sym
            and s.value.type == adj.type)


# ---------------------------------------------------------------- copies


def _forward_copies(stmts: Sequence[ir.Stmt], counts: _Counts, index: _Index) -> tuple[ir.Stmt, ...]:
    statements = tuple(_with_blocks(s, lambda b: _forward_copies(b, counts, index)) for s in stmts)
    block = _Block(statements, index)
    body = _Splicing(statements)
    i = 0
    while i < len(body):
        s = body.at(i)
        if (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and isinstance(s.target.type, TileT)
                and s.target != s.value.sym and s.target.type == s.value.sym.type and s.target not in counts.params
                and counts.assigns.get(s.target, 0) == 1
                and block.reads_after(s.target, (s,)) == counts.reads.get(s.target, 0)
                and not block.written_after(s.value.sym, (s,))):
            t, y = s.target, s.value.sym
            reads = counts.reads.get(t, 0)
            end = _last_reader(body, t, reads, index, i + 1) + 1 if reads else i + 1  # nothing after reads t
            new = ir.rename(body[i + 1:end], lambda sym: y if sym == t else sym)
            block.replaced(body[i:end], new)
            body.splice(i, end, new)
            continue
        folded = _fold_copy(body, i, index, block)
        if folded is not None:
            end, new = folded
            block.replaced(body[i:end], new)
            body.splice(i, end, new)
            continue
        block.passed(s)
        body.advance()
        i += 1
    return body.statements()


_ELEMENTWISE_UPDATES = ("add", "sub", "mul")


def _fold_copy(body: _Splicing, i: int, index: _Index, block: _Block) -> tuple[int, tuple[ir.Stmt, ...]] | None:
    """`x = y; ...; x = add(x, c)` where the statements between touch neither x nor y's value:
    `...; x = add(y, c)` (an accumulation started from a copy, as known zeros leave it). Returns
    (end, replacement): body[i:end] is to become the replacement; or None."""
    s = body.at(i)
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and isinstance(s.target.type, TileT)
            and s.target != s.value.sym and s.target.type == s.value.sym.type):
        return None
    x, y = s.target, s.value.sym
    if not block.reads_after(x, (s,)) and not block.written_after(x, (s,)):
        return None  # nothing after the copy touches x (without walking there to find out)
    for k in range(i + 1, len(body)):
        later = body.at(k)
        if x in index.reads(later) or x in index.writes(later):
            break
        if y in index.writes(later):
            return None
    else:
        return None
    if not (isinstance(later, ir.Assign) and later.target == x and isinstance(later.value, ir.OpCall)
            and later.value.op in _ELEMENTWISE_UPDATES and not isinstance(later, ir.Unpack)):
        return None
    renamed = ir.rename((ir.ExprStmt(later.value, later.span),), lambda sym: y if sym == x else sym)[0]
    assert isinstance(renamed, ir.ExprStmt)  # rename keeps each statement's kind
    value = renamed.expr
    return k + 1, (*body[i + 1:k], replace(later, value=value))


# ---------------------------------------------------------------- known zeros


def _known_zeros(body: Sequence[ir.Stmt], zero_before: frozenset[ir.Sym]) -> tuple[tuple[ir.Stmt, ...], frozenset[ir.Sym]]:
    """(body rewritten, the tiles known zero after it), given those known zero before it. The set
    is updated in place along straight-line code (a copy per statement made long kernels quadratic)."""
    out: list[ir.Stmt] = []
    zero = set(zero_before)
    for s in body:
        if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT):
            t = s.target
            if _is_zeros(s.value):
                out.append(s)
                zero.add(t)
                continue
            if t in zero:
                s = _assign_instead(s, t)
            out.append(s)
            zero.discard(t)
        elif isinstance(s, ir.If):
            body_, z1 = _known_zeros(s.body, frozenset(zero))
            orelse, z2 = _known_zeros(s.orelse, frozenset(zero))
            out.append(replace(s, body=body_, orelse=orelse))
            zero = set(z1 & z2)
        elif isinstance(s, (ir.For, ir.While)):
            head = frozenset(zero)  # zero at the head: on entry and after every iteration (a fixed point, shrinking)
            while True:
                _, after = _known_zeros(s.body, head)
                new = head & after
                if new == head:
                    break
                head = new
            new_body, _ = _known_zeros(s.body, head)
            out.append(replace(s, body=new_body))
            zero = set(head)  # a loop may run no iteration: what holds at the head holds after it
        else:  # an unpacking writes its targets; an effect may update a tile it names in place
            zero.difference_update(s.targets if isinstance(s, ir.Unpack) else ())
            zero.difference_update(_reads((s,)))
            out.append(s)
    return tuple(out), frozenset(zero)


def _assign_instead(s: ir.Assign, t: ir.Sym) -> ir.Assign:
    """x = x + c or x = tile_matmul(a, b, x) with x zero: the contribution alone."""
    v = s.value
    if not isinstance(v, ir.OpCall):
        return s
    if v.op == "add" and len(v.args) == 2:
        a, b = v.args
        for mine, other in ((a, b), (b, a)):
            if isinstance(mine, ir.Var) and mine.sym == t and other.type == t.type and t not in ir.read_syms(other):
                return replace(s, value=other)
    if (v.op == "tile_matmul" and len(v.args) == 3 and isinstance(v.args[2], ir.Var) and v.args[2].sym == t
            and t not in ir.read_syms(v.args[0]) | ir.read_syms(v.args[1])):
        return replace(s, value=replace(v, args=v.args[:2]))
    return s


# ---------------------------------------------------------------- dead zero fills


def _drop_dead_fills(body: Sequence[ir.Stmt], live_out: frozenset[ir.Sym],
                     keep: frozenset[ir.Sym]) -> tuple[tuple[ir.Stmt, ...], frozenset[ir.Sym]]:
    """(body without zero fills nothing reads, the symbols live before it); fills of `keep` stay.
    The live set is updated in place along straight-line code: copying it per statement made long
    kernels quadratic."""
    out: list[ir.Stmt] = []
    live = set(live_out)
    for s in reversed(body):
        if isinstance(s, ir.Assign):
            if _is_zeros(s.value) and s.target not in live and s.target not in keep:
                continue
            live.discard(s.target)
            live |= ir.read_syms(s.value)
        elif isinstance(s, ir.Unpack):
            live.difference_update(s.targets)
            live |= ir.read_syms(s.value)
        elif isinstance(s, ir.If):
            b, l1 = _drop_dead_fills(s.body, frozenset(live), keep)
            o, l2 = _drop_dead_fills(s.orelse, frozenset(live), keep)
            s = replace(s, body=b, orelse=o)
            live = set(l1 | l2) | ir.read_syms(s.cond)
        elif isinstance(s, (ir.For, ir.While)):
            head = frozenset(live)  # live at the head: after the loop, or at the next iteration's start
            while True:
                _, inner = _drop_dead_fills(s.body, head, keep)
                new = head | inner
                if new == head:
                    break
                head = new
            new_body, _ = _drop_dead_fills(s.body, head, keep)
            s = replace(s, body=new_body)
            live = set(head).union(*(ir.read_syms(e) for e in ir.stmt_exprs(s)))
        else:
            live = live.union(*(ir.read_syms(e) for e in ir.stmt_exprs(s)))
        out.append(s)
    return tuple(reversed(out)), frozenset(live)
