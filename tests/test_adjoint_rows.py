"""Adjoint helpers on long rows (grads.h): tile_max / tile_min's gradient at the first extreme
element of rows long enough for the two-pass search (ties, signed zeros, NaNs against a sequential
scan), and unbroadcast's sums to one element and over leading rows, against float64 finite
differences on softmax- and layernorm-shaped kernels."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

COLS = 37  # past the 16 the two-pass search needs, and not a multiple of its 8 partial folds
SOURCE = '''
import warp as wp

COLS = 37


@wp.kernel
def extremes(X: wp.array2d(dtype=float), MX: wp.array2d(dtype=float), MN: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, COLS), offset=(i, 0))
    wp.tile_store(MX, wp.tile_reshape(wp.tile_max(x), shape=(1, 1)), offset=(i, 0))
    wp.tile_store(MN, wp.tile_reshape(wp.tile_min(x), shape=(1, 1)), offset=(i, 0))


LONG = 203  # several rounds of the search's four chains (32 floats, 16 doubles), a vector, a tail


@wp.kernel
def extremes_long(X: wp.array2d(dtype=float), MX: wp.array2d(dtype=float), MN: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, LONG), offset=(i, 0))
    wp.tile_store(MX, wp.tile_reshape(wp.tile_max(x), shape=(1, 1)), offset=(i, 0))
    wp.tile_store(MN, wp.tile_reshape(wp.tile_min(x), shape=(1, 1)), offset=(i, 0))


@wp.kernel
def extremes_long64(X: wp.array2d(dtype=wp.float64), MX: wp.array2d(dtype=wp.float64),
                    MN: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, LONG), offset=(i, 0))
    wp.tile_store(MX, wp.tile_reshape(wp.tile_max(x), shape=(1, 1)), offset=(i, 0))
    wp.tile_store(MN, wp.tile_reshape(wp.tile_min(x), shape=(1, 1)), offset=(i, 0))


@wp.kernel
def softmax(X: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, COLS), offset=(i, 0))
    e = wp.tile_map(wp.exp, x - wp.tile_broadcast(wp.tile_max(x), shape=(1, COLS)))
    wp.tile_store(Y, e / wp.tile_broadcast(wp.tile_sum(e), shape=(1, COLS)), offset=(i, 0))


@wp.kernel
def norm_bias(X: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(4, COLS), offset=(i * 4, 0))
    centred = x - wp.tile_broadcast(wp.tile_sum(x) / wp.float64(4 * COLS), shape=(4, COLS))
    y = centred * centred + wp.tile_broadcast(wp.tile_load(b, shape=(1, COLS)), shape=(4, COLS))
    wp.tile_store(Y, y, offset=(i * 4, 0))
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "adjoint_rows")


def sequential_first(row, better):
    best = 0
    for k in range(1, len(row)):
        if better(row[k], row[best]):
            best = k
    return best


def test_max_and_min_gradients_go_to_the_first_extreme_of_a_sequential_scan(mod):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, COLS)).astype(np.float32)
    X[1, [5, 20, 36]] = 7.0  # ties: the first wins
    X[2, [3, 30]] = -7.0
    X[3] = 0.0
    X[3, [4, 6]] = -0.0  # +0 and -0 are equal: index 0 is the first maximum and minimum
    X[4] = -1.0
    X[4, 17], X[4, 9] = 0.0, -0.0  # equal maxima, -0 first
    X[5, 3] = np.nan  # a NaN past row[0] is never picked; the largest value after it still is
    X[5, 27] = 9.0  # in the same partial fold as the NaN (27 % 8 == 3)
    X[6, 0] = np.nan  # row[0] a NaN: nothing replaces it
    X[7, 12], X[7, 33] = np.nan, -9.0
    X[8, :] = 3.0
    X[9, [10, 25]], X[9, [2, 18]] = np.inf, -np.inf  # infinite ties (the sequential scan's row)
    MX, MN = np.zeros((10, 1), np.float32), np.zeros((10, 1), np.float32)
    gx, gmx, gmn = np.zeros_like(X), np.full_like(MX, 2.0), np.full_like(MN, -3.0)
    mod.extremes.launch_tiled(dim=10, inputs=[X, MX, MN], adj_inputs=[gx, gmx, gmn], adjoint=True)
    want = np.zeros_like(X)
    for r in range(10):
        want[r, sequential_first(X[r], lambda v, b: b < v)] += 2.0
        want[r, sequential_first(X[r], lambda v, b: v < b)] -= 3.0
    np.testing.assert_array_equal(gx, want)
    assert want[9, 10] == 2.0 and want[9, 2] == -3.0 and want[5, 27] == 2.0 and want[1, 5] == 2.0 and want[4, 9] == 2.0  # the cases above are what they claim


def long_rows(dtype):
    """Rows whose extremes sit in every part of the long search: ties in the chains' rounds, in the
    remainder vector and in the scalar tail, signed zeros, NaNs and infinities."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((15, 203)).astype(dtype)
    X[0, [150, 170, 202]] = 7.0  # in a late round of the chains, again after it: the first wins
    X[1, [199, 201]] = -7.0  # the last round's last element, then the scalar tail (floats)
    X[2, [193, 196]] = 8.0  # past the second pass's last round of four vectors (doubles: a lone vector)
    X[3, [1, 97]] = 9.0  # in the first vector and in a chain
    X[4] = 0.0
    X[4, [40, 120]] = -0.0
    X[5, 77] = np.nan  # a NaN mid-row: the sequential scan's row
    X[6, 0] = np.nan
    X[7, [11, 140]], X[7, [64, 180]] = np.inf, -np.inf
    X[8, :] = 2.5
    X[9, 31], X[9, 32], X[9, 33] = 6.0, 6.0, -6.0  # either side of a round's boundary
    X[10, 39], X[10, 40] = 6.5, 6.5  # the first vector after the first round
    X[11, 200], X[11, 8] = 5.0, 5.0
    X[12, :] = -np.inf  # the lanes' starting value everywhere: the vector search hands over to the scan
    X[13, :] = np.inf
    X[13, [8, 16, 33]] = np.nan
    X[14, 4:200:8] = np.nan  # every lane of one position a NaN, the others below the last element
    X[14, 202] = 50.0
    return X


