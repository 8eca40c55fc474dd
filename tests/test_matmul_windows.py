"""A tile_view whose tile only feeds a later matmul as its A operand is read in place from its
parent tile (codegen/operand_views.py `window_operands`, runtime linalg.h `tl::tile_window`):
gemm.h reads the window's rows with the parent's stride instead of a copy. Results against numpy
(float32/64, windows inside the parent and past its edges, where tile_view reads zeros, a B
operand that is a tile), gradients against float64 finite differences (the adjoint's window^T @ dy
reads the window in place as well), and a view of the matmul's own accumulator, which keeps its
copy."""
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
def chunks(X: wp.array2d(dtype=DT), W: wp.array2d(dtype=DT), s: wp.array(dtype=int), Y: wp.array2d(dtype=DT)):
    i = wp.tid()
    r = wp.tile_load(X, shape=(8, 24), offset=(i * 8, 0))
    y = wp.tile_zeros(shape=(8, 16), dtype=DT)
    for k in range(3):
        part = wp.tile_view(r, offset=(0, k * 8 + s[0]), shape=(8, 8))
        wp.tile_matmul(part, wp.tile_load(W, shape=(8, 16), offset=(k * 8, 0)), y)
    wp.tile_store(Y, y, offset=(i * 8, 0))


@wp.kernel
def by_tile(X: wp.array2d(dtype=DT), W: wp.array2d(dtype=DT), Y: wp.array2d(dtype=DT)):
    r = wp.tile_load(X, shape=(8, 24))
    w = wp.tile_load(W, shape=(8, 16)) * 2.0
    part = wp.tile_view(r, offset=(0, 8), shape=(8, 8))
    wp.tile_store(Y, wp.tile_matmul(part, w))


@wp.kernel
def own_acc(X: wp.array2d(dtype=DT), W: wp.array2d(dtype=DT), Y: wp.array2d(dtype=DT)):
    acc = wp.tile_load(X, shape=(8, 8))
    part = wp.tile_view(acc, offset=(0, 0), shape=(8, 8))
    wp.tile_matmul(part, wp.tile_load(W, shape=(8, 8)), acc)
    wp.tile_store(Y, acc)
'''


def _source(dtype: str) -> str:
    return SOURCE.replace("DT", dtype)


def _kernel_text(cpp: str, name: str) -> str:
    start = cpp.index(f"k_{name}_forward")
    return cpp[start:cpp.index("\n}\n", start)]


def test_views_feeding_a_matmul_are_read_in_place():
    cpp = generate(compile_ir(_source("float"), "windows"), _source("float"), build_flags(256))["windows.cpp"]
    chunks = _kernel_text(cpp, "chunks")
    assert "tl::tile_window<8, 8>(v_r, 0, ((v_k * 8) + " in chunks and "tl::tile_view(" not in chunks
    assert "tl::tile_window<8, 8>(v_r, 0, 8)" in _kernel_text(cpp, "by_tile")
    start = cpp.index("k_chunks_backward")  # the adjoint's window^T @ dy reads the window in place too
    assert "tl::transposed(tl::tile_window<8, 8>(v_r, 0, " in cpp[start:cpp.index("\n}\n", start)]
    own = _kernel_text(cpp, "own_acc")
    assert "tl::tile_window" not in own and "tl::tile_view(ctx, v_part, v_acc" in own


def _reference_chunks(X, W, shift):
    """Y of `chunks`: window k covers columns k * 8 + shift .. + 8 of each 8 x 24 block, zero past 24."""
    Xp = np.concatenate([X, np.zeros((X.shape[0], 16), X.dtype)], axis=1).astype(np.float64)
    Y = np.zeros((X.shape[0], 16))
    for k in range(3):
        Y += Xp[:, k * 8 + shift:k * 8 + shift + 8] @ W[k * 8:k * 8 + 8].astype(np.float64)
    return Y


CASES = [("float", np.float32, 1e-4), ("wp.float64", np.float64, 1e-12)]


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("shift", [0, 5])  # 5: the last window reaches past the parent's edge
def test_windows_match_numpy(dtype, np_dtype, tol, shift):
    m = build(_source(dtype), "windows_" + np_dtype.__name__)
    rng = np.random.default_rng(31)
    X, W = rng.standard_normal((16, 24)).astype(np_dtype), rng.standard_normal((24, 16)).astype(np_dtype)
    Y = np.zeros((16, 16), np_dtype)
    m.chunks.launch_tiled(dim=2, inputs=[X, W, np.array([shift], np.int32), Y])
    np.testing.assert_allclose(Y, _reference_chunks(X, W, shift), rtol=tol, atol=tol * 10)
    Y8 = np.zeros((8, 16), np_dtype)
    m.by_tile.launch_tiled(dim=1, inputs=[X[:8].copy(), W[:8].copy(), Y8])
    np.testing.assert_allclose(Y8, X[:8, 8:16].astype(np.float64) @ (2.0 * W[:8]), rtol=tol, atol=tol * 10)
    A = X[:8, :8].copy()
    Ya = np.zeros((8, 8), np_dtype)
    m.own_acc.launch_tiled(dim=1, inputs=[A, W[:8, :8].copy(), Ya])
    np.testing.assert_allclose(Ya, A + A.astype(np.float64) @ W[:8, :8], rtol=tol, atol=tol * 10)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("shift", [0, 5])
def test_window_gradients(shift):
    m = build(_source("wp.float64"), "windows_float64")
    rng = np.random.default_rng(32)
    X, W = rng.standard_normal((16, 24)), rng.standard_normal((24, 16))
    check_gradients(m.chunks, 2, [X, W, np.array([shift], np.int32), np.zeros((16, 16))], outputs=[3], wrt=[0, 1])
    check_gradients(m.by_tile, 1, [X[:8].copy(), W[:8].copy(), np.zeros((8, 16))], outputs=[2], wrt=[0, 1])
