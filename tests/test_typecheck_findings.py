"""Bugs the type checker found in the compiler (tests/test_typecheck.py runs it): each was a
traceback ("internal compiler error") where a diagnostic belongs."""
from __future__ import annotations

from harness import first_error


def test_bytes_shape_variable_is_a_diagnostic():
    # libcst evaluates b"M" to bytes, which has no isidentifier(): the annotation reader crashed
    source = '''import tilec as tl


@tl.func
def f(a: tl.Tile[tl.float32, b"M"]) -> tl.float32:
    return tl.tile_sum(a)[0]


@tl.kernel
def k(x: tl.array1d(dtype=float), y: tl.array1d(dtype=float)):
    y[0] = f(tl.tile_load(x, shape=(4,)))
'''
    assert first_error(source) == "5:30: TC0409: parameter `a`: a shape variable must be an identifier"
