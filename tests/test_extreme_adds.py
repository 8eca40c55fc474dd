"""A tile_max / tile_min gradient the CPU adjoint adds into another tile, added in place
(codegen/extreme_adds.py, runtime grads.h tile_extreme_grad_add): which gradients the emitter hands
over, and the gradients it then computes against the sequential scan's first extreme
(tests/test_adjoint_rows.py's rows, softmax against float64 finite differences, take this path too)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from test_adjoint_rows import SOURCE as ROWS
from tilec.backend_cpu.emit import emit_cpu
from tilec.backend_cuda.emit import emit_cuda
from tilec.codegen.sources import plan_kernels
from tilec.passes.normalize import normalize_module

SOURCE = '''
import warp as wp

COLS = 48


@wp.kernel
def spread(X: wp.array2d(dtype=wp.float64), Y: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(4, COLS), offset=(i * 4, 0))
    top = wp.tile_broadcast(wp.tile_reshape(wp.tile_max(x, axis=1), shape=(4, 1)), shape=(4, COLS))
    wp.tile_store(Y, x * x - top, offset=(i * 4, 0))
'''


def emitted(source: str, name: str) -> tuple[str, str]:
    module = normalize_module(compile_ir(source, name))
    plans = plan_kernels(module)
    return emit_cpu(module, plans).files[f"{name}.cpp"], emit_cuda(module, plans)[0]


def test_the_gradient_added_into_x_adjoint_is_added_in_place_on_the_cpu_only():
    cpp, cu = emitted(ROWS, "rows")  # test_adjoint_rows.py's softmax: its rows go through this path
    backward = cpp.split("k_softmax_backward")[1].split("k_norm_bias_forward")[0]
    assert "added in place by the add below" in backward
    assert "tl::tile_extreme_grad_add(ctx, " in backward and "tl::tile_extreme_grad(ctx, " not in backward
    assert "tile_extreme_grad_add" not in cu and "tile_extreme_grad(" in cu  # the GPU model keeps its form
    spread = emitted(SOURCE, "extreme_adds")[0].split("k_spread_backward")[1]
    assert "tl::tile_extreme_grad_add(ctx, " in spread and ", 1, true);" in spread.split("tile_extreme_grad_add")[1]


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "extreme_adds")


@pytest.mark.build
@needs_cxx
def test_row_maxima_gradients_go_to_each_rows_first_maximum(mod):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((8, 48))
    X[1, [3, 40]] = 9.0  # ties: the first wins
    X[6, 0] = np.nan  # a NaN first element is the scan's answer
    X[5] = -0.0  # all equal: the first element
    G = rng.standard_normal((8, 48))
    gx = np.zeros_like(X)
    mod.spread.launch_tiled(dim=2, inputs=[X, np.zeros_like(X)], adj_inputs=[gx, G.copy()], adjoint=True)
    want = 2.0 * X * G
    for r in range(8):
        first = 0
        for k in range(1, 48):
            if X[r, first] < X[r, k]:
                first = k
        want[r, first] -= G[r].sum()
    np.testing.assert_allclose(gx, want, rtol=1e-12, atol=1e-12)
