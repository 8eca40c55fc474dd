"""Gradients are never silently wrong: every pattern where an adjoint could read a value the kernel
overwrote, or keep a seed the kernel consumed, is either exact or refused at build time.

Each kernel is checked with `tilec.gradcheck`: the whole final state `sum(w * A)` over every float
array against float64 central differences, with the adjoint launched both on the arrays as the
forward found them ("before": outputs zeroed, inputs intact) and as the forward left them
("after": forward first, as on a tape). A refused kernel carries a TC05xx diagnostic naming the
array and both lines, and its adjoint launch raises.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from tilec.gradcheck import gradcheck

pytestmark = [pytest.mark.build, needs_cxx]

F = "wp.array(dtype=wp.float64)"
SOURCE = f'''import warp as wp


@wp.func
def put_square(A: {F}, i: int, v: wp.float64):
    A[i] = v * v


@wp.kernel
def store_twice(X: {F}, A: {F}):
    i = wp.tid()
    A[i] = X[i] * 3.0
    A[i] = X[i] * X[i]


@wp.kernel
def store_twice_tile(X: {F}, A: {F}):
    x = wp.tile_load(X, shape=(4,))
    wp.tile_store(A, x * 3.0)
    wp.tile_store(A, x * x)


@wp.kernel
def load_modify_store(X: {F}, W: {F}, A: {F}):
    i = wp.tid()
    acc = A[i]
    A[i] = acc + W[i] * X[i]


@wp.kernel
def load_modify_store_tile(X: {F}, A: {F}):
    a = wp.tile_load(A, shape=(5,))
    x = wp.tile_load(X, shape=(5,))
    wp.tile_store(A, a + x * x)


@wp.kernel
def square_in_place(A: {F}):
    i = wp.tid()
    A[i] = A[i] * A[i]


@wp.kernel
def scale_in_place(X: {F}, A: {F}):
    i = wp.tid()
    A[i] *= X[i]  # Warp's in-place update: read, multiply, write back


@wp.kernel
def divide_in_place(X: {F}, A: {F}):
    i = wp.tid()
    A[i] = X[i] * X[i]
    A[i] /= wp.float64(3.0)  # linear in the value it overwrites: exact


@wp.kernel
def square_in_place_tile(A: {F}):
    s = wp.tile_load(A, shape=(5,))
    wp.tile_store(A, s * s)


@wp.kernel
def read_back_linear(X: {F}, A: {F}, B: {F}):
    i = wp.tid()
    A[i] = X[i] * X[i]
    B[i] = A[i] * 3.0


@wp.kernel
def read_back_squared(X: {F}, A: {F}, B: {F}):
    i = wp.tid()
    A[i] = X[i] * 2.0
    B[i] = A[i] * A[i]


@wp.kernel
def read_neighbour(X: {F}, A: {F}, B: {F}):
    i = wp.tid()
    A[i] = X[i] * X[i] + 1.0
    B[i] = A[(i + 1) % 4] * 2.0


@wp.kernel
def overwrite_and_accumulate(X: {F}, A: {F}):
    i = wp.tid()
    A[i] = X[i] * 5.0
    A[0] += X[i] * 7.0


@wp.kernel
def atomic_old_value(X: {F}, A: {F}, B: {F}):
    i = wp.tid()
    old = wp.atomic_add(A, 0, X[i])
    B[i] = old * X[i]


@wp.kernel
def atomic_slot(X: {F}, C: wp.array(dtype=int), B: {F}):
    i = wp.tid()
    slot = wp.atomic_add(C, 0, 1)
    B[slot] = X[i] * X[i]


@wp.kernel
def atomic_maximum(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_max(M, 0, X[i] * X[i])


@wp.kernel
def atomic_minimum(X: {F}, M: {F}):
    i = wp.tid()
    wp.atomic_min(M, 0, X[i] * 2.0)


@wp.kernel
def func_stores(X: {F}, A: {F}):
    i = wp.tid()
    put_square(A, i, X[i])


@wp.kernel
def accumulate(X: {F}, A: {F}):
    i = wp.tid()
    A[0] += X[i] * X[i]
    wp.atomic_add(A, 1, X[i])


@wp.kernel
def scatter(X: wp.array2d(dtype=wp.float64), IDX: wp.array1d(dtype=int), O: wp.array2d(dtype=wp.float64)):
    idx = wp.tile_load(IDX, shape=(4,))
    x = wp.tile_load(X, shape=(4, 3))
    wp.tile_store_indexed(O, idx, x * x, axis=0)


@wp.kernel
def block_element_twice(X: wp.array2d(dtype=wp.float64), B: {F}, K: wp.array(dtype=int)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 8), offset=(i, 0))
    s = wp.tile_sum(x * x)
    B[i] = s[0] * 2.0
    B[i] = s[0] * 3.0
    wp.atomic_add(K, 0, 1)


@wp.kernel
def chain_first(X: {F}, B: {F}):
    i = wp.tid()
    B[i] = X[i] * X[i]


@wp.kernel
def chain_second(B: {F}, D: {F}, C: {F}):
    i = wp.tid()
    C[i] = B[i] * 3.0
    B[i] = wp.sin(D[i])


@wp.kernel
def columns(X: {F}, A: wp.array2d(dtype=wp.float64)):
    # each thread writes its row's two columns, read back linearly: columns apart are elements apart
    i = wp.tid()
    A[i, 0] = X[i] * X[i]
    A[i, 1] = wp.sin(X[i])
    A[i, 0] = A[i, 0] + A[i, 1] * 2.0


@wp.kernel
def interleaved(X: {F}, A: {F}):
    # even and odd elements: 2 * i and 2 * j + 1 never meet
    i = wp.tid()
    A[2 * i] = X[i] * X[i]
    A[2 * i + 1] = wp.cos(X[i]) + A[2 * i] * 0.5


@wp.kernel
def overlapping_strides(X: {F}, A: {F}):
    i = wp.tid()
    A[2 * i] = X[i] * 4.0
    A[i + 1] = X[i] * 3.0


@wp.kernel
def column_of_another_row(X: {F}, A: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    A[i, 0] = X[i] * X[i]
    A[(i + 1) % 4, 1] = A[i, 0] * 3.0
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "gradient_safety")


def rand(n, seed=1):
    return np.random.default_rng(seed).uniform(0.5, 1.5, n)


def line(snippet):
    """`line N` of the one source line holding snippet."""
    found = [n for n, text in enumerate(SOURCE.splitlines(), 1) if snippet in text]
    assert len(found) == 1, (snippet, found)
    return f"line {found[0]}"


def z(n):
    return np.zeros(n)


def exact(kernel, dim, inputs, **kw):
    report = gradcheck(kernel, dim, inputs, **kw)
    assert report.ok, str(report)


def refused(kernel, *needles):
    why = kernel.meta.get("no_backward")
    assert why is not None, f"{kernel.name} was given an adjoint"
    for needle in needles:
        assert needle in why, why
    args = [np.zeros(4, np.int32 if p["dtype"] == "int32" else np.float64) for p in kernel.params]
    launch = kernel.launch_tiled if kernel.meta["tiled"] else kernel.launch
    with pytest.raises(ValueError, match="no backward kernel"):
        launch(dim=1, inputs=args, adj_inputs=[a.copy() for a in args], adjoint=True)


# ------------------------------------------------------------------ overwrites


def test_an_element_stored_twice_gives_only_the_last_store_the_gradient(mod):
    exact(mod.store_twice, 4, [rand(4), z(4)])


def test_a_tile_stored_twice_gives_only_the_last_store_the_gradient(mod):
    exact(mod.store_twice_tile, 1, [rand(6), z(6)])


def test_a_block_storing_its_element_twice_with_cooperating_lanes(mod):
    assert mod.block_element_twice.meta["lanes"]  # the atomic makes every lane run the scalar code
    # (an integer atomic: float atomics from many lanes sum in varying order, noise for the FD)
    exact(mod.block_element_twice, 3, [rand(24).reshape(3, 8), z(3), np.zeros(1, np.int32)])


def test_load_modify_store_linear_in_the_old_value_is_exact(mod):
    exact(mod.load_modify_store, 4, [rand(4), rand(4, 2), rand(4, 3)])


def test_load_modify_store_of_a_tile_is_exact(mod):
    exact(mod.load_modify_store_tile, 1, [rand(7), rand(7, 3)])


def test_an_in_place_product_is_refused_and_an_in_place_division_exact(mod):
    refused(mod.scale_in_place, "`A`", line("A[i] *= X[i]"))
    exact(mod.divide_in_place, 4, [rand(4), rand(4, 2)])


def test_squaring_in_place_is_refused_naming_the_array_and_both_lines(mod):
    refused(mod.square_in_place, "`A`", line("A[i] = A[i] * A[i]"))


def test_squaring_a_tile_in_place_is_refused(mod):
    refused(mod.square_in_place_tile, "`A`", line("s = wp.tile_load(A"), line("tile_store(A, s * s)"))


# ------------------------------------------------------------------ read-back


def test_reading_back_a_stored_element_linearly_is_exact(mod):
    exact(mod.read_back_linear, 4, [rand(4), z(4), z(4)])


def test_reading_back_a_stored_element_into_a_product_is_refused(mod):
    refused(mod.read_back_squared, "`A`", line("B[i] = A[i] * A[i]"), line("A[i] = X[i] * 2.0"))


def test_reading_an_element_another_thread_writes_is_refused(mod):
    refused(mod.read_neighbour, "`A`", line("A[(i + 1) % 4]"), line("A[i] = X[i] * X[i] + 1.0"))


def test_writes_to_different_constant_columns_of_a_row_are_exact(mod):
    # `A[i, 0]` and `A[i, 1]` never meet, whatever the threads (they were refused with TC0503 before)
    assert mod.columns.meta.get("no_backward") is None
    exact(mod.columns, 4, [rand(4), z(8).reshape(4, 2)])


def test_a_column_of_another_row_is_apart_from_this_rows_column(mod):
    # the read `A[i, 0]` meets only this thread's write `A[i, 0]`; the write `A[(i + 1) % 4, 1]` to the next
    # row is a column apart from both, so the kernel is exact as well (finite differences agree)
    assert mod.column_of_another_row.meta.get("no_backward") is None
    exact(mod.column_of_another_row, 4, [rand(4), z(8).reshape(4, 2)])


def test_interleaved_even_and_odd_elements_are_exact(mod):
    assert mod.interleaved.meta.get("no_backward") is None
    exact(mod.interleaved, 4, [rand(4), z(8)])


def test_elements_of_two_strides_may_meet_and_are_refused(mod):
    refused(mod.overlapping_strides, "`A`", line("A[i + 1] = X[i] * 3.0"), line("A[2 * i] = X[i] * 4.0"))


def test_one_thread_overwriting_what_another_accumulates_into_is_refused(mod):
    refused(mod.overwrite_and_accumulate, "`A`", line("A[i] = X[i] * 5.0"), line("A[0] += X[i] * 7.0"))


# ------------------------------------------------------------------ atomics


def test_atomic_add_whose_old_value_is_used_is_refused(mod):
    refused(mod.atomic_old_value, "`A`", line("old = wp.atomic_add(A, 0, X[i])"), line("B[i] = old * X[i]"))


def test_atomic_counter_slot_used_as_an_index_is_refused(mod):
    refused(mod.atomic_slot, "`C`", line("slot = wp.atomic_add(C, 0, 1)"), line("B[slot] ="))


def test_atomic_max_and_min_into_float_arrays_route_the_gradient_to_the_winner(mod):
    """More cases (ties, the old value winning, refusals, Warp): test_atomic_extremes.py."""
    exact(mod.atomic_maximum, 6, [rand(6), np.array([0.3])])
    exact(mod.atomic_minimum, 6, [rand(6), np.array([1.5])])


def test_plain_accumulation_is_exact(mod):
    exact(mod.accumulate, 5, [rand(5), z(2)])


def test_a_func_storing_through_an_array_parameter_passes_the_gradient(mod):
    exact(mod.func_stores, 4, [rand(4), z(4)])


@pytest.mark.parametrize("indices", [[3, 0, 5, 1], [2, 2, 4, 1], [1, 4, 1, 1], [0, 9, 0, -1]])
def test_a_scatter_with_repeated_indices_gives_only_the_last_duplicate_the_gradient(mod, indices):
    """The runtime writes in order, so the last duplicate's value lands; the rows it overwrote reach
    no output (out-of-range indices are dropped: no gradient either)."""
    X = rand(12).reshape(4, 3)
    exact(mod.scatter, 1, [X, np.array(indices, np.int32), np.zeros((6, 3))])


@pytest.mark.cuda
def test_a_scatter_with_repeated_indices_on_the_emulated_gpu(monkeypatch):
    from harness import EMULATIONS, build_emulated

    for variant in EMULATIONS:
        m = build_emulated(SOURCE, "gradient_safety", variant, monkeypatch)
        inputs = [rand(12).reshape(4, 3), np.array([2, 2, 4, 2], np.int32), np.zeros((6, 3))]
        report = gradcheck(m.scatter, 1, inputs, device="cuda-emu")
        assert report.ok, f"{variant}: {report}"


# ------------------------------------------------------------------ chained kernels


def test_two_kernel_chain_matches_finite_differences_of_the_whole_chain(mod):
    """chain_second overwrites B, which chain_first wrote: on a tape, the adjoint of chain_second
    must consume B's seed, or chain_first is credited with a gradient B's final value never had."""
    rng = np.random.default_rng(5)
    X, D = rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 4)
    wB, wC, wX, wD = (rng.standard_normal(4) for _ in range(4))

    def run(X, D):
        B, C = np.zeros(4), np.zeros(4)
        mod.chain_first.launch(dim=4, inputs=[X, B])
        mod.chain_second.launch(dim=4, inputs=[B, D, C])
        return float(wB @ B + wC @ C + wX @ X + wD @ D)

    # the tape: forward both, then adjoints in reverse order on the arrays as the forwards left them
    B, C = np.zeros(4), np.zeros(4)
    mod.chain_first.launch(dim=4, inputs=[X, B])
    mod.chain_second.launch(dim=4, inputs=[B, D, C])
    aX, aB, aC, aD = wX.copy(), wB.copy(), wC.copy(), wD.copy()
    mod.chain_second.launch(dim=4, inputs=[B, D, C], adj_inputs=[aB, aD, aC], adjoint=True)
    mod.chain_first.launch(dim=4, inputs=[X, B], adj_inputs=[aX, aB], adjoint=True)
    h = 1e-6
    for arr, adj in ((X, aX), (D, aD)):
        for i in range(4):
            old = arr[i]
            arr[i] = old + h
            up = run(X, D)
            arr[i] = old - h
            down = run(X, D)
            arr[i] = old
            assert adj[i] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-8)


def test_refusals_are_printed_by_check_as_well_as_build(tmp_path):
    path = tmp_path / "inplace.py"
    path.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    square = line("A[i] = A[i] * A[i]").split()[1]
    assert f"{path}:{square}:" in proc.stderr and "warning[TC05" in proc.stderr, proc.stderr


# ------------------------------------------------------------------ an output operand aliasing an input

ALIASING = '''import warp as wp


@wp.kernel
def square(X: wp.array2d(dtype=wp.float64), O: wp.array2d(dtype=wp.float64)):
    c = wp.tile_load(X, shape=(3, 3))
    wp.tile_matmul(c, c, c)
    wp.tile_store(O, c)


@wp.kernel
def left(X: wp.array2d(dtype=wp.float64), W: wp.array2d(dtype=wp.float64), O: wp.array2d(dtype=wp.float64)):
    c = wp.tile_load(X, shape=(3, 3))
    w = wp.tile_load(W, shape=(3, 3))
    wp.tile_matmul(w, c, c)
    wp.tile_store(O, c)


@wp.kernel
def through_view(X: wp.array2d(dtype=wp.float64), W: wp.array2d(dtype=wp.float64),
                 O: wp.array2d(dtype=wp.float64)):
    c = wp.tile_load(X, shape=(3, 3))
    w = wp.tile_load(W, shape=(3, 3))
    wp.tile_matmul(wp.tile_view(c, offset=(0, 0), shape=(3, 3)), w, c, alpha=0.5)
    wp.tile_store(O, c)
'''


@pytest.fixture(scope="module")
def aliasing():
    return build(ALIASING, "aliasing")


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_matmul_into_one_of_its_operands_reads_the_operand_before_the_update(device):
    if device == "cuda-emu":
        mod = build(ALIASING, "aliasing", block_dim=32, target="cuda-emu")
    else:
        mod = build(ALIASING, "aliasing")
    rng = np.random.default_rng(3)
    X, W = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    for kernel, args, want in ((mod.square, [X], X + X @ X), (mod.left, [X, W], X + W @ X),
                               (mod.through_view, [X, W], X + 0.5 * X @ W)):
        O = np.zeros((3, 3))
        kernel.launch_tiled(dim=1, inputs=args + [O], device=device)
        np.testing.assert_allclose(O, want, rtol=1e-12, atol=1e-12, err_msg=kernel.name)


def test_matmul_into_one_of_its_operands_has_exact_gradients(aliasing):
    rng = np.random.default_rng(4)
    X, W = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    exact(aliasing.square, 1, [X, np.zeros((3, 3))])
    exact(aliasing.left, 1, [X, W, np.zeros((3, 3))])
    exact(aliasing.through_view, 1, [X, W, np.zeros((3, 3))])


# ------------------------------------------------------------------ overlapping arguments in the loader


def test_loader_refuses_overlapping_arguments_where_the_kernel_writes_one(mod):
    A = np.zeros(8)
    with pytest.raises(ValueError, match="arguments `X` and `A` overlap in memory and the kernel writes `A`"):
        mod.store_twice.launch(dim=4, inputs=[A, A])
    with pytest.raises(ValueError, match="arguments `X` and `A` overlap"):
        mod.store_twice.launch(dim=4, inputs=[A[2:6], A[:4]])
    with pytest.raises(ValueError, match="arguments `X` and `A` overlap"):
        mod.store_twice.launch(dim=4, inputs=[A[::-1][:4], A[4:]])  # a reversed view reaching into A[4:]
    assert mod.store_twice.meta["writes"] == ["A"]
    assert mod.func_stores.meta["writes"] == ["A"]  # through a func's array parameter


def test_loader_accepts_disjoint_views_of_one_buffer(mod):
    buf = np.random.default_rng(0).uniform(0.5, 1.5, 8)
    X, A = buf[0::2], buf[1::2]  # interleaved: the same bytes' range, no shared element
    expected = X * X
    mod.store_twice.launch(dim=4, inputs=[X, A])
    np.testing.assert_allclose(A, expected)
    X, A = buf[:4], buf[4:]
    mod.store_twice.launch(dim=4, inputs=[X, A])
    np.testing.assert_allclose(A, X * X)


def test_loader_accepts_one_array_twice_where_the_kernel_only_reads_it():
    src = f'''import warp as wp


@wp.kernel
def add(X: {F}, Y: {F}, O: {F}):
    i = wp.tid()
    O[i] = X[i] + Y[i]
'''
    m = build(src, "reads_twice")
    X, O = np.arange(4.0), np.zeros(4)
    m.add.launch(dim=4, inputs=[X, X, O])
    np.testing.assert_allclose(O, 2 * X)
    with pytest.raises(ValueError, match="arguments `Y` and `O` overlap"):
        m.add.launch(dim=4, inputs=[X, O, O])


# ------------------------------------------------------------------ the GPU model (CUDA emulation)


@pytest.mark.cuda
def test_consumed_adjoints_on_the_emulated_gpu(monkeypatch):
    """The .cu's adjoints consume overwritten elements too, with block_dim threads sharing each tile
    (register and shared tiles) and every barrier phase also run from the last thread down."""
    from harness import EMULATIONS, build_emulated

    for variant in EMULATIONS:
        m = build_emulated(SOURCE, "gradient_safety", variant, monkeypatch)
        for kernel, dim, inputs in ((m.store_twice_tile, 1, [rand(6), z(6)]),
                                    (m.load_modify_store_tile, 1, [rand(7), rand(7, 3)]),
                                    (m.store_twice, 4, [rand(4), z(4)]),
                                    (m.load_modify_store, 4, [rand(4), rand(4, 2), rand(4, 3)]),
                                    (m.block_element_twice, 3,
                                     [rand(24).reshape(3, 8), z(3), np.zeros(1, np.int32)])):
            report = gradcheck(kernel, dim, inputs, device="cuda-emu")
            assert report.ok, f"{variant}: {report}"
