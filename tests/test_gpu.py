"""Real GPU runs (tier `gpu`): every sample's fatbin launched through the loader on device arrays,
against numpy; adjoints where the GPU build has them. Skipped cleanly without a GPU."""
from __future__ import annotations

import importlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT


def _gpu_available() -> bool:
    try:
        from cuda.bindings import driver

        err, = driver.cuInit(0)[:1]
        if int(err) != 0:
            return False
        err, count = driver.cuDeviceGetCount()
        return int(err) == 0 and count > 0
    except Exception:  # noqa: BLE001 - no cuda-python, no driver: no GPU tier
        return False


def _array_module():
    for name in ("cupy", "torch"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(shutil.which("nvcc") is None or not _gpu_available() or _array_module() is None,
                                 reason="needs nvcc, a CUDA device, cuda-python and cupy or torch")]
ARCH = "sm_90"


def to_device(x):
    xp = _array_module()
    if xp.__name__ == "cupy":
        return xp.asarray(x)
    return xp.from_numpy(np.ascontiguousarray(x)).cuda()


def to_host(x):
    return x.get() if hasattr(x, "get") else x.cpu().numpy()


def build_cuda(name, tmp_path):
    src = ROOT / "samples" / f"{name}.py"
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(src), "-o", str(tmp_path), "--target",
                           "all", "--arch", ARCH], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import tilec

    return tilec.load(tmp_path / name)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


