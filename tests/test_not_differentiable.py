"""Constructs the adjoint cannot handle correctly: a diagnostic at the source line, a kernel built
without an adjoint, and a loader that refuses adjoint=True with the reason. Never a wrong gradient."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx

SOURCE = '''import warp as wp


@wp.func
def smooth_max(a: float, b: float):
    return wp.log(wp.exp(a) + wp.exp(b))


@wp.func
def two_steps(x: float):
    y = x * 2.0
    return y + 1.0


@wp.kernel
def reduce_user(A: wp.array1d(dtype=float), S: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8,))
    wp.tile_store(S, wp.tile_reduce(smooth_max, a))


@wp.kernel
def map_multi(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8,))
    wp.tile_store(B, wp.tile_map(two_steps, a))


@wp.kernel
def fine(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float)):
    wp.tile_store(B, wp.tile_load(A, shape=(8,)) * 2.0)


@wp.func
def branchy(x: float):
    y = x * 2.0
    if y > 0.0:
        y = y + 1.0
    return y


@wp.kernel
def map_branchy(A: wp.array1d(dtype=float), B: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(8,))
    wp.tile_store(B, wp.tile_map(branchy, a))
'''


@pytest.mark.build
@needs_cxx
def test_undifferentiable_kernels_warn_at_the_line_and_refuse_adjoints(tmp_path):
    path = tmp_path / "nd.py"
    path.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(tmp_path / "out"),
                           "--target", "cpu"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"{path}:18:22: warning[TC0501]: tile_reduce with `smooth_max`" in proc.stderr
    assert f"{path}:43:22: warning[TC0501]: tile_map over `branchy`" in proc.stderr
    assert "two_steps" not in proc.stderr  # straight-line assignments then a return: differentiated
    assert "kernel `reduce_user` is built without an adjoint" in proc.stderr
    import tilec

    mod = tilec.load(tmp_path / "out/nd")
    A = np.linspace(-1, 1, 8).astype(np.float32)
    S = np.zeros(1, np.float32)
    mod.reduce_user.launch_tiled(dim=1, inputs=[A, S])  # the forward works
    np.testing.assert_allclose(S[0], np.log(np.sum(np.exp(A.astype(np.float64)))), rtol=1e-5)
    with pytest.raises(ValueError, match="no backward kernel.*tile_reduce with `smooth_max`"):
        mod.reduce_user.launch_tiled(dim=1, inputs=[A, S], adj_inputs=[np.zeros_like(A), np.ones_like(S)],
                                     adjoint=True)
    B, dA = np.zeros(8, np.float32), np.zeros(8, np.float32)
    mod.fine.launch_tiled(dim=1, inputs=[A, B], adj_inputs=[dA, np.ones(8, np.float32)], adjoint=True)
    np.testing.assert_array_equal(dA, np.full(8, 2.0, np.float32))
    dA = np.zeros(8, np.float32)  # two_steps(x) = 2x + 1, through its local y
    mod.map_multi.launch_tiled(dim=1, inputs=[A, B])
    mod.map_multi.launch_tiled(dim=1, inputs=[A, B], adj_inputs=[dA, np.ones(8, np.float32)], adjoint=True)
    np.testing.assert_allclose(B, 2.0 * A + 1.0, rtol=1e-6)
    np.testing.assert_array_equal(dA, np.full(8, 2.0, np.float32))


LOCAL_ARRAYS = '''import warp as wp


@wp.func
def weighted(x: float):
    w = wp.zeros(shape=3, dtype=float)
    for k in range(3):
        w[k] = x * float(k)
    return w[0] + w[1] + w[2]


@wp.kernel
def in_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.zeros(shape=(2,), dtype=float)
    a[1] = x[i] * x[i]
    y[i] = a[1] + a[0]


@wp.kernel
def in_func(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = weighted(x[i])
'''


@pytest.mark.build
@needs_cxx
def test_local_arrays_build_kernels_without_adjoints(tmp_path):
    """A local array (wp.zeros in a kernel or in a func it calls) has no adjoint in tilec yet: the kernel
    is built without one and says why at the line, its forward intact; never a zero gradient."""
    path = tmp_path / "la.py"
    path.write_text(LOCAL_ARRAYS)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(tmp_path / "out"),
                           "--target", "cpu"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    made = "warning[TC0501]: a local array (wp.zeros in a kernel or func) is made here; tilec derives no adjoint"
    assert f"{path}:15:5: {made}" in proc.stderr and f"{path}:6:5: {made}" in proc.stderr
    import tilec

    mod = tilec.load(tmp_path / "out/la")
    x = np.linspace(-1, 1, 8).astype(np.float32)
    for kernel, want in ((mod.in_kernel, x * x), (mod.in_func, 3.0 * x)):
        y = np.zeros(8, np.float32)
        kernel.launch(dim=8, inputs=[x, y])
        np.testing.assert_allclose(y, want, rtol=1e-6)
        with pytest.raises(ValueError, match="no backward kernel.*local array"):
            kernel.launch(dim=8, inputs=[x, y], adj_inputs=[np.zeros(8, np.float32), np.ones(8, np.float32)],
                          adjoint=True)
