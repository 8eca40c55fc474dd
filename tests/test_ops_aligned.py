"""tile_load/tile_store(..., aligned=True): Warp's promise for its 16-byte vector path (2-d or
larger shared tiles): the tile's first element 16-byte aligned, the tile inside the array, the array
dense with rows a multiple of 16 bytes. --debug builds check it and fail the launch with a message
naming the line (status 3, raised by the loader as AssertionError); release builds, like Warp's,
take the promise (tilec's own accesses need no alignment, so the results stay right)."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

import harness
from conftest import needs_cxx
from harness import build, build_flags, compile_ir
from tilec.api import load
from tilec.driver import build_module

pytestmark = [pytest.mark.build, needs_cxx]

PROGRAM = '''import warp as wp


@wp.kernel
def copy(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(a, shape=(4, 8), offset=(i * 4, j * 8), storage="shared", aligned=True)
    wp.tile_store(b, t * 2.0, offset=(i * 4, j * 8), aligned=True)


@wp.kernel
def in_registers(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 8), aligned=True)  # a register tile: Warp ignores the hint
    wp.tile_store(b, t, aligned=True)
'''


def _debug_build(device: str):
    key = hashlib.sha256(f"aligned-debug\0{device}\0{PROGRAM}".encode()).hexdigest()[:16]
    flags = build_flags(16, target=device, debug=True)
    build_module(compile_ir(PROGRAM, "aligned", 16), PROGRAM, str(harness.CACHE / key), flags, echo=lambda *a, **k: None)
    return load(harness.CACHE / key / "aligned")


def _misaligned(rows, cols):
    """A dense float32 array whose first element sits 4 bytes past a 16-byte boundary."""
    raw = np.zeros(rows * cols + 8, np.float32)
    start = next(k for k in range(1, 5) if (raw[k:].ctypes.data % 16) == 4)
    a = raw[start:start + rows * cols].reshape(rows, cols)
    a[...] = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    return a


CASES = {
    "misaligned": (lambda: _misaligned(8, 16), (2, 2), "the tile's first element is not 16-byte aligned"),
    "past the bounds": (lambda: np.ones((6, 16), np.float32), (2, 2), "the tile extends past the array's bounds"),
    "strided": (lambda: np.ones((8, 32), np.float32)[:, ::2], (2, 2), "the array is not contiguous"),
    "short rows": (lambda: np.ones((4, 10), np.float32), (1, 1), "the array's rows are not a multiple of 16 bytes"),
}


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_debug_build_accepts_what_warp_assumes(device):
    m = _debug_build(device)
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    assert a.ctypes.data % 16 == 0
    b = np.zeros_like(a)
    m.copy.launch_tiled(dim=(2, 2), inputs=[a, b], block_dim=16, device=device)
    np.testing.assert_array_equal(b, 2 * a)


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_debug_build_fails_a_broken_promise(device, case, capfd):
    make, dim, why = CASES[case]
    a = make()
    b = np.zeros((max(8, a.shape[0]), 16), np.float32)
    with pytest.raises(AssertionError):
        _debug_build(device).copy.launch_tiled(dim=dim, inputs=[a, b], block_dim=16, device=device)
    err = capfd.readouterr().err
    assert f"aligned.py:7: tile_load(..., aligned=True): aligned=True but {why}" in err


@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_release_build_and_register_tiles_take_the_promise(device):
    a = _misaligned(8, 16)
    b = np.zeros((8, 16), np.float32)
    build(PROGRAM, "aligned", block_dim=16, target=device).copy.launch_tiled(dim=(2, 2), inputs=[a, b], block_dim=16,
                                                                            device=device)
    np.testing.assert_array_equal(b, 2 * a)  # tilec's accesses need no alignment
    c = np.zeros((4, 8), np.float32)
    _debug_build(device).in_registers.launch_tiled(dim=1, inputs=[a, c], block_dim=16, device=device)
    np.testing.assert_array_equal(c, a[:4, :8])
