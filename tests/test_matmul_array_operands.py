"""A tile loaded only to be multiplied reaches the CPU matmul as an array view (codegen/
operand_views.py `array_operands`, runtime linalg.h `tl::array_tile`): gemm.h packs it straight
from the array. Results against numpy with tiles past every edge of the arrays, non-contiguous and
reversed arrays, float32 and float64; gradients against float64 finite differences; a load whose
array is written before the matmul keeps its tile copy and reads the old values."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

pytestmark = [pytest.mark.build, needs_cxx]

# Tile extents that leave remainders for the 6x16 (AVX2) and 8x32 (AVX-512) register blocks.
SOURCE = '''
import warp as wp

TM = 16
TK = 8
TN = 24


@wp.kernel
def gemm(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TM, TN), dtype=DT)
    for k in range((A.shape[1] + TK - 1) // TK):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def shifted(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM - 5, -3))
    b = wp.tile_load(B, shape=(TK, TN), offset=(-3, j * TN - 7))
    wp.tile_store(C, wp.tile_matmul(a, b), offset=(i * TM, j * TN))


@wp.kernel
def overwritten(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, 0))
    b = wp.tile_load(B, shape=(TK, TN), offset=(0, j * TN))
    wp.tile_store(A, a * a, offset=(i * TM, 0))
    wp.tile_store(C, wp.tile_matmul(a, b), offset=(i * TM, j * TN))
'''


def _source(dtype: str) -> str:
    return SOURCE.replace("DT", dtype)


def _reference_shifted(A, B):
    """C of `shifted`: a's rows shifted by -5 and columns by -3, b's by -3 and -7, zero outside."""
    M, N = A.shape[0], B.shape[1]
    gm, gn = -(-M // 16), -(-N // 24)
    C = np.zeros((M, N), A.dtype)
    Ap, Bp = np.pad(A, 32), np.pad(B, 32)
    for i in range(gm):
        for j in range(gn):
            a = Ap[32 + i * 16 - 5:32 + i * 16 + 11, 32 - 3:32 + 5]
            b = Bp[32 - 3:32 + 5, 32 + j * 24 - 7:32 + j * 24 + 17]
            block = a @ b
            rows, cols = min(16, M - i * 16), min(24, N - j * 24)
            C[i * 16:i * 16 + rows, j * 24:j * 24 + cols] = block[:rows, :cols]
    return C


def test_loaded_matmul_operands_are_read_from_the_array():
    module = compile_ir(_source("float"), "arrop")
    cpp = generate(module, _source("float"), build_flags(256))["arrop.cpp"]
    gemm_fwd = cpp[cpp.index("k_gemm_forward"):cpp.index("k_gemm_backward")]
    assert "tl::array_tile<16, 8>(v_A, (v_i * 16), (v_k * 8))" in gemm_fwd
    assert "tl::array_tile<8, 24>(v_B, (v_k * 8), (v_j * 24))" in gemm_fwd
    assert "tl::tile_load(" not in gemm_fwd
    gemm_bwd = cpp[cpp.index("k_gemm_backward"):cpp.index("k_shifted_forward")]
    assert "tl::transposed(tl::array_tile<8, 24>(v_B" in gemm_bwd
    assert "tl::transposed(tl::array_tile<16, 8>(v_A" in gemm_bwd
    start = cpp.index("k_overwritten_forward")
    kept = cpp[start:cpp.index("\n}\n", start)]
    assert "tl::array_tile" not in kept and "tl::tile_load(ctx, v_a, v_A" in kept


@pytest.mark.parametrize("dtype,np_dtype,tol", [("float", np.float32, 1e-4), ("wp.float64", np.float64, 1e-12)])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed"])
def test_gemm_from_array_views_matches_numpy(dtype, np_dtype, tol, layout):
    m = build(_source(dtype), "arrop_" + np_dtype.__name__)
    rng = np.random.default_rng(7)
    A0, B0 = rng.standard_normal((37, 29)), rng.standard_normal((29, 41))
    if layout == "strided":  # every other element of larger arrays
        A = np.zeros((74, 58), np_dtype)[::2, ::2]
        B = np.zeros((58, 82), np_dtype)[::2, ::2]
        A[...], B[...] = A0, B0
    elif layout == "reversed":  # negative strides
        A, B = np.ascontiguousarray(A0[::-1, ::-1], np_dtype)[::-1, ::-1], np.ascontiguousarray(B0[::-1], np_dtype)[::-1]
    else:
        A, B = A0.astype(np_dtype), B0.astype(np_dtype)
    grid = (-(-37 // 16), -(-41 // 24))
    C = np.zeros((37, 41), np_dtype)
    m.gemm.launch_tiled(dim=grid, inputs=[A, B, C])
    np.testing.assert_allclose(C, A0 @ B0, rtol=tol, atol=tol * 30)
    C[...] = 0
    m.shifted.launch_tiled(dim=grid, inputs=[A, B, C])
    np.testing.assert_allclose(C, _reference_shifted(A0, B0), rtol=tol, atol=tol * 30)


def test_adjoints_read_transposed_array_views():
    m = build(_source("wp.float64"), "arrop_float64")
    rng = np.random.default_rng(8)
    A, B = rng.standard_normal((21, 13)), rng.standard_normal((13, 26))
    C = np.zeros((21, 26))
    grid = (2, 2)
    dA, dB, dC = np.zeros_like(A), np.zeros_like(B), rng.standard_normal(C.shape)
    m.gemm.launch_tiled(dim=grid, inputs=[A, B, C], adj_inputs=[dA, dB, dC.copy()], adjoint=True)
    np.testing.assert_allclose(dA, dC @ B.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dB, A.T @ dC, rtol=1e-12, atol=1e-12)
    check_gradients(m.shifted, grid, [A, B, np.zeros((21, 26))], outputs=[2], wrt=[0, 1])


def test_a_load_whose_array_changes_keeps_its_copy():
    m = build(_source("wp.float64"), "arrop_float64")
    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((32, 8)), rng.standard_normal((8, 24))
    A0 = A.copy()
    C = np.zeros((32, 24))
    m.overwritten.launch_tiled(dim=(2, 1), inputs=[A, B, C])
    np.testing.assert_allclose(C, A0 @ B, rtol=1e-12)
    np.testing.assert_allclose(A, A0 * A0)


def test_a_view_times_a_large_tile_and_large_loads():
    """A 64 KiB+ loaded tile keeps its copy (its packed panels would not fit a stack); a view times
    a tile too large to pack on the stack takes the tiles' GEMM."""
    source = '''
import warp as wp


@wp.kernel
def wide(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    b = wp.tile_load(B, shape=(96, 192))
    b = b * 1.0
    a = wp.tile_load(A, shape=(8, 96))
    wp.tile_store(C, wp.tile_matmul(a, b))
    big = wp.tile_load(B, shape=(96, 192))
    again = wp.tile_load(A, shape=(8, 96))
    wp.tile_store(C, wp.tile_matmul(again, big), offset=(8, 0))
'''
    module = compile_ir(source, "arrop_wide")
    cpp = generate(module, source, build_flags(256))["arrop_wide.cpp"]
    assert cpp.count("tl::array_tile<8, 96>(v_A, 0, 0)") == 2 and "tl::array_tile<96, 192>" not in cpp
    m = build(source, "arrop_wide")
    rng = np.random.default_rng(10)
    A, B = rng.standard_normal((8, 96)).astype(np.float32), rng.standard_normal((96, 192)).astype(np.float32)
    C = np.zeros((16, 192), np.float32)
    m.wide.launch_tiled(dim=1, inputs=[A, B, C])
    np.testing.assert_allclose(C[:8], A @ B, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(C[8:], A @ B, rtol=1e-4, atol=1e-3)


def test_a_load_whose_offset_reads_a_later_tile_keeps_its_copy():
    """The offset reads a tile that is reassigned before the matmul: evaluated at the matmul it
    would read the new value, so the load keeps its copy (and the result uses the old offset)."""
    source = '''
import warp as wp


@wp.kernel
def moved(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), R: wp.array(dtype=int), C: wp.array2d(dtype=float)):
    r = wp.tile_load(R, shape=2)
    a = wp.tile_load(A, shape=(8, 8), offset=(r[0], 0))
    r = wp.tile_load(R, shape=2, offset=1)
    b = wp.tile_load(B, shape=(8, 8), offset=(r[0], 0))
    wp.tile_store(C, wp.tile_matmul(a, b))
'''
    module = compile_ir(source, "arrop_moved")
    cpp = generate(module, source, build_flags(256))["arrop_moved.cpp"]
    assert "tl::array_tile<8, 8>(v_B" in cpp and "tl::array_tile<8, 8>(v_A" not in cpp
    m = build(source, "arrop_moved")
    rng = np.random.default_rng(11)
    A, B = rng.standard_normal((24, 8)).astype(np.float32), rng.standard_normal((24, 8)).astype(np.float32)
    R, C = np.array([0, 16, 0], np.int32), np.zeros((8, 8), np.float32)
    m.moved.launch_tiled(dim=1, inputs=[A, B, R, C])
    np.testing.assert_allclose(C, A[0:8] @ B[16:24], rtol=1e-5, atol=1e-5)