CASES = {
    "gemm": ("gemm", (4, 3), lambda: [rnd(100, 90, seed=1), rnd(90, 70, seed=2), np.zeros((100, 70), np.float32)]),
    "softmax": ("softmax", 250, lambda: [rnd(1000, 256, seed=3), np.zeros((1000, 256), np.float32)]),
    "layernorm": ("layernorm", 250, lambda: [rnd(1000, 256, seed=4), rnd(256, seed=5), rnd(256, seed=6),
                                             np.zeros((1000, 256), np.float32)]),
    "mlp": ("mlp", 7, lambda: [rnd(100, 64, seed=7), rnd(64, 64, seed=8) / 8, rnd(64, seed=9), rnd(64, 32, seed=10) / 8,
                               rnd(32, seed=11), np.zeros((100, 32), np.float32)]),
    "attention": ("attention", 4, lambda: [rnd(50, 32, seed=12), rnd(64, 32, seed=13), rnd(64, 32, seed=14),
                                           np.zeros((50, 32), np.float32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gpu_forward_and_adjoint_match_cpu(name, tmp_path):
    kernel, dim, make = CASES[name]
    mod = build_cuda(name, tmp_path)
    host = make()
    mod_k = getattr(mod, kernel)
    mod_k.launch_tiled(dim=dim, inputs=host)
    dev = [to_device(x) for x in make()]
    mod_k.launch_tiled(dim=dim, inputs=dev, device="cuda")
    for h, d in zip(host, dev):
        np.testing.assert_allclose(to_host(d), h, rtol=2e-4, atol=2e-4)
    assert "backward" in mod_k.meta["entries"]["cuda"], f"{name}: the GPU build lost its adjoint"
    adj_host = [np.zeros_like(x) for x in host]
    adj_host[-1] = np.ones_like(host[-1])
    mod_k.launch_tiled(dim=dim, inputs=host, adj_inputs=adj_host, adjoint=True)
    adj_dev = [to_device(np.zeros_like(x)) for x in host[:-1]] + [to_device(np.ones_like(host[-1]))]
    mod_k.launch_tiled(dim=dim, inputs=dev, adj_inputs=adj_dev, adjoint=True, device="cuda")
    for h, d in zip(adj_host, adj_dev):
        np.testing.assert_allclose(to_host(d), h, rtol=2e-3, atol=2e-3)


def build_source(source, name, tmp_path):
    (tmp_path / f"{name}.py").write_text(source)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(tmp_path / f"{name}.py"), "-o",
                           str(tmp_path), "--target", "all", "--arch", ARCH, "--block-dim", "64"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import tilec

    return tilec.load(tmp_path / name)


def test_gpu_register_tiles_and_tape_match_cpu(tmp_path):
    """Register layouts (odd shapes, vector runs) and the relaunching tape, on the device."""
    import test_gpu_tape
    import test_register_tiles

    rng = np.random.default_rng(7)
    regs = build_source(test_register_tiles.SOURCE, "regs", tmp_path)
    tape = build_source(test_gpu_tape.SOURCE, "tape", tmp_path)
    cases = [
        (regs.odd, (3, 3), [rnd(7, 11, seed=1), rnd(7, 11, seed=2), np.zeros((7, 11), np.float32),
                            np.zeros(3, np.float32)]),
        (regs.wide, (3, 3), [rnd(40, 61, seed=3)[:, 1:49].copy(), np.zeros((40, 48), np.float32),
                             np.ones((40, 48), np.float32)]),
        (regs.mm, (2, 2), [rnd(13, 12, seed=4), rnd(12, 20, seed=5), np.zeros((13, 20), np.float32)]),
        (tape.tile_loop, (4,), [rng.standard_normal((16, 4)) * 0.5, np.array([0, 2, 40, 1], np.int32),
                                np.zeros((16, 4))]),
    ]
    for kernel, dim, host in cases:
        dev = [to_device(x) for x in host]
        kernel.launch_tiled(dim=dim, inputs=host)
        kernel.launch_tiled(dim=dim, inputs=dev, device="cuda")
        for h, d in zip(host, dev):
            np.testing.assert_allclose(to_host(d), h, rtol=1e-4, atol=1e-4)
        assert "backward" in kernel.meta["entries"]["cuda"], f"{kernel.name}: the GPU build lost its adjoint"
        adj = [np.zeros_like(x) for x in host[:-1]] + [np.ones_like(host[-1])]
        adj_dev = [to_device(x) for x in adj]
        kernel.launch_tiled(dim=dim, inputs=host, adj_inputs=adj, adjoint=True)
        kernel.launch_tiled(dim=dim, inputs=dev, adj_inputs=adj_dev, adjoint=True, device="cuda")
        for h, d in zip(adj, adj_dev):
            np.testing.assert_allclose(to_host(d), h, rtol=1e-3, atol=1e-3)


def test_gpu_global_scratch_matches_numpy_and_the_cpu_adjoint(tmp_path):
    """Tiles past the shared budget (tests/test_global_scratch.py) on the device: 128x128 float
    tiles past a 32 KiB budget, in global scratch; more blocks than are resident (each resident
    block loops over the grid and reuses its slice), checked on a sample of blocks; the adjoint
    against the CPU's."""
    import test_global_scratch

    n, blocks = 128, 6000
    (tmp_path / "chain.py").write_text(test_global_scratch.CHAIN_FLOAT32.replace("N = 256", f"N = {n}"))
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(tmp_path / "chain.py"), "-o",
                           str(tmp_path), "--target", "all", "--arch", ARCH, "--max-shared", "32768"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import tilec

    mod = tilec.load(tmp_path / "chain")
    assert mod.chain.meta["cuda_scratch_bytes"]["forward"] == 4 * n * n * 4
    A, B = rnd(blocks * n, n, seed=21) * 0.1, rnd(n, n, seed=22) * 0.1
    dev = [to_device(A), to_device(B), to_device(np.zeros((blocks * n, n), np.float32))]
    mod.chain.launch_tiled(dim=(blocks,), inputs=dev, device="cuda")
    C = to_host(dev[2])
    for i in np.random.default_rng(5).choice(blocks, 12, replace=False).tolist() + [0, blocks - 1]:
        expected = (np.tanh(A[i * n:(i + 1) * n].astype(np.float64) @ B) * 0.5).T
        np.testing.assert_allclose(C[i * n:(i + 1) * n], expected, rtol=1e-4, atol=1e-5, err_msg=f"block {i}")
    small = [A[:3 * n], B, np.zeros((3 * n, n), np.float32)]
    adj = [np.zeros_like(small[0]), np.zeros_like(B), rnd(3 * n, n, seed=23)]
    adj_dev = [to_device(x) for x in adj]
    mod.chain.launch_tiled(dim=(3,), inputs=small, adj_inputs=adj, adjoint=True)
    mod.chain.launch_tiled(dim=(3,), inputs=[to_device(x) for x in small], adj_inputs=adj_dev, adjoint=True,
                           device="cuda")
    for h, d in zip(adj[:2], adj_dev[:2]):
        np.testing.assert_allclose(to_host(d), h, rtol=1e-3, atol=1e-4)


def test_gpu_partial_last_blocks_match_cpu(tmp_path):
    """SIMT launches whose last block is partial (stand-in threads, ctx_cuda.h) on the device: the
    same arrays as the CPU's, forward and adjoint."""
    import test_partial_blocks

    mod = build_source(test_partial_blocks.PROGRAM, "partial", tmp_path)
    bd = test_partial_blocks.B
    runs = [("lane_sum", 133, lambda: [rnd(133, seed=21), np.zeros(1, np.float32)]),
            ("lane_map", 70, lambda: [rnd(70, seed=22), np.zeros(70, np.float32)]),
            ("axis_folds", 40, lambda: [1 + np.abs(rnd(32, 8, seed=23))] + [np.zeros(32, np.float32) for _ in range(4)]),
            ("scans", 32, lambda: [rnd(128, seed=24), np.zeros(128, np.float32), np.zeros(128, np.float32)])]
    for name, n, make in runs:
        kernel = getattr(mod, name)
        host = make()
        kernel.launch(dim=n, inputs=host, block_dim=bd, num_threads=1)
        dev = [to_device(x) for x in make()]
        kernel.launch(dim=n, inputs=dev, block_dim=bd, device="cuda")
        for h, d in zip(host, dev):
            np.testing.assert_allclose(to_host(d), h, rtol=2e-4, atol=2e-4, err_msg=name)
        seeds = [np.zeros_like(x) for x in host[:1]] + [np.ones_like(x) for x in host[1:]]
        adj_host = [s.copy() for s in seeds]
        kernel.launch(dim=n, inputs=make(), adj_inputs=adj_host, adjoint=True, block_dim=bd, num_threads=1)
        adj_dev = [to_device(s) for s in seeds]
        kernel.launch(dim=n, inputs=[to_device(x) for x in make()], adj_inputs=adj_dev, adjoint=True, block_dim=bd,
                      device="cuda")
        for h, d in zip(adj_host, adj_dev):
            np.testing.assert_allclose(to_host(d), h, rtol=2e-3, atol=2e-3, err_msg=f"{name} adjoint")
