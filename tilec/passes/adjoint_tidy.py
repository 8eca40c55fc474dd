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

from dataclasses import replace

from .. import ir
from ..ir.types import TileT


def tidy_adjoint(fn: ir.Function) -> ir.Function:
    if any(isinstance(s, (ir.Break, ir.Continue, ir.Return)) for s in ir.walk_stmts(fn.body)):
        return fn  # the flow analyses below assume structured control flow without exits
    body = _moves(fn.body, fn)
    body, _ = _known_zeros(body, frozenset(_locals(replace(fn, body=body))))
    body = _drop_dead_fills_of(body)
    body = _forward_copies(body, replace(fn, body=body))
    return replace(fn, body=_drop_dead_fills_of(body))


def _drop_dead_fills_of(body) -> tuple:
    counts = _assign_counts(body)
    sole = {t for t, n in counts.items() if n == 1}  # keep a symbol's only definition
    return _drop_dead_fills(body, frozenset(), frozenset(sole))[0]


# ---------------------------------------------------------------- helpers


def _is_zeros(e) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_zeros" and not e.args


def _reads(stmts) -> set:
    """Every symbol the statements (nested blocks included) read."""
    out: set = set()
    for s in ir.walk_stmts(stmts):
        for e in ir.stmt_exprs(s):
            out |= ir.read_syms(e)
    return out


def _writes(stmts) -> set:
    return {t for s in ir.walk_stmts(stmts) for t in ir.stmt_targets(s)}


def _read_count(stmts, sym) -> int:
    return sum(1 for s in ir.walk_stmts(stmts) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
               if isinstance(x, ir.Var) and x.sym == sym)


def _assign_counts(stmts) -> dict:
    """How often each symbol is a target of an assignment or an unpacking (one walk)."""
    counts: dict = {}
    for s in ir.walk_stmts(stmts):
        targets = (s.target,) if isinstance(s, ir.Assign) else s.targets if isinstance(s, ir.Unpack) else ()
        for t in targets:
            counts[t] = counts.get(t, 0) + 1
    return counts


def _assign_count(stmts, sym) -> int:
    return sum(1 for s in ir.walk_stmts(stmts) if isinstance(s, ir.Assign) and s.target == sym) + sum(
        1 for s in ir.walk_stmts(stmts) if isinstance(s, ir.Unpack) and sym in s.targets)


def _locals(fn: ir.Function) -> set:
    """Tile symbols assigned in the body that are not parameters: zero until first written."""
    params = set(fn.params)
    return {t for t in _writes(fn.body) if t not in params and isinstance(t.type, TileT)}


def _with_blocks(s, fix):
    if isinstance(s, ir.If):
        return replace(s, body=fix(s.body), orelse=fix(s.orelse))
    if isinstance(s, (ir.For, ir.While)):
        return replace(s, body=fix(s.body))
    return s


# ---------------------------------------------------------------- moves


def _moves(body, fn) -> tuple:
    body = tuple(_with_blocks(s, lambda b: _moves(b, fn)) for s in body)
    changed = True
    while changed:
        changed = False
        for i in range(len(body) - 1):
            new = _move_at(body, i, fn)
            if new is not None:
                body, changed = new, True
                break
    return body


def _move_at(body, i, fn):
    take, fill = body[i], body[i + 1]
    if not (isinstance(take, ir.Assign) and isinstance(take.value, ir.Var) and isinstance(take.target.type, TileT)):
        return None
    g, adj = take.target, take.value.sym
    if g == adj or g.type != adj.type or g in fn.params:
        return None
    if not (isinstance(fill, ir.Assign) and fill.target == adj and _is_zeros(fill.value)):
        return None
    rest = body[i + 2:]
    if _assign_count(fn.body, g) != 1 or _read_count(rest, g) != _read_count(fn.body, g):
        return None  # g is read somewhere else (or assigned twice): keep it
    readers = [k for k, s in enumerate(rest) if g in _reads((s,))]
    if not readers:
        return None  # an unread take: simplify's business
    last = readers[-1]
    for s in rest[:last]:
        if adj in _reads((s,)) | _writes((s,)) or g in _writes((s,)):
            return None
    end = rest[last]
    rename = lambda sym: adj if sym == g else sym  # noqa: E731
    if _adds_back(end, adj, g):
        return body[:i] + ir.rename(rest[:last], rename) + rest[last + 1:]
    if adj in _reads((end,)) | _writes((end,)) or g in _writes((end,)):
        return None
    return body[:i] + ir.rename(rest[:last + 1], rename) + (fill,) + rest[last + 1:]


