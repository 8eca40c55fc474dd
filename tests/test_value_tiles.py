"""Tiles of Warp's value types (#15): tile ops Warp 1.19 does not define on vector/matrix tiles
are a diagnostic at the offending argument that names the op and the dtype, never a traceback.
(What they compute, against Warp, is tests/conformance/cases_vtiles.py.)"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import ROOT, needs_cxx
from harness import build
import harness
from tilec.frontend.check import Options
from tilec.pipeline import compile_source

KERNEL = """import warp as wp


@wp.kernel
def k(x: wp.array(dtype=wp.vec3), y: wp.array2d(dtype=wp.vec3), f: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    s = wp.tile_load(f, shape=8)
    q = wp.tile_load(y, shape=(8, 8))
    {line}
"""


def first_error(line: str) -> str:
    return harness.first_error(KERNEL.format(line=line))


REFUSED = "does not take tiles of vec3f"


@pytest.mark.parametrize("line, where, message", [
    ("wp.tile_matmul(q, q)", "9:20", f"tile_matmul: {REFUSED} (`a` is a vec3f tile of shape (8, 8))"),
    ("wp.tile_scan_inclusive(t)", "9:28", f"tile_scan_inclusive: {REFUSED} (`a` is a vec3f tile of shape (8,))"),
    ("wp.tile_max(t)", "9:17", f"tile_max: {REFUSED}"),
    ("wp.tile_argmin(t)", "9:20", f"tile_argmin: {REFUSED}"),
    ("wp.tile_sort(t, s)", "9:18", f"tile_sort: {REFUSED} (`keys` is a vec3f tile of shape (8,))"),
    ("wp.tile_astype(t, dtype=wp.vec3d)", "9:20", f"tile_astype: {REFUSED}"),
    ("wp.tile_astype(s, dtype=wp.vec3d)", "9:29", "tile_astype: `dtype` must be a scalar type here, got vec3d"),
    ("wp.tile_arange(8, dtype=wp.mat22)", "9:29", "tile_arange: `dtype` must be a scalar type here, got mat22f"),
    ("wp.tile_cholesky(q)", "9:22", f"tile_cholesky: {REFUSED}"),
    ("wp.tile_zeros(shape=8, dtype=wp.vec(length=0, dtype=float))", "9:48",
     "tile_zeros: `dtype`: a vector length must be a positive integer constant"),
])
def test_scalar_only_tile_ops_name_the_value_type(line, where, message):
    got = first_error(line)
    assert got.startswith(f"{where}: TC0"), got
    assert message in got, got


@pytest.mark.parametrize("line", [
    "wp.tile_sum(t)", "wp.tile_dot(t, t)", "wp.tile_axpy(2.0, t, t)", "wp.tile_zeros(shape=8, dtype=wp.mat22)",
    "wp.tile_full(shape=8, value=1.5, dtype=wp.vec3)", "wp.tile_transpose(q)", "wp.tile_sort(s, t)",
])
def test_value_tile_ops_check(line):
    compile_source(KERNEL.format(line=line), "prog.py", Options(block_dim=32))


@pytest.mark.build
@needs_cxx
def test_nbody_sample_in_the_cuda_emulation():
    """The sample's .cu (register tiles of vec3, a vec3 register fold) computes the numpy step."""
    sys.path.insert(0, str(ROOT / "samples"))
    try:
        import nbody
    finally:
        sys.path.pop(0)
    mod = build((ROOT / "samples/nbody.py").read_text(), "nbody_emu", target="cuda-emu")
    pos, vel, mass = nbody.bodies(seed=3)
    new_pos, new_vel = np.zeros_like(pos), np.zeros_like(vel)
    mod.step.launch_tiled(dim=nbody.BODIES // nbody.BLOCK, inputs=[pos, vel, mass, new_pos, new_vel], device="cuda-emu")
    want_pos, want_vel = nbody.reference(pos.astype(np.float64), vel.astype(np.float64), mass.astype(np.float64))
    np.testing.assert_allclose(new_vel, want_vel, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_pos, want_pos, rtol=1e-4, atol=1e-5)


ELEMENT_PARTS = """import warp as wp

TILE_M = 8


@wp.kernel
def vec_part(x: wp.array[float], y: wp.array[wp.vec3]):
    i = wp.tid()
    a = wp.tile_zeros(shape=(TILE_M,), dtype=wp.vec3)
    a[i][1] = x[i]
    wp.tile_atomic_add(y, a, offset=(0,))


@wp.kernel
def mat_part(x: wp.array[float], y: wp.array[wp.mat33]):
    i = wp.tid()
    a = wp.tile_zeros(shape=(TILE_M,), dtype=wp.mat33)
    a[i][2] = wp.vec3(1.0, 2.0, x[i])
    a[i][1, 1] = x[i] * x[i]
    a[i][0] += wp.vec3(3.0, 3.0, 3.0)
    wp.tile_atomic_add(y, a, offset=(0,))
"""


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_component_or_row_of_a_tile_element_is_written_in_place(device):
    """`t[i][c] = e`, `t[i][r, c] = e`, `t[i][r] = row` and `t[i][r] += row` on a tile of vectors or
    matrices (Warp's tile tests write them so): the element's other components are kept. With i
    from wp.tid() each thread writes its own element and gets its gradient back (the adjoint was
    refused before: it gave every thread's gradient to the leader alone)."""
    mod = build(ELEMENT_PARTS, "element_parts", block_dim=8, target="cpu" if device == "cpu" else "cuda-emu")
    x = np.linspace(-1.0, 2.0, 8).astype(np.float32)
    y = np.zeros((8, 3), np.float32)
    mod.vec_part.launch(dim=8, inputs=[x, y], block_dim=8, device=device)
    want = np.zeros((8, 3), np.float32)
    want[:, 1] = x
    np.testing.assert_array_equal(y, want)
    m = np.zeros((8, 3, 3), np.float32)
    mod.mat_part.launch(dim=8, inputs=[x, m], block_dim=8, device=device)
    want = np.zeros((8, 3, 3), np.float32)
    want[:, 0] = 3.0
    want[:, 1, 1] = x * x
    want[:, 2] = np.stack([np.ones(8), 2 * np.ones(8), x], axis=1)
    np.testing.assert_allclose(m, want, rtol=1e-6)
    # d sum(y)/dx = 1 (component 1); d sum(m)/dx = 1 + 2x (elements [2, 2] and [1, 1])
    for kernel, out, want_dx in ((mod.vec_part, y, np.ones(8)), (mod.mat_part, m, 1.0 + 2.0 * x)):
        dx = np.zeros_like(x)
        kernel.launch(dim=8, inputs=[x, out], adj_inputs=[dx, np.ones_like(out)], adjoint=True,
                      block_dim=8, device=device)
        np.testing.assert_allclose(dx, want_dx, rtol=1e-6)


SCALED_BY_VECTOR = """import warp as wp

TILE_M = 8


@wp.kernel
def scaled(x: wp.array[float], v: wp.array[wp.vec3], out: wp.array[wp.vec3]):
    a = wp.tile_load(x, shape=TILE_M)
    b = a * wp.vec3(1.0, 2.0, 3.0)
    c = v[0] * a
    wp.tile_store(out, b + c)
"""


@needs_cxx
@pytest.mark.build
def test_a_vector_times_a_scalar_tile_gets_its_gradient_summed_over_the_tile():
    """`tile<float> * vec3` (Warp's tile tests): the vector's adjoint is the sum over the tile (an
    internal error in autodiff before), the tile's is the dot with the vector."""
    mod = build(SCALED_BY_VECTOR, "scaled_by_vector", block_dim=8)
    x = np.linspace(-1.0, 1.0, 8).astype(np.float32)
    v = np.array([[0.5, -1.0, 2.0]], np.float32)
    out = np.zeros((8, 3), np.float32)
    mod.scaled.launch_tiled(dim=1, inputs=[x, v, out], block_dim=8)
    k = np.array([1.0, 2.0, 3.0], np.float32) + v[0]
    np.testing.assert_allclose(out, x[:, None] * k, rtol=1e-6)
    g = np.arange(24, dtype=np.float32).reshape(8, 3) / 10
    adj_x, adj_v = np.zeros_like(x), np.zeros_like(v)
    mod.scaled.launch_tiled(dim=1, inputs=[x, v, out], adj_inputs=[adj_x, adj_v, g.copy()], adjoint=True,
                            block_dim=8)
    np.testing.assert_allclose(adj_x, g @ k, rtol=1e-5)
    np.testing.assert_allclose(adj_v[0], (g * x[:, None]).sum(axis=0), rtol=1e-5)


FULL_OF_VALUE = """import warp as wp


@wp.kernel
def fills(f: wp.array[float], i: wp.array[int], v: wp.array[wp.vec3], c: wp.array[float]):
    wp.tile_store(f, wp.tile_full(shape=(4,), value=1.5))
    wp.tile_store(i, wp.tile_full(4, value=wp.int32(7)))
    wp.tile_store(v, wp.tile_full(shape=(4,), value=wp.vec3(1.0, 2.0, 3.0)))
    wp.tile_store(c, wp.tile_full(shape=(4,), value=7, dtype=float))
"""


@needs_cxx
@pytest.mark.build
def test_tile_full_without_dtype_takes_the_value_type():
    """Warp 1.19: `tile_full` without `dtype` makes a tile of the value's type (int32, vec3, ...);
    with `dtype` the value is converted."""
    mod = build(FULL_OF_VALUE, "full_of_value", block_dim=4)
    f, i, v, c = np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros((4, 3), np.float32), np.zeros(4, np.float32)
    mod.fills.launch_tiled(dim=1, inputs=[f, i, v, c], block_dim=4)
    assert list(f) == [1.5] * 4 and list(i) == [7] * 4 and list(c) == [7.0] * 4
    np.testing.assert_array_equal(v, np.tile([1.0, 2.0, 3.0], (4, 1)))


SHARED_ELEMENTS = """import warp as wp


@wp.kernel
def pairs(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    a = wp.tile_zeros(shape=(4,), dtype=float)
    a[i // 2] = x[i] * x[i]
    wp.tile_atomic_add(y, a, offset=(0,))
"""


@needs_cxx
@pytest.mark.build
def test_where_threads_write_one_element_only_the_thread_whose_value_landed_gets_its_gradient():
    """Threads 2k and 2k + 1 write element k: on the CPU the lower thread's value lands, so it alone
    gets the gradient (the other's value is overwritten: its derivative is 0), checked against
    float64 central differences of the launched kernel."""
    mod = build(SHARED_ELEMENTS, "shared_elements", block_dim=8, target="cpu")
    x = np.linspace(-1.0, 2.0, 8).astype(np.float32)
    y = np.zeros(4, np.float32)
    mod.pairs.launch(dim=8, inputs=[x, y], block_dim=8, device="cpu")
    np.testing.assert_allclose(y, x[0::2] ** 2, rtol=1e-6)
    seed = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    dx = np.zeros_like(x)
    mod.pairs.launch(dim=8, inputs=[x, np.zeros_like(y)], adj_inputs=[dx, seed.copy()], adjoint=True,
                     block_dim=8, device="cpu")
    h, fd = 1e-3, np.zeros(8)
    for k in range(8):
        outs = []
        for sign in (1, -1):
            xs, ys = x.astype(np.float64), np.zeros(4, np.float32)
            xs[k] += sign * h
            mod.pairs.launch(dim=8, inputs=[xs.astype(np.float32), ys], block_dim=8, device="cpu")
            outs.append(float(np.dot(seed.astype(np.float64), ys)))
        fd[k] = (outs[0] - outs[1]) / (2 * h)
    np.testing.assert_allclose(dx, fd, rtol=1e-2, atol=1e-3)
    assert np.all(dx[1::2] == 0.0)
