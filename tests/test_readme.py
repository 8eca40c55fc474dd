"""README "Using the output": every snippet runs as written (Python, PyTorch, C++ with CMake)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, needs_cxx

pytestmark = [pytest.mark.build, needs_cxx]

SECTION = (ROOT / "README.md").read_text().split("## Using the output", 1)[1].split("\n## ", 1)[0]


def snippets(language: str) -> list:
    return re.findall(rf"```{language}\n(.*?)```", SECTION, re.S)


def tilec(*args, cwd):
    proc = subprocess.run([sys.executable, "-m", "tilec", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    tilec("build", ROOT / "samples/gemm.py", "-o", "build", "--target", "cpu", cwd=folder)
    return folder


def run_python(code: str, cwd):
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_python_snippet(built):
    (code,) = [s for s in snippets("python") if "import torch" not in s]
    assert run_python(code, built).strip() == "python ok"


def test_pytorch_snippet(built):
    pytest.importorskip("torch")
    (code,) = [s for s in snippets("python") if "import torch" in s]
    assert run_python(code, built).strip() == "torch ok"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_cmake_snippet(tmp_path):
    (cmake,) = snippets("cmake")
    (cpp,) = snippets("cpp")
    tilec("build", ROOT / "samples/gemm.py", "-o", "gen", "--emit-only", cwd=tmp_path)
    (tmp_path / "CMakeLists.txt").write_text(cmake)
    (tmp_path / "main.cpp").write_text(cpp)
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(tmp_path), "-B", str(build)], check=True, capture_output=True)
    proc = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = subprocess.run([str(build / "app")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout == "cpp ok\n"


VALUE_TYPES = (ROOT / "README.md").read_text().split("## Value types: an n-body step", 1)[1].split("\n## ", 1)[0]


def test_nbody_section_shows_the_sample_and_its_run(tmp_path):
    """The section's kernel is the sample's, and its console session runs as shown (from a copy of
    samples/ in a fresh folder)."""
    (kernel,) = re.findall(r"```python\n(.*?)```", VALUE_TYPES, re.S)
    assert kernel in (ROOT / "samples/nbody.py").read_text()
    (session,) = re.findall(r"```console\n(.*?)```", VALUE_TYPES, re.S)
    shutil.copytree(ROOT / "samples", tmp_path / "samples", ignore=shutil.ignore_patterns("cpp_consumer"))
    shown, printed = [], []  # output lines: as the README shows them ("..." elides a folder), as printed
    for line in session.splitlines():
        if not line.startswith("$ "):
            shown.append(line)
            continue
        command = line[2:].split()
        program = [sys.executable, "-m", "tilec"] if command[0] == "tilec" else [sys.executable]
        proc = subprocess.run(program + command[1:], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "warning" not in proc.stderr, proc.stderr
        printed += proc.stdout.splitlines()
    assert len(printed) == len(shown), printed
    for want, got in zip(shown, printed):
        head, _, tail = want.partition("...")
        assert got == want if not _ else got.startswith(head) and got.endswith(tail), (want, got)
