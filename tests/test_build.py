"""Builds: no-op rebuilds, atomic output under interruption and concurrency, compiler failures,
and compiling a file never runs any of it."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, needs_cxx

pytestmark = [pytest.mark.build, needs_cxx]
GEMM = ROOT / "samples/gemm.py"


def tilec_build(src, out, *extra, **kw):
    return subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(src), "-o", str(out), "--target", "cpu",
                           *extra], capture_output=True, text=True, **kw)


def fake_compiler(tmp_path: Path, body: str) -> Path:
    """A compiler that answers --version as one (the driver asks it which flags it takes) and runs
    body for everything else."""
    path = tmp_path / "fake-cxx"
    path.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "fake-cxx 1.0"; exit 0; fi\n' + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_unchanged_rebuild_is_a_no_op(tmp_path):
    assert tilec_build(GEMM, tmp_path).returncode == 0
    so = tmp_path / "gemm/libgemm_cpu.so"
    before = so.stat().st_mtime_ns
    second = tilec_build(GEMM, tmp_path)
    assert second.returncode == 0 and "up to date" in second.stdout
    assert so.stat().st_mtime_ns == before
    third = tilec_build(GEMM, tmp_path, "--block-dim", "128")  # a flag change rebuilds
    assert "built" in third.stdout and json.loads((tmp_path / "gemm/manifest.json").read_text())["flags"]["block_dim"] == 128


def test_a_change_only_the_manifest_shows_rewrites_it_and_check_reports_it(tmp_path):
    """A comment appended to the source changes no generated code, only the manifest's source hash:
    the rebuild must rewrite the manifest (not call the folder up to date), and `build --check` of
    the old folder must report manifest.json."""
    import hashlib

    src = tmp_path / "gemm.py"
    src.write_text(GEMM.read_text())
    out = tmp_path / "out"
    assert tilec_build(src, out).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "gemm").iterdir() if p.is_file()}
    src.write_text(GEMM.read_text() + "\n# a note\n")
    check = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(src), "-o", str(out), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 1 and "1 changed: manifest.json" in check.stdout, check.stdout + check.stderr
    again = tilec_build(src, out)
    assert again.returncode == 0 and "built" in again.stdout, again.stdout
    manifest = json.loads((out / "gemm/manifest.json").read_text())
    assert manifest["source_sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    after = {p.name: p.read_bytes() for p in (out / "gemm").iterdir() if p.is_file()}
    assert [n for n in sorted(after) if after[n] != before.get(n)] == ["manifest.json"]
    assert "up to date" in tilec_build(src, out).stdout


def test_failed_compile_reports_command_and_log_and_keeps_old_output(tmp_path):
    assert tilec_build(GEMM, tmp_path).returncode == 0
    manifest = (tmp_path / "gemm/manifest.json").read_text()
    bad = fake_compiler(tmp_path, "echo 'fake-cxx: internal failure' >&2; exit 3")
    proc = tilec_build(GEMM, tmp_path, "--cxx", bad, "--block-dim", "64")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "fake-cxx failed (exit 3)" in proc.stderr and f"command: {bad}" in proc.stderr
    log = Path(proc.stderr.split("log: ")[1].strip())
    assert "fake-cxx: internal failure" in log.read_text()
    assert (tmp_path / "gemm/manifest.json").read_text() == manifest, "the previous output is intact"
    assert not list(tmp_path.glob(".gemm.tmp-*"))


def test_killed_build_leaves_previous_output_intact(tmp_path):
    assert tilec_build(GEMM, tmp_path).returncode == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "gemm").iterdir() if p.is_file()}
    started = tmp_path / "compiler-started"
    slow = fake_compiler(tmp_path, f"touch '{started}'\nsleep 30")
    proc = subprocess.Popen([sys.executable, "-m", "tilec.cli", "build", str(GEMM), "-o", str(tmp_path), "--target",
                             "cpu", "--cxx", str(slow), "--block-dim", "32"], start_new_session=True)
    deadline = time.monotonic() + 120
    while not started.exists():  # killed mid-build: while the compiler runs in the temporary folder
        assert proc.poll() is None and time.monotonic() < deadline, "the build never reached its compiler"
        time.sleep(0.05)
    assert list(tmp_path.glob(".gemm.tmp-*")), "no temporary folder while compiling"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    after = {p.name: p.read_bytes() for p in (tmp_path / "gemm").iterdir() if p.is_file()}
    assert after == before
    assert tilec_build(GEMM, tmp_path).returncode == 0  # and the next build cleans up and works
    assert not list(tmp_path.glob(".gemm.tmp-*"))


def test_concurrent_builds_of_one_module_are_safe(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-m", "tilec.cli", "build", str(GEMM), "-o", str(tmp_path), "--target",
                               "cpu", "--block-dim", str(bd)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for bd in (64, 64, 128)]
    assert [p.wait() for p in procs] == [0, 0, 0]
    manifest = json.loads((tmp_path / "gemm/manifest.json").read_text())
    assert manifest["flags"]["block_dim"] in (64, 128)
    assert (tmp_path / "gemm/libgemm_cpu.so").exists() and not list(tmp_path.glob(".gemm.tmp-*"))


def test_compiling_never_executes_the_program(tmp_path):
    marker = tmp_path / "executed"
    program = tmp_path / "evil.py"
    program.write_text(f'''
import os, socket, shutil
import warp as wp
open({str(marker)!r}, "w").write("module level ran")
socket.socket().connect(("127.0.0.1", 9))
shutil.rmtree("/definitely/not/here")
N = __import__("os").system("touch {marker}")


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    A[wp.tid()] = 1.0


if __name__ == "__main__":
    os.remove({str(marker)!r})
''')
    for command in (["check"], ["emit", "--target", "cpu"], ["build", "-o", str(tmp_path / "out"), "--target", "cpu"]):
        proc = subprocess.run([sys.executable, "-m", "tilec.cli", command[0], str(program), *command[1:]],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
