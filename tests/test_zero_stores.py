"""The adjoint's zeroing of a stored tile's adjoint, written straight into the array on the CPU
(codegen/zero_stores.py, runtime memory.h tile_store_zeros): which stores the emitter hands over,
and that exactly the elements the forward stored are zeroed, inside the array and at its edge
(the bounds-checked path), while the gradients still flow."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.backend_cpu.emit import emit_cpu
from tilec.backend_cuda.emit import emit_cuda
from tilec.codegen.sources import plan_kernels
from tilec.passes.normalize import normalize_module

SOURCE = '''
import warp as wp


@wp.kernel
def scaled(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    x = wp.tile_load(X, shape=(4, 8), offset=(i * 4, j * 8))
    wp.tile_store(Y, x * x, offset=(i * 4, j * 8))
'''


def test_the_zeroing_of_a_stored_tiles_adjoint_is_written_into_the_array_on_the_cpu_only():
    module = normalize_module(compile_ir(SOURCE, "zero_stores"))
    plans = plan_kernels(module)
    cpp, cu = emit_cpu(module, plans).files["zero_stores.cpp"], emit_cuda(module, plans)[0]
    backward = cpp.split("k_scaled_backward")[1]
    assert "tl::tile_store_zeros<tl::Tile<float, 4, 8>>(ctx, adj_v_Y, true, (v_i * 4), (v_j * 8));" in backward
    assert "zeros, written by the store below" in backward and "tl::tile_fill_zero(" not in backward
    assert "tile_store_zeros" not in cu  # the GPU model keeps its form


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("rows, cols, grid", [(8, 16, (1, 1)), (8, 16, (2, 2)), (7, 13, (2, 2))])
def test_exactly_the_stored_elements_adjoints_are_consumed(rows, cols, grid):
    """One tile of four; every tile; tiles past the array's edge (the bounds-checked path)."""
    mod = build(SOURCE, "zero_stores")
    rng = np.random.default_rng(rows + grid[0])
    X = rng.standard_normal((rows, cols)).astype(np.float32)
    G = rng.standard_normal((rows, cols)).astype(np.float32)
    gx, gy = np.zeros_like(X), G.copy()
    mod.scaled.launch_tiled(dim=grid, inputs=[X, np.zeros_like(X)], adj_inputs=[gx, gy], adjoint=True)
    stored = np.zeros((rows, cols), bool)
    stored[:grid[0] * 4, :grid[1] * 8] = True
    np.testing.assert_allclose(gx, np.where(stored, 2.0 * X * G, 0.0), rtol=1e-6)
    np.testing.assert_array_equal(gy, np.where(stored, 0.0, G))  # taken where stored, kept elsewhere