@pytest.mark.parametrize("kernel, dtype", [("extremes_long", np.float32), ("extremes_long64", np.float64)])
def test_long_rows_gradients_go_to_the_first_extreme(mod, kernel, dtype):
    X = long_rows(dtype)
    rows = X.shape[0]
    MX, MN = np.zeros((rows, 1), dtype), np.zeros((rows, 1), dtype)
    gx, gmx, gmn = np.zeros_like(X), np.full_like(MX, 2.0), np.full_like(MN, -3.0)
    getattr(mod, kernel).launch_tiled(dim=rows, inputs=[X, MX, MN], adj_inputs=[gx, gmx, gmn], adjoint=True)
    want = np.zeros_like(X)
    for r in range(rows):
        want[r, sequential_first(X[r], lambda v, b: b < v)] += 2.0
        want[r, sequential_first(X[r], lambda v, b: v < b)] -= 3.0
    np.testing.assert_array_equal(gx, want)
    assert want[0, 150] == 2.0 and want[1, 199] == -3.0 and want[9, 31] == 2.0 and want[10, 39] == 2.0
    assert want[12, 0] == -1.0 and want[13, 0] == -1.0 and want[14, 202] == 2.0


def test_softmax_rows_against_finite_differences(mod):
    X = np.random.default_rng(1).standard_normal((3, COLS))
    check_gradients(mod.softmax, 3, [X, np.zeros((3, COLS))], outputs=[1], wrt=[0], rtol=1e-5, atol=1e-8)


def test_sums_to_one_element_and_over_rows_against_finite_differences(mod):
    rng = np.random.default_rng(2)
    X, b = rng.standard_normal((8, COLS)), rng.standard_normal((1, COLS))
    check_gradients(mod.norm_bias, 2, [X, b, np.zeros((8, COLS))], outputs=[2], wrt=[0, 1], rtol=1e-5, atol=1e-8)
