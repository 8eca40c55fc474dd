"""Source positions of every libcst node, as libcst's PositionProvider computes them, in one pass.

`node_positions(tree)` -> {id(node): (line, column, end_line, end_column)}: lines 1-based, columns
0-based, the same syntactic ranges (and the same line model: `\\r\\n`, `\\r` and `\\n` each end a
line) as `MetadataWrapper(tree).resolve(PositionProvider)`, which tests/test_positions.py checks.

Why not the provider itself: it re-renders the module through a codegen state that builds two
dataclass positions per node, a generator-based context manager per expression and a regex split
per token, and its wrapper first walks the whole tree once more for batchable providers (there
are none). That was a third of emitting a 2,000-statement kernel. This state records plain tuples,
keyed by the node's id (a libcst node's hash is a Python method: two calls per node were a third
of this pass; the ids hold while the tree lives), and is otherwise the same protocol: nodes call `add_token`, `before_codegen`/`after_codegen` and
`record_syntactic_position` while rendering themselves.
"""
from __future__ import annotations

import re
from typing import Any

import libcst as cst

Position = tuple[int, int, int, int]  # line, column, end line, end column (columns 0-based)

_NEWLINE = re.compile(r"\r\n?|\n")  # libcst's line model (position_provider.NEWLINE_RE)


def node_positions(tree: cst.Module) -> dict[int, Position]:
    """id(node) of every node of `tree` -> its syntactic range (see the module docstring): valid
    while `tree` lives."""
    state = _PositionState(tree.default_indent, tree.default_newline)
    tree._codegen(state)  # type: ignore[arg-type]  # the codegen protocol, duck-typed
    return state.computed


class _Syntactic:
    """`record_syntactic_position`'s context, one per state: the range of what renders inside it,
    or the start of `start_node` / the end of `end_node` where a node's syntax begins or ends at a
    child. Contexts nest strictly, so each entry is a tuple on the state's stack (an object per
    expression node was a tenth of this pass)."""

    __slots__ = ("state",)

    def __init__(self, state: _PositionState):
        self.state = state

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        state = self.state
        computed = state.computed
        node, start_node, end_node, line, column = state.syntactic.pop()
        if exc[0] is not None:  # unwinding (a RecursionError on a too-deep file): leave it to propagate as is
            return
        start = computed[id(start_node)] if start_node is not None else (line, column)
        end = computed[id(end_node)][2:] if end_node is not None else (state.line, state.column)
        computed[id(node)] = (start[0], start[1], end[0], end[1])


class _PositionState:
    """The codegen state libcst nodes render into, tracking line and column instead of text."""

    __slots__ = ("default_indent", "default_newline", "provider", "indent_tokens", "tokens", "line",
                 "column", "stack", "computed", "syntactic", "recorder")

    def __init__(self, default_indent: str, default_newline: str):
        self.default_indent = default_indent
        self.default_newline = default_newline
        self.provider = None
        self.indent_tokens: list[str] = []
        self.tokens: list[str] = []  # Module's codegen asks whether anything was rendered
        self.line = 1
        self.column = 0
        self.stack: list[tuple[int, int]] = []
        self.computed: dict[int, Position] = {}
        self.syntactic: list[tuple[Any, Any, Any, int, int]] = []  # open record_syntactic_position contexts
        self.recorder = _Syntactic(self)

    def increase_indent(self, value: str) -> None:
        self.indent_tokens.append(value)

    def decrease_indent(self) -> None:
        self.indent_tokens.pop()

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:  # positions already counted it, as libcst's provider does
            self.tokens.pop()

    def before_codegen(self, node: Any) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: Any) -> None:
        line, column = self.stack.pop()
        # a syntactic range recorded inside wins
        self.computed.setdefault(id(node), (line, column, self.line, self.column))

    def record_syntactic_position(self, node: Any, *, start_node: Any = None, end_node: Any = None) -> _Syntactic:
        self.syntactic.append((node, start_node, end_node, self.line, self.column))
        return self.recorder
