"""The shared-memory budget (issue #17 "shared or global scratch with the budget applied honestly",
issue #19 item 4): TC0109 counts every tile the CUDA backend places in shared memory (matmul
operands, transposes, the adjoint's tiles), forward and backward separately, against `--max-shared`
or else the smallest limit of the architectures built for; `check --show-types` shows the totals;
CPU builds (and the CPU emulation of the .cu) are not limited. A kernel past the budget is refused
with the tiles that take the memory: tilec has no global-memory scratch for tiles."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from common import ROOT, tilec

# Issue #19's example: two 128x128 float operands of a matmul.
MATMUL = '''import warp as wp


@wp.kernel
def mm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(N, N))
    b = wp.tile_load(B, shape=(N, N))
    c = wp.tile_matmul(a, b)
    wp.tile_store(C, c)
'''


def program(tmp_path, n: int):
    (tmp_path / "mm.py").write_text(MATMUL.replace("N, N", f"{n}, {n}"))
    return "mm.py"


def test_matmul_operands_count_against_the_budget_forward_and_backward(tmp_path):
    """Neither operand is marked shared: the old budget counted nothing and passed 48 KiB."""
    proc = tilec("check", program(tmp_path, 128), "--max-shared", 48 * 1024, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert ("mm.py:5:5: error[TC0109]: kernel `mm` (forward) needs 128 KiB of shared memory per block on the GPU, "
            "more than the 48 KiB budget (--max-shared): `a` (128, 128) float32 (64 KiB), `b` (128, 128) float32 "
            "(64 KiB)\n") in proc.stderr
    assert ("mm.py:5:5: error[TC0109]: kernel `mm` (backward) needs 320 KiB of shared memory per block on the GPU, "
            "more than the 48 KiB budget (--max-shared)") in proc.stderr
    assert proc.stderr.strip().endswith("2 errors found")


def test_check_as_json_reports_the_budget_too(tmp_path):
    proc = tilec("check", program(tmp_path, 128), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["diagnostics"]
    assert [(d["code"], d["severity"]) for d in found] == [("TC0109", "error")]
    assert "(backward) needs 320 KiB" in found[0]["message"]


def test_the_default_budget_is_the_smallest_limit_of_the_architectures(tmp_path):
    name = program(tmp_path, 128)
    proc = tilec("check", name, cwd=tmp_path)  # the default architectures: sm_80 (163 KiB), sm_90 (227 KiB)
    assert proc.returncode == 1 and "(forward)" not in proc.stderr, proc.stderr
    assert "kernel `mm` (backward) needs 320 KiB of shared memory per block on the GPU, more than the 163 KiB a " \
           "block may use on sm_80" in proc.stderr
    built = tilec("build", name, "-o", "out", "--target", "cuda", "--arch", "sm_90", "--emit-only", cwd=tmp_path)
    assert built.returncode == 1 and "more than the 227 KiB a block may use on sm_90" in built.stderr
    assert not (tmp_path / "out" / "mm").exists()
    emitted = tilec("emit", name, "--target", "cuda", cwd=tmp_path)
    assert emitted.returncode == 1 and "error[TC0109]" in emitted.stderr and emitted.stdout == ""


def test_cpu_builds_are_not_limited(tmp_path):
    name = program(tmp_path, 128)
    proc = tilec("build", name, "-o", "out", "--target", "cpu", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 0 and "TC0109" not in proc.stderr, proc.stderr
    assert tilec("emit", name, "--target", "cpu", cwd=tmp_path).returncode == 0


def test_show_types_gives_each_kernels_total(tmp_path):
    proc = tilec("check", program(tmp_path, 64), "--show-types", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "kernel mm (line 5), block_dim 256\n  GPU shared memory per block: forward 32 KiB (2 tiles), " \
           "backward 80 KiB (5 tiles)\n" in proc.stdout


def test_the_count_is_what_the_generated_code_allocates(tmp_path):
    """The budget's count and the dynamic shared memory the .cu launches with are one number."""
    from tilec.backend_cuda.shared_memory import kernel_shared_memory
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    for sample in ("attention", "mlp", "gemm", "layernorm"):
        src = (ROOT / "samples" / f"{sample}.py").read_text()
        module = normalize_module(compile_source(src, f"{sample}.py").module)
        usage = kernel_shared_memory(module)
        manifest = json.loads((ROOT / "tests/golden" / sample / "manifest.json").read_text())
        for name, kernel in manifest["kernels"].items():
            counted = {direction: layout.total for direction, layout in usage[name].items()}
            assert counted == kernel["cuda_shared_bytes"], (sample, name)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_kernel_within_the_budget_runs_on_the_emulation_and_a_lower_budget_refuses_it(tmp_path):
    name = program(tmp_path, 64)
    proc = tilec("build", name, "-o", "out", "--target", "cuda-emu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import tilec as tl

    mod = tl.load(tmp_path / "out" / "mm")
    assert mod.mm.meta["cuda_shared_bytes"] == {"forward": 32 * 1024, "backward": 80 * 1024}
    rng = np.random.default_rng(3)
    A, B = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    C = np.zeros((64, 64), np.float32)
    mod.mm.launch_tiled(dim=(1,), inputs=[A, B, C], device="cuda-emu")
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
    refused = tilec("build", name, "-o", "out2", "--target", "cuda", "--emit-only", "--max-shared", 64 * 1024,
                    cwd=tmp_path)
    assert refused.returncode == 1 and "(forward)" not in refused.stderr, refused.stderr
    assert "kernel `mm` (backward) needs 80 KiB" in refused.stderr
