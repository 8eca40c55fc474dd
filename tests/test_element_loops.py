"""Element-wise loops that read a broadcast row or column run over rows and columns (codegen/
element_loops.py): the row reads its element by the column index, the column by the row index,
other broadcasts keep tl::broadcast_index. Results against numpy (float32 and float64, 2-d and
3-d tiles, a 1-d row right-aligned), gradients against float64 finite differences."""
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


@wp.kernel
def rows(X: wp.array2d(dtype=DT), b: wp.array2d(dtype=DT), s: wp.array2d(dtype=DT), Y: wp.array2d(dtype=DT)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(4, 8), offset=(i * 4, 0))
    row = wp.tile_broadcast(wp.tile_load(b, shape=(1, 8)), shape=(4, 8))
    col = wp.tile_broadcast(wp.tile_load(s, shape=(4, 1), offset=(i * 4, 0)), shape=(4, 8))
    wp.tile_store(Y, wp.tile_map(wp.tanh, x * col + row), offset=(i * 4, 0))


@wp.kernel
def cube(X: wp.array3d(dtype=DT), b: wp.array(dtype=DT), s: wp.array3d(dtype=DT), m: wp.array3d(dtype=DT),
         Y: wp.array3d(dtype=DT)):
    t = wp.tile_load(X, shape=(2, 3, 8))
    row = wp.tile_broadcast(wp.tile_load(b, shape=8), shape=(2, 3, 8))
    col = wp.tile_broadcast(wp.tile_load(s, shape=(2, 3, 1)), shape=(2, 3, 8))
    mid = wp.tile_broadcast(wp.tile_load(m, shape=(2, 1, 8)), shape=(2, 3, 8))
    wp.tile_store(Y, (t - row) * col + mid)
'''


def _source(dtype: str) -> str:
    return SOURCE.replace("DT", dtype)


def _kernel_text(cpp: str, name: str) -> str:
    start = cpp.index(f"k_{name}_forward")
    return cpp[start:cpp.index("\n}\n", start)]


def test_row_and_column_broadcasts_read_by_index():
    cpp = generate(compile_ir(_source("float"), "eloops"), _source("float"), build_flags(256))["eloops.cpp"]
    rows = _kernel_text(cpp, "rows")
    assert "for (int _r = 0; _r < 4; ++_r) {" in rows and "for (int _c = 0; _c < 8; ++_c) {" in rows
    assert "const int _e = _r * 8 + _c;" in rows
    assert "tl::broadcast_index" not in rows and ".data[_c]" in rows and ".data[_r]" in rows
    cube = _kernel_text(cpp, "cube")
    assert "for (int _r = 0; _r < 6; ++_r) {" in cube and ".data[_c]" in cube and ".data[_r]" in cube
    # (2, 1, 8) repeats along the middle axis only: neither a row nor a column
    assert "tl::broadcast_index<tl::Tile<float, 2, 1, 8>, tl::Tile<float, 2, 3, 8>>(_e)" in cube


CASES = [("float", np.float32, 1e-5), ("wp.float64", np.float64, 1e-12)]


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
def test_split_loops_match_numpy(dtype, np_dtype, tol):
    m = build(_source(dtype), "eloops_" + np_dtype.__name__)
    rng = np.random.default_rng(21)
    X, b, s = (rng.standard_normal(shape).astype(np_dtype) for shape in ((12, 8), (1, 8), (12, 1)))
    Y = np.zeros_like(X)
    m.rows.launch_tiled(dim=3, inputs=[X, b, s, Y])
    np.testing.assert_allclose(Y, np.tanh(X * s + b), rtol=tol, atol=tol)
    X3, b1, s3, m3 = (rng.standard_normal(shape).astype(np_dtype) for shape in ((2, 3, 8), (8,), (2, 3, 1), (2, 1, 8)))
    Y3 = np.zeros_like(X3)
    m.cube.launch_tiled(dim=1, inputs=[X3, b1, s3, m3, Y3])
    np.testing.assert_allclose(Y3, (X3 - b1) * s3 + m3, rtol=tol, atol=tol)


@pytest.mark.build
@needs_cxx
def test_split_loops_gradients():
    m = build(_source("wp.float64"), "eloops_float64")
    rng = np.random.default_rng(22)
    X, b, s = rng.standard_normal((8, 8)), rng.standard_normal((1, 8)), rng.standard_normal((8, 1))
    check_gradients(m.rows, 2, [X, b, s, np.zeros((8, 8))], outputs=[3], wrt=[0, 1, 2])
    arrays = [rng.standard_normal(shape) for shape in ((2, 3, 8), (8,), (2, 3, 1), (2, 1, 8))]
    check_gradients(m.cube, 1, arrays + [np.zeros((2, 3, 8))], outputs=[4], wrt=[0, 1, 2, 3])


ONE = '''
import warp as wp


@wp.func
def root(v: float):
    return wp.sqrt(v + 1.0)


@wp.kernel
def one(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float), Z: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 8), offset=(i, 0))
    r = wp.tile_map(root, wp.tile_sum(x * x))
    wp.tile_store(Y, x / wp.tile_broadcast(r, shape=(1, 8)), offset=(i, 0))
    m = wp.tile_max(x)
    a = m * m - m
    wp.tile_store(Z, wp.tile_reshape(a * a + a, shape=(1, 1)), offset=(i, 0))
'''


def test_a_one_element_tile_is_computed_by_a_statement_and_a_loop_local_keeps_its_loop():
    """A one-element tile's element-wise statement is emitted as the statement itself at element 0
    (cxx.py _unlooped), not as a loop of one iteration; a one-element loop whose first statement
    is a local of the loop (fused_loops.py: `a`, read only by `a * a + a`) keeps its loop, whose
    braces keep the local's name to itself."""
    cpp = generate(compile_ir(ONE, "onelem"), ONE, build_flags(64))["onelem.cpp"]
    forward = _kernel_text(cpp, "one")
    assert "\n    v_r.data[0] = f_root(ctx, v2__tmp.data[0]);\n" in forward
    loops = [line.strip() for line in forward.splitlines() if "< 1;" in line]
    assert loops == ["for (int _e = 0; _e < 1; ++_e) {"]  # the loop of `a` and `a * a + a` only
    assert "const float _el_v_a" in forward


@pytest.mark.build
@needs_cxx
def test_one_element_statements_compute_what_numpy_does_and_their_gradients_match_finite_differences():
    m = build(ONE, "onelem", block_dim=64)
    X = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    Y, Z = np.zeros_like(X), np.zeros((3, 1), np.float32)
    m.one.launch_tiled(dim=3, inputs=[X, Y, Z])
    r = np.sqrt((X.astype(np.float64) ** 2).sum(axis=1, keepdims=True) + 1)
    m = X.astype(np.float64).max(axis=1, keepdims=True)
    a = m * m - m
    np.testing.assert_allclose(Y, X / r, rtol=1e-6)
    np.testing.assert_allclose(Z, a * a + a, rtol=1e-5)
    m64 = build(ONE.replace("float", "wp.float64"), "onelem64", block_dim=64)
    X64 = np.random.default_rng(2).standard_normal((3, 8)) + 3.0
    check_gradients(m64.one, 3, [X64, np.zeros((3, 8)), np.zeros((3, 1))], outputs=[1, 2], wrt=[0])
