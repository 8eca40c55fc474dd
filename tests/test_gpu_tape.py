"""The .cu adjoint tape (runtime device_tape.h) through the CUDA emulation: tiles saved by the
block, scalars by each thread, a fixed capacity per launch, and a relaunch of only the blocks
that overflowed. Blocks here need very different amounts (data-dependent trip counts), so some
finish in the first launch and others only in the relaunch; a block counted twice, or a tape
restored in the wrong order, shows up as a wrong gradient."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import EMULATIONS, OnEmulator, build_emulated, emulation_id

pytestmark = [pytest.mark.cuda, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def tile_loop(A: wp.array2d(dtype=wp.float64), N: wp.array1d(dtype=int), C: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(4, 4), offset=(i * 4, 0))
    n = N[i]
    k = 0
    while k < n:
        a = wp.tile_map(wp.sin, a) * 1.1 + a * 0.2
        k += 1
    wp.tile_store(C, a, offset=(i * 4, 0))


@wp.kernel
def lane_loop(X: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64)):
    i, lane = wp.tid()
    x = X[lane]
    k = 0
    while k < lane % 7 + i * 9:
        x = wp.sin(x) * 1.3
        k += 1
    t = wp.tile(x)
    wp.tile_atomic_add(Y, t)
'''


@pytest.fixture(params=EMULATIONS, ids=emulation_id)
def module(request, monkeypatch):
    return build_emulated(SOURCE, "gpu_tape", request.param, monkeypatch)


def test_backward_kernels_that_save_values_exist_for_the_gpu(module):
    from pathlib import Path

    folder = Path(module.__file__).parent
    import json

    kernels = json.loads((folder / "manifest.json").read_text())["kernels"]
    for name in ("tile_loop", "lane_loop"):
        assert kernels[name]["cuda_tape"] == ["backward"]
        assert "no_backward_cuda" not in kernels[name]
    text = (folder / "gpu_tape.cu").read_text()
    assert "tl::tape_push_tile(ctx, " in text and "tl::tape_pop_tile(ctx, " in text
    assert "tl::tape_push_scalar(ctx, " in text and "if (!tl::tape_ready(ctx)) return;" in text


def test_blocks_with_different_tape_sizes(module):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((16, 4)) * 0.5
    N = np.array([0, 2, 40, 1], np.int32)  # block 2 saves 40 tiles: far past the first launch's tape
    C = np.zeros_like(A)
    module.tile_loop.launch_tiled(dim=(4,), inputs=[A, N, C], device="cuda-emu")
    expect = A.copy()
    for b, n in enumerate(N):
        for _ in range(n):
            blk = expect[b * 4:(b + 1) * 4]
            expect[b * 4:(b + 1) * 4] = np.sin(blk) * 1.1 + blk * 0.2
    np.testing.assert_allclose(C, expect, rtol=1e-12)
    check_gradients(OnEmulator(module.tile_loop), (4,), [A, N, C], outputs=[2], wrt=[0])


def test_threads_with_different_tape_sizes(module):
    n = module.lane_loop.block_dim
    rng = np.random.default_rng(1)
    X = rng.standard_normal(n)
    # block 0's lanes loop 0..6 times (their first launch fits), block 1's 9 more (relaunched)
    check_gradients(OnEmulator(module.lane_loop), (2,), [X, np.zeros(n)], outputs=[1], wrt=[0])


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc")
def test_tape_kernels_and_their_launch_loop_compile_with_nvcc(tmp_path):
    """Device code and the C API's host launch loop (cudaMalloc, relaunch) both compile, warning-free."""
    import subprocess
    import sys

    (tmp_path / "gpu_tape.py").write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(tmp_path / "gpu_tape.py"), "-o",
                           str(tmp_path), "--emit-only"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "gpu_tape"
    proc = subprocess.run(["nvcc", "-std=c++17", "--expt-relaxed-constexpr", "-O2", "-c", "-arch", "sm_90", "-I.",
                           "gpu_tape.cu", "-o", "gpu_tape.o"], cwd=folder, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stdout + proc.stderr, proc.stderr
