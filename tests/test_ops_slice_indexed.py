"""Tiles indexed by an int tile along any one axis (Warp's tile_slice_indexed: t[idx], t[idx, :],
t[:, idx], t[:, idx, :]): negative indices count from the end, repeats accumulate their
gradients. CPU and the CUDA emulation against numpy, the adjoint against float64 finite
differences, the static checks at their exact line:col. Warp 1.19's own results are in the
conformance cases (cases_ops.py)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build
from tilec.diagnostics import CompileError
from tilec.pipeline import compile_source

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def pick(A: wp.array3d(dtype=wp.float64), I: wp.array1d(dtype=int), J: wp.array1d(dtype=int),
         rows: wp.array3d(dtype=wp.float64), mids: wp.array3d(dtype=wp.float64), cols: wp.array3d(dtype=wp.float64)):
    t = wp.tile_load(A, shape=(2, 3, 4))
    i = wp.tile_load(I, shape=3)
    j = wp.tile_load(J, shape=5)
    wp.tile_store(rows, t[i] * t[i, :, :])
    wp.tile_store(mids, wp.tile_map(wp.sin, t[:, i]))
    wp.tile_store(cols, t[:, :, j] * 2.0)
'''


def _reference(A, I, J):
    rows = A[I] * A[I]
    return rows, np.sin(A[:, I]), A[:, :, J] * 2.0


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_gather_along_each_axis(device):
    m = build(SOURCE, "sliceidx", block_dim=16, target=device)
    rng = np.random.default_rng(14)
    A = rng.standard_normal((2, 3, 4))
    I = np.array([1, -1, -2], np.int32)  # negative: from the end of the axis, as Warp (and numpy)
    J = np.array([3, -4, 0, -1, 3], np.int32)  # a repeated column: its gradients add up
    outs = [np.zeros((3, 3, 4)), np.zeros((2, 3, 4)), np.zeros((2, 3, 5))]
    m.pick.launch_tiled(dim=(1,), inputs=[A, I, J, *outs], device=device)
    for got, want in zip(outs, _reference(A, I, J)):
        np.testing.assert_allclose(got, want)
    kernel = m.pick if device == "cpu" else OnEmulator(m.pick)
    check_gradients(kernel, (1,), [A, I, J, *outs], outputs=[3, 4, 5], wrt=[0])


HEAD = """import warp as wp


@wp.kernel
def k(A: wp.array2d(dtype=float), I: wp.array1d(dtype=int)):
    t = wp.tile_load(A, shape=(4, 6))
    i = wp.tile_load(I, shape=3)
"""


@pytest.mark.parametrize("line, code, col, message", [
    ("u = t[i, 1]", "TC0303", 14, "takes `:` in every other position"),
    ("u = t[1:, i]", "TC0303", 11, "takes `:` in every other position"),
    ("u = t[i, i]", "TC0303", 14, "takes `:` in every other position"),
    ("u = t[i, :, :]", "TC0304", 9, "3 indices for a tile of shape (4, 6)"),
    ("u = t[:, wp.tile_astype(i, wp.float32)]", "TC0203", 14, "a tile can be indexed by a 1-d int tile"),
    ("u = wp.tile_slice_indexed(t, i)", "TC0430", 9, "`tile_slice_indexed` is a Warp builtin not supported"),
])
def test_static_checks(line, code, col, message):
    with pytest.raises(CompileError) as err:
        compile_source(HEAD + "    " + line + "\n", "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.line, diag.span.col) == (code, 8, col)
    assert message in diag.message
    if code == "TC0430":
        assert "t[idx, :]" in diag.help
