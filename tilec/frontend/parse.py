"""Parse: source text -> libcst tree with positions. Never imports the user file.

Python's own parser runs first so syntax errors are reported at their true
position; libcst then gives the concrete tree the checker lowers.
"""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import CompileError, Diagnostic, Span


@dataclass
class Parsed:
    name: str  # module name: the file stem
    filename: str  # as the user gave it
    source: str
    tree: cst.Module
    _positions: object = None  # node -> CodeRange, computed on first use

    def positions(self):
        if self._positions is None:
            try:
                self._positions = MetadataWrapper(self.tree, unsafe_skip_copy=True).resolve(PositionProvider)
            except KeyError as e:  # libcst's provider turns a RecursionError on a deep tree into this
                if isinstance(e.__context__, RecursionError):
                    raise RecursionError("source nested too deeply for position metadata") from None
                raise
        return self._positions

    def span(self, node: cst.CSTNode) -> Span:
        def resolve():
            r = self.positions()[node]
            return (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)

        return Span(resolve=resolve)


def parse(source: str, filename: str, name: str) -> Parsed:
    try:
        with warnings.catch_warnings():  # Python's own SyntaxWarnings would print the file's text raw
            warnings.simplefilter("ignore")
            ast.parse(source, filename=filename)
    except SyntaxError as e:
        line = e.lineno or 1
        col = e.offset or 1
        end = e.end_offset if e.end_offset and e.end_lineno == line and e.end_offset > col else col + 1
        raise CompileError([Diagnostic("TC0001", f"invalid syntax: {e.msg}".rstrip("."), Span(line, col, line, end))])
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        col = e.raw_column + 1
        raise CompileError([Diagnostic("TC0001", f"invalid syntax: {e.message}", Span(e.raw_line, col, e.raw_line, col + 1))])
    return Parsed(name, filename, source, tree)