def _adds_back(s, adj, g) -> bool:
    """s is `adj = adj + g` (or g + adj)."""
    if not (isinstance(s, ir.Assign) and s.target == adj and isinstance(s.value, ir.OpCall) and s.value.op == "add"):
        return False
    args = s.value.args
    return (len(args) == 2 and all(isinstance(a, ir.Var) for a in args)
            and {args[0].sym, args[1].sym} == {adj, g} and args[0].sym != args[1].sym
            and s.value.type == adj.type)


# ---------------------------------------------------------------- copies


def _forward_copies(body, fn) -> tuple:
    body = tuple(_with_blocks(s, lambda b: _forward_copies(b, fn)) for s in body)
    i = 0
    while i < len(body):
        s = body[i]
        rest = body[i + 1:]
        if (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and isinstance(s.target.type, TileT)
                and s.target != s.value.sym and s.target.type == s.value.sym.type and s.target not in fn.params
                and _assign_count(fn.body, s.target) == 1
                and _read_count(rest, s.target) == _read_count(fn.body, s.target)
                and s.value.sym not in _writes(rest)):
            t, y = s.target, s.value.sym
            body = body[:i] + ir.rename(rest, lambda sym: y if sym == t else sym)
            continue
        folded = _fold_copy(body, i)
        if folded is not None:
            body = folded
            continue
        i += 1
    return body


_ELEMENTWISE_UPDATES = ("add", "sub", "mul")


def _fold_copy(body, i):
    """`x = y; ...; x = add(x, c)` where the statements between touch neither x nor y's value:
    `...; x = add(y, c)` (an accumulation started from a copy, as known zeros leave it)."""
    s = body[i]
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and isinstance(s.target.type, TileT)
            and s.target != s.value.sym and s.target.type == s.value.sym.type):
        return None
    x, y = s.target, s.value.sym
    for k in range(i + 1, len(body)):
        later = body[k]
        if x in _reads((later,)) | _writes((later,)):
            break
        if y in _writes((later,)):
            return None
    else:
        return None
    if not (isinstance(later, ir.Assign) and later.target == x and isinstance(later.value, ir.OpCall)
            and later.value.op in _ELEMENTWISE_UPDATES and not isinstance(later, ir.Unpack)):
        return None
    value = ir.rename((ir.ExprStmt(later.value, later.span),), lambda sym: y if sym == x else sym)[0].expr
    return body[:i] + body[i + 1:k] + (replace(later, value=value),) + body[k + 1:]


# ---------------------------------------------------------------- known zeros


def _known_zeros(body, zero: frozenset) -> tuple:
    """(body rewritten, the tiles known zero after it), given those known zero before it."""
    out = []
    for s in body:
        if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT):
            t = s.target
            if _is_zeros(s.value):
                out.append(s)
                zero = zero | {t}
                continue
            if t in zero:
                s = _assign_instead(s, t)
            out.append(s)
            zero = zero - {t}
        elif isinstance(s, ir.If):
            body_, z1 = _known_zeros(s.body, zero)
            orelse, z2 = _known_zeros(s.orelse, zero)
            out.append(replace(s, body=body_, orelse=orelse))
            zero = z1 & z2
        elif isinstance(s, (ir.For, ir.While)):
            head = zero  # zero at the head: on entry and after every iteration (a fixed point, shrinking)
            while True:
                _, after = _known_zeros(s.body, head)
                new = head & after
                if new == head:
                    break
                head = new
            new_body, _ = _known_zeros(s.body, head)
            out.append(replace(s, body=new_body))
            zero = head  # a loop may run no iteration: what holds at the head holds after it
        else:  # an unpacking writes its targets; an effect may update a tile it names in place
            zero = zero - (set(s.targets) if isinstance(s, ir.Unpack) else set()) - _reads((s,))
            out.append(s)
    return tuple(out), zero


def _assign_instead(s, t):
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


def _drop_dead_fills(body, live_out: frozenset, keep: frozenset) -> tuple:
    """(body without zero fills nothing reads, the symbols live before it); fills of `keep` stay.
    The live set is updated in place along straight-line code: copying it per statement made long
    kernels quadratic."""
    out = []
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
