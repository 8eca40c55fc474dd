"""Block stacks (wp.tile_stack, _push, _pop, _count, _clear): every lane pushes and pops together;
tilec hands out slots in thread order (Warp leaves the order unspecified: its CPU blocks resume
threads in another order, so the conformance cases in cases_ops.py compare what does not depend
on it). CPU and the CUDA emulation against a numpy model of that order, saturation at capacity,
empty pops, a stack as a func parameter, the shared-memory figure, the adjoint (exact around an
int stack, refused through a float one), the static checks at exact line:col."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build, compile_ir
from tilec.codegen.analysis import shared_bytes
from tilec.diagnostics import CompileError
from tilec.pipeline import compile_source

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

CAP = wp.constant(6)


@wp.func
def offer(s: wp.tile_stack(dtype=int, capacity=CAP), value: int):
    return wp.tile_stack_push(s, value, value % 2 == 1)


@wp.kernel
def queue(data: wp.array2d(dtype=int), slots: wp.array2d(dtype=int), popped: wp.array2d(dtype=int),
          counts: wp.array2d(dtype=int)):
    b, lane = wp.tid()
    s = wp.tile_stack(capacity=CAP, dtype=int)
    slots[b, lane] = offer(s, data[b, lane])
    counts[b, 0] = wp.tile_stack_count(s)
    v, slot = wp.tile_stack_pop(s)
    popped[b, lane] = wp.where(slot >= 0, v * 100 + slot, -1)
    counts[b, 1] = wp.tile_stack_count(s)
    wp.tile_stack_clear(s)
    counts[b, 2] = wp.tile_stack_count(s)


@wp.kernel
def weighted(x: wp.array(dtype=wp.float64), idx: wp.array(dtype=int), y: wp.array(dtype=wp.float64)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=int)
    v = x[lane]
    wp.tile_stack_push(s, idx[lane], v > 0.0)
    k, slot = wp.tile_stack_pop(s)
    if slot >= 0:
        wp.atomic_add(y, k, v * v)  # the stack moves indices only: the adjoint is exact


@wp.kernel
def through(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    _b, lane = wp.tid()
    s = wp.tile_stack(capacity=16, dtype=float)
    wp.tile_stack_push(s, x[lane] * 2.0, True)
    v, slot = wp.tile_stack_pop(s)
    y[lane] = v
'''
BLOCK = 8


def model(data):
    """Slots in thread order; lane k pops the k-th element from the top."""
    slots, popped, counts = np.full_like(data, -1), np.full_like(data, -1), np.zeros((data.shape[0], 3), np.int32)
    for b, row in enumerate(data):
        stack = []
        for lane, value in enumerate(row):
            if value % 2 == 1 and len(stack) < 6:
                slots[b, lane] = len(stack)
                stack.append(value)
        counts[b, 0] = len(stack)
        for lane in range(len(row)):
            if stack:
                slot = len(stack) - 1
                popped[b, lane] = stack.pop() * 100 + slot
        counts[b, 1] = len(stack)
    return slots, popped, counts


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_push_pop_count_clear_in_thread_order(device):
    m = build(SOURCE, "stacks", block_dim=BLOCK, target=device)
    data = np.array([[1, 2, 3, 5, 4, 7, 9, 11],   # 7 odd values: the 7th is dropped (capacity 6)
                     [2, 4, 6, 8, 1, 0, 3, 2]], np.int32)  # 2 pushed: lanes after the 2nd pop get -1
    outs = [np.zeros_like(data), np.zeros_like(data), np.zeros((2, 3), np.int32)]
    m.queue.launch_tiled(dim=2, inputs=[data, *outs], block_dim=BLOCK, device=device)
    for got, want in zip(outs, model(data)):
        np.testing.assert_array_equal(got, want)


def test_shared_memory_figure_counts_the_stack():
    module = compile_ir(SOURCE, "stacks", block_dim=BLOCK)
    kernels = {k.name: k for k in module.kernels}
    assert shared_bytes(kernels["queue"]) == 6 * 4 + 8  # 6 int32 slots (rounded to 8 bytes) + the count
    assert shared_bytes(kernels["through"]) == 16 * 4 + 8


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_adjoint_around_an_int_stack_is_exact(device):
    m = build(SOURCE, "stacks", block_dim=BLOCK, target=device)
    x = np.random.default_rng(5).standard_normal(BLOCK)
    idx = np.array([0, 1, 2, 1, 0, 2, 2, 1], np.int32)
    kernel = m.weighted if device == "cpu" else OnEmulator(m.weighted)
    check_gradients(kernel, 1, [x, idx, np.zeros(3)], outputs=[2], wrt=[0])


def test_gradient_through_a_float_stack_is_refused():
    m = build(SOURCE, "stacks", block_dim=BLOCK)
    x, y = np.ones(BLOCK, np.float32), np.zeros(BLOCK, np.float32)
    m.through.launch_tiled(dim=1, inputs=[x, y], block_dim=BLOCK)
    assert sorted(y) == [2.0] * BLOCK
    with pytest.raises(Exception, match="tile_stack_pop"):
        m.through.launch_tiled(dim=1, inputs=[x, y], block_dim=BLOCK, adj_inputs=[np.zeros_like(x), np.ones_like(y)],
                               adjoint=True)


HEAD = """import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float), n: int):
    _b, lane = wp.tid()
"""


@pytest.mark.parametrize("line, code, col, message", [
    ("s = wp.tile_stack(capacity=n, dtype=float)", "TC0305", 32, ""),
    ("s = wp.tile_stack(capacity=0, dtype=float)", "TC0303", 32, "`capacity` must be a positive"),
    ("s = wp.tile_stack(capacity=4, dtype=float)\n    wp.tile_stack_push(s, A[0], 1)", "TC0203", 33,
     "`has_value` must be a bool"),
    ("s = wp.tile_stack(capacity=4, dtype=int)\n    wp.tile_stack_push(s, A[0], True)", "TC0201", 27,
     "cannot mix int32 and float32"),
    ("c = wp.tile_stack_count(A)", "TC0203", 29, "`s` must be a tile stack"),
])
def test_static_checks(line, code, col, message):
    with pytest.raises(CompileError) as err:
        compile_source(HEAD + "    " + line + "\n", "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.col) == (code, col), diag
    assert message in diag.message
