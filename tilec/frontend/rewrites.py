"""Calls that a lowering rewrote into other ops (run-time scaled matmuls, expanded `wp.tile(v)`).

Mixed into `FunctionChecker`. A rewrite records which variables its statement form updates in place
(`[]`: none, the result is a fresh value even where its outer op is an in-place op such as
tile_assign), and the op a diagnostic should name; `check.mutated_args` and the "call it as a
statement" diagnostics ask here first.
"""
from __future__ import annotations

from .. import ir


class RewriteRecords:
    def note_rewrite(self, result: ir.Expr, op: str, rebinds: list[tuple[str, ir.Expr]]) -> None:
        records = self.__dict__.setdefault("_rewrites", {})
        records[id(result)] = (result, op, rebinds)  # holding result keeps its id unique

    def rewrite_of(self, call: ir.Expr) -> tuple[str, list[tuple[str, ir.Expr]]] | None:
        """(op, [(param, Var) it updates]) of a rewritten call, else None."""
        held: tuple[ir.Expr, str, list[tuple[str, ir.Expr]]] | None = self.__dict__.get("_rewrites", {}).get(id(call))
        return held[1:] if held is not None and held[0] is call else None

    def op_name(self, call: ir.OpCall) -> str:
        """The op a diagnostic names: the user's op for a rewritten call."""
        held = self.rewrite_of(call)
        return held[0] if held is not None else call.op
