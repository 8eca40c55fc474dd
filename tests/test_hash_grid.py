"""The loader's HashGrid and the launch's check of a grid id (tilec-rt/hash_grid.py), an unbuilt
grid, hash_grid_point_id outside the points, and the CUDA emulation running the same query loops.
Warp's own values and gradients: tests/conformance/cases_hash_grids.py."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

SOURCE = '''
import warp as wp


@wp.kernel
def count(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, out: wp.array(dtype=int)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, x[i], h):
        if wp.length(x[j] - x[i]) <= h:
            n += 1
    out[i] = n


@wp.kernel
def ids(grid: wp.uint64, out: wp.array(dtype=int)):
    k = wp.tid()
    out[k] = wp.hash_grid_point_id(grid, k - 2)
'''
N = 200
H = 0.3


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "hash_grid_loader")


def points(n=N, seed=0):
    return (np.random.default_rng(seed).random((n, 3)) * 3.0 - 1.5).astype(np.float32)


def brute_force_counts(x, h):
    d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1)
    return (d <= np.float32(h)).sum(axis=1)


@needs_cxx
@pytest.mark.build
def test_counts_match_brute_force_for_any_grid_shape(module):
    x = points()
    for dims in ((1, 1, 1), (4, 4, 4), (7, 3, 5), (64, 64, 64)):
        grid = module.HashGrid(*dims)
        grid.build(x, H)
        out = np.zeros(N, np.int32)
        module.count.launch(dim=N, inputs=[grid.id, x, H, out])
        np.testing.assert_array_equal(out, brute_force_counts(x, H), err_msg=str(dims))


@needs_cxx
@pytest.mark.build
def test_a_grid_is_accepted_by_any_module_and_refused_when_dead(module):
    other = build(SOURCE.replace("count(", "count_again("), "hash_grid_other")
    x = points()
    grid = other.HashGrid(8, 8, 8)
    grid.build(x, H)
    out = np.zeros(N, np.int32)
    module.count.launch(dim=N, inputs=[grid.id, x, H, out])  # made by another module's loader
    np.testing.assert_array_equal(out, brute_force_counts(x, H))
    module.count.launch(dim=N, inputs=[grid, x, H, out])  # the grid itself
    dead = grid.id
    del grid
    gc.collect()
    with pytest.raises(ValueError, match=r"count: argument `grid` = \d+ is not the id of a live tilec HashGrid"):
        module.count.launch(dim=N, inputs=[dead, x, H, out])


@needs_cxx
@pytest.mark.build
def test_bad_grid_arguments_are_python_errors(module):
    x = points()
    out = np.zeros(N, np.int32)
    with pytest.raises(ValueError, match=r"argument `grid` = 12345 is not the id of a live tilec HashGrid"):
        module.count.launch(dim=N, inputs=[12345, x, H, out])
    with pytest.raises(TypeError, match=r"argument `grid` must be a hash grid's id \(HashGrid.id\), got float"):
        module.count.launch(dim=N, inputs=[1.5, x, H, out])
    wide = module.HashGrid(8, 8, 8, dtype="float64")
    wide.build(x.astype(np.float64), H)
    with pytest.raises(ValueError, match=r"argument `grid`: the kernel queries float32 points, and this grid holds "
                                         r"float64 ones"):
        module.count.launch(dim=N, inputs=[wide.id, x, H, out])
    grid = module.HashGrid(8, 8, 8)
    with pytest.raises(TypeError, match=r"`points` must be float32 \(the grid's dtype\), got float64"):
        grid.build(x.astype(np.float64), H)
    with pytest.raises(ValueError, match=r"`points` must have shape \(n, 3\), got \(200, 2\)"):
        grid.build(x[:, :2], H)
    with pytest.raises(ValueError, match=r"`dim_y` must be at least 1, got 0"):
        module.HashGrid(4, 0, 4)
    with pytest.raises(ValueError, match=r"device 'cuda': tilec's hash grids live on the CPU"):
        module.HashGrid(4, 4, 4, device="cuda")


@needs_cxx
@pytest.mark.build
def test_an_unbuilt_grid_has_no_points_and_ids_outside_are_minus_one(module):
    grid = module.HashGrid(4, 4, 4)
    x = points(8)
    out = np.full(8, 7, np.int32)
    module.count.launch(dim=8, inputs=[grid.id, x, H, out])
    np.testing.assert_array_equal(out, 0)  # Warp's too: an unbuilt grid's query finds nothing
    module.ids.launch(dim=8, inputs=[grid.id, out])
    np.testing.assert_array_equal(out, -1)
    grid.build(x, H)
    module.ids.launch(dim=8, inputs=[grid.id, out])
    assert out[0] == out[1] == -1  # positions -2 and -1: outside (Warp reads past its buffer there)
    assert sorted(out[2:]) == sorted(set(out[2:])) and set(out[2:]) <= set(range(8))


@needs_cxx
@pytest.mark.build
def test_the_cuda_emulation_runs_the_same_loops(module):
    emulated = build(SOURCE, "hash_grid_emulated", block_dim=32, target="cuda-emu")
    x = points()
    grid = emulated.HashGrid(5, 5, 5)
    grid.build(x, H)
    out = np.zeros(N, np.int32)
    emulated.count.launch(dim=N, inputs=[grid.id, x, H, out], device="cuda-emu", block_dim=32)
    np.testing.assert_array_equal(out, brute_force_counts(x, H))
