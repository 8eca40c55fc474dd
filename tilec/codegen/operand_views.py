"""Transposes a CPU matmul can read in place.

The matmul adjoint (ops/adjoints.py) multiplies by `tile_transpose(b)` and `tile_transpose(a)`;
normalize.py gives each transpose its own temporary, so a plain emission copies the operand
into that temporary first. On the CPU, gemm.h reads a transposed operand through strides, so
`transposed_operands` finds the temporaries that can be skipped: a tile assigned once from
`tile_transpose(x)` of a float/double tile, read exactly once, as operand `a` or `b` of the
`tile_matmul` in the very next statement (x cannot change in between), where that matmul does
not write x. The emitter then declares no temporary and passes `tl::transposed(x)` instead.
"""
from __future__ import annotations

from .. import ir
from ..ir.types import TileT

_VIEW_DTYPES = ("float32", "float64")  # gemm.h; half operands keep their copy


def transposed_operands(fn: ir.Function) -> dict:
    """{temporary Sym: the Var it transposes} for every transpose the next matmul can read in place."""
    reads: dict = {}
    writes: dict = {}
    for s in ir.walk_stmts(fn.body):
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Var):
                    reads[x.sym] = reads.get(x.sym, 0) + 1
        for sym in _written(s):
            writes[sym] = writes.get(sym, 0) + 1
    found: dict = {}
    for body in _bodies(fn.body):
        for first, second in zip(body, body[1:]):
            source = _transpose_source(first)
            if source is None or reads.get(first.target, 0) != 1 or writes.get(first.target, 0) != 1:
                continue
            if _matmul_reads(second, first.target) and second.target != source.sym:
                found[first.target] = source
    return found


def _transpose_source(s):
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_transpose"):
        return None
    (x,) = s.value.args
    if isinstance(x, ir.Var) and isinstance(x.type, TileT) and str(x.type.dtype) in _VIEW_DTYPES and x.sym != s.target:
        return x
    return None


def _matmul_reads(s, sym) -> bool:
    if not (isinstance(s, ir.Assign) and isinstance(s.value, ir.OpCall) and s.value.op == "tile_matmul"):
        return False
    return any(isinstance(a, ir.Var) and a.sym == sym for a in s.value.args[:2])


def _written(s) -> tuple:
    if isinstance(s, ir.Assign):
        return (s.target,)
    if isinstance(s, ir.Unpack):
        return tuple(s.targets)
    if isinstance(s, ir.For):
        return (s.var,)
    return ()


def _bodies(body):
    """Every statement list: the body and, depth first, each nested block."""
    body = tuple(body)
    yield body
    for s in body:
        for block in ir.child_blocks(s):
            yield from _bodies(block)
