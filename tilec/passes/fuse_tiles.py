"""Fuse tiles: IR -> IR with a tile value read once put back into the elementwise statement that reads it.

Each elementwise tile statement is a loop over the tile of its own in the CPU code; a value that
one later statement reads, in an elementwise position, can be computed there instead (one loop and
one tile fewer). Exact: the value's operations and their order are the same, and the fold is made
only where nothing between the two statements writes what the value reads.

`fold_single_use(body, single)` folds the statements assigning the symbols of `single` (tiles
assigned once and read once: `single_use_tiles`); with `chains`, also `x = a` into a statement soon
after that reads x once and assigns x again (`x = a; x = x + c` -> `x = a + c`). Used on the CPU's
one-lane adjoint (one_lane.py) and on the CPU forward (`fold_forward`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Any, Callable, TypeGuard

from .. import ir
from ..ir.types import TileT
from ..ops import MUTATES, OPS
from .normalize import is_fusible


def single_use_tiles(body: tuple[ir.Stmt, ...], candidates: AbstractSet[ir.Sym]) -> set[ir.Sym]:
    """The candidates that are tiles assigned once and read once in body."""
    reads, assigned = ir.use_counts(body), ir.assign_counts(body)  # one walk each, not one per candidate
    return {t for t in candidates if reads.get(t) == 1 and isinstance(t.type, TileT) and assigned.get(t) == 1}


def fold_single_use(body: tuple[ir.Stmt, ...], single: set[ir.Sym], chains: bool = False,
                    foldable: Callable[[ir.Expr], bool] | None = None) -> tuple[ir.Stmt, ...]:
    """fuse_round's rounds, until a round changes nothing or changes nothing after passing a
    candidate over. foldable: which assigned values may move (default: elementwise ops, copies and
    broadcasts of variables)."""
    while True:
        rounds = Rounds()
        fused = fuse_round(body, single, rounds, chains, foldable or _movable)
        if fused == body:
            return body
        body = fused
        if not rounds.again:
            return body


def _elementwise(e: ir.Expr) -> TypeGuard[ir.OpCall]:
    return isinstance(e, ir.OpCall) and isinstance(e.type, TileT) and OPS[e.op].elementwise


def _broadcast(e: ir.Expr) -> bool:
    return isinstance(e, ir.OpCall) and e.op == "tile_broadcast" and all(isinstance(a, ir.Var) for a in e.args)


def per_element(e: ir.Expr) -> bool:
    """What the emitters compute per element of a reader's loop: elementwise trees, maps,
    broadcasts (of any such value: `broadcast(sum / n)` divides per element where it is read, as its
    own loop did), copies."""
    return is_fusible(e) or isinstance(e, ir.Var)


def _movable(e: ir.Expr) -> bool:
    return _elementwise(e) or isinstance(e, ir.Var) or _broadcast(e)


def writes_of(stmts: list[ir.Stmt]) -> set[ir.Sym]:
    out: set[ir.Sym] = set()
    for s in ir.walk_stmts(stmts):
        out.update(ir.stmt_targets(s))
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.OpCall) and x.op in MUTATES:  # the operands it updates in place
                    names = MUTATES[x.op]
                    out |= {y for i, p in enumerate(OPS[x.op].params) if p.name in names and i < len(x.args)
                            for y in ir.read_syms(x.args[i])}
    return out


def _substitute(e: ir.Expr, sym: ir.Sym, value: ir.Expr) -> ir.Expr | None:
    """e with its elementwise-reachable read of sym replaced by value; None where sym sits elsewhere."""
    if isinstance(e, ir.Var):
        return value if e.sym == sym else e
    if not _elementwise(e):
        return None if sym in ir.read_syms(e) else e
    args = []
    for a in e.args:
        substituted = _substitute(a, sym, value)
        if substituted is None:
            return None
        args.append(substituted)
    return replace(e, args=tuple(args))


class Rounds:
    """What one round of fuse_round saw. A round leaves the statements before its position as they
    are, and decides each candidate on what follows it, nested blocks last: a candidate it passed
    over can only be folded after a later fold of the same round. When none was passed over
    before a fold, another round would fold nothing (on long kernels that round cost as much as
    the first)."""

    def __init__(self) -> None:
        self.passed_over = False  # a candidate was left in place (in the order the round visits them)
        self.again = False  # something was folded after that: another round may fold more


def fuse_round(body: tuple[ir.Stmt, ...], single: set[ir.Sym], rounds: Rounds, chains: bool = False,
               foldable: Callable[[ir.Expr], bool] | None = None) -> tuple[ir.Stmt, ...]:
    movable = foldable or _movable
    # A folded statement's place is emptied (None) rather than deleted: deleting from the list
    # moved everything after it, which made long kernels quadratic. Emptied places are all behind
    # the sweep's position, so the searches ahead never meet one.
    # chains: also fold `x = a` into a statement soon after that reads x once and assigns x again
    # (`x = a; x = x + c` -> `x = a + c`: the value of the first is read there only).
    out: list[ir.Stmt | None] = list(body)
    for i, s in enumerate(out):
        if type(s) is not ir.Assign or not (s.target in single or chains) or not movable(s.value):
            continue  # (the cheap tests first: a round over a long kernel asks this of each statement)
        if s.target in single:
            j = next((j for j in range(i + 1, len(out)) if s.target in reads_of(out[j])), None)  # type: ignore[arg-type]
        elif chains and isinstance(s.target.type, TileT):
            reach = range(i + 1, min(len(out), i + 1 + _CHAIN_REACH))
            j = next((j for j in reach if s.target in reads_of(out[j])), None)  # type: ignore[arg-type]
            later = out[j] if j is not None else None
            if not (isinstance(later, ir.Assign) and later.target is s.target
                    and ir.use_counts((later,)).get(s.target) == 1):
                continue
        else:
            continue
        reader = out[j] if j is not None else None
        operands = ir.read_syms(s.value) if isinstance(reader, ir.Assign) else set()
        if (isinstance(reader, ir.Assign) and (_elementwise(reader.value) or isinstance(reader.value, ir.Var))
                and reader.target not in operands
                and (j == i + 1 or not (writes_of(out[i + 1:j]) & (operands | {s.target})))):  # type: ignore[arg-type]
            value = _substitute(reader.value, s.target, s.value)
            if value is not None and j is not None:
                out[j] = replace(reader, value=value)
                out[i] = None
                rounds.again = rounds.again or rounds.passed_over
                continue
        rounds.passed_over = True
    return tuple(map_blocks(s, lambda block: fuse_round(block, single, rounds, chains, movable))
                 for s in out if s is not None)


_CHAIN_REACH = 8  # statements searched for a chain's next link (a bound keeps the sweep linear)


def spread_broadcasts(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """Each `x = tile_broadcast(v)` of a variable, assigned once and read only by elementwise
    assignments soon after it in its block (nothing in between writing v or x), put into every
    reader: a broadcast is an index map, free in a reader's loop, where its own loop wrote a tile
    that each reader read back. (A broadcast read once is fold_single_use's.)"""
    reads, assigned = ir.use_counts(body), ir.assign_counts(body)
    spread = {s.target for s in ir.walk_stmts(body) if isinstance(s, ir.Assign) and _broadcast(s.value)
              and assigned.get(s.target) == 1 and reads.get(s.target, 0) > 1}
    return _spread(body, spread, reads) if spread else body


_SPREAD_REACH = 32  # statements searched for a broadcast's readers (a bound keeps the sweep linear)


def _spread(body: tuple[ir.Stmt, ...], spread: set[ir.Sym], reads: dict[ir.Sym, int]) -> tuple[ir.Stmt, ...]:
    out: list[ir.Stmt | None] = list(body)
    for i, s in enumerate(out):
        if not (isinstance(s, ir.Assign) and s.target in spread):
            continue
        x, operands = s.target, ir.read_syms(s.value) | {s.target}
        readers: list[tuple[int, ir.Assign]] = []
        found, j = 0, i + 1
        while found < reads[x] and j < min(len(out), i + 1 + _SPREAD_REACH):
            later = out[j]
            if later is not None:
                n = ir.use_counts((later,)).get(x, 0)
                if n and not (isinstance(later, ir.Assign) and _elementwise(later.value)):
                    break  # read where no loop of the reader's computes it per element
                if n:
                    readers.append((j, later))  # type: ignore[arg-type]  # an Assign: tested above
                    found += n
                if writes_of([later]) & operands:
                    break  # v written: a later read would see another value (the last reader's own write comes after its read)
            j += 1
        if found != reads[x]:
            continue
        values = [_substitute(reader.value, x, s.value) for _, reader in readers]
        if any(v is None for v in values):
            continue
        for (k, reader), v in zip(readers, values):
            out[k] = replace(reader, value=v)  # type: ignore[arg-type]  # none is None: tested above
        out[i] = None
    return tuple(map_blocks(s, lambda block: _spread(block, spread, reads)) for s in out if s is not None)


_BLOCKS = {ir.If: ("body", "orelse"), ir.For: ("body",), ir.While: ("body",)}


def map_blocks(s: ir.Stmt, f: Callable[[tuple[ir.Stmt, ...]], tuple[ir.Stmt, ...]]) -> ir.Stmt:
    """s with f applied to each statement list nested directly in it."""
    if type(s) not in _BLOCKS:
        return s
    blocks: dict[str, Any] = {name: f(getattr(s, name)) for name in _BLOCKS[type(s)]}
    return replace(s, **blocks)


def reads_of(s: ir.Stmt) -> set[ir.Sym]:
    if isinstance(s, ir.Assign):  # most statements: no nested block
        return ir.read_syms(s.value)
    out: set[ir.Sym] = set()
    for x in ir.walk_stmts((s,)):
        for e in ir.stmt_exprs(x):
            out |= ir.read_syms(e)
    return out


def fold_forward(fn: ir.Function) -> ir.Function:
    """The CPU forward with each tile value (an elementwise tree, a map, a broadcast: what the
    emitter computes per element) that is assigned once and read once folded into its elementwise
    reader: a user's `s = wp.tile_broadcast(...)` read by `e / s` is no tile of its own; a
    broadcast of a variable read by several is put into each (spread_broadcasts)."""
    tiles = ir.assigned_tiles(fn.body)
    if not tiles:
        return fn
    body = fold_single_use(fn.body, single_use_tiles(fn.body, tiles), foldable=per_element)
    body = spread_broadcasts(body)
    return fn if body == fn.body else replace(fn, body=body)
