"""The CPU GEMM keeps the panels it packs from an array view for the rest of a launch (gemm.h
PanelCache): later blocks on the same thread that multiply by the same view read the packed copy.
These launches run every block on one thread (num_threads=1), where every view after the first
block's is a cache hit, and check what must not be reused: a copy from an earlier launch (the
arrays change in between), a copy of the same region in the other operand's layout (A @ A), and
a copy a block packed itself before writing the region (it must read its own write)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

pytestmark = [pytest.mark.build, needs_cxx]

T = 16
SOURCE = '''
import warp as wp

T = 16


@wp.kernel
def gemm(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=DT)
    for k in range(A.shape[1] // T):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * T, j * T))


@wp.kernel
def reread(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    j = wp.tid()
    a = wp.tile_load(A, shape=(T, T), offset=(0, 0))
    b = wp.tile_load(B, shape=(T, T), offset=(0, j * T))
    wp.tile_store(B, wp.tile_matmul(a, b), offset=(0, j * T))
    a2 = wp.tile_load(A, shape=(T, T), offset=(0, 0))
    b2 = wp.tile_load(B, shape=(T, T), offset=(0, j * T))
    wp.tile_store(C, wp.tile_matmul(a2, b2), offset=(0, j * T))
'''

CASES = [("float", np.float32, 1e-4), ("wp.float64", np.float64, 1e-12)]


def _module(dtype: str, np_dtype):
    return build(SOURCE.replace("DT", dtype), "pcache_" + np_dtype.__name__)


def test_the_kernels_read_their_operands_as_array_views():
    src = SOURCE.replace("DT", "float")
    cpp = generate(compile_ir(src, "pcache"), src, build_flags(256))["pcache.cpp"]
    start = cpp.index("k_reread_forward")
    reread = cpp[start:cpp.index("\n}\n", start)]
    assert reread.count(f"tl::array_tile<{T}, {T}>(v_B") == 2
    gemm = cpp[cpp.index("k_gemm_forward"):cpp.index("k_gemm_backward")]
    assert f"tl::array_tile<{T}, {T}>(v_B, (v_k * {T}), (v_j * {T}))" in gemm


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("threads", [1, 2])
def test_relaunch_after_the_arrays_change(dtype, np_dtype, tol, threads):
    m = _module(dtype, np_dtype)
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((64, 48)).astype(np_dtype), rng.standard_normal((48, 80)).astype(np_dtype)
    C = np.zeros((64, 80), np_dtype)
    for round_ in range(3):  # the same buffers, new contents: nothing from the last launch may be reused
        m.gemm.launch_tiled(dim=(4, 5), inputs=[A, B, C], num_threads=threads)
        np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=tol, atol=tol * 30, err_msg=f"round {round_}")
        A[...] = rng.standard_normal(A.shape)
        B[::3] = rng.standard_normal(B[::3].shape)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
def test_the_same_view_as_both_operands(dtype, np_dtype, tol):
    """C = A @ A: block (i, j) reads A's tile (i, k) as A and (k, j) as B; the tile (i, i) is both
    operands of some step, each in its own packed layout."""
    m = _module(dtype, np_dtype)
    A = np.random.default_rng(12).standard_normal((64, 64)).astype(np_dtype)
    C = np.zeros_like(A)
    m.gemm.launch_tiled(dim=(4, 4), inputs=[A, A, C], num_threads=1)
    np.testing.assert_allclose(C, A.astype(np.float64) @ A, rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
def test_a_block_reads_its_own_write_of_a_packed_region(dtype, np_dtype, tol):
    """Block j packs B's tile j, overwrites it with A0 @ B_j, then multiplies by it again: the
    second product must see the write (the first packing is the block's own)."""
    m = _module(dtype, np_dtype)
    rng = np.random.default_rng(13)
    A, B = rng.standard_normal((T, T)).astype(np_dtype), rng.standard_normal((T, 5 * T)).astype(np_dtype)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    C = np.zeros_like(B)
    m.reread.launch_tiled(dim=5, inputs=[A, B, C], num_threads=1)
    np.testing.assert_allclose(B, A64 @ B64, rtol=tol, atol=tol * 30)
    np.testing.assert_allclose(C, A64 @ (A64 @ B64), rtol=tol * 10, atol=tol * 300)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("threads", [1, 2])
def test_adjoint_reuses_transposed_copies_within_a_launch_only(dtype, np_dtype, tol, threads):
    """The adjoint's A^T @ dC copies A's tile (i, k) once per launch and thread (gemm.h
    matmul_transposed_view) and every block (i, j') reads the copy: relaunched with new contents
    (also A @ A, where the copy's region is B's too), the gradients follow the arrays."""
    m = _module(dtype, np_dtype)
    rng = np.random.default_rng(14)
    A, B = rng.standard_normal((64, 48)).astype(np_dtype), rng.standard_normal((48, 80)).astype(np_dtype)
    C = np.zeros((64, 80), np_dtype)
    for round_ in range(3):
        dA, dB, dC = np.zeros_like(A), np.zeros_like(B), rng.standard_normal(C.shape).astype(np_dtype)
        seed = dC.astype(np.float64)
        m.gemm.launch_tiled(dim=(4, 5), inputs=[A, B, C], adj_inputs=[dA, dB, dC], adjoint=True, num_threads=threads)
        np.testing.assert_allclose(dA, seed @ B.T.astype(np.float64), rtol=tol, atol=tol * 30, err_msg=f"round {round_}")
        np.testing.assert_allclose(dB, A.T.astype(np.float64) @ seed, rtol=tol, atol=tol * 30, err_msg=f"round {round_}")
        A[...] = rng.standard_normal(A.shape)
        B[::3] = rng.standard_normal(B[::3].shape)
    S = rng.standard_normal((64, 64)).astype(np_dtype)
    dS1, dS2, dC = np.zeros_like(S), np.zeros_like(S), rng.standard_normal((64, 64)).astype(np_dtype)
    seed = dC.astype(np.float64)
    m.gemm.launch_tiled(dim=(4, 4), inputs=[S, S, np.zeros_like(S)], adj_inputs=[dS1, dS2, dC], adjoint=True,
                        num_threads=threads)
    np.testing.assert_allclose(dS1, seed @ S.T.astype(np.float64), rtol=tol, atol=tol * 30)
    np.testing.assert_allclose(dS2, S.T.astype(np.float64) @ seed, rtol=tol, atol=tol * 30)
