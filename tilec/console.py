"""What the command line prints while it works: coloured diagnostics and build progress.

`use_color(choice, stream)` decides `--color auto|always|never` (auto: a terminal and no
NO_COLOR). `colorize` adds ANSI styles to text `diagnostics.render` produced, so the plain
rendering stays the one source of truth. `Progress` times each step of a build: with
`--verbose` every step is printed with its time; on a terminal without it a one-line
`[k/n] step` indicator is redrawn and cleared; otherwise it is silent.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Literal, TextIO

import click

_HEAD = re.compile(r"^(?P<loc>[^\n]*?:(?:\d+:\d+:)?) (?P<sev>error|warning)(?P<code>\[TC\d{4}\])?: (?P<msg>.*)$")
_GUTTER = re.compile(r"^ *\d* \|")
_SEVERITY_COLOR = {"error": "red", "warning": "yellow"}


def use_color(choice: str, stream: TextIO) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def colorize(text: str) -> str:
    """ANSI colours for rendered diagnostics: the severity, the carets, help and notes."""
    out, color = [], "red"
    for line in text.split("\n"):
        m = _HEAD.match(line)
        if m:
            color = _SEVERITY_COLOR[m["sev"]]
            line = (click.style(m["loc"], bold=True) + " " + click.style(m["sev"] + (m["code"] or ""), fg=color,
                                                                         bold=True)
                    + ": " + click.style(m["msg"], bold=True))
        elif _GUTTER.match(line):  # "   |", "14 | source", "   |     ^^^^ label"
            gutter, _, rest = line.partition("|")
            if rest.strip().startswith("^"):
                rest = click.style(rest, fg=color, bold=True)
            line = click.style(gutter + "|", fg="blue", bold=True) + rest
        elif line.lstrip().startswith("= help:"):
            line = click.style(line, fg="cyan")
        elif line.lstrip().startswith("= note:"):
            line = click.style(line, bold=True)
        out.append(line)
    return "\n".join(out)


class Progress:
    """Times the steps of one command; see the module docstring for what it prints."""

    def __init__(self, verbose: bool, echo: Callable[..., Any] = click.echo, tty: bool = False, total: int = 0):
        self.verbose, self.echo, self.tty = verbose, echo, tty
        self.total, self.done = total, 0
        self.times: list[tuple[str, float]] = []  # (label, seconds)

    def expect(self, more: int) -> None:
        self.total += more

    def step(self, label: str) -> _Step:
        return _Step(self, label)

    def _started(self, label: str) -> None:
        if self.tty and not self.verbose and self.total > 1:
            self.echo(f"\r[{self.done + 1}/{self.total}] {label}\x1b[K", nl=False, err=True)

    def _finished(self, label: str, seconds: float) -> None:
        self.done += 1
        self.times.append((label, seconds))
        if self.verbose:
            self.echo(f"{label}: {seconds:.2f} s", err=True)

    def close(self) -> None:
        if self.verbose and len(self.times) > 1:
            self.echo(f"total: {sum(t for _, t in self.times):.2f} s", err=True)
        if self.tty and not self.verbose and self.total > 1:
            self.echo("\r\x1b[K", nl=False, err=True)


class _Step:
    def __init__(self, progress: Progress, label: str):
        self.progress, self.label = progress, label

    def __enter__(self) -> _Step:
        self.start = time.perf_counter()
        self.progress._started(self.label)
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        if exc[0] is None:
            self.progress._finished(self.label, time.perf_counter() - self.start)
        return False
