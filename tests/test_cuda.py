"""The CUDA backend: every sample's .cu builds with nvcc for sm_80 and sm_90, and the op and
gradient tests run again through the CUDA emulation (the same .cu on the CPU, block_dim lanes as
fibers with a real barrier) at block_dim 32, 64 and 128: each family at 64 (in both thread orders)
and, in the default run, at one of 32 and 128, alternating between families (both with
TILEC_TESTS_FULL=1; tests/sampling.py)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import test_gradients
import test_ops_elementwise
import test_ops_reduce_linalg
import test_ops_views_memory
from conftest import ROOT, has_cxx
from harness import build
from sampling import full, kept, shard

SAMPLES = sorted((ROOT / "samples").glob("*.py"))
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


# nvcc takes 6-14 s a sample: the default run (CI's) builds about half of them, by a stable hash of
# the name (tests/sampling.py: TILEC_TESTS_SHARD=1 takes the others, TILEC_TESTS_FULL=1 all).
NVCC_SAMPLES = [p for p in SAMPLES if kept(f"nvcc:{p.stem}", 1, 2)]


@pytest.mark.cuda
@needs_nvcc
@pytest.mark.parametrize("sample", NVCC_SAMPLES, ids=[p.stem for p in NVCC_SAMPLES])
def test_sample_builds_with_nvcc_for_sm80_and_sm90(sample: Path, tmp_path: Path):
    build = [sys.executable, "-m", "tilec.cli", "build", str(sample), "-o", str(tmp_path)]
    proc = subprocess.run(build + ["--target", "cuda", "--arch", "sm_80,sm_90", "-v"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / sample.stem
    assert (folder / f"{sample.stem}.fatbin").stat().st_size > 0
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["cuda_build"]["archs"] == ["sm_80", "sm_90"]
    assert manifest["cuda_build"]["nvcc"].startswith("release ")
    for name, kernel in manifest["kernels"].items():
        for direction in kernel["entries"]["cuda"]:
            for arch in ("sm_80", "sm_90"):
                r = kernel["cuda_resources"][direction][arch]
                assert r["registers"] > 0 and r["spill_stores"] >= 0 and r["static_shared_bytes"] >= 0
                assert r["stack_frame_bytes"] >= 0 and (r["stack_frame_bytes"] > 0 or r["spill_stores"] == 0)
                assert f"{name} {direction:<8} {arch}: {r['registers']:>3} registers" in proc.stdout
    # the measured resources are build facts: the generated code still checks as current
    proc = subprocess.run(build + ["--target", "cuda", "--arch", "sm_80,sm_90", "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ptxas_report_is_read_per_kernel_and_arch():
    """What `nvcc -Xptxas -v` prints (nvcc 13.0's wording) becomes each kernel's resources: a
    stack frame smaller than the bytes of spill stores (one slot stored twice) is read as printed."""
    from tilec.backend_cuda.compiler import parse_ptxas

    log = """ptxas info    : Compiling entry function 'm_k_cuda_forward' for 'sm_90'
ptxas info    : Function properties for m_k_cuda_forward
    520 bytes stack frame, 528 bytes spill stores, 528 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 520 bytes cumulative stack size
ptxas info    : Compiling entry function 'm_k_cuda_backward' for 'sm_80'
ptxas info    : Function properties for m_k_cuda_backward
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 80 registers, used 1 barriers, 16 bytes smem, 384 bytes cmem[0]
"""
    assert parse_ptxas(log) == {
        "m_k_cuda_forward": {"sm_90": {"stack_frame_bytes": 520, "spill_stores": 528, "spill_loads": 528,
                                       "registers": 255, "static_shared_bytes": 0}},
        "m_k_cuda_backward": {"sm_80": {"stack_frame_bytes": 0, "spill_stores": 0, "spill_loads": 0,
                                        "registers": 80, "static_shared_bytes": 16}}}


class OnDevice:
    """A generated module whose launches default to another device."""

    def __init__(self, module, device):
        self.module, self.device = module, device

    def __getattr__(self, name):
        kernel = getattr(self.module, name)
        device = self.device

        def on_device(launch):
            def run(**kw):
                kw.setdefault("device", device)
                return launch(**kw)  # a missing backward is a failure, never a skip

            return run

        class Bound:
            launch_tiled = staticmethod(on_device(kernel.launch_tiled))
            launch = staticmethod(on_device(kernel.launch))

        return Bound()


FAMILIES = [test_ops_elementwise, test_ops_reduce_linalg, test_ops_views_memory, test_gradients]
CASES = [(family, name) for family in FAMILIES for name in dir(family) if name.startswith("test_")]


def block_dims(family) -> list:
    """64, and 32 or 128 by turns across the families (all three in a full run)."""
    if full():
        return [32, 64, 128]
    return [64, (32, 128)[(FAMILIES.index(family) + shard()) % 2]]


EMULATED = [pytest.param(family, case, block_dim, id=f"{family.__name__[5:]}-{case[5:]}-block{block_dim}")
            for family, case in CASES for block_dim in block_dims(family)]


@pytest.mark.cuda
@pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
@pytest.mark.parametrize("family, case, block_dim", EMULATED)
def test_emulated(family, case, block_dim):
    module = build(family.SOURCE, family.__name__[5:] + "_emu", block_dim=block_dim, target="cuda-emu")
    getattr(family, case)(OnDevice(module, "cuda-emu"))


@pytest.mark.cuda
@pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
@pytest.mark.parametrize("family,case", CASES, ids=[f"{f.__name__[5:]}-{n[5:]}" for f, n in CASES])
def test_emulated_with_threads_in_reverse_order(family, case, monkeypatch):
    """The emulation runs each phase between barriers thread by thread. Reversing that order must not
    change any result: a result that depends on it is a missing barrier (a race on a GPU)."""
    monkeypatch.setenv("TILEC_EMU_SCHEDULE", "reverse")
    module = build(family.SOURCE, family.__name__[5:] + "_emu", block_dim=64, target="cuda-emu")
    getattr(family, case)(OnDevice(module, "cuda-emu"))
