"""One-row tiles element loops (and reductions) read from and a loop writes to the array in place
(codegen/row_views.py, memory.h tile_load_row / RowRef / tile_store_row): which loads and stores
qualify, and results against numpy where the row lies inside a contiguous array (in place) and
where it does not (the copy: a row over the array's end, strided arrays, the same array read and
written), forward and adjoint."""
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


@wp.kernel
def rewrite(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    m = wp.tile_broadcast(wp.tile_max(x), shape=(N,))
    wp.tile_store(X, x * 0.5, offset=(i * N,))
    wp.tile_store(Y, x - m, offset=(i * N,))


@wp.kernel
def elsewhere(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float), Z: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    m = wp.tile_broadcast(wp.tile_max(x), shape=(N,))
    wp.tile_store(Z, x * 2.0, offset=(i * N,))
    wp.tile_store(Y, x - m, offset=(i * N,))


@wp.kernel
def scaled(X: wp.array1d(dtype=float), S: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    c = wp.tile_broadcast(wp.tile_sum(x), shape=(N,)) * 2.0
    s = wp.tile_load(S, shape=(N,))
    z = c * s
    w = z * z + c
    wp.tile_store(Y, w + z, offset=(i * N,))


@wp.kernel
def copied(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float), Z: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(N,), offset=(i * N,))
    wp.tile_store(Z, x, offset=(i * N,))
    wp.tile_store(Y, x * x, offset=(i * N,))
'''


def f(x):
    x = x.astype(np.float64)
    return np.tanh(x) * x + 0.5 * x * x - 1.0


def _kernel_text(cpp: str, name: str, direction: str = "forward") -> str:
    start = cpp.index(f"k_{name}_{direction}")
    return cpp[start:cpp.index("\n}\n", start)]


def test_which_rows_are_read_and_written_in_place():
    cpp = generate(compile_ir(SOURCE, "rowviews"), SOURCE, build_flags(256))["rowviews.cpp"]
    fused = _kernel_text(cpp, "fused")
    assert "const float* _row_v_x = tl::tile_load_row(ctx, v_x, v_X, true, (v_i * 64));" in fused
    assert "_row_v1__tmp[_e] = f_f(ctx, _row_v_x[_e]);" in fused
    assert "if (_row_v1__tmp == v1__tmp.data) tl::tile_store(ctx, v_Y, v1__tmp, true, (v_i * 64));" in fused
    rows = _kernel_text(cpp, "rows")  # x read by tile_max and the loop: in place, the max through a RowRef
    assert "const float* _row_v_x = tl::tile_load_row(ctx, v_x, v_X, true, v_i, 0);" in rows
    assert "tl::tile_max(ctx, v1__tmp, tl::RowRef<tl::Tile<float, 1, 64>>{_row_v_x}, -1);" in rows
    assert "const float* _row_v_bias = tl::tile_load_row(ctx, v_bias, v_b, true);" in rows
    assert "tl::tile_store_row(ctx, v_Y" in rows
    update = _kernel_text(cpp, "update")  # read in place, but the array written is the one read: stored as before
    assert "tl::tile_load_row" in update and "tile_store_row" not in update
    twice = _kernel_text(cpp, "twice")  # x read by two loops, nothing written in between: in place
    assert "const float* _row_v_x = tl::tile_load_row(" in twice and "tl::tile_store_row(ctx, v_Y" in twice
    rewrite = _kernel_text(cpp, "rewrite")  # X stored between the max and the last read: copied
    assert "tl::tile_load(ctx, v_x, v_X, true, (v_i * 64));" in rewrite and "RowRef" not in rewrite
    elsewhere = _kernel_text(cpp, "elsewhere")  # a store into another array in between: still in place
    assert "const float* _row_v_x = tl::tile_load_row(" in elsewhere and "RowRef" in elsewhere
    backward = _kernel_text(cpp, "rows", "backward")  # the max's gradient reads the row in place too
    assert "tl::tile_extreme_grad_add(ctx, " in backward
    assert "tl::RowRef<tl::Tile<float, 1, 64>>{_row_v_x}, " in backward.split("tile_extreme_grad_add")[1]
    scaled = _kernel_text(cpp, "scaled")  # s's row load moves before the loop of c and z (fused_loops.py)
    c_at, z_at = scaled.index("v_c.data[_e] = "), scaled.index("v_z.data[_e] = ")
    assert scaled.index("const float* _row_v_s = tl::tile_load_row(ctx, v_s, v_S, true);") < c_at < z_at
    assert "for (" not in scaled[c_at:z_at]  # one loop
    copied = _kernel_text(cpp, "copied")  # x stored whole (not a loop's or a reduction's read): copied
    assert "tl::tile_load(ctx, v_x, v_X, true, (v_i * 64));" in copied and "tile_load_row" not in copied


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
    X, b = -np.abs(X[:, :60]), b[:, :60].copy()  # rows over the end: the max of the zero-filled copy, 0
    Y = np.zeros_like(X)
    m.rows.launch_tiled(dim=6, inputs=[X, b, Y])
    np.testing.assert_allclose(Y, np.exp(X) * b, rtol=2e-6, atol=2e-6)
    x = rng.standard_normal(512).astype(np.float32)
    want = x * 2 + 1
    m.update.launch_tiled(dim=8, inputs=[x])
    np.testing.assert_array_equal(x, want)
    x, y = rng.standard_normal(512).astype(np.float32), np.zeros(512, np.float32)
    m.twice.launch_tiled(dim=8, inputs=[x, y])
    np.testing.assert_array_equal(y, x * x + x)
    x, y, z = rng.standard_normal(512).astype(np.float32), np.zeros(512, np.float32), np.zeros(512, np.float32)
    m.elsewhere.launch_tiled(dim=8, inputs=[x, y, z])
    np.testing.assert_array_equal(z, x * 2)
    np.testing.assert_array_equal(y, x - np.repeat(x.reshape(8, 64).max(axis=1), 64))
    x, sc, y = rng.standard_normal(512).astype(np.float32), rng.standard_normal(64).astype(np.float32), np.zeros(512, np.float32)
    m.scaled.launch_tiled(dim=8, inputs=[x, sc, y])
    c = np.repeat(x.reshape(8, 64).sum(axis=1, dtype=np.float64), 64) * 2
    z = c * np.tile(sc, 8)
    want = (z * z + c + z).astype(np.float32)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    for n in (512, 512 - 5):  # the last row over the end: the max reads the loaded (zero-filled) tile
        x, y = rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32)
        want_x, want_y = x * np.float32(0.5), np.zeros(n, np.float32)
        for b in range(8):
            row = np.zeros(64, np.float32)
            row[:len(x[b * 64:(b + 1) * 64])] = x[b * 64:(b + 1) * 64]
            want_y[b * 64:(b + 1) * 64] = (row - row.max())[:len(want_y[b * 64:(b + 1) * 64])]
        m.rewrite.launch_tiled(dim=8, inputs=[x, y])
        np.testing.assert_array_equal(x, want_x)  # written after its max was taken and its copy made
        np.testing.assert_array_equal(y, want_y)


@pytest.mark.build
@needs_cxx
def test_gradients_through_rows_read_in_place():
    source = SOURCE.replace("dtype=float", "dtype=wp.float64").replace("x: float", "x: wp.float64")
    m = build(source, "rowviews64")
    rng = np.random.default_rng(6)
    check_gradients(m.fused, 3, [rng.standard_normal(3 * 64), np.zeros(3 * 64)], outputs=[1], wrt=[0])
    check_gradients(m.rows, 2, [rng.standard_normal((2, 64)), rng.standard_normal((1, 64)), np.zeros((2, 64))],
                    outputs=[2], wrt=[0, 1])
