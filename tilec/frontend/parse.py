"""Parse: source text -> libcst tree with positions. Never imports the user file.

Python's own parser runs first so syntax errors are reported at their true
position; libcst then gives the concrete tree the checker lowers.
"""
from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from ..diagnostics import CompileError, Diagnostic, Span
from .positions import node_positions
from .statement_walk import subnodes


_MAYBE_STARRED = re.compile(r"[(,]\s*\*(?!\*)")


@dataclass
class Parsed:
    name: str  # module name: the file stem
    filename: str  # as the user gave it
    source: str
    tree: cst.Module
    _positions: dict[int, tuple[int, int, int, int]] | None = None  # id(node) -> (line, column, end line, end column), computed on first use
    _placed: list[cst.CSTNode] = field(default_factory=list)  # nodes place_like gave a position: alive while their id is a key
    _adopted: list[tuple[Parsed, cst.CSTNode]] = field(default_factory=list)  # (another module's parse, where its nodes point)

    def positions(self) -> Mapping[int, tuple[int, int, int, int]]:
        """id(node) -> (line, column, end line, end column) of every node of the tree (which
        keeps the ids valid) and of the nodes place_like placed."""
        if self._positions is None:
            try:
                self._positions = node_positions(self.tree)
            except RecursionError:
                raise RecursionError("source nested too deeply for position metadata") from None
            for other, at in self._adopted:
                self._adopt_positions(other, at)
        return self._positions

    @functools.cached_property
    def may_unpack(self) -> bool:
        """Whether the source may hold a `*` argument (`f(*v)`; a multiplication may match too: the
        answer only spares most files a walk of every statement, starred_args.py)."""
        return _MAYBE_STARRED.search(self.source) is not None

    def span(self, node: cst.CSTNode) -> Span:
        def resolve() -> tuple[int, int, int, int]:
            positions = self.positions()
            found = positions.get(id(node))
            if found is None:  # made in an imported module after it was adopted (a factory's func): its import
                found = next((positions[id(at)] for other, at in self._adopted if id(node) in other.positions()), None)
            assert found is not None, "a node of no parse this file knows"
            line, column, end_line, end_column = found
            return (line, column + 1, end_line, end_column + 1)

        return Span(resolve=resolve)

    def where(self, node: cst.CSTNode) -> str:
        """`line N` of a node of this file; `other.py:N` of one an imported module's parse holds (adopt)."""
        home = self._home(node)
        return f"line {self.span(node).line}" if home is self else f"{Path(home.filename).name}:{home.span(node).line}"

    def _home(self, node: cst.CSTNode) -> Parsed:
        """The parse whose own tree holds `node`: this one, or the imported module's (adopted, transitively)."""
        for other, _ in self._adopted:
            if id(node) in other.positions():
                return other._home(node)
        return self

    def place_all_like(self, made: cst.CSTNode, original: cst.CSTNode) -> None:
        """place_like for `made` and every node under it (an expression tilec spelled out is new all
        through)."""
        for node in subnodes(made):
            self.place_like(node, original)

    def replace_tree(self, tree: cst.Module) -> None:
        """The tree rewritten before any position was asked for (module_aliases.py: it renders the same
        text, so positions come from it as they would from the original)."""
        assert self._positions is None and not self._placed and not self._adopted
        self.tree = tree

    def adopt(self, other: Parsed, at: cst.CSTNode) -> None:
        """Every node of another module's tree (frontend/imports.py) takes the position of `at`, the
        import statement here: a diagnostic at one of them points into this file."""
        self._adopted.append((other, at))
        if self._positions is not None:
            self._adopt_positions(other, at)

    def _adopt_positions(self, other: Parsed, at: cst.CSTNode) -> None:
        positions = self._positions
        assert positions is not None
        where = positions[id(at)]
        for node in subnodes(other.tree):
            positions.setdefault(id(node), where)

    def place_like(self, made: cst.CSTNode, original: cst.CSTNode) -> None:
        """Gives a node tilec made from the user's (an annotation with values substituted) the
        position of the one it replaces, so diagnostics at it point into the file."""
        self.positions()
        positions = self._positions
        assert positions is not None  # just computed
        if id(original) in positions and id(made) not in positions:
            positions[id(made)] = positions[id(original)]
            self._placed.append(made)


def dotted(node: cst.BaseExpression) -> str:
    """`a.b.c` of a name or attribute chain (an import's module, a decorator); "" for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return ""


MAX_EXPRESSION_DEPTH = 1000
# libcst's parser also takes time growing with how deep calls nest, summed over the calls (measured:
# 60 sums of 120-deep calls, 13 s; a 184 KB file of 151 sums of 160-deep calls, 54 s, found by
# bench/fuzz_hostile.py; 3000 lines of `f(g(h(x)))`, 1 s): each call counts the calls enclosing it,
# itself included, and the file's total stays under CALL_NESTING_BUDGET (about 3 s of parsing). The
# largest file of Warp's own source, context.py, totals 4,541.
CALL_NESTING_BUDGET = 100_000


def _deepest_expression(tree: ast.AST) -> tuple[ast.expr, str] | None:
    """The first expression node nested deeper than MAX_EXPRESSION_DEPTH, or the call at which the
    calls' nesting summed exceeds CALL_NESTING_BUDGET (an iterative walk), with what to say of it; else
    None."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    pop, push = stack.pop, stack.append
    node_class, expr_class, context_class, call_class = ast.AST, ast.expr, ast.expr_context, ast.Call
    nesting = 0
    while stack:
        node, depth, calls = pop()
        if isinstance(node, expr_class):
            depth += 1
            if depth > MAX_EXPRESSION_DEPTH:
                return node, f"an expression nested deeper than {MAX_EXPRESSION_DEPTH} levels; split it into smaller " \
                    "statements"
            if isinstance(node, call_class):
                calls += 1
                nesting += calls
                if nesting > CALL_NESTING_BUDGET:
                    return node, ("calls nested too deeply, too many of them for the parser; split them into smaller "
                                  "statements")
        # ast.iter_child_nodes, inline (two generators per node were most of the walk), without the
        # load/store contexts: leaves that are no expression
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, node_class):
                if not isinstance(value, context_class):
                    push((value, depth, calls))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_class) and not isinstance(item, context_class):
                        push((item, depth, calls))
    return None


def parse(source: str, filename: str, name: str) -> Parsed:
    try:
        with warnings.catch_warnings():  # Python's own SyntaxWarnings would print the file's text raw
            warnings.simplefilter("ignore")
            python_tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        line = e.lineno or 1
        col = e.offset or 1
        end = e.end_offset if e.end_offset and e.end_lineno == line and e.end_offset > col else col + 1
        raise CompileError([Diagnostic("TC0001", syntax_message(e.msg), Span(line, col, line, end))])
    found = _deepest_expression(python_tree)
    if found is not None:  # libcst's parser takes time superlinear in an expression's depth
        deep, message = found
        line, col = deep.lineno, deep.col_offset + 1
        raise CompileError([Diagnostic("TC0113", message, Span(line, col, line, col + 1))])
    try:
        tree = cst.parse_module(source)
    except cst.ParserSyntaxError as e:
        col = e.raw_column + 1
        raise CompileError([Diagnostic("TC0001", syntax_message(e.message), Span(e.raw_line, col, e.raw_line, col + 1))])
    return Parsed(name, filename, source, tree)


def syntax_message(python_message: str) -> str:
    """Python's message, said once: `invalid syntax`, `syntax error: '(' was never closed`."""
    message = python_message.strip().rstrip(".")
    return message if "syntax" in message.lower() else f"syntax error: {message}"

