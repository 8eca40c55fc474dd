"""Typed module constants (`N = wp.constant(wp.int32(3))`): the constant has the dtype Warp gives it.

Values checked against Warp 1.19 on the CPU by hand (2**-40 survives only in float64; uint8 250 + 10 wraps
to 4); the diagnostics (a value the dtype cannot hold, mixing dtypes) are in tests/ui/typed_constants.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir

SOURCE = '''
import warp as wp
N = wp.constant(wp.int32(3))
X = wp.constant(wp.float64(1.0 + 2.0 ** -40))
U = wp.constant(wp.uint8(250))
TILE = wp.constant(wp.int32(4))


@wp.kernel
def typed(out: wp.array(dtype=wp.float64), ints: wp.array(dtype=wp.int32), t: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = X - wp.float64(1.0)
    ints[0] = wp.int32(U + wp.uint8(10))
    ints[1] = N * 5
    x = wp.tile_ones(shape=TILE, dtype=float)
    wp.tile_store(t, x)
'''


def test_constants_keep_their_dtype_in_the_ir():
    from tilec import ir

    source = SOURCE + '''

@wp.kernel
def stores(a: wp.array(dtype=wp.uint8), b: wp.array(dtype=wp.float64), c: wp.array(dtype=wp.int32)):
    i = wp.tid()
    a[i] = U
    b[i] = X
    c[i] = N
'''
    module = compile_ir(source, "typed_consts_ir")
    kernel = next(k for k in module.kernels if k.name == "stores")
    consts = [c for s in ir.walk_stmts(kernel.body) for r in ir.stmt_exprs(s) for c in ir.walk_expr(r)
              if isinstance(c, ir.Const)]
    assert [(c.value, c.type.name, c.weak) for c in consts] == [
        (250, "uint8", False), (1.0 + 2.0 ** -40, "float64", False), (3, "int32", False)]


@pytest.mark.build
@needs_cxx
def test_typed_constants_values():
    mod = build(SOURCE, "typed_consts")
    out, ints, t = np.zeros(1, np.float64), np.zeros(2, np.int32), np.zeros(4, np.float32)
    mod.typed.launch_tiled(dim=1, inputs=[out, ints, t])
    assert out[0] == 2.0 ** -40  # float32 would round X to 1.0 and give 0
    assert list(ints) == [4, 15]  # uint8 arithmetic wraps, as in Warp
    assert list(t) == [1.0] * 4  # a typed int constant is a compile-time shape too


ARANGE = '''
import warp as wp
START = wp.constant(wp.int64(2**54))
STOP = wp.constant(wp.int64(2**54 + 3 * 2**30 - 1))
STEP = wp.constant(wp.int64(2**31))


@wp.kernel(enable_backward=False)
def wide(out: wp.array(dtype=wp.float32)):
    wp.tile_store(out, wp.tile_arange(START, STOP, STEP, dtype=wp.float32))
'''


@pytest.mark.build
@needs_cxx
def test_int64_constants_bound_a_float_range():
    """int64 bounds past int32 are range bounds, not C ints: rounded to float32 (stop to 2**54 + 2**31), one
    element, as Warp 1.19 gives (its tile test expects [2**54, -1, -1])."""
    mod = build(ARANGE, "typed_arange")
    out = np.full(3, -1.0, np.float32)
    mod.wide.launch_tiled(dim=1, inputs=[out])
    assert list(out) == [float(2**54), -1.0, -1.0]


UNDERFLOW = '''
import warp as wp
TINY = wp.constant(wp.float32(1.401298464324817e-45))


@wp.kernel(enable_backward=False)
def tiny(out: wp.array(dtype=wp.float32)):
    wp.tile_store(out, wp.tile_arange(0.0, TINY, 2.0, dtype=wp.float32))
'''


@pytest.mark.build
@needs_cxx
def test_a_float_range_whose_count_underflows_keeps_its_start():
    """range(0, the smallest float32 subnormal, 2): (stop - start) / step underflows to 0 in float32, but the
    range is not empty: one element, 0.0, as Warp 1.19 gives (tilec called it empty, TC0111)."""
    mod = build(UNDERFLOW, "typed_arange_underflow")
    out = np.full(3, -1.0, np.float32)
    mod.tiny.launch_tiled(dim=1, inputs=[out])
    assert list(out) == [0.0, -1.0, -1.0]
