"""A loop whose body is one accumulating matmul of two loaded tiles, `for k: acc += load(A) @
load(B)`, has its products summed after the loop (codegen/operand_views.py `matmul_sums`,
linalg.h `tl::MatmulSum`, gemm.h `matmul_sum`: acc held in registers across the steps, A's rows
read in place when they lie inside a contiguous-row array). Results against float64 numpy for
float32 and float64: A read in place (rows of a wider array), copied (edges past the array, a
transposed array), more steps than one sum takes (SUM_STEPS = 64), an accumulator that does not
start at zero, fiber lanes; a loop that reads its accumulator keeps the step-by-step form. An
accumulator that starts as tile_zeros and is only stored after the loop is summed straight into
the array where its tile lies inside it (MatmulSum::finish_into), else stored as before."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

TM = 16
TK = 4
TN = TN_VALUE


@wp.kernel
def gemm(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    acc = wp.tile_ones(shape=(TM, TN), dtype=DT)
    for k in range((A.shape[1] + TK - 1) // TK):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def zeroed(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT), steps: int):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TM, TN), dtype=DT)
    for k in range(steps):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def lanes(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j, lane = wp.tid()
    acc = wp.tile_ones(shape=(TM, TN), dtype=DT)
    for k in range((A.shape[1] + TK - 1) // TK):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def two_sums(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    acc = wp.tile_ones(shape=(TM, TN), dtype=DT)
    for k in range(A.shape[1] // (2 * TK)):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
    for k in range(A.shape[1] // (2 * TK)):
        a2 = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, 2 * k * TK))
        b2 = wp.tile_load(B, shape=(TK, TN), offset=(2 * k * TK, j * TN))
        wp.tile_matmul(a2, b2, acc)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))


@wp.kernel
def halved(A: wp.array2d(dtype=DT), B: wp.array2d(dtype=DT), C: wp.array2d(dtype=DT)):
    i, j = wp.tid()
    acc = wp.tile_ones(shape=(TM, TN), dtype=DT)
    for k in range((A.shape[1] + TK - 1) // TK):
        a = wp.tile_load(A, shape=(TM, TK), offset=(i * TM, k * TK))
        b = wp.tile_load(B, shape=(TK, TN), offset=(k * TK, j * TN))
        wp.tile_matmul(a, b, acc)
        acc = acc * DT(0.5)
    wp.tile_store(C, acc, offset=(i * TM, j * TN))
'''

CASES = [("float", np.float32, 2e-5), ("wp.float64", np.float64, 1e-12)]


def _source(dtype: str, tn: int) -> str:
    return SOURCE.replace("TN_VALUE", str(tn)).replace("DT", dtype)


def _module(dtype: str, np_dtype, tn: int):
    return build(_source(dtype, tn), f"msum_{np_dtype.__name__}_{tn}")


def _reference(A, B):
    """C of `gemm`: acc starts at ones, and tile_load reads zeros past the arrays' edges."""
    return 1.0 + A.astype(np.float64) @ B.astype(np.float64)


