"""One-row tiles an element loop reads from and writes to the array in place (codegen/row_views.py,
memory.h tile_load_row / tile_store_row): which loads and stores qualify, and results against numpy
where the row lies inside a contiguous array (in place) and where it does not (the copy: a row over
the array's end, strided arrays, the same array read and written), forward and adjoint."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

SOURCE = '''
import warp as wp

N = 64


@wp.func
def f(x: float):
    return wp.tanh(x) * x + 0.5 * x * x - 1.0


@wp.kernel
def fused(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    wp.tile_store(Y, wp.tile_map(f, x), offset=(i * N,))


@wp.kernel
def rows(X: wp.array2d(dtype=float), b: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    m = wp.tile_broadcast(wp.tile_max(x), shape=(1, N))
    bias = wp.tile_load(b, shape=(1, N))
    wp.tile_store(Y, wp.tile_map(wp.exp, x - m) * bias, offset=(i, 0))


@wp.kernel
def update(X: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    wp.tile_store(X, x * 2.0 + 1.0, offset=(i * N,))


@wp.kernel
def twice(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    y = x * x
    wp.tile_store(Y, y + x, offset=(i * N,))
'''


def f(x):
    x = x.astype(np.float64)
    return np.tanh(x) * x + 0.5 * x * x - 1.0


def _kernel_text(cpp: str, name: str) -> str:
    start = cpp.index(f"k_{name}_forward")
    return cpp[start:cpp.index("\n}\n", start)]


def test_which_rows_are_read_and_written_in_place():
    cpp = generate(compile_ir(SOURCE, "rowviews"), SOURCE, build_flags(256))["rowviews.cpp"]
    fused = _kernel_text(cpp, "fused")
    assert "const float* _row_v_x = tl::tile_load_row(ctx, v_x, v_X, true, (v_i * 64));" in fused
    assert "_row_v1__tmp[_e] = f_f(ctx, _row_v_x[_e]);" in fused
    assert "if (_row_v1__tmp == v1__tmp.data) tl::tile_store(ctx, v_Y, v1__tmp, true, (v_i * 64));" in fused
    rows = _kernel_text(cpp, "rows")  # x is also read by tile_max: copied; the bias row feeds the loop
    assert "tl::tile_load(ctx, v_x, v_X, true, v_i, 0);" in rows
    assert "const float* _row_v_bias = tl::tile_load_row(ctx, v_bias, v_b, true);" in rows
    assert "tl::tile_store_row(ctx, v_Y" in rows
    update = _kernel_text(cpp, "update")  # read in place, but the array written is the one read: stored as before
    assert "tl::tile_load_row" in update and "tile_store_row" not in update
    twice = _kernel_text(cpp, "twice")  # x read by two statements: copied
    assert "tile_load_row" not in twice and "tl::tile_store_row(ctx, v_Y" in twice


@pytest.mark.build
@needs_cxx
def test_in_place_and_copied_rows_match_numpy():
    m = build(SOURCE, "rowviews")
    rng = np.random.default_rng(5)
    for n in (64 * 8, 64 * 8 - 5):  # whole rows; the last row over the end (copied, zero-filled, clipped)
        x = rng.standard_normal(n).astype(np.float32)
        y = np.zeros_like(x)
        m.fused.launch_tiled(dim=(n + 63) // 64, inputs=[x, y])
        np.testing.assert_allclose(y, f(x), rtol=2e-6, atol=2e-6)
    base = rng.standard_normal(2 * 512).astype(np.float32)  # strided input and output: copied
    out = np.zeros(2 * 512, np.float32)
    m.fused.launch_tiled(dim=8, inputs=[base[::2], out[::2]])
    np.testing.assert_allclose(out[::2], f(base[::2]), rtol=2e-6, atol=2e-6)
    assert not out[1::2].any()
    X, b = rng.standard_normal((6, 64)).astype(np.float32), rng.standard_normal((1, 64)).astype(np.float32)
    Y = np.zeros_like(X)
    m.rows.launch_tiled(dim=6, inputs=[X, b, Y])
    np.testing.assert_allclose(Y, np.exp(X - X.max(axis=1, keepdims=True)) * b, rtol=2e-6, atol=2e-6)
    x = rng.standard_normal(512).astype(np.float32)
    want = x * 2 + 1
    m.update.launch_tiled(dim=8, inputs=[x])
    np.testing.assert_array_equal(x, want)
    x, y = rng.standard_normal(512).astype(np.float32), np.zeros(512, np.float32)
    m.twice.launch_tiled(dim=8, inputs=[x, y])
    np.testing.assert_array_equal(y, x * x + x)


@pytest.mark.build
@needs_cxx
def test_gradients_through_rows_read_in_place():
    source = SOURCE.replace("dtype=float", "dtype=wp.float64").replace("x: float", "x: wp.float64")
    m = build(source, "rowviews64")
    rng = np.random.default_rng(6)
    check_gradients(m.fused, 3, [rng.standard_normal(3 * 64), np.zeros(3 * 64)], outputs=[1], wrt=[0])
    check_gradients(m.rows, 2, [rng.standard_normal((2, 64)), rng.standard_normal((1, 64)), np.zeros((2, 64))],
                    outputs=[2], wrt=[0, 1])
