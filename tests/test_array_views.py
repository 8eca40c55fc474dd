"""Array views and slices (`A[i]`, `B[i, j]`, `A[a:b]`, `A[::2]`, `A[i, 1:]`): forward on the CPU
and the CUDA emulation against numpy, gradients against float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build, compile_ir

pytestmark = [pytest.mark.build, needs_cxx]
DEVICES = ["cpu", "cuda-emu"]

SOURCE = '''
import warp as wp

TILE = 4


@wp.func
def doubled(r: wp.array(dtype=wp.float64)):
    return wp.tile_load(r, shape=TILE) * wp.float64(2.0)


@wp.kernel
def views(A: wp.array2d(dtype=wp.float64), B: wp.array3d(dtype=wp.float64)):
    i = wp.tid()
    wp.tile_store(B[i, 0], doubled(A[i]))
    row = A[i]
    tail = row[1:]
    wp.tile_store(B[i, 1], wp.tile_load(tail, shape=TILE))
    even = wp.tile_load(A[i, ::2], shape=2)
    wp.tile_store(B[i, 2, 1:], even * even)
    last = wp.tile_load(row[-3:], shape=3)
    wp.tile_store(B[i][3][:2], wp.tile_view(last, offset=(1,), shape=(2,)))
    clamped = wp.tile_load(A[i, 2:100], shape=TILE)
    wp.tile_store(B[i, 4], clamped)
    col = wp.tile_load(A[:, 1], shape=TILE)
    wp.tile_store(B[i, 5], col)
    back = wp.tile_load(row[::-1], shape=TILE)
    wp.tile_store(B[i, 6], back)


@wp.kernel
def elements(A: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64), n: wp.array(dtype=int)):
    i = wp.tid()
    row = A[i]
    out[i] = row[0] * A[i][3] + wp.float64(row.shape[0])
    n[i] = A[1:].shape[0] * 100 + A[i, ::2].shape[0] * 10 + A[i, 5:].shape[0]


@wp.kernel
def write_through(A: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    row = A[i]
    row[1] = row[0] * wp.float64(2.0)
    A[i, 2:][1] = wp.float64(-1.0)
'''


def _reference(A):
    B = np.zeros((A.shape[0], 7, 4))
    B[:, 0] = 2 * A
    B[:, 1, :3] = A[:, 1:]
    B[:, 2, 1:3] = A[:, ::2] ** 2
    B[:, 3, :2] = A[:, -2:]
    B[:, 4, :2] = A[:, 2:]
    B[:, 5, :3] = A[:, 1]
    B[:, 6] = A[:, ::-1]
    return B


@pytest.mark.parametrize("device", DEVICES)
def test_views_and_slices_of_arrays(device):
    m = build(SOURCE, "arrviews", block_dim=32, target=device)
    rng = np.random.default_rng(3)
    A = rng.standard_normal((3, 4))
    B = np.zeros((3, 7, 4))
    m.views.launch_tiled(dim=(3,), inputs=[A, B], device=device)
    np.testing.assert_allclose(B, _reference(A))
    kernel = m.views if device == "cpu" else OnEmulator(m.views)
    check_gradients(kernel, (3,), [A, B], outputs=[1], wrt=[0])


def test_element_access_through_views():
    m = build(SOURCE, "arrviews", block_dim=32)
    A = np.arange(12, dtype=np.float64).reshape(3, 4) + 1
    out = np.zeros(3)
    n = np.zeros(3, np.int32)
    m.elements.launch(dim=3, inputs=[A, out, n])
    np.testing.assert_allclose(out, A[:, 0] * A[:, 3] + 4)
    np.testing.assert_array_equal(n, [200 + 20 + 0] * 3)
    check_gradients(m.elements, 3, [A, out, n], outputs=[1], wrt=[0], tiled=False)
    expected = A.copy()
    expected[:, 1] = 2 * A[:, 0]
    expected[:, 3] = -1
    m.write_through.launch(dim=3, inputs=[A])  # writes through a view reach the parent
    np.testing.assert_allclose(A, expected)


def test_view_reading_a_changing_index_gets_no_adjoint():
    from tilec.codegen.sources import plan_kernels

    module = compile_ir('''
import warp as wp

@wp.kernel
def k(A: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    j = i
    row = A[j]
    j = j + 1
    out[i] = row[0] + float(j)
''', "changing")
    (plan,) = plan_kernels(module)
    assert plan.adjoint is None and "changes while the view is in use" in plan.why_not.message


RUNTIME_STEP = '''
import warp as wp


@wp.kernel
def stepped(A: wp.array(dtype=float), step: int, out: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    v = A[1::step]
    n[i] = v.shape[0]
    out[i] = v[i]
'''


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("step", [2, -3, 0])
def test_a_slice_step_known_when_the_kernel_runs(device, step):
    """A run-time step follows Python's rules; a zero step is an empty view whose reads are 0, never a
    trap (Warp 1.19 stops on an assertion there)."""
    m = build(RUNTIME_STEP, "rtstep", block_dim=32, target=device)
    A = np.arange(10, dtype=np.float32) + 1
    out = np.full(3, -7.0, np.float32)
    n = np.zeros(3, np.int32)
    kernel = m.stepped if device == "cpu" else OnEmulator(m.stepped)
    kernel.launch(dim=3, inputs=[A, step, out, n])
    view = A[0:0] if step == 0 else A[1::step]
    assert list(n) == [len(view)] * 3
    np.testing.assert_array_equal(out, [view[i] if i < len(view) else 0.0 for i in range(3)])
