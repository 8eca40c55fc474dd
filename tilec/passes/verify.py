"""The IR verifier: structural invariants of the typed IR, separate from the passes.

Run after every pass in the tests. Returns a list of violations (empty when
the IR is well formed); it never raises for bad IR.
"""
from __future__ import annotations

from .. import ir
from ..ops import OPS
from ..ir.types import BOOL, INT32, ArrayT, MatT, Scalar, TileT, TupleT, VecT


def verify_module(module: ir.Module) -> list[str]:
    problems: list[str] = []
    known_funcs: set[str] = set()
    for fn in module.funcs:
        problems += verify_function(fn, known_funcs)
        known_funcs.add(fn.name)
    for fn in module.kernels:
        problems += verify_function(fn, known_funcs)
    return problems


def verify_function(fn: ir.Function, known_funcs: set[str]) -> list[str]:
    out: list[str] = []
    where = f"{fn.kind} {fn.name}"
    defined = set(fn.params)
    for stmt in ir.walk_stmts(fn.body):
        if isinstance(stmt, ir.Assign):
            defined.add(stmt.target)
        elif isinstance(stmt, ir.Unpack):
            defined.update(stmt.targets)
        elif isinstance(stmt, ir.For):
            defined.add(stmt.var)
    _block(fn, fn.body, defined, known_funcs, 0, out, where)
    return out


def _block(fn: ir.Function, body: tuple[ir.Stmt, ...], defined: set[ir.Sym], funcs: set[str], loops: int,
           out: list[str], where: str) -> None:
    for s in body:
        at = _Where(where, s)
        for e in ir.stmt_exprs(s):
            _expr(e, defined, funcs, out, at)
        if isinstance(s, ir.Assign) and s.value.type != s.target.type:
            out.append(f"{at}: assigns {s.value.type} to {s.target} of type {s.target.type}")
        if isinstance(s, ir.Unpack):
            t = s.value.type
            if not isinstance(t, TupleT) or tuple(x.type for x in s.targets) != t.items:
                out.append(f"{at}: unpack types differ")
        if isinstance(s, (ir.If, ir.While)) and not isinstance(s.cond.type, Scalar):
            out.append(f"{at}: condition is not a scalar")
        if isinstance(s, ir.For) and s.var.type != INT32:
            out.append(f"{at}: loop variable is not int32")
        if isinstance(s, (ir.Break, ir.Continue)) and loops == 0:
            out.append(f"{at}: {type(s).__name__} outside a loop")
        if isinstance(s, ir.Return) and fn.kind == "kernel" and s.value is not None:
            out.append(f"{at}: kernel returns a value")
        inner = loops + (1 if isinstance(s, (ir.For, ir.While)) else 0)
        for block in ir.child_blocks(s):
            _block(fn, block, defined, funcs, inner, out, where)


class _Where:
    """A statement's location, formatted only when a problem is reported."""

    def __init__(self, where: str, stmt: ir.Stmt):
        self.where, self.stmt = where, stmt

    def __format__(self, spec: str) -> str:
        return f"{self.where} line {self.stmt.span.line}"


def _expr(e: ir.Expr, defined: set[ir.Sym], funcs: set[str], out: list[str], at: _Where) -> None:
    for sub in ir.walk_expr(e):
        if isinstance(sub, ir.Var) and sub.sym not in defined:
            out.append(f"{at}: {sub.sym} is read but never defined")
        elif isinstance(sub, ir.OpCall) and sub.op not in OPS:
            out.append(f"{at}: unknown op {sub.op}")
        elif isinstance(sub, ir.Call) and sub.func not in funcs:
            out.append(f"{at}: call of unknown function {sub.func}")
        elif isinstance(sub, ir.Const) and not isinstance(sub.type, Scalar) and not (
                isinstance(sub.type, (VecT, MatT)) and sub.value == 0):  # a vector/matrix constant is its zero
            out.append(f"{at}: constant of non-scalar type")
        t = sub.type
        if isinstance(t, TileT) and not t.is_concrete:
            out.append(f"{at}: tile with symbolic shape {t.shape} after checking")
        if isinstance(t, (ArrayT,)) and not isinstance(sub, ir.Var) and not (
                isinstance(sub, ir.OpCall) and sub.op in ("array_view", "array_load", "zeros", "mesh_points",
                                                          "mesh_velocities", "mesh_indices")):
            # a view; a held array; a local array (its statement binds it: check.py); wp.mesh_get's arrays
            out.append(f"{at}: array-valued expression other than a variable")
    _ = BOOL
