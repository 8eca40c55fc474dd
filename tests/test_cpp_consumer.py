"""samples/cpp_consumer: the committed generated folder is current, and a CMake project builds and
runs it with g++ alone (no tilec, no Python)."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

CONSUMER = ROOT / "samples/cpp_consumer"


def test_committed_generated_code_is_current():
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(ROOT / "samples/gemm.py"), "-o",
                           str(CONSUMER / "generated"), "--emit-only", "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.build
@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++")
def test_cmake_project_builds_and_runs(tmp_path):
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(CONSUMER), "-B", str(build), "-DCMAKE_CXX_COMPILER=g++"], check=True,
                   capture_output=True)
    proc = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = subprocess.run([str(build / "consumer")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "cpp_consumer ok"
    if shutil.which("nvcc"):  # the CUDA library of the same committed folder builds as well
        assert list(build.rglob("libgemm_cuda.a")), "the CUDA library was not built"