def test_the_loop_sums_its_products_after_it():
    source = _source("float", 32)
    cpp = generate(compile_ir(source, "msum"), source, build_flags(256))["msum.cpp"]
    gemm = cpp[cpp.index("k_gemm_forward"):cpp.index("k_gemm_backward")]
    assert "tl::MatmulSum<tl::Tile<float, 16, 32>, 4> _t3(ctx, v_acc);" in gemm
    assert "_t3.add(tl::array_tile<16, 4>(v_A, (v_i * 16), (v_k * 4)), tl::array_tile<4, 32>(v_B, (v_k * 4), (v_j * 32)));" in gemm
    assert gemm.index("_t3.add(") < gemm.index("_t3.finish();") < gemm.index("tl::tile_store(")
    assert "_t3.finish();" in gemm
    zeroed = cpp[cpp.index("k_zeroed_forward"):cpp.index("k_zeroed_backward")]
    assert "tl::tile_fill_zero" not in zeroed and "tl::MatmulSum<tl::Tile<float, 16, 32>, 4> _t3(ctx, v_acc, true);" in zeroed
    assert "if (!_t3.finish_into(v_C, (v_i * 16), (v_j * 32))) {\n            tl::tile_store(ctx, v_C, v_acc" in zeroed
    halved = cpp[cpp.index("k_halved_forward"):cpp.index("k_halved_backward")]
    assert "MatmulSum" not in halved and "tl::tile_matmul(ctx, v_acc, tl::array_tile<16, 4>" in halved


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("tn", [32, 24])  # whole AVX-512 panels; an AVX2 tail panel of 8 columns
def test_rows_read_in_place_and_more_steps_than_one_sum(dtype, np_dtype, tol, tn):
    """A is a column window of a wider array (rows 300 apart, read in place); K = 280 is 70 steps of
    4, past the 64 one sum takes."""
    m = _module(dtype, np_dtype, tn)
    rng = np.random.default_rng(11)
    wide = rng.standard_normal((48, 300)).astype(np_dtype)
    A, B = wide[:, 10:290], rng.standard_normal((280, 2 * tn)).astype(np_dtype)
    C = np.zeros((48, 2 * tn), np_dtype)
    m.gemm.launch_tiled(dim=(3, 2), inputs=[A, B, C], num_threads=1)
    np.testing.assert_allclose(C, _reference(A, B), rtol=tol, atol=tol * 30)
    m.gemm.launch_tiled(dim=(3, 2), inputs=[A, B, C])  # every core: other threads, other caches
    np.testing.assert_allclose(C, _reference(A, B), rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("kernel", ["gemm", "two_sums"])
def test_rows_4_kib_apart_are_copied_with_the_same_sums(dtype, np_dtype, tol, kernel):
    """A's rows 4 KiB apart (a window of a 1024-float or 512-double wide array) would share an L1
    set: `gemm`'s steps walk along the rows, which are copied once for all steps into longer rows
    (gemm.h A_SUM; 70 steps: two sums, so two copies); `two_sums`' second sum skips columns and
    copies each step's rows. The micro-kernel runs the same FMAs in the same order as over rows
    read in place, so C equals, bit for bit, C from the same A in an array whose rows are 280 apart
    (read in place); and float64 numpy within rounding."""
    m = _module(dtype, np_dtype, 32)
    rng = np.random.default_rng(17)
    wide = rng.standard_normal((48, 4096 // np.dtype(np_dtype).itemsize)).astype(np_dtype)
    A, B = wide[:, 10:290], rng.standard_normal((280, 64)).astype(np_dtype)
    kernel_of = getattr(m, kernel)
    for threads in (1, 0):
        C, C_in_place = np.zeros((48, 64), np_dtype), np.zeros((48, 64), np_dtype)
        kernel_of.launch_tiled(dim=(3, 2), inputs=[A, B, C], num_threads=threads)
        kernel_of.launch_tiled(dim=(3, 2), inputs=[np.ascontiguousarray(A), B, C_in_place], num_threads=threads)
        np.testing.assert_array_equal(C, C_in_place)
    if kernel == "gemm":
        np.testing.assert_allclose(C, _reference(A, B), rtol=tol, atol=tol * 30)
    else:
        skipped = (np.arange(280) // 4) % 2 == 0
        want = _reference(A[:, :140], B[:140]) + A @ (B * skipped[:, None]).astype(np.float64)
        np.testing.assert_allclose(C, want, rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("layout", ["edges", "transposed"])
def test_rows_copied(dtype, np_dtype, tol, layout):
    """Tiles past the arrays' edges (zero fill) and a transposed A (columns contiguous): A's rows
    are copied for the sum."""
    m = _module(dtype, np_dtype, 32)
    rng = np.random.default_rng(12)
    if layout == "edges":
        A, B = rng.standard_normal((37, 29)).astype(np_dtype), rng.standard_normal((29, 41)).astype(np_dtype)
    else:
        A = rng.standard_normal((40, 32)).astype(np_dtype).T
        B = rng.standard_normal((40, 64)).astype(np_dtype)
    grid = (-(-A.shape[0] // 16), -(-B.shape[1] // 32))
    C = np.zeros((A.shape[0], B.shape[1]), np_dtype)
    m.gemm.launch_tiled(dim=grid, inputs=[A, B, C], num_threads=1)
    np.testing.assert_allclose(C, _reference(A, B), rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("layout", ["transposed", "two sums"])
def test_b_panels_of_the_steps_in_one_copy_or_one_each(dtype, np_dtype, tol, layout):
    """Steps that walk down B (step s at row 4 s, the same columns) have their B panels packed into
    one panel-major copy (gemm.h matmul_sum), here from a transposed B (its columns contiguous:
    pack_b's other branch) with a tail panel under AVX2 (24 columns). `two_sums`: a walking sum,
    then one as long from the same first view whose steps skip rows of B (rows 8 s .. 8 s + 3):
    the second keeps a copy per step and must not be taken for the first's copy, which a later
    block on the thread finds in its PanelCache. Against float64 numpy, on one thread and on every
    core. (Steps past B's edge: test_rows_copied.)"""
    m = _module(dtype, np_dtype, 24)
    rng = np.random.default_rng(16)
    A = rng.standard_normal((48, 40)).astype(np_dtype)
    if layout == "transposed":
        B = rng.standard_normal((48, 40)).astype(np_dtype).T
        kernel, want = m.gemm, _reference(A, B)
    else:
        B = rng.standard_normal((40, 48)).astype(np_dtype)
        skipped = (np.arange(40) // 4) % 2 == 0  # the columns of A (rows of B) the second sum reads
        kernel, want = m.two_sums, _reference(A[:, :20], B[:20]) + A @ (B * skipped[:, None]).astype(np.float64)
    for threads in (1, 0):
        C = np.zeros((48, 48), np_dtype)
        kernel.launch_tiled(dim=(3, 2), inputs=[A, B, C], num_threads=threads)
        np.testing.assert_allclose(C, want, rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
def test_fiber_lanes_and_a_loop_that_reads_its_accumulator(dtype, np_dtype, tol):
    m = _module(dtype, np_dtype, 32)
    rng = np.random.default_rng(13)
    A, B = rng.standard_normal((32, 24)).astype(np_dtype), rng.standard_normal((24, 64)).astype(np_dtype)
    C = np.zeros((32, 64), np_dtype)
    m.lanes.launch_tiled(dim=(2, 2), inputs=[A, B, C], num_threads=1)
    np.testing.assert_allclose(C, _reference(A, B), rtol=tol, atol=tol * 30)
    m.halved.launch_tiled(dim=(2, 2), inputs=[A, B, C], num_threads=1)
    want = np.ones((32, 64))
    for k in range(6):
        want = (want + A[:, 4 * k:4 * k + 4].astype(np.float64) @ B[4 * k:4 * k + 4].astype(np.float64)) * 0.5
    np.testing.assert_allclose(C, want, rtol=tol, atol=tol * 30)


@pytest.mark.parametrize("dtype,np_dtype,tol", CASES)
@pytest.mark.parametrize("steps", [0, 1, 7, 70])  # none, one, some, more than one sum takes (a flush)
def test_sums_straight_into_the_array(dtype, np_dtype, tol, steps):
    """C is 40 x 80 inside a wider array (rows 100 apart): its interior tiles are summed straight
    into it, the last block row (rows 32..47, past row 40) through acc and the store."""
    m = _module(dtype, np_dtype, 32)
    rng = np.random.default_rng(14)
    A, B = rng.standard_normal((40, 280)).astype(np_dtype), rng.standard_normal((280, 96)).astype(np_dtype)
    wide = np.full((40, 100), 7.0, np_dtype)
    C = wide[:, 4:84]
    m.zeroed.launch_tiled(dim=(3, 2), inputs=[A, B, C, steps], num_threads=1)
    k = 4 * steps
    want = A[:, :k].astype(np.float64) @ B[:k, :64].astype(np.float64)
    np.testing.assert_allclose(C[:, :64], want, rtol=tol, atol=tol * 30)
    np.testing.assert_array_equal(C[:, 64:], 7.0)  # outside the grid's tiles: untouched
    np.testing.assert_array_equal(wide[:, :4], 7.0)
    np.testing.assert_array_equal(wide[:, 84:], 7.0)


WINDOWS = '''
import warp as wp


@wp.kernel
def layer(X: wp.array2d(dtype=float), W: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    r = wp.tile_load(X, shape=(16, 64), offset=(i * 16, 0)) * 2.0
    y = wp.tile_zeros(shape=(16, 64), dtype=float)
    for k in range(4):
        part = wp.tile_view(r, offset=(0, k * 16), shape=(16, 16))
        wp.tile_matmul(part, wp.tile_load(W, shape=(16, 64), offset=(k * 16, 0)), y)
    wp.tile_store(Y, y * 1.0, offset=(i * 16, 0))
'''


def test_windows_of_a_tile_as_the_summed_a():
    """The MLP's second layer: A is a window of a tile, read in place (rows 64 apart), B an array
    view; y starts as zeros that the sum makes (it is read after the loop, not only stored)."""
    cpp = generate(compile_ir(WINDOWS, "msum_win"), WINDOWS, build_flags(256))["msum_win.cpp"]
    layer = cpp[cpp.index("k_layer_forward"):cpp.index("k_layer_backward")]
    assert "_t3.add(tl::tile_window<16, 16>(v_r, 0, (v_k * 16)), tl::array_tile<16, 64>(v_W, (v_k * 16), 0));" in layer
    assert "tl::MatmulSum<tl::Tile<float, 16, 64>, 16> _t3(ctx, v_y, true);" in layer and "tl::tile_fill_zero" not in layer
    m = build(WINDOWS, "msum_win")
    rng = np.random.default_rng(15)
    X, W = rng.standard_normal((48, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
    Y = np.zeros((48, 64), np.float32)
    m.layer.launch_tiled(dim=3, inputs=[X, W, Y], num_threads=1)
    np.testing.assert_allclose(Y, 2.0 * X.astype(np.float64) @ W.astype(np.float64), rtol=2e-5, atol=6e-4)


def test_zeros_read_before_the_loop_stay_zeros():
    source = '''
import warp as wp


@wp.kernel
def peeked(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    acc = wp.tile_zeros(shape=(16, 16), dtype=float)
    seen = acc + 1.0
    for k in range(4):
        a = wp.tile_load(A, shape=(16, 16), offset=(0, k * 16))
        b = wp.tile_load(B, shape=(16, 16), offset=(k * 16, 0))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc + seen)
'''
    cpp = generate(compile_ir(source, "msum_peek"), source, build_flags(256))["msum_peek.cpp"]
    peeked = cpp[cpp.index("k_peeked_forward"):cpp.index("k_peeked_backward")]
    assert "tl::tile_fill_zero(ctx, v_acc);" in peeked and "_t3(ctx, v_acc);" in peeked and "_t3.finish();" in peeked
