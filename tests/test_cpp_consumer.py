"""samples/cpp_consumer: the committed generated folder is current, and a CMake project builds and
runs it with g++ alone (no tilec, no Python), compiling the library with the flags tilec's own
build gives each compiler."""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import INSTALLED_CXX, ROOT
from tilec.backend_cpu.compiler import ALIAS_CHECKS, clang_alias_checks, compile_flags, is_clang

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


@pytest.mark.build
@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
@pytest.mark.parametrize("compiler", INSTALLED_CXX)
def test_cmake_compiles_the_library_with_tilecs_own_code_generation_flags(tmp_path, compiler):
    """The flags that change the code each compiler generates for tile loops (compiler.compile_flags),
    but not the optimisation level or the ISA, which are the consuming project's to choose."""
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(CONSUMER), "-B", str(build), f"-DCMAKE_CXX_COMPILER={compiler}",
                    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], check=True, capture_output=True)
    (entry,) = [e for e in json.loads((build / "compile_commands.json").read_text())
                if e["file"].endswith("gemm.cpp")]
    used = shlex.split(entry["command"])
    own = compile_flags(False, "generic", shutil.which(compiler))
    expected = [f for f in own if f not in ("-std=c++17", "-O3", "-fPIC", "-pthread", *ALIAS_CHECKS)]
    assert [f for f in expected if f not in used] == [], used
    alias = clang_alias_checks(shutil.which(compiler)) if is_clang(shutil.which(compiler)) else []
    joined = " ".join(used)
    assert (" ".join(ALIAS_CHECKS) in joined) == bool(alias), joined
    assert " ".join(ALIAS_CHECKS) in (CONSUMER / "generated/gemm/CMakeLists.txt").read_text()
