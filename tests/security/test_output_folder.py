"""Output folders (issue #17, "Data loss" and "Stale output trusted"): tilec owns only what its manifest
lists, never deletes what it did not write, and re-verifies every artefact before "up to date"."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from common import ROOT, tilec

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="needs a C++ compiler")

PROG = '''
import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * {factor}
'''


def write(folder, name="src", factor="2.0"):
    (folder / f"{name}.py").write_text(PROG.format(factor=factor))


def run_kernel(folder, module="src"):
    """Loads the built module in a fresh interpreter and runs k on [1, 2]."""
    code = (f"import sys, numpy as np; sys.path.insert(0, {str(folder)!r}); import {module}\n"
            f"x = np.array([1, 2], np.float32); {module}.k.launch(dim=2, inputs=[x], device='cpu'); print(x[1])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return float(proc.stdout)


def test_dot_output_beside_a_user_folder_of_the_same_name_is_refused(tmp_path):
    write(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main() { return 0; }\n")
    proc = tilec("build", "src.py", "-o", ".", "--target", "cpu", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "holds files that tilec did not write" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["main.c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src", "src.py"]  # no lock, no temporary folder


def test_a_file_in_place_of_the_module_folder_is_refused(tmp_path):
    write(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "src").write_text("mine")
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 1 and "is not a folder tilec wrote" in proc.stderr
    assert (tmp_path / "out" / "src").read_text() == "mine"


def test_user_files_inside_the_output_folder_survive_rebuilds(tmp_path):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    folder = tmp_path / "out" / "src"
    (folder / "notes.txt").write_text("my notes")
    (folder / "tilec-rt" / "mine.h").write_text("// mine")
    write(tmp_path, factor="3.0")
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 0 and "built" in proc.stdout, proc.stderr
    assert (folder / "notes.txt").read_text() == "my notes" and (folder / "tilec-rt" / "mine.h").read_text() == "// mine"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["src"]  # no .src.old, no .src.lock
    assert "* 3.0f" in (folder / "src.cpp").read_text()


def test_a_generated_file_never_overwrites_a_user_file(tmp_path):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    folder = tmp_path / "out" / "src"
    data = json.loads((folder / "manifest.json").read_text())
    del data["files"]["src.h"]  # as if the user had written src.h: tilec does not own it
    data["files"]["../victim.txt"] = "0" * 64  # a crafted manifest cannot reach outside the folder
    (folder / "manifest.json").write_text(json.dumps(data))
    (folder / "src.h").write_text("// the user's header")
    (tmp_path / "out" / "victim.txt").write_text("keep")
    write(tmp_path, factor="3.0")
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 1 and "was not written by tilec: refusing to overwrite it" in proc.stderr
    assert (folder / "src.h").read_text() == "// the user's header"
    assert (tmp_path / "out" / "victim.txt").read_text() == "keep"


def test_targets_coexist_in_one_folder(tmp_path):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--target", "cpu", cwd=tmp_path).returncode == 0
    proc = tilec("build", "src.py", "-o", "out", "--target", "cuda-emu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out" / "src"
    assert (folder / "libsrc_cpu.so").exists() and (folder / "libsrc_cuda_emu.so").exists()
    assert sorted(json.loads((folder / "manifest.json").read_text())["libraries"]) == [
        "libsrc_cpu.so", "libsrc_cuda_emu.so"]
    assert run_kernel(tmp_path / "out") == 4.0
    # a changed program drops the other target's library: it no longer matches its source
    write(tmp_path, factor="5.0")
    assert tilec("build", "src.py", "-o", "out", "--target", "cuda-emu", cwd=tmp_path).returncode == 0
    assert not (folder / "libsrc_cpu.so").exists()


@pytest.mark.cuda
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_cuda_after_cpu_keeps_the_cpu_library(tmp_path):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--target", "cpu", cwd=tmp_path).returncode == 0
    proc = tilec("build", "src.py", "-o", "out", "--target", "cuda", "--arch", "sm_80", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out" / "src"
    assert (folder / "libsrc_cpu.so").exists() and (folder / "src.fatbin").exists()
    assert run_kernel(tmp_path / "out") == 4.0


@pytest.mark.parametrize("victim,damage", [("libsrc_cpu.so", b"\0" * 64), ("src.cpp", b"// edited\n")],
                         ids=["library", "source"])
def test_a_corrupted_artefact_is_rebuilt_not_trusted(tmp_path, victim, damage):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--target", "cpu", cwd=tmp_path).returncode == 0
    again = tilec("build", "src.py", "-o", "out", "--target", "cpu", cwd=tmp_path)
    assert "up to date" in again.stdout
    (tmp_path / "out" / "src" / victim).write_bytes(damage)
    proc = tilec("build", "src.py", "-o", "out", "--target", "cpu", cwd=tmp_path)
    assert proc.returncode == 0 and "src: built" in proc.stdout, proc.stdout + proc.stderr
    assert run_kernel(tmp_path / "out") == 4.0


@pytest.mark.parametrize("victim", ["tilec-rt/core.h", "__init__.py"])
def test_an_emptied_text_artefact_is_rewritten(tmp_path, victim):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    path = tmp_path / "out" / "src" / victim
    text = path.read_text()
    path.write_text("")
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 0 and "src: built" in proc.stdout
    assert path.read_text() == text


KILLER = '''
import os, signal, sys
import tilec.build as b
calls, at = [0], int(sys.argv[1])
real = os.replace
def replace(src, dst):
    calls[0] += 1
    if calls[0] == at:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst)
b.os.replace = replace
sys.argv = ["tilec", "build", "src.py", "-o", "out", "--emit-only"]
from tilec.cli import main
main()
'''


@pytest.mark.parametrize("kill_at", [1, 3, 6])
def test_kill_9_mid_swap_then_rebuild_works(tmp_path, kill_at):
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    write(tmp_path, factor="3.0")
    (tmp_path / "killer.py").write_text(KILLER)
    proc = subprocess.run([sys.executable, "killer.py", str(kill_at)], cwd=tmp_path, capture_output=True)
    assert proc.returncode == -9
    assert any(p.name.startswith(".src.tmp-") for p in (tmp_path / "out").iterdir())
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 0 and "src: built" in proc.stdout, proc.stdout + proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["src"]
    assert "* 3.0f" in (tmp_path / "out" / "src" / "src.cpp").read_text()
    assert "up to date" in tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).stdout


def test_leftovers_of_an_earlier_swap_are_recovered(tmp_path):
    """What an earlier tilec left when killed: `.src.old` (the previous output), `.src.lock`."""
    write(tmp_path)
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    os.rename(out / "src", out / ".src.old")
    (out / ".src.lock").write_text("")
    proc = tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path)
    assert proc.returncode == 0 and "up to date" in proc.stdout, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["src"]
    # a leftover .old beside a present folder no longer wedges builds
    shutil.copytree(out / "src", out / ".src.old")
    write(tmp_path, factor="3.0")
    assert tilec("build", "src.py", "-o", "out", "--emit-only", cwd=tmp_path).returncode == 0
    assert "* 3.0f" in (out / "src" / "src.cpp").read_text()


def test_folders_and_files_respect_the_umask(tmp_path):
    write(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "tilec", "build", "src.py", "-o", "out", "--target", "cpu"],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=lambda: os.umask(0o027))
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out" / "src"
    for path in [folder, folder / "tilec-rt"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o750, path
    for path in [folder / "src.cpp", folder / "manifest.json", folder / "tilec-rt" / "core.h"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path
    assert stat.S_IMODE((folder / "libsrc_cpu.so").stat().st_mode) == 0o750


def test_the_cpp_consumer_sample_is_a_tilec_folder():
    """The committed generated folder carries its manifest: rebuilding into it stays allowed."""
    data = json.loads((ROOT / "samples/cpp_consumer/generated/gemm/manifest.json").read_text())
    assert data["module"] == "gemm" and "tilec_version" in data
