"""Valid programs: they check cleanly, every pass keeps the IR well formed, and the emitted C++ compiles."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import has_cxx
from harness import compile_ir
from tilec.passes.autodiff import adjoint_kernel
from tilec.codegen.sources import plan_kernels
from tilec.backend_cpu.compiler import find_cxx
from tilec.driver import generate
from tilec.naming import RUNTIME_DIR
from tilec.passes.verify import verify_function

VALID = sorted((Path(__file__).parent / "valid").glob("*.py"))


def test_corpus_size():
    assert len(VALID) >= 25


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_checks_cleanly(path: Path):
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", "--show-types", path.name],
                          cwd=path.parent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # the only diagnostics a valid program may get: adjoints refused as not exact (docs/gradients.md)
    heads = [line for line in proc.stderr.splitlines() if ": warning[" in line or ": error" in line]
    assert all("warning[TC05" in line for line in heads), proc.stderr
    assert len(heads) == proc.stderr.count("this kernel gets no adjoint"), proc.stderr
    assert "kernel " in proc.stdout


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_passes_keep_ir_well_formed_and_cxx_compiles(path: Path, tmp_path: Path):
    module = compile_ir(path.read_text(), path.stem)
    funcs = {f.name for f in module.funcs}
    for k in module.kernels:
        if k.differentiate:
            assert verify_function(adjoint_kernel(k, module, exact_only=False), funcs) == []
    if not has_cxx():
        pytest.skip("needs a C++ compiler")
    files = generate(module, path.read_text(), {"block_dim": 256}, plan_kernels(module))
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    cmd = [find_cxx(), "-std=c++17", "-fsyntax-only", f"-I{tmp_path}", str(tmp_path / f"{path.stem}.cpp")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
    # the .cu too, as the CUDA emulation compiles it (the GPU model's emission, without nvcc)
    cmd = [find_cxx(), "-x", "c++", "-std=c++17", "-fsyntax-only", "-DTILEC_CUDA_EMU", f"-I{tmp_path}", "-include",
           f"{RUNTIME_DIR}/cuda_emu.h", str(tmp_path / f"{path.stem}.cu")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
