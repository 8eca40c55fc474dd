"""Fuzzing. Random well-typed tile programs, compiled and run on the CPU, agree with the numpy
interpreter forward and backward; mutated programs give diagnostics, never a traceback and never
C++ that fails to compile. A fast fixed-seed set runs by default; `pytest --fuzz-long` runs more.
"""
from __future__ import annotations

import random
import subprocess

import numpy as np
import pytest

from conftest import ROOT, has_cxx
from fuzzing import mutate, random_module
from harness import build, compile_ir
from tilec.codegen.sources import plan_kernels
from tilec.backend_cpu.compiler import find_cxx
from tilec.naming import RUNTIME_DIR
from tilec.diagnostics import CompileError
from tilec.driver import generate
from tilec.interp import Interpreter
from tilec.pipeline import compile_source

CORPUS = sorted((ROOT / "tests/valid").glob("*.py")) + sorted((ROOT / "samples").glob("*.py"))
STATS: dict = {"programs": 0, "mismatches": 0, "mutants": 0, "diagnostics": 0, "accepted": 0, "cxx_checked": 0}


# Seeds per test: (CI's bounded sample, the long campaign with --fuzz-long). Only the seeds that run
# are collected, so the long campaign's extra seeds are neither run nor reported as skipped.
SEEDS = {
    "test_random_programs_match_the_interpreter": (range(3), range(40)),
    "test_random_programs_on_the_emulated_gpu_match_the_interpreter": (range(100, 102), range(100, 116)),
    "test_mutated_programs_give_diagnostics_not_crashes": (range(3), range(20)),
}


def pytest_generate_tests(metafunc):
    if metafunc.function.__name__ in SEEDS:
        fast, long = SEEDS[metafunc.function.__name__]
        metafunc.parametrize("seed", long if metafunc.config.getoption("--fuzz-long") else fast)


@pytest.mark.build
@pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
def test_random_programs_match_the_interpreter(seed):
    source, specs = random_module(seed, kernels=8)
    STATS["programs"] += compare_with_interpreter(source, specs, f"fuzz{seed}", seed)


@pytest.mark.cuda
@pytest.mark.skipif(not has_cxx(), reason="needs a C++ compiler")
def test_random_programs_on_the_emulated_gpu_match_the_interpreter(seed):
    """The GPU model on random programs: register/shared placement, barriers, the device tape."""
    source, specs = random_module(seed, kernels=6)
    STATS["gpu_programs"] = STATS.get("gpu_programs", 0) + compare_with_interpreter(
        source, specs, f"fuzzgpu{seed}", seed, block_dim=(32, 64)[seed % 2], device="cuda-emu")


def compare_with_interpreter(source, specs, name, seed, block_dim=256, device="cpu") -> int:
    """Runs every kernel of a random module built for `device` and in the interpreter, on shapes
    with partial tiles; forward and adjoint must agree. Returns the number of kernels compared."""
    module = compile_ir(source, name, block_dim)
    compiled = build(source, name, block_dim=block_dim, target="cpu" if device == "cpu" else device)
    interp = Interpreter(module)
    rng = np.random.default_rng(seed)
    for kernel_name, tr, tc in specs:
        rows, cols = tr * 2 + rng.integers(-1, 2), tc * 2 + rng.integers(-1, 2)  # partial tiles
        dim = (-(-rows // tr), -(-cols // tc))
        A, B = rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))
        O1, O2 = np.zeros((rows, cols)), np.zeros((rows, cols))
        kernel = getattr(compiled, kernel_name)
        kernel.launch_tiled(dim=dim, inputs=[A, B, O1], device=device)
        interp.launch(kernel_name, dim, [A, B, O2])
        np.testing.assert_allclose(O1, O2, rtol=1e-9, atol=1e-9, err_msg=f"{kernel_name} forward\n{source}")
        W = rng.standard_normal((rows, cols))
        adj1 = [np.zeros_like(A), np.zeros_like(B), W.copy()]
        adj2 = [np.zeros_like(A), np.zeros_like(B), W.copy()]
        kernel.launch_tiled(dim=dim, inputs=[A, B, O1], adj_inputs=adj1, adjoint=True, device=device)
        interp.launch(kernel_name, dim, [A, B, O2], adjoint=True, adj_inputs=adj2)
        for x, y in zip(adj1, adj2):
            np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-9, err_msg=f"{kernel_name} adjoint\n{source}")
    return len(specs)


def test_mutated_programs_give_diagnostics_not_crashes(seed, tmp_path, pytestconfig):
    rng = random.Random(seed)
    for _ in range(60 if pytestconfig.getoption("--fuzz-long") else 30):  # CI's sample: the first 30 of each seed's
        path = rng.choice(CORPUS)
        source = mutate(path.read_text(), rng)
        STATS["mutants"] += 1
        try:
            compiled = compile_source(source, path.name)
        except CompileError as e:
            assert e.diagnostics and all(d.span.line >= 0 for d in e.diagnostics)
            STATS["diagnostics"] += 1
            continue
        STATS["accepted"] += 1
        from tilec.passes.normalize import normalize_module

        module = normalize_module(compiled.module)
        files = generate(module, source, {"block_dim": 256}, plan_kernels(module))
        if has_cxx():  # every accepted mutant's .cpp, and its .cu as the CUDA emulation compiles it
            for name, text in files.items():
                (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / name).write_text(text)
            for source_file, extra in ((f"{module.name}.cpp", []),
                                       (f"{module.name}.cu", ["-x", "c++", "-DTILEC_CUDA_EMU", "-include",
                                                              f"{RUNTIME_DIR}/cuda_emu.h"])):
                cmd = [find_cxx(), "-std=c++17", "-fsyntax-only", *extra, f"-I{tmp_path}", str(tmp_path / source_file)]
                proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
                assert proc.returncode == 0, (f"generated {source_file} fails to compile:\n{proc.stderr[:2000]}\n"
                                              f"--- program:\n{source}")
            STATS["cxx_checked"] += 1
