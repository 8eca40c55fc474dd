"""The shared-memory budget (issue #17 "shared or global scratch with the budget applied honestly",
issue #19 item 4): TC0109 counts every tile the CUDA backend places in shared memory (matmul
operands, transposes, the adjoint's tiles), forward and backward separately, against `--max-shared`
or else the smallest limit of the architectures built for; `check --show-types` shows the totals;
CPU builds are not limited. Tiles past the budget live in global scratch, largest first (the
layout's own tests: tests/test_global_scratch.py); what still cannot be placed is refused with the
tiles that take the memory."""
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
    """Neither operand is marked shared: the old budget counted nothing and passed 48 KiB. Past the
    budget they (and the adjoint's tiles) move to global scratch, largest first."""
    name = program(tmp_path, 128)
    proc = tilec("check", name, "--max-shared", 48 * 1024, "--show-types", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("GPU shared memory per block: forward 0 KiB (0 tiles) + 128 KiB global scratch (2 tiles), backward 0 KiB "
            "(0 tiles) + 320 KiB global scratch (5 tiles)\n") in proc.stdout
    proc = tilec("check", name, "--max-shared", 64 * 1024, "--show-types", cwd=tmp_path)
    assert ("GPU shared memory per block: forward 64 KiB (1 tile) + 64 KiB global scratch (1 tile), backward 64 KiB "
            "(1 tile) + 256 KiB global scratch (4 tiles)\n") in proc.stdout


HUGE = """import warp as wp


@wp.kernel
def huge(A: wp.array1d(dtype=wp.float64), B: wp.array1d(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    b = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    c = wp.tile_load(A, shape=(1 << 26,), storage="shared")
    wp.tile_store(B, a * b + c)
"""


def test_check_as_json_reports_what_cannot_be_placed(tmp_path):
    (tmp_path / "huge.py").write_text(HUGE)
    proc = tilec("check", "huge.py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["diagnostics"]
    assert [(d["code"], d["severity"]) for d in found] == [("TC0109", "error")]  # backward: 1 GiB, the limit
    assert "kernel `huge` (forward) needs 1.5 GiB of memory per block on the GPU" in found[0]["message"]


def _bytes(folder):
    kernel = json.loads((folder / "mm" / "manifest.json").read_text())["kernels"]["mm"]
    return kernel["cuda_shared_bytes"], kernel.get("cuda_scratch_bytes", {})


def test_the_default_budget_is_the_smallest_limit_of_the_architectures(tmp_path):
    name = program(tmp_path, 128)
    proc = tilec("check", name, "--show-types", cwd=tmp_path)  # default architectures: sm_80 (163 KiB), sm_90
    assert proc.returncode == 0, proc.stderr
    assert "backward 128 KiB (2 tiles) + 192 KiB global scratch (3 tiles)" in proc.stdout
    built = tilec("build", name, "-o", "out", "--target", "cuda", "--emit-only", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert _bytes(tmp_path / "out") == ({"forward": 131072, "backward": 131072}, {"backward": 196608})
    built = tilec("build", name, "-o", "out90", "--target", "cuda", "--arch", "sm_90", "--emit-only", cwd=tmp_path)
    assert built.returncode == 0, built.stderr  # 227 KiB: one tile fewer moves
    assert _bytes(tmp_path / "out90") == ({"forward": 131072, "backward": 196608}, {"backward": 131072})
    emitted = tilec("emit", name, "--target", "cuda", cwd=tmp_path)
    assert emitted.returncode == 0 and "ctx.gmem" in emitted.stdout, emitted.stderr


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
    from tilec.backend_cuda.shared_memory import budget, kernel_shared_memory
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    for sample in ("attention", "mlp", "gemm", "layernorm"):
        src = (ROOT / "samples" / f"{sample}.py").read_text()
        module = normalize_module(compile_source(src, f"{sample}.py").module)
        usage = kernel_shared_memory(module, limit=budget(None)[0])
        manifest = json.loads((ROOT / "tests/golden" / sample / "manifest.json").read_text())
        for name, kernel in manifest["kernels"].items():
            counted = {direction: layout.total for direction, layout in usage[name].items()}
            assert counted == kernel["cuda_shared_bytes"], (sample, name)
            scratch = {direction: layout.global_total for direction, layout in usage[name].items()
                       if layout.global_total}
            assert scratch == kernel.get("cuda_scratch_bytes", {}), (sample, name)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_kernel_runs_on_the_emulation_within_the_budget_and_past_it(tmp_path):
    name = program(tmp_path, 64)
    import tilec as tl

    rng = np.random.default_rng(3)
    A, B = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    for out, budget, shared, scratch in (("out", [], {"forward": 32 * 1024, "backward": 80 * 1024}, None),
                                         ("out2", ["--max-shared", 64 * 1024], {"forward": 32 * 1024,
                                                                               "backward": 64 * 1024},
                                          {"backward": 16 * 1024})):
        proc = tilec("build", name, "-o", out, "--target", "cuda-emu", *budget, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        mod = tl.load(tmp_path / out / "mm")
        assert mod.mm.meta["cuda_shared_bytes"] == shared and mod.mm.meta.get("cuda_scratch_bytes") == scratch
        C = np.zeros((64, 64), np.float32)
        mod.mm.launch_tiled(dim=(1,), inputs=[A, B, C], device="cuda-emu")
        np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)
        dA, dB = np.zeros_like(A), np.zeros_like(B)
        mod.mm.launch_tiled(dim=(1,), inputs=[A, B, C], adj_inputs=[dA, dB, np.ones_like(C)], adjoint=True,
                            device="cuda-emu")
        np.testing.assert_allclose(dA, np.ones_like(C) @ B.T, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(dB, A.T @ np.ones_like(C), rtol=1e-4, atol=1e-4)
