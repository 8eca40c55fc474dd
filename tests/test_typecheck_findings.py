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


GENERIC = '''import tilec as tl


@tl.func
def first(a: tl.Tile[tl.float32, "M", "K"]) -> tl.float32:
    return {expr}


@tl.kernel
def k(x: tl.array2d(dtype=float), y: tl.array1d(dtype=float)):
    y[0] = first(tl.tile_load(x, shape=(4, 8)))
'''


def test_constant_index_into_a_shape_variable_is_a_diagnostic():
    # mypy: a tile extent is int | str; `0 <= value < "K"` raised TypeError in the subscript lowering
    assert first_error(GENERIC.format(expr="a[0, 1]")) == (
        "6:14: TC0111: index 0: cannot be checked with symbolic shapes; annotate concrete extents")
    assert first_error(GENERIC.format(expr="a[-1, 1]")).startswith("6:14: TC0111: index -1: ")


def test_slice_of_a_shape_variable_is_a_diagnostic():
    # slice(...).indices("M") raised TypeError
    assert first_error(GENERIC.format(expr="tl.tile_sum(a[0:2, :])[0]")) == (
        "6:26: TC0111: tile slice: cannot be checked with symbolic shapes; annotate concrete extents")


def test_bytes_key_of_an_overload_dict_is_a_diagnostic():
    # mypy: a string literal's evaluated_value is str | bytes; a b"a" key reached generics' name
    # matching (`k.startswith("#")` on bytes), a TypeError
    source = '''import tilec as tl
from typing import Any


@tl.kernel
def scale(a: tl.array(dtype=Any), s: float):
    i = tl.tid()
    a[i] = a[i] * s


tl.overload(scale, {b"a": tl.array(dtype=tl.float32)})
'''
    import pytest

    from harness import Options, compile_source
    from tilec.diagnostics import CompileError

    with pytest.raises(CompileError) as info:
        compile_source(source, "prog.py", Options(block_dim=32))
    assert [f"{d.span.line}:{d.span.col}: {d.code}: {d.message}" for d in info.value.diagnostics] == [
        "6:5: TC0436: generic kernel `scale` has no overload in this file: parameter `a` is `Any`",
        '11:20: TC0436: wp.overload: tilec reads the types from a literal list or dict '
        '(`[wp.array(dtype=wp.float32), ...]` or `{"name": type}`)']
