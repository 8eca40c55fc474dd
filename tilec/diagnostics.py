"""Diagnostics as values, their stable codes, and rustc-style rendering.

Passes collect `Diagnostic`s into a `Diagnostics` bag; the pipeline stops after
a pass that reported an error. Rendering needs only the source text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

# Stable codes: (code, slug). Messages are written where the error is found,
# but every code a pass may emit is listed here once.
CODES = {
    "TC0001": "syntax-error",
    "TC0002": "bad-name",
    "TC0101": "shape-mismatch",
    "TC0102": "matmul-shape",
    "TC0103": "broadcast-shape",
    "TC0104": "index-out-of-bounds",
    "TC0105": "reshape-size",
    "TC0106": "axis-out-of-range",
    "TC0107": "rank-mismatch",
    "TC0108": "non-constant-shape",
    "TC0109": "shared-memory-budget",
    "TC0110": "branch-type-mismatch",
    "TC0111": "bad-shape",
    "TC0112": "integer-overflow",
    "TC0113": "too-large",
    "TC0201": "dtype-mismatch",
    "TC0202": "store-dtype",
    "TC0203": "dtype-not-allowed",
    "TC0301": "unknown-name",
    "TC0302": "unknown-op",
    "TC0303": "bad-arguments",
    "TC0304": "offset-arity",
    "TC0305": "not-constant",
    "TC0311": "unknown-field",
    "TC0312": "unassigned-field",
    "TC0401": "unsupported-syntax",
    "TC0402": "recursion",
    "TC0403": "kernel-return",
    "TC0404": "missing-annotation",
    "TC0405": "rebind-type",
    "TC0406": "tile-condition",
    "TC0407": "map-function",
    "TC0408": "bad-call",
    "TC0409": "bad-annotation",
    "TC0410": "return-type",
    "TC0411": "nullable-array",
    "TC0430": "not-supported-yet",
    "TC0433": "unknown-binding",
    "TC0434": "binding-not-compiled",
    "TC0435": "late-binding",
    "TC0436": "generic-kernel",
    "TC0437": "strided-reshape",
    "TC0501": "not-differentiable",
    "TC0502": "overwritten-value-needed",
    "TC0503": "cross-thread-read",
    "TC0504": "atomic-old-value-used",
    "TC0505": "atomic-extreme",
    "TC0506": "racing-store",
    "TC0507": "atomic-swap",
    "TC0601": "gpu-shared-memory",
}


class Span:
    """A source range: 1-based first line and column, last line, and column one past the end.

    A span made by the parser resolves its numbers on first use: computing positions for a
    whole file is the costliest part of a check, and a clean `tilec check` needs none.
    """

    __slots__ = ("_values", "_resolve")

    def __init__(self, line: int = 0, col: int = 0, end_line: int = 0, end_col: int = 0,
                 resolve: Callable[[], tuple[int, int, int, int]] | None = None):
        self._values = None if resolve is not None else (line, col, end_line, end_col)
        self._resolve = resolve  # () -> (line, col, end_line, end_col)

    def _get(self) -> tuple[int, int, int, int]:
        if self._values is None:
            assert self._resolve is not None
            self._values = self._resolve()
            self._resolve = None
        return self._values

    line = property(lambda self: self._get()[0])
    col = property(lambda self: self._get()[1])
    end_line = property(lambda self: self._get()[2])
    end_col = property(lambda self: self._get()[3])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Span) and self._get() == other._get()

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return "Span(%d, %d, %d, %d)" % self._get()

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


NO_SPAN = Span(0, 0, 0, 0)


# How frontend/module_aliases.py spells `module.name` as one Python name (`newton·BodyFlags`: U+00B7 may
# continue an identifier); a diagnostic shows the dot again.
MODULE_DOT = "\u00b7"


@dataclass(frozen=True)
class Label:
    span: Span
    text: str


@dataclass(frozen=True)
class Diagnostic:
    code: str  # key of CODES
    message: str  # lowercase, no trailing period
    span: Span  # primary, narrowest span
    severity: str = "error"
    labels: tuple[Label, ...] = ()  # secondary spans
    notes: tuple[str, ...] = ()
    help: str | None = None

    def __post_init__(self) -> None:
        assert self.code in CODES, self.code
        if MODULE_DOT in self.message or (self.help is not None and MODULE_DOT in self.help):
            object.__setattr__(self, "message", self.message.replace(MODULE_DOT, "."))
            object.__setattr__(self, "help", self.help.replace(MODULE_DOT, ".") if self.help is not None else None)


@dataclass
class Diagnostics:
    """An ordered, de-duplicated collection filled by a pass."""

    items: list[Diagnostic] = field(default_factory=list)
    errors_reported: int = 0  # every error added, repeats included: a check that failed as another did failed

    def add(self, diag: Diagnostic) -> None:
        if diag.severity == "error":
            self.errors_reported += 1
        if diag not in self.items:
            self.items.append(diag)

    def error(self, code: str, message: str, span: Span, **kw: Any) -> None:
        self.add(Diagnostic(code, message, span, **kw))

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=lambda d: (d.span.line, d.span.col))


class CompileError(Exception):
    """Raised by the pipeline when a pass reported errors."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__(f"{len(diagnostics)} error(s)")
        self.diagnostics = diagnostics
        self.partial: object = None  # the pipeline's Compiled of the kernels that did check (`tilec check -v`)


def source_lines(source: str) -> list[str]:
    """Lines as Python's tokenizer and libcst count them: only \\n, \\r\\n and \\r end a line (not
    str.splitlines's form feed, U+2028, ...), so a snippet shows the line its span names."""
    return re.split(r"\r\n|\r|\n", source)


def render(diag: Diagnostic, filename: str, source: str) -> str:
    """`file:line:col: error[CODE]: message`, then the source line with carets."""
    head = f"{filename}:{diag.span.line}:{diag.span.col}: {diag.severity}[{diag.code}]: {diag.message}"
    out = [head]
    lines = source_lines(source)
    if 1 <= diag.span.line <= len(lines):
        out += _snippet(lines, diag.span, "")
    for label in diag.labels:
        if 1 <= label.span.line <= len(lines):
            out += _snippet(lines, label.span, label.text)
    out += [f"   = note: {n}" for n in diag.notes]
    if diag.help:
        out.append(f"   = help: {diag.help}")
    return "\n".join(out)


def _snippet(lines: list[str], span: Span, text: str) -> list[str]:
    number = str(span.line)
    pad = " " * len(number)
    line = lines[span.line - 1]
    end = span.end_col if span.end_line == span.line else len(line) + 1
    width = max(1, end - span.col)
    caret = " " * (span.col - 1) + "^" * width + (f" {text}" if text else "")
    return [f"{pad} |", f"{number} | {line}", f"{pad} | {caret.rstrip()}"]


class NotDifferentiable(Exception):
    """A kernel's adjoint cannot be derived correctly: the build warns (TC0501) at `span` and
    builds the kernel without an adjoint. Raised by autodiff and by the ops' adjoint rules."""

    def __init__(self, message: str, span: Span, code: str = "TC0501"):
        super().__init__(message)
        self.diagnostic = Diagnostic(code, message, span, severity="warning")
