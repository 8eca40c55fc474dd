"""wp.lower_bound(a, value) and wp.lower_bound(a, begin, end, value) of a sorted array, as Warp 1.19
searches: the first index of the range whose element is not below value, and the range's last index
(not its end) when every element is below (Warp's search stops there; numpy's searchsorted would
give the end). The expected values are Warp 1.19's on the CPU for the same program and inputs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir, first_error
from tilec.codegen.sources import adjoint_warnings
from tilec.interp import Interpreter

SEARCH = '''import warp as wp


@wp.kernel
def search(A: wp.array(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=int), ranged: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.lower_bound(A, v[i])
    ranged[i] = wp.lower_bound(A, 2, 5, v[i])
'''
A = np.array([0.5, 1.0, 1.0, 2.0, 3.5, 4.0, 4.0, 9.0], np.float32)
V = np.array([-1.0, 0.5, 0.7, 1.0, 1.5, 4.0, 8.0, 9.0, 10.0, 100.0], np.float32)
WARP_OUT = [0, 0, 1, 1, 3, 5, 7, 7, 7, 7]
WARP_RANGED = [2, 2, 2, 2, 3, 4, 4, 4, 4, 4]


@pytest.mark.build
@needs_cxx
def test_lower_bound_as_warp():
    mod = build(SEARCH, "search")
    out, ranged = np.zeros(len(V), np.int32), np.zeros(len(V), np.int32)
    mod.search.launch(dim=len(V), inputs=[A, V, out, ranged])
    assert (out.tolist(), ranged.tolist()) == (WARP_OUT, WARP_RANGED)


def test_the_interpreter_searches_as_warp():
    out, ranged = np.zeros(len(V), np.int32), np.zeros(len(V), np.int32)
    Interpreter(compile_ir(SEARCH, "search")).launch("search", len(V), [A, V, out, ranged], tiled=False)
    assert (out.tolist(), ranged.tolist()) == (WARP_OUT, WARP_RANGED)


def test_an_index_found_in_an_array_the_kernel_writes_refuses_the_adjoint():
    """A search reads any element of its range: with the kernel writing the array, one thread may
    search elements another writes, and the adjoint's replay would search the array as the kernel
    left it: refused (TC0503) at the search, as for any read of elements the kernel writes."""
    source = '''import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    j = wp.lower_bound(A, x[i])
    y[i] = x[j] * x[j]
    A[i] = 0.0
'''
    (d,) = adjoint_warnings(compile_ir(source, "k"))
    assert (d.code, d.span.line, d.span.col) == ("TC0503", 7, 9)
    clean = source.replace("    A[i] = 0.0\n", "")
    assert adjoint_warnings(compile_ir(clean, "k")) == []


def test_the_arguments_are_checked():
    kernel = '''import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float), M: wp.array2d(dtype=float)):
    i = wp.tid()
    j = CALL
'''
    assert first_error(kernel.replace("CALL", "wp.lower_bound(A, 0, 1.0)")) == (
        "7:24: TC0304: lower_bound: takes (a, value) or (a, begin, end, value), got 2 argument(s) after the array")
    assert first_error(kernel.replace("CALL", "wp.lower_bound(M, 1.0)")).startswith(
        "7:24: TC0203: lower_bound: searches a 1-d array of scalars")
    assert first_error(kernel.replace("CALL", "wp.lower_bound(A, i)")) == (
        "7:27: TC0202: lower_bound: value is an int32 scalar but the array holds float32")
    ints = kernel.replace("A: wp.array(dtype=float)", "A: wp.array(dtype=int)")
    assert first_error(ints.replace("CALL", "wp.lower_bound(A, 1.5)")) == (  # Warp 1.19 refuses it too
        "7:27: TC0202: lower_bound: value is a float literal but the array holds int32")
