"""One-row tiles an element loop adds into its array in place, and rows an adjoint loads and zeroes
that the next loop reads and zeroes itself (codegen/row_views.py rows_added_in_place / rows_taken,
memory.h RowAdd / tile_take_row): which statements qualify, and results where the row lies inside
the array (in place) and where it does not (a tile over the array's end: the tile, as before), on
one thread and on two (the row's span locks), forward and adjoint."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

SOURCE = '''
import warp as wp

N = 32


@wp.func
def shift(v: float):
    return v + 1.0


@wp.kernel
def norm(X: wp.array2d(dtype=float), g: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    m = wp.tile_broadcast(wp.tile_sum(x) / float(N), shape=(1, N))
    xc = x - m
    wp.tile_store(Y, xc * xc * wp.tile_load(g, shape=(1, N)), offset=(i, 0))


@wp.kernel
def gather(X: wp.array2d(dtype=float), Acc: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    wp.tile_atomic_add(Acc, x * 2.0, offset=(i % 2, 0))


@wp.kernel
def shifted(X: wp.array2d(dtype=float), Acc: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, N), offset=(i, 0))
    wp.tile_atomic_add(Acc, wp.tile_map(shift, x), offset=(i % 2, 0))
'''

N = 32


def _kernel_text(cpp: str, name: str, direction: str) -> str:
    start = cpp.index(f"k_{name}_{direction}(")
    return cpp[start:cpp.index("\n}\n", start)]


def test_which_rows_are_added_and_taken_in_place():
    cpp = generate(compile_ir(SOURCE, "rowadds"), SOURCE, build_flags(256))["rowadds.cpp"]
    gather = _kernel_text(cpp, "gather", "forward")
    assert "auto _add_v1__tmp = tl::row_add(ctx, v_Acc, v1__tmp, true, tl::mod(v_i, 2), 0);" in gather
    assert "_row_v1__tmp[_e] += (" in gather
    assert "tl::row_add_finish(ctx, _add_v1__tmp, v_Acc, v1__tmp, true, tl::mod(v_i, 2), 0);" in gather
    assert "tl::tile_atomic_add(" not in gather
    shifted = _kernel_text(cpp, "shifted", "forward")  # a user func in the loop: it could take the row's locks
    assert "row_add" not in shifted and "tl::tile_atomic_add(ctx, tl::DiscardOld{}, v_Acc" in shifted
    norm = _kernel_text(cpp, "norm", "backward")  # the stored row's adjoint taken; the gradient row added
    assert "tl::tile_take_row(ctx, " in norm and ", adj_v_Y, true, v_i, 0);" in norm
    assert "// adj_v_Y: the row zeroed by the loop below as it reads it" in norm
    assert "tile_store_zeros" not in norm
    assert "tl::row_add(ctx, adj_v_X, " in norm and "tl::row_add_finish(ctx, " in norm
    # g's gradient, added after the loop that computes it: added by that loop (codegen/loop_adds.py)
    assert "float* const _add0_v11_adj__tmp = tl::loop_add_row(ctx, adj_v_g, _add0_v11_adj__tmp_tile, true);" in norm
    assert "_add0_v11_adj__tmp[_e] += v11_adj__tmp.data[_e];" in norm
    assert ("if (_add0_v11_adj__tmp == _add0_v11_adj__tmp_tile.data) tl::tile_atomic_add(ctx, tl::DiscardOld{}, "
            "adj_v_g, _add0_v11_adj__tmp_tile, true);") in norm


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_added_in_place_and_through_the_tile_match_numpy(threads):
    m = build(SOURCE, "rowadds")
    rng = np.random.default_rng(11)
    for cols in (N, N - 5):  # rows inside the array (in place); tiles over its end (the tile, clipped)
        X = rng.standard_normal((64, N)).astype(np.float32)
        acc = rng.standard_normal((2, cols)).astype(np.float32)
        want = acc.astype(np.float64) + np.stack([2.0 * X[r::2, :cols].astype(np.float64).sum(axis=0) for r in (0, 1)])
        m.gather.launch_tiled(dim=64, inputs=[X, acc], num_threads=threads)
        np.testing.assert_allclose(acc, want, rtol=1e-5, atol=1e-5)
        acc = np.zeros((2, cols), np.float32)
        m.shifted.launch_tiled(dim=64, inputs=[X, acc], num_threads=threads)
        np.testing.assert_allclose(acc, np.stack([(X[r::2, :cols] + 1.0).sum(axis=0) for r in (0, 1)]), rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.build
@needs_cxx
def test_negative_zeros_added_through_the_tile_stay_negative():
    """The tile a row over the end is summed in starts at -0, the identity of +: -0 + -0 stays -0."""
    m = build(SOURCE, "rowadds")
    for cols in (N, N - 5):
        X = np.full((4, N), -0.0, np.float32)
        acc = np.full((2, cols), -0.0, np.float32)
        m.gather.launch_tiled(dim=4, inputs=[X, acc], num_threads=1)
        assert not acc.any() and np.signbit(acc).all(), cols


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("cols", [N, N - 3])
def test_gradients_through_rows_taken_and_added(cols):
    source = SOURCE.replace("dtype=float", "dtype=wp.float64").replace("v: float", "v: wp.float64").replace(
        "float(N)", "wp.float64(N)")
    m = build(source, "rowadds64")
    rng = np.random.default_rng(12)
    X, g = rng.standard_normal((3, cols)), rng.standard_normal((1, cols))
    check_gradients(m.norm, 3, [X, g, np.zeros((3, cols))], outputs=[2], wrt=[0, 1])
    adj_y = rng.standard_normal((3, cols))
    adj_x = np.ones((3, cols))  # the adjoint adds into what is there
    a = 2.0 * adj_y * g * (X - X.sum(axis=1, keepdims=True) / N)  # y = (x - sum(x) / N)^2 g, past cols: zeros
    want = adj_x + a - a.sum(axis=1, keepdims=True) / N
    m.norm.launch_tiled(dim=3, inputs=[X, g, np.zeros((3, cols))], adj_inputs=[adj_x, np.zeros((1, cols)), adj_y],
                        adjoint=True)
    np.testing.assert_allclose(adj_x, want, rtol=1e-12, atol=1e-12)
    assert not adj_y.any()  # the stored row's adjoint zeroed (Warp's rule), in place or through the tile


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cols", [N, N - 3])
def test_a_gradient_the_loop_adds_as_it_goes(threads, cols):
    """g's gradient, summed over 64 rows: into the array's row (one thread), into each thread's sums
    (two), or through the tile (a row over the end): the closed form, and the same bits each way."""
    source = SOURCE.replace("dtype=float", "dtype=wp.float64").replace("v: float", "v: wp.float64").replace(
        "float(N)", "wp.float64(N)")
    m = build(source, "rowadds64")
    rng = np.random.default_rng(13)
    X, g, adj_y = rng.standard_normal((64, cols)), rng.standard_normal((1, cols)), rng.standard_normal((64, cols))
    adj_g = np.full((1, cols), 0.5)
    xc = X - X.sum(axis=1, keepdims=True) / N
    m.norm.launch_tiled(dim=64, inputs=[X, g, np.zeros((64, cols))], adj_inputs=[np.zeros((64, cols)), adj_g,
                        adj_y.copy()], adjoint=True, num_threads=threads)
    np.testing.assert_allclose(adj_g, 0.5 + (adj_y * xc * xc).sum(axis=0, keepdims=True), rtol=1e-12, atol=1e-12)


VIEWS = '''
import warp as wp

N = 32


@wp.kernel
def stored(X: wp.array1d(dtype=float)):
    i = wp.tid()
    V = X[0:N + 4]
    x = wp.tile_load(V, shape=(N,))
    wp.tile_store(X, x * 2.0 + 1.0, offset=(4,))


@wp.kernel
def added(X: wp.array1d(dtype=float)):
    i = wp.tid()
    V = X[0:N + 4]
    x = wp.tile_load(V, shape=(N,))
    wp.tile_atomic_add(X, x * 2.0 + 1.0, offset=(4,))


@wp.kernel
def looped(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X[0:N + 4], shape=(N,))
    b = x * 2.0
    c = b + x
    d = b * c
    wp.tile_atomic_add(X, c, offset=(4,))
    wp.tile_store(Y, d + d)
'''


@pytest.mark.build
@needs_cxx
def test_a_row_read_through_a_view_of_the_array_written_is_not_written_in_place_meanwhile():
    """The loop reads X[0:36] in place (a local view, or a view expression) and writes or adds X[4:36]:
    element e + 4 is read after element e was written. Only two different parameters are apart
    (row_views.py arrays_apart); the loop writes its tile, and the store or add follows it."""
    m = build(VIEWS, "rowviews_aliased")
    x0 = np.arange(40, dtype=np.float32)
    X = x0.copy()
    m.stored.launch_tiled(dim=1, inputs=[X], num_threads=1)
    want = x0.copy()
    want[4:36] = 2 * x0[:32] + 1
    np.testing.assert_array_equal(X, want)
    X = x0.copy()
    m.added.launch_tiled(dim=1, inputs=[X], num_threads=1)
    want = x0.copy()
    want[4:36] += 2 * x0[:32] + 1
    np.testing.assert_array_equal(X, want)
    X, Y = x0.copy(), np.zeros(32, np.float32)
    m.looped.launch_tiled(dim=1, inputs=[X, Y], num_threads=1)
    want = x0.copy()
    want[4:36] += 3 * x0[:32]
    np.testing.assert_array_equal(X, want)
    np.testing.assert_array_equal(Y, 2 * (2 * x0[:32]) * (3 * x0[:32]))
