"""Build: generated files -> an output folder, compiled, written atomically.

The folder `OUTDIR/<module>/` is assembled in a temporary sibling and swapped
in by rename, under a lock, so a failed or interrupted build leaves the previous
output intact and concurrent builds of the same module are safe. A rebuild whose
inputs hash matches the existing manifest is a no-op.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import __version__


class BuildError(Exception):
    """A compiler failed: the command and where its log is."""

    def __init__(self, message: str, command: list, log_path: str | None):
        super().__init__(message)
        self.command = command
        self.log_path = log_path


@dataclass
class BuildResult:
    folder: Path
    up_to_date: bool  # nothing was rebuilt


def find_cxx(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("CXX"), "clang++", "g++"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def cxx_command(cxx: str, source: str, output: str, debug: bool) -> list:
    """Run inside the output folder: every path is relative, so none is baked into the library."""
    opt = ["-O0", "-g"] if debug else ["-O3", "-march=native"]
    return [cxx, "-std=c++17", *opt, "-fPIC", "-shared", "-pthread", "-I.", "-o", output, source]


def find_nvcc(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("NVCC"), "nvcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def nvcc_command(nvcc: str, source: str, output: str, archs: list, debug: bool) -> list:
    """A fatbin for every sm_XY in archs; -Xptxas -v reports registers, shared memory and spills."""
    gencode = []
    for arch in archs:
        number = arch.removeprefix("sm_")
        gencode += ["-gencode", f"arch=compute_{number},code=sm_{number}"]
    opt = ["-O0", "-G"] if debug else ["-O3"]
    return [nvcc, "-std=c++17", "--expt-relaxed-constexpr", *opt, "-fatbin", *gencode, "-Xptxas", "-v", "-I.",
            "-o", output, source]


# The most dynamic shared memory one block may use (opt-in), by architecture, in bytes.
MAX_SHARED_BYTES = {"sm_70": 96 * 1024, "sm_72": 96 * 1024, "sm_75": 64 * 1024, "sm_80": 163 * 1024,
                    "sm_86": 99 * 1024, "sm_87": 163 * 1024, "sm_89": 99 * 1024, "sm_90": 227 * 1024,
                    "sm_100": 227 * 1024, "sm_120": 99 * 1024}


def nvcc_version(nvcc: str) -> str:
    """`release 13.0, V13.0.88` from `nvcc --version` (resources depend on the toolchain)."""
    import re

    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    m = re.search(r"release [^\n]*", proc.stdout)
    return m.group(0).strip() if m else "unknown"


def emu_command(cxx: str, source: str, output: str, debug: bool) -> list:
    """The .cu compiled for the CPU emulation of the GPU model."""
    opt = ["-O0", "-g"] if debug else ["-O2"]
    return [cxx, "-x", "c++", "-std=c++17", *opt, "-fPIC", "-shared", "-pthread", "-DTILEC_CUDA_EMU", "-I.",
            "-include", "tilec/cuda_emu.h", "-o", output, source]


def parse_ptxas(log: str) -> dict:
    """{kernel: {arch: {registers, shared_bytes, spill_stores, spill_loads}}} from -Xptxas -v output."""
    import re

    out: dict = {}
    current = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\d+)'", line)
        if m:
            current = out.setdefault(m.group(1), {}).setdefault(m.group(2), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current["spill_stores"], current["spill_loads"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            current["static_shared_bytes"] = int(sm.group(1)) if sm else 0
    return out


def inputs_hash(files: dict, flags: dict) -> str:
    h = hashlib.sha256(f"tilec {__version__}\n".encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    h.update(repr(sorted(flags.items())).encode())
    return h.hexdigest()


def up_to_date(folder: Path, digest: str, expected: list) -> bool:
    manifest = folder / "manifest.json"
    if not manifest.exists() or not all((folder / name).exists() for name in expected):
        return False
    import json

    try:
        return json.loads(manifest.read_text()).get("inputs_hash") == digest
    except (OSError, ValueError):
        return False


def write_and_build(outdir: Path, module: str, files: dict, digest: str, compile_steps: list,
                    products: list) -> BuildResult:
    """files: relative path -> text. compile_steps: callables(tmp_folder) that build products."""
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    final = outdir / module
    lock_path = outdir / f".{module}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _recover(outdir, module)
        if up_to_date(final, digest, list(files) + products):
            return BuildResult(final, True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{module}.tmp-", dir=outdir))
        try:
            for name, text in files.items():
                path = tmp / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            for step in compile_steps:
                step(tmp)
            old = outdir / f".{module}.old"
            if final.exists():
                os.rename(final, old)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return BuildResult(final, False)


def _recover(outdir: Path, module: str) -> None:
    """An interrupted swap leaves `.module.old` without `module`: put it back."""
    final, old = outdir / module, outdir / f".{module}.old"
    if old.exists() and not final.exists():
        os.rename(old, final)
    for stale in outdir.glob(f".{module}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def run_compiler(command: list, cwd: Path, log_name: str, outdir: Path) -> str:
    """Runs a compiler; returns its output, or raises BuildError with the command and a log."""
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        log_dir = outdir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / log_name
        log_path.write_text(" ".join(command) + "\n\n" + proc.stdout + proc.stderr)
        raise BuildError(f"{Path(command[0]).name} failed (exit {proc.returncode})", command, str(log_path))
    return proc.stdout + proc.stderr
