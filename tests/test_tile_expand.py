"""`wp.tile(v)` of a per-lane vector/matrix without preserve_type (Warp's default, per its doc): a float
tile of shape (n, block_dim) / (rows, cols, block_dim), component k of lane l at [k, l]; `wp.untile` of
such a tile gives each lane its vector/matrix back. Forward against numpy, adjoint against float64 finite
differences, on the CPU and the CUDA emulation."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

pytestmark = [pytest.mark.build, needs_cxx]
BD = 8

SOURCE = '''
import warp as wp


@wp.kernel
def vec_expand(x: wp.array2d(dtype=wp.vec3d), y: wp.array3d(dtype=wp.float64)):
    b, l = wp.tid()
    t = wp.tile(x[b, l] * wp.float64(2.0))
    wp.tile_store(y[b], wp.tile_map(wp.sin, t))


@wp.kernel
def mat_expand(x: wp.array2d(dtype=wp.mat22d), y: wp.array4d(dtype=wp.float64)):
    b, l = wp.tid()
    t = wp.tile(x[b, l], preserve_type=False)
    wp.tile_store(y[b], t * t)


@wp.kernel
def scalar_and_kept(x: wp.array2d(dtype=wp.vec3d), s: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=wp.vec3d)):
    b, l = wp.tid()
    kept = wp.tile(x[b, l], preserve_type=True)
    lanes = wp.tile(x[b, l][1])
    wp.tile_store(y[b], kept * wp.float64(3.0))
    wp.tile_store(s[b], lanes)


@wp.kernel
def roundtrip(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d), y: wp.array(dtype=wp.vec3d),
              n: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    t = wp.tile(x[i] * wp.float64(0.5))
    y[i] = wp.untile(wp.tile_map(wp.sin, t)) * wp.float64(2.0)
    n[i] = wp.untile(wp.tile(m[i]) * wp.tile(m[i]))
'''


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def target(request):
    mod = build(SOURCE, "tile_expand" if request.param == "cpu" else "tile_expand_emu", block_dim=BD,
                target=request.param)
    return mod, request.param


def test_vector_spreads_over_rows(target):
    mod, device = target
    x = np.random.default_rng(1).standard_normal((2, BD, 3))
    y = np.zeros((2, 3, BD))
    mod.vec_expand.launch_tiled(dim=2, inputs=[x, y], device=device)
    np.testing.assert_allclose(y, np.sin(2 * x.transpose(0, 2, 1)), rtol=1e-12)
    kernel = mod.vec_expand if device == "cpu" else OnEmulator(mod.vec_expand)
    check_gradients(kernel, 2, [x, y], outputs=[1], wrt=[0])


def test_matrix_spreads_over_rows_and_cols(target):
    mod, device = target
    x = np.random.default_rng(2).standard_normal((2, BD, 2, 2))
    y = np.zeros((2, 2, 2, BD))
    mod.mat_expand.launch_tiled(dim=2, inputs=[x, y], device=device)
    np.testing.assert_allclose(y, x.transpose(0, 2, 3, 1) ** 2, rtol=1e-12)
    kernel = mod.mat_expand if device == "cpu" else OnEmulator(mod.mat_expand)
    check_gradients(kernel, 2, [x, y], outputs=[1], wrt=[0])


def test_scalars_and_preserve_type_unchanged(target):
    mod, device = target
    x = np.random.default_rng(3).standard_normal((2, BD, 3))
    s, y = np.zeros((2, BD)), np.zeros((2, BD, 3))
    mod.scalar_and_kept.launch_tiled(dim=2, inputs=[x, s, y], device=device)
    np.testing.assert_allclose(s, x[:, :, 1])
    np.testing.assert_allclose(y, 3 * x)


def test_untile_gives_vectors_and_matrices_back(target):
    """SIMT launch (wp.tid() is the global thread): each lane's vector/matrix goes through a tile and back."""
    mod, device = target
    rng = np.random.default_rng(4)
    x, m = rng.standard_normal((16, 3)), rng.standard_normal((16, 2, 2))
    y, n = np.zeros((16, 3)), np.zeros((16, 2, 2))
    mod.roundtrip.launch(dim=16, inputs=[x, m, y, n], block_dim=BD, device=device)
    np.testing.assert_allclose(y, 2 * np.sin(0.5 * x), rtol=1e-12)
    np.testing.assert_allclose(n, m * m, rtol=1e-12)
    kernel = mod.roundtrip if device == "cpu" else OnEmulator(mod.roundtrip)
    check_gradients(kernel, 16, [x, m, y, n], outputs=[2, 3], wrt=[0, 1], tiled=False)


def test_untile_of_a_shape_variable_tile_is_a_diagnostic():
    """A shape-annotated func's ("M", block_dim) tile has no constant vector length to untile into
    (was an internal error: range() of the shape variable "M")."""
    from tilec.diagnostics import CompileError
    from tilec.pipeline import compile_source

    source = '''import tilec as tl
import warp as wp


@tl.func
def spread(t: tl.Tile[tl.float32, "M", 256]) -> tl.float32:
    v = wp.untile(t)
    return v[0]


@wp.kernel
def k(A: wp.array2d(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    B[i] = spread(wp.tile_load(A, shape=(3, 256)))
'''
    with pytest.raises(CompileError) as info:
        compile_source(source, "untile_m.py")
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("TC0303", 7, 19)
    assert "shape (M, 256)" in d.message and "constant leading extents" in d.message
