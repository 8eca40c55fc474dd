"""Register tiles of the GPU model: which tiles the .cu keeps in registers (spread over the
block's threads), and that register layouts give numpy's results through the CUDA emulation,
including layouts that do not fill the block (size < 4 * block_dim), rows whose width is not a
multiple of the 4-element run, partial tiles at array edges, misaligned and strided arrays,
and float16/float64/int32 runs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import EMULATIONS, OnEmulator, build, build_emulated, emulation_id, compile_ir
from tilec.backend_cuda.storage import register_tiles

SOURCE = '''
import warp as wp

R = 3
W = 5


@wp.kernel
def odd(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float),
        S: wp.array1d(dtype=float)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(R, W), offset=(i * R, j * W))
    b = wp.tile_load(B, shape=(R, W), offset=(i * R, j * W))
    c = wp.tile_map(wp.exp, a * 0.5) - b * a + 1.0
    wp.tile_store(C, c, offset=(i * R, j * W))
    s = wp.tile_sum(c)
    m = wp.tile_max(a)
    n = wp.tile_min(b)
    wp.tile_atomic_add(S, wp.tile_reshape(s + m * 0.0, shape=(1,)), offset=0)
    wp.tile_atomic_add(S, wp.tile_reshape(m, shape=(1,)), offset=1)
    wp.tile_atomic_add(S, wp.tile_reshape(n, shape=(1,)), offset=2)


@wp.kernel
def wide(A: wp.array2d(dtype=float), C: wp.array2d(dtype=float), D: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(16, 24), offset=(i * 16, j * 24))
    c = wp.tile_ones(shape=(16, 24), dtype=float) * 3.0 + a
    wp.tile_store(C, c, offset=(i * 16, j * 24))
    wp.tile_atomic_add(D, a * 2.0, offset=(i * 16, j * 24))


@wp.kernel
def kinds(H: wp.array1d(dtype=wp.float16), F: wp.array1d(dtype=wp.float64), I: wp.array1d(dtype=int),
          HO: wp.array1d(dtype=wp.float16), FO: wp.array1d(dtype=wp.float64), IO: wp.array1d(dtype=int)):
    i = wp.tid()
    h = wp.tile_load(H, shape=(40,), offset=i * 40)
    f = wp.tile_load(F, shape=(40,), offset=i * 40)
    n = wp.tile_load(I, shape=(40,), offset=i * 40)
    wp.tile_store(HO, h * h + wp.tile_astype(n, dtype=wp.float16), offset=i * 40)
    wp.tile_store(FO, f * 2.0 + wp.tile_astype(h, dtype=wp.float64), offset=i * 40)
    wp.tile_store(IO, n * 3 - 1, offset=i * 40)


@wp.kernel
def mm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(8, 12), dtype=float)
    for k in range(2):
        a = wp.tile_load(A, shape=(8, 6), offset=(i * 8, k * 6))
        b = wp.tile_load(B, shape=(6, 12), offset=(k * 6, j * 12))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, wp.tile_map(wp.tanh, acc), offset=(i * 8, j * 12))


@wp.kernel
def blocked(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i = wp.tid()
    acc = wp.tile_zeros(shape=(20, 16), dtype=float)
    for k in range(3):
        a = wp.tile_load(A, shape=(20, 8), offset=(i * 20, k * 8))
        b = wp.tile_load(B, shape=(8, 16), offset=(k * 8, 0))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc * 0.5, offset=(i * 20, 0))


@wp.kernel
def transposed(A: wp.array2d(dtype=float), T: wp.array2d(dtype=float), S: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(64, 32), offset=(i * 64, 0))
    wp.tile_store(T, wp.tile_transpose(a), offset=(0, i * 64))
    s = wp.tile_load(A, shape=(8, 32), offset=(i * 64, 0))
    wp.tile_store(S, wp.tile_transpose(s), offset=(0, i * 8))
'''

STORAGE_SOURCE = '''
import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), v: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8, 8))
    b = wp.tile_load(A, shape=(8, 8), storage="shared")
    r = wp.tile_load(A, shape=(1, 8))
    acc = wp.tile_zeros(shape=(8, 8), dtype=float)
    wp.tile_matmul(a, b, acc)
    out = acc + wp.tile_broadcast(r, shape=(8, 8))
    total = wp.tile_sum(out)
    t = wp.tile_transpose(out)
    wp.tile_store(B, t)
    x = wp.tile_load(A, shape=(8, 8))
    v[0] = x[1, 2] + total[0]
'''


def names(symbols) -> set:
    return {s.name for s in symbols}


def test_register_and_shared_tiles_are_chosen_by_use():
    fn = compile_ir(STORAGE_SOURCE, "storage", 64).kernels[0]
    # matmul operands, a broadcast source, a transposed tile, an indexed tile and explicit
    # storage="shared" stay shared; the accumulator lives in registers
    assert names(register_tiles(fn)) == {"acc"}


def test_gemm_sample_accumulates_in_registers():
    from pathlib import Path

    source = (Path(__file__).resolve().parent.parent / "samples" / "gemm.py").read_text()
    module = compile_ir(source, "gemm", 256)
    assert names(register_tiles(module.kernels[0])) == {"acc"}
    # so the block's shared memory holds just the two 32x32 float32 operands
    import json

    from tilec.driver import generate

    manifest = json.loads(generate(module, source, {"block_dim": 256})["manifest.json"])
    assert manifest["kernels"]["gemm"]["cuda_shared_bytes"]["forward"] == 2 * 32 * 32 * 4


@pytest.fixture(params=EMULATIONS, ids=emulation_id)
def module(request, monkeypatch):
    return build_emulated(SOURCE, "registers_emu", request.param, monkeypatch)


pytestmark = [pytest.mark.cuda, needs_cxx]


def test_emitted_cuda_keeps_these_tiles_in_registers(module):
    from pathlib import Path

    text = (Path(module.__file__).parent / "registers_emu.cu").read_text()
    for call in ("reg_tile_load", "reg_tile_store", "reg_tile_atomic_add", "reg_tile_sum", "reg_tile_max",
                 "reg_tile_min", "reg_tile_matmul", "reg_fill"):
        assert f"tl::{call}" in text, call


def test_odd_layouts_and_whole_tile_reductions(module):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((7, 11)).astype(np.float32)  # 3x5 tiles overhang both edges
    B = rng.standard_normal((7, 11)).astype(np.float32)
    C = np.zeros_like(A)
    S = np.zeros(3, np.float32)
    module.odd.launch_tiled(dim=(1, 1), inputs=[A, B, C, S], device="cuda-emu")
    a, b = A[:3, :5], B[:3, :5]
    c = np.exp(a * 0.5) - b * a + 1.0
    np.testing.assert_allclose(C[:3, :5], c, rtol=1e-5)
    assert not C[3:].any() and not C[:, 5:].any()
    np.testing.assert_allclose(S, [c.sum(), a.max(), b.min()], rtol=1e-5)

    C[...] = 0
    module.odd.launch_tiled(dim=(3, 3), inputs=[A, B, C, np.zeros(3, np.float32)], device="cuda-emu")
    np.testing.assert_allclose(C, np.exp(A * 0.5) - B * A + 1.0, rtol=1e-5)


@pytest.mark.parametrize("layout", ["aligned", "contiguous", "misaligned", "strided", "reversed"])
def test_vector_runs_and_their_fallbacks(module, layout):
    rng = np.random.default_rng(2)
    base = rng.standard_normal((40, 61)).astype(np.float32)
    # aligned: 16-byte rows, so interior tiles take the whole-tile path; contiguous: 244-byte rows,
    # each run checked on its own
    A = {"aligned": np.ascontiguousarray(base[:, :48]), "contiguous": base[:, :48], "misaligned": base[:, 1:49], "strided": base[:, ::2][:, :30],
         "reversed": base[::-1, ::-1][:, :50]}[layout]
    C = np.zeros(A.shape, np.float32)
    D = np.ones(A.shape, np.float32)
    module.wide.launch_tiled(dim=(3, 3), inputs=[A, C, D], device="cuda-emu")
    np.testing.assert_allclose(C, A + 3.0, rtol=1e-6)
    np.testing.assert_allclose(D, 1.0 + 2.0 * A, rtol=1e-6)


def test_float16_float64_int32_runs(module):
    rng = np.random.default_rng(3)
    n = 100  # three 40-wide tiles, the last one partial
    H = rng.uniform(-2, 2, n).astype(np.float16)
    F = rng.standard_normal(n)
    I = rng.integers(-50, 50, n).astype(np.int32)
    HO, FO, IO = np.zeros_like(H), np.zeros_like(F), np.zeros_like(I)
    module.kinds.launch_tiled(dim=(3,), inputs=[H, F, I, HO, FO, IO], device="cuda-emu")
    expect_h = (H.astype(np.float32) * H.astype(np.float32)).astype(np.float16).astype(np.float32) + I
    np.testing.assert_allclose(HO.astype(np.float32), expect_h.astype(np.float16).astype(np.float32), rtol=2e-3)
    np.testing.assert_allclose(FO, F * 2.0 + H.astype(np.float64), rtol=1e-12)
    np.testing.assert_array_equal(IO, I * 3 - 1)


def test_matmul_into_registers_and_its_adjoint(module):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((13, 12)).astype(np.float32)
    B = rng.standard_normal((12, 20)).astype(np.float32)
    C = np.zeros((13, 20), np.float32)
    module.mm.launch_tiled(dim=(2, 2), inputs=[A, B, C], device="cuda-emu")
    np.testing.assert_allclose(C, np.tanh(A @ B), rtol=1e-4, atol=1e-5)


def test_matmul_register_blocks_with_a_partial_last_run(module):
    """A 20x16 accumulator: every run of a thread lies in the same four columns (4 * block_dim a
    multiple of 16), so registers.h computes its runs as one register block; at block_dim 32 and
    64 the last run of the upper threads lies past the tile (320 elements) and is never stored."""
    rng = np.random.default_rng(6)
    A = rng.standard_normal((40, 24)).astype(np.float32)
    B = rng.standard_normal((24, 16)).astype(np.float32)
    C = np.full((40, 16), np.nan, np.float32)
    module.blocked.launch_tiled(dim=2, inputs=[A, B, C], device="cuda-emu")
    np.testing.assert_allclose(C, (A.astype(np.float64) @ B) * 0.5, rtol=1e-5, atol=1e-5)


def test_transposes_of_whole_warp_squares_and_of_other_shapes(module):
    """tile_transpose of a 64x32 tile (shared_tiles.h moves 32x32 squares along diagonals) and of
    an 8x32 tile (element by element), each against numpy."""
    A = np.random.default_rng(7).standard_normal((128, 32)).astype(np.float32)
    T, S = np.full((32, 128), np.nan, np.float32), np.full((32, 16), np.nan, np.float32)
    module.transposed.launch_tiled(dim=2, inputs=[A, T, S], device="cuda-emu")
    np.testing.assert_array_equal(T, A.T)
    np.testing.assert_array_equal(S, np.concatenate([A[:8].T, A[64:72].T], axis=1))


def test_register_tile_gradients_match_finite_differences():
    source = SOURCE.replace("dtype=float", "dtype=wp.float64")
    module = build(source, "registers_emu64", block_dim=32, target="cuda-emu")
    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((13, 12)), rng.standard_normal((12, 20))
    check_gradients(OnEmulator(module.mm), (2, 2), [A, B, np.zeros((13, 20))], outputs=[2], wrt=[0, 1],
                    rtol=1e-5, atol=1e-7)
    A, B = rng.standard_normal((40, 24)), rng.standard_normal((24, 16))
    check_gradients(OnEmulator(module.blocked), 2, [A, B, np.zeros((40, 16))], outputs=[2], wrt=[0, 1],
                    rtol=1e-5, atol=1e-7)
    A, B = rng.standard_normal((7, 11)), rng.standard_normal((7, 11))
    check_gradients(OnEmulator(module.odd), (3, 3), [A, B, np.zeros((7, 11)), np.zeros(3)], outputs=[2, 3],
                    wrt=[0, 1], rtol=1e-5, atol=1e-7)
