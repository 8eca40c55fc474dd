"""Consecutive element-wise loops over tiles of one shape, emitted as one loop (CPU).

Each fused element-wise assignment is a loop of its own over its tile's elements (cxx.py). In an
adjoint several come in a row (layernorm's: `x / rstd`, `dy * gamma / rstd`, their products), each
loading again the tiles the loop before it has just stored. `fused_loops` finds the runs of two or
more consecutive statements that are each the fused element-wise assignment of a tile, all of one
concrete shape and of number dtypes, built from builtin ops only (a user func may print, and its
calls keep their order), not taken by another CPU pattern. The emitter writes them as one loop
holding each statement's line, in order. That is the same computation: every member reads the tiles
the run writes at its own element index only (a read through a broadcast of such a tile, at
another element, ends the run before it), so element e of each member sees what it saw after the
loops before it, and writes what it wrote.

A statement between two members that neither reads a tile the run writes nor writes anything the
run reads or writes (a load of another operand, an adjoint's zeroing of a stored adjoint) does not
end the run: the emitter writes it before the loop (`FusedLoop.hoisted`). The members read no
memory, only tiles (so a statement that writes an array may pass them), unless one reads an array's
row in place: then nothing more is hoisted. Only statements whose emission is their own qualify: not
one another pattern builds from earlier statements (`fixed`), not a tile read or written in place
(but the load of a row read in place: row_views.py has checked that nothing up to its last read
writes the array), not control flow, not another element-wise loop.

A member's tile written there only and read only by later members of its run, each at its own
element index, is not stored at all: the emitter keeps it as a `const` local of the loop body
(`FusedLoop.elements`) and declares no tile.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TypeGuard

from .. import ir
from ..ir.types import Scalar, TileT
from ..passes.fuse_tiles import reads_of, writes_of
from ..passes.normalize import is_fusible
from .element_loops import builtin_only, element_reads, split_extent
from .operand_views import bodies, read_write_counts


@dataclass(frozen=True)
class FusedLoop:
    members: tuple[ir.Assign, ...]  # in source order, two or more
    tile: TileT  # the shape every member writes
    extent: int | None  # the loop runs over rows of this many columns (element_loops.split_extent)
    elements: frozenset[ir.Sym]  # members' tiles kept as locals of the loop body, never stored
    hoisted: tuple[ir.Stmt, ...]  # the statements between the members, emitted before the loop


def fused_loops(fn: ir.Function, taken: Collection[int], fixed: Collection[int],
                in_place: Collection[ir.Sym], movable: Collection[ir.Sym] = ()) -> dict[int, FusedLoop]:
    """{id of a run's first statement: the run}. `taken`: ids of the statements another CPU pattern
    emits (never members); `fixed`: those of them whose emission reads what other statements
    computed (never hoisted); `in_place`: the tiles read or written in place
    (row_views.py, operand_views.py), whose assignments stay where they are and which stay tiles,
    but for `movable`: the loads of rows read in place, which may be emitted before a loop (only
    members, which write no memory, then move past them).
    One pass over each statement list, each statement's reads and writes taken once."""
    found: dict[int, FusedLoop] = {}
    for body in bodies(fn.body):
        run = _Run()
        for s in body:
            if _member(s, taken, in_place):
                direct, broadcast = element_reads(s.value)
                if run.members and run.joins(s, broadcast):
                    run.hoisted.extend(run.pending)
                    run.pending.clear()
                else:
                    run.close(fn, in_place, found)
                    run = _Run()
                run.add(s, direct, broadcast, in_place)
            elif run.members and run.hoistable(s, fixed, in_place, movable):
                run.pending.append(s)
            else:
                run.close(fn, in_place, found)
                run = _Run()
        run.close(fn, in_place, found)
    return found


@dataclass
class _Run:
    members: list[ir.Assign] = field(default_factory=list)
    hoisted: list[ir.Stmt] = field(default_factory=list)
    pending: list[ir.Stmt] = field(default_factory=list)  # passed over since the last member
    written: set[ir.Sym] = field(default_factory=set)  # the members' targets
    read: set[ir.Sym] = field(default_factory=set)  # everything the members read
    through_broadcast: set[ir.Sym] = field(default_factory=set)  # the tiles they read at other elements
    direct: list[dict[ir.Sym, int]] = field(default_factory=list)  # per member: tiles read at its element
    reads_rows: bool = False  # a member reads an array's row in place

    def add(self, s: ir.Assign, direct: dict[ir.Sym, int], broadcast: set[ir.Sym],
            in_place: Collection[ir.Sym]) -> None:
        """s joins the run; (direct, broadcast): its element_reads."""
        reads = reads_of(s)
        self.members.append(s)
        self.written.add(s.target)
        self.read |= reads
        self.through_broadcast |= broadcast
        self.direct.append(direct)
        self.reads_rows = self.reads_rows or any(x in in_place for x in reads)

    @property
    def tile(self) -> TileT:
        t = self.members[0].target.type
        assert isinstance(t, TileT)  # _member
        return t

    def joins(self, s: ir.Assign, broadcast: set[ir.Sym]) -> bool:
        """s has the run's shape and reads no tile the run writes, nor is read by it, through a
        broadcast (`broadcast`: the tiles s reads at other elements, element_reads)."""
        assert isinstance(s.target.type, TileT)  # _member
        if tuple(s.target.type.shape) != tuple(self.tile.shape):
            return False
        return not (broadcast & (self.written | {s.target}) or s.target in self.through_broadcast)

    def hoistable(self, s: ir.Stmt, fixed: Collection[int], in_place: Collection[ir.Sym],
                  movable: Collection[ir.Sym]) -> bool:
        """Whether s, after the members, may be emitted before them all."""
        if not isinstance(s, (ir.Assign, ir.ExprStmt)) or id(s) in fixed or self.reads_rows:
            return False  # (with a row read in place, nothing may run between its load and the loop)
        if isinstance(s, ir.Assign) and ((s.target in in_place and s.target not in movable) or is_fusible(s.value)):
            return False
        return not (reads_of(s) & self.written or writes_of([s]) & (self.written | self.read))

    def close(self, fn: ir.Function, in_place: Collection[ir.Sym], found: dict[int, FusedLoop]) -> None:
        run = self.members
        if len(run) < 2:
            return
        tile = self.tile
        extents = {split_extent(m.value, tile) for m in run} - {None}
        reads, writes = read_write_counts(fn)
        elements: set[ir.Sym] = set()
        later: dict[ir.Sym, int] = {}  # reads by the members after the one at hand
        for m, direct in zip(reversed(run), reversed(self.direct)):
            t = m.target
            count = later.get(t, 0)
            if (count and reads.get(t, 0) == count and t not in in_place and t not in fn.params
                    and writes.get(t, 0) == 1 and not _storage_only(t.type)):
                elements.add(t)
            for x, n in direct.items():
                later[x] = later.get(x, 0) + n
        found[id(run[0])] = FusedLoop(tuple(run), tile, extents.pop() if extents else None, frozenset(elements),
                                      tuple(self.hoisted))


def _member(s: ir.Stmt, taken: Collection[int], in_place: Collection[ir.Sym]) -> TypeGuard[ir.Assign]:
    if not (isinstance(s, ir.Assign) and is_fusible(s.value) and id(s) not in taken and s.target not in in_place):
        return False
    t = s.target.type
    if not (isinstance(t, TileT) and t.is_concrete and isinstance(t.dtype, Scalar)):
        return False
    return builtin_only(s.value)


def _storage_only(t: object) -> bool:
    return isinstance(t, TileT) and isinstance(t.dtype, Scalar) and t.dtype.storage_only
