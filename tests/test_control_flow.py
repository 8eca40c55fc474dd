"""Scalar code, control flow and funcs in plain (SIMT) launches: CPU against Python."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp
from typing import Any

LIMIT = wp.constant(10)


@wp.func
def collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
        if steps >= 1000:
            break
    return steps


@wp.func
def generic_square(x: Any):
    return x * x


@wp.kernel
def control(N: wp.array1d(dtype=int), OUT: wp.array1d(dtype=int), F: wp.array1d(dtype=float),
            D: wp.array1d(dtype=wp.float64)):
    i = wp.tid()
    n = N[i]
    OUT[i] = collatz_steps(n)
    total = 0
    for k in range(LIMIT):
        if k == 7:
            break
        if k % 2 == 1:
            continue
        total += k
    for k in range(n, 0, -3):
        total += 1
    F[i] = generic_square(float(total)) + (1.0 if n > 5 else -1.0)
    D[i] = generic_square(wp.float64(n)) + wp.float64(wp.min(n, 4)) + wp.float64(wp.clamp(n, 2, 6))


@wp.kernel
def grid2d(OUT: wp.array2d(dtype=int)):
    i, j = wp.tid()
    OUT[i, j] = i * 100 + j + OUT.shape[1] * 0
'''


def collatz(n):
    steps = 0
    while n != 1 and steps < 1000:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "control")


def test_loops_branches_break_continue_and_funcs(mod):
    N = np.array([1, 2, 3, 6, 7, 27, 97, 11], np.int32)
    OUT, F, D = np.zeros_like(N), np.zeros(len(N), np.float32), np.zeros(len(N))
    mod.control.launch(dim=len(N), inputs=[N, OUT, F, D])
    assert list(OUT) == [collatz(int(n)) for n in N]
    totals = [0 + 2 + 4 + 6 + len(range(int(n), 0, -3)) for n in N]
    np.testing.assert_allclose(F, [t * t + (1 if n > 5 else -1) for t, n in zip(totals, N)])
    np.testing.assert_allclose(D, [float(n) ** 2 + min(n, 4) + min(max(n, 2), 6) for n in N])


def test_two_dimensional_launch(mod):
    OUT = np.zeros((3, 5), np.int32)
    mod.grid2d.launch(dim=(3, 5), inputs=[OUT])
    np.testing.assert_array_equal(OUT, np.arange(3)[:, None] * 100 + np.arange(5)[None, :])
