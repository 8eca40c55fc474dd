"""Compiling a kernel costs the same work per statement whatever its length (issue #17: emit time
linear in program size; bench/emit_scaling.py times 2,000 and 20,000 statements).

Counted, not timed: the Python and builtin calls that check + generate (both targets, every file)
make, through a profile hook on the compile thread. A pass that walks the whole kernel per
statement, copies the body per rewrite or rescans a list per candidate makes each added statement
cost more than the last; linear work adds the same count for each one.
"""
from __future__ import annotations

import sys

import pytest

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "bench"))
from emit_scaling import program  # noqa: E402


def _calls(n: int, kind: str) -> int:
    """Calls made while checking and generating every file of the n-statement program."""
    from tilec.driver import generate
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    flags = {"block_dim": 256, "target": "all", "debug": False, "max_shared": 48 * 1024, "emit_only": True}
    src = program(n, kind)
    count = [0]

    def hook(frame, event, arg):
        if event == "call" or event == "c_call":
            count[0] += 1

    def run() -> int:
        sys.setprofile(hook)  # this thread only: run_deep's compile thread
        try:
            generate(normalize_module(compile_source(src, f"{kind}.py").module), src, flags)
        finally:
            sys.setprofile(None)
        return count[0]

    return run_deep(run)


@pytest.mark.parametrize("kind", ["scalar", "tiles"])
def test_each_added_statement_costs_the_same_calls(kind):
    """40 -> 80 -> 160 statements: the second 80 added may cost at most 2.2x the calls the first 40
    added (linear: 2x; a pass quadratic in the statements: 4x)."""
    _calls(8, kind)  # the first compile also loads templates and builds lazy tables
    small, middle, large = (_calls(n, kind) for n in (40, 80, 160))
    first, second = middle - small, large - middle
    assert first > 0 and second <= 2.2 * first, (small, middle, large)
