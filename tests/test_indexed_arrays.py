"""Indexed arrays (wp.indexedarray) through the loader: the accepted argument forms (IndexedArray,
a (data, indices) pair, Warp's own indexedarray), unindexed dimensions, adjoints into the base,
and every bad argument refused with an exception naming it. Results against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def rows(a: wp.indexedarray2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    s = float(0.0)
    for j in range(a.shape[1]):
        s += a[i, j] * a[i, j]
    out[i] = s


@wp.kernel
def scatter(a: wp.indexedarray2d(dtype=float), v: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a[i, j] += v[i, j] * v[i, j]  # atomic, as for an array
    wp.atomic_add(a, i, j, 2.0 * v[i, j])
    wp.atomic_sub(a, i, j, 0.5)


@wp.kernel
def store(a: wp.indexedarray(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = v[i] * 3.0
    out[i] = wp.atomic_max(a, i, 2.0)  # the old value
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "indexed_loader")


def _data():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((6, 5)).astype(np.float32)
    return base, np.array([4, 0, 2], np.int32), np.array([1, 3, 3, 0], np.int32)


def test_forward_and_adjoint_gather_through_the_indices(mod):
    base, i0, i1 = _data()
    out = np.zeros(3, np.float32)
    mod.rows.launch(dim=3, inputs=[mod.IndexedArray(base, [i0, i1]), out])
    np.testing.assert_allclose(out, (base[np.ix_(i0, i1)] ** 2).sum(1), rtol=1e-6)
    seed = np.array([1.0, -2.0, 0.5], np.float32)
    want = np.zeros_like(base)  # (before the launch: the adjoint launch consumes the seed, as Warp's does)
    np.add.at(want, (i0[:, None], i1[None, :]), 2 * base[np.ix_(i0, i1)] * seed[:, None])
    grad = np.zeros_like(base)
    mod.rows.launch(dim=3, inputs=[(base, [i0, i1]), out], adj_inputs=[grad, seed], adjoint=True)
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_an_unindexed_dimension_reads_the_base_as_it_is(mod):
    base, i0, _ = _data()
    out = np.zeros(3, np.float32)
    mod.rows.launch(dim=3, inputs=[(base, [i0]), out])
    np.testing.assert_allclose(out, (base[i0] ** 2).sum(1), rtol=1e-6)
    out6 = np.zeros(6, np.float32)
    mod.rows.launch(dim=6, inputs=[(base, [None, None]), out6])
    np.testing.assert_allclose(out6, (base ** 2).sum(1), rtol=1e-6)


def test_warps_own_indexedarray_is_accepted(mod):
    wp = pytest.importorskip("warp")
    base, i0, i1 = _data()
    wa = wp.indexedarray(wp.array(base, device="cpu"), [wp.array(i0, device="cpu"), wp.array(i1, device="cpu")])
    out = np.zeros(3, np.float32)
    mod.rows.launch(dim=3, inputs=[wa, out])
    np.testing.assert_allclose(out, (base[np.ix_(i0, i1)] ** 2).sum(1), rtol=1e-6)


@pytest.mark.parametrize("bad, message", [
    ("plain", "must be an indexed array"),
    ("out_of_range", "index array 0 holds 0..6, outside the base array's dimension 0 of extent 6"),
    ("negative", "index array 1 holds -1..3"),
    ("too_many", "has 2 dimension(s) but 3 index arrays"),
    ("wrong_ndim", "the base array must have 2 dimension(s), got 1"),
    ("int64_index", "a:index0"),
])
def test_bad_indexed_arguments_are_refused_by_name(mod, bad, message):
    base, i0, i1 = _data()
    value = {
        "plain": base,
        "out_of_range": (base, [np.array([6, 0, 0], np.int32), i1]),
        "negative": (base, [i0, np.array([-1, 3, 3, 0], np.int32)]),
        "too_many": (base, [i0, i1, i1]),
        "wrong_ndim": (base[0], [i0]),
        "int64_index": (base, [i0.astype(np.int64), i1]),
    }[bad]
    with pytest.raises((TypeError, ValueError), match="argument `a") as e:
        mod.rows.launch(dim=3, inputs=[value, np.zeros(3, np.float32)])
    assert message in str(e.value)


def test_adjoint_of_the_wrong_shape_and_the_tape_are_refused(mod):
    base, i0, i1 = _data()
    out = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="adjoint of indexed array `a` has shape"):
        mod.rows.launch(dim=3, inputs=[(base, [i0, i1]), out], adj_inputs=[np.zeros((3, 4), np.float32), out],
                        adjoint=True)
    with pytest.raises(ValueError, match="the tape does not record launches with an indexed array"):
        with mod.Tape():
            mod.rows.launch(dim=3, inputs=[(base, [i0, i1]), out])


def test_writes_and_atomics_reach_the_base_at_the_gathered_positions(mod):
    """Warp's indexed arrays are written through too: a[i, j] = / += / atomics update base[idx0[i], idx1[j]]
    (repeated indices accumulate, as the atomics they are); the adjoint reads the base's adjoint there."""
    base, i0, i1 = _data()
    v = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    got = base.copy()
    mod.scatter.launch(dim=(3, 4), inputs=[(got, [i0, i1]), v])
    want = base.copy()
    np.add.at(want, (i0[:, None], i1[None, :]), v * v + 2 * v - 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    seed = np.random.default_rng(5).standard_normal(base.shape).astype(np.float32)
    grad_v = np.zeros_like(v)
    mod.scatter.launch(dim=(3, 4), inputs=[(got, [i0, i1]), v], adj_inputs=[seed.copy(), grad_v], adjoint=True)
    np.testing.assert_allclose(grad_v, seed[np.ix_(i0, i1)] * (2 * v + 2), rtol=1e-5)
    b1 = np.zeros(6, np.float32)
    idx = np.array([5, 1, 3], np.int32)
    w = np.array([1.0, -1.0, 0.25], np.float32)
    out = np.zeros(3, np.float32)
    mod.store.launch(dim=3, inputs=[(b1, [idx]), w, out])
    np.testing.assert_array_equal(out, w * 3.0)
    expected = np.zeros(6, np.float32)
    expected[idx] = np.maximum(w * 3.0, 2.0)
    np.testing.assert_array_equal(b1, expected)


VIEWS = '''
import warp as wp


@wp.kernel
def views(a: wp.indexedarray2d(dtype=float), out: wp.array2d(dtype=float), lengths: wp.array(dtype=int)):
    i, j = wp.tid()
    out[i, j] = a[i][j] * 2.0
    row = a[i]
    lengths[i] = row.shape[0]
    row[j] = row[j] + 1.0
    wp.atomic_add(row, j, 0.5)


@wp.kernel
def squares(a: wp.indexedarray2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    row = a[i]
    s = float(0.0)
    for j in range(row.shape[0]):
        s += row[j] * row[j]
    out[i] = s
'''


def test_a_view_of_an_indexed_array_reads_and_writes_through_its_indices():
    """Warp's `a[i][j]` and `row = a[i]` of a 2-d indexed array: the row is an indexed array of the
    rest (its shape the remaining index array's length), read, written and updated at the gathered
    elements of the base; its reads' adjoint reaches the base (against numpy's closed form)."""
    m = build(VIEWS, "indexed_views")
    base, i0, _ = _data()
    i1 = np.array([1, 3, 4, 0], np.int32)  # distinct: each thread reads and writes its own element
    out, lengths = np.zeros((3, 4), np.float32), np.zeros(3, np.int32)
    got = base.copy()
    m.views.launch(dim=(3, 4), inputs=[(got, [i0, i1]), out, lengths])
    np.testing.assert_allclose(out, 2 * base[np.ix_(i0, i1)], rtol=1e-6)
    np.testing.assert_array_equal(lengths, [4, 4, 4])
    want = base.copy()
    want[np.ix_(i0, i1)] += 1.5
    np.testing.assert_allclose(got, want, rtol=1e-6)
    sums = np.zeros(3, np.float32)
    m.squares.launch(dim=3, inputs=[(base, [i0, i1]), sums])
    np.testing.assert_allclose(sums, (base[np.ix_(i0, i1)] ** 2).sum(1), rtol=1e-6)
    grad, seed = np.zeros_like(base), np.array([1.0, -2.0, 0.5], np.float32)
    m.squares.launch(dim=3, inputs=[(base, [i0, i1]), sums], adj_inputs=[grad, seed.copy()], adjoint=True)
    expect = np.zeros_like(base)
    np.add.at(expect, (i0[:, None], i1[None, :]), 2 * base[np.ix_(i0, i1)] * seed[:, None])
    np.testing.assert_allclose(grad, expect, rtol=1e-6)
