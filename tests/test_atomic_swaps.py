"""wp.atomic_cas and wp.atomic_exch, as Warp's example_spin_lock and example_work_queue call them:
the old value returned, the element updated atomically (CPU: the runtime's line locks; GPU: a
compare-and-swap loop), no adjoint (Warp has none either): on an array of floats the kernel's adjoint
is refused (TC0507), and a used old value refuses it as for any atomic (TC0504).

The expected values are Warp 1.19's on the CPU for the same program and inputs (run by hand: each
thread touches its own elements, so they are also what the element-by-element rule gives)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir, first_error
from tilec.codegen.sources import adjoint_warnings

SWAPS = '''import warp as wp


@wp.kernel
def swaps(A: wp.array(dtype=int), B: wp.array2d(dtype=wp.float32), old_a: wp.array(dtype=int),
          old_b: wp.array2d(dtype=wp.float32)):
    i = wp.tid()
    old_a[i] = wp.atomic_cas(A, i, i % 3, 100 + i)
    old_b[i, 0] = wp.atomic_exch(B, i, 1, float(i) * 0.5)
    old_b[i, 1] = wp.atomic_cas(B, i, 0, 2.0, -1.0)


@wp.func
def spinlock_acquire(lock: wp.array(dtype=int)):
    while wp.atomic_cas(lock, 0, 0, 1) == 1:
        pass


@wp.func
def spinlock_release(lock: wp.array(dtype=int)):
    wp.atomic_exch(lock, 0, 0)


@wp.kernel
def locked_count(counter: wp.array(dtype=int), lock: wp.array(dtype=int)):
    spinlock_acquire(lock)
    value = wp.atomic_exch(counter, 0, 0)
    wp.atomic_exch(counter, 0, value)
    counter[0] = value + 1
    spinlock_release(lock)
'''


@pytest.mark.build
@needs_cxx
def test_compare_and_swap_and_exchange_as_warp():
    mod = build(SWAPS, "swaps")
    a = np.arange(6, dtype=np.int32)
    b = np.array([[2.0, 7.0], [1.0, 8.0], [2.0, 9.0], [0.0, 1.5], [2.0, -3.0], [5.0, 0.25]], np.float32)
    old_a, old_b = np.zeros(6, np.int32), np.zeros((6, 2), np.float32)
    mod.swaps.launch(dim=6, inputs=[a, b, old_a, old_b])
    assert a.tolist() == [100, 101, 102, 3, 4, 5]
    assert b.tolist() == [[-1.0, 0.0], [1.0, 0.5], [-1.0, 1.0], [0.0, 1.5], [-1.0, 2.0], [5.0, 2.5]]
    assert old_a.tolist() == [0, 1, 2, 3, 4, 5]
    assert old_b.tolist() == [[7.0, 2.0], [8.0, 1.0], [9.0, 2.0], [1.5, 0.0], [-3.0, 2.0], [0.25, 5.0]]


@pytest.mark.build
@needs_cxx
def test_a_spin_lock_serialises_every_thread_on_all_cores():
    """Warp's example_spin_lock, as written: 1,000 threads in blocks spread over the cores each take
    the lock, add one to a plain counter and release it; none is lost (Warp: 1000, lock 0)."""
    mod = build(SWAPS, "swaps")
    counter, lock = np.zeros(1, np.int32), np.zeros(1, np.int32)
    mod.locked_count.launch(dim=1000, inputs=[counter, lock], num_threads=0)
    assert (counter[0], lock[0]) == (1000, 0)


def _refusals(source: str) -> list[tuple[str, int, int, str]]:
    module = compile_ir(source, "swaps")
    return [(d.code, d.span.line, d.span.col, d.message) for d in adjoint_warnings(module)]


def test_no_adjoint_through_a_swap():
    """A swap on an array of floats refuses the kernel's adjoint even where its old value is unused;
    a used old value refuses it as any atomic's does; an unused swap on ints changes nothing."""
    floats = SWAPS.replace("    old_a[i] = wp.atomic_cas(A, i, i % 3, 100 + i)\n", "").replace(
        "    old_b[i, 0] = wp.atomic_exch(B, i, 1, float(i) * 0.5)\n", "    wp.atomic_exch(B, i, 1, float(i) * 0.5)\n")
    (swap, lock) = _refusals(floats)
    assert swap == ("TC0507", 8, 5, "`atomic_exch` on `B`, an array of floats, has no adjoint (Warp's neither): "
                    "which value it leaves depends on the order the threads ran in")
    assert lock[:3] == ("TC0504", 14, 11)  # the spin lock's loop reads the old value
    ints = """import warp as wp


@wp.kernel
def k(A: wp.array(dtype=int), x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_exch(A, i, 7)
    y[i] = x[i] * x[i]
"""
    assert _refusals(ints) == []


def test_the_arguments_are_checked():
    kernel = """import warp as wp


@wp.kernel
def k(A: wp.array(dtype=int), F: wp.array(dtype=float)):
    i = wp.tid()
    CALL
"""
    assert first_error(kernel.replace("CALL", "wp.atomic_cas(A, i, 1)")) == (
        "7:19: TC0304: atomic_cas: needs 1 index(es) and compare and value for a 1-d array, got 2 argument(s) "
        "after the array")
    assert first_error(kernel.replace("CALL", "wp.atomic_exch(F, i, i)")) == (
        "7:23: TC0202: atomic_exch: value is an int32 scalar but the array holds float32")
    assert first_error(kernel.replace("CALL", "wp.atomic_cas(F, i, i, 1.0)")) == (
        "7:22: TC0202: atomic_cas: compare is an int32 scalar but the array holds float32")
    # a float literal into an integer array, which Warp refuses too (atomic_add's value was truncated)
    for call, col in (("wp.atomic_exch(A, i, 1.5)", 23), ("wp.atomic_add(A, i, 1.5)", 22)):
        assert first_error(kernel.replace("CALL", call)) == (
            f"7:{col}: TC0202: {call[3:call.index('(')]}: value is a float literal but the array holds int32")
