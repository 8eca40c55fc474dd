"""The CUDA backend's compiler driver: nvcc (fatbin per architecture, ptxas resource report), the
CPU emulation build of the `.cu`, and the per-architecture shared-memory limits."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence

from ..naming import RUNTIME_DIR


def find_nvcc(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("NVCC"), "nvcc"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def ptx_arch(archs: Sequence[str]) -> str | None:
    """The virtual architecture whose PTX the fatbin carries: the newest requested one (a GPU newer
    than every sm_XY in the fatbin JIT-compiles it)."""
    numbers = [a.removeprefix("sm_") for a in archs]
    return f"compute_{max(numbers, key=_arch_key)}" if numbers else None


def _arch_key(number: str) -> tuple[int, str]:
    digits = re.match(r"\d+", number)
    return (int(digits.group(0)) if digits else 0, number)


def nvcc_command(nvcc: str, source: str, output: str, archs: Sequence[str], debug: bool) -> list[str]:
    """A fatbin with SASS for every sm_XY in archs plus PTX for the newest; -Xptxas -v reports
    registers, shared memory and spills."""
    gencode = []
    for arch in archs:
        number = arch.removeprefix("sm_")
        gencode += ["-gencode", f"arch=compute_{number},code=sm_{number}"]
    if archs:
        ptx = ptx_arch(archs)
        gencode += ["-gencode", f"arch={ptx},code={ptx}"]
    opt = ["-O0", "-G", "-DTILEC_DEBUG"] if debug else ["-O3"]  # TILEC_DEBUG: asserts
    return [nvcc, "-std=c++17", "--expt-relaxed-constexpr", *opt, "-fatbin", *gencode, "-Xptxas", "-v", "-I.",
            "-o", output, source]


# The most dynamic shared memory one block may use (opt-in), by architecture, in bytes.
MAX_SHARED_BYTES = {"sm_70": 96 * 1024, "sm_72": 96 * 1024, "sm_75": 64 * 1024, "sm_80": 163 * 1024,
                    "sm_86": 99 * 1024, "sm_87": 163 * 1024, "sm_89": 99 * 1024, "sm_90": 227 * 1024,
                    "sm_100": 227 * 1024, "sm_120": 99 * 1024}


def nvcc_version(nvcc: str) -> str:
    """`release 13.0, V13.0.88` from `nvcc --version` (resources depend on the toolchain)."""
    proc = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    m = re.search(r"release [^\n]*", proc.stdout)
    return m.group(0).strip() if m else "unknown"


def nvcc_threads(version: str, jobs: int) -> list[str]:
    """`--threads N`: nvcc compiles the fatbin's architectures (SASS per sm_XY, the PTX) N at once,
    on the cores the caller found idle (jobs). Only the wall time changes: the same fatbin and ptxas
    report (softmax, sm_80 + sm_90 + PTX, two cores: 3.5 -> 2.8 s). The option exists from CUDA 11.2;
    kept out of the command a library's up-to-date key records, so that a build's idle cores never
    make it stale."""
    m = re.match(r"release (\d+)\.(\d+)", version)
    if jobs < 2 or m is None or (int(m.group(1)), int(m.group(2))) < (11, 2):
        return []
    return ["--threads", str(jobs)]


def emu_command(cxx: str, source: str, output: str, debug: bool) -> list[str]:
    """The .cu compiled for the CPU emulation of the GPU model."""
    opt = ["-O0", "-g", "-DTILEC_DEBUG"] if debug else ["-O2"]
    return [cxx, "-x", "c++", "-std=c++17", *opt, "-fPIC", "-shared", "-pthread", "-DTILEC_CUDA_EMU", "-I.",
            "-include", f"{RUNTIME_DIR}/cuda_emu.h", "-o", output, source]


def parse_ptxas(log: str) -> dict[str, dict[str, dict[str, int]]]:
    """{kernel: {arch: {registers, static_shared_bytes, spill_stores, spill_loads, stack_frame_bytes}}}
    from -Xptxas -v output. The stack frame holds the spills and any local array (a register tile
    indexed at run time lands there too, without a spill)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    current: dict[str, int] | None = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)' for '(sm_\d+)'", line)
        if m:
            current = out.setdefault(m.group(1), {}).setdefault(m.group(2), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame", line)
        if m:
            current["stack_frame_bytes"] = int(m.group(1))
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current["spill_stores"], current["spill_loads"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            current["static_shared_bytes"] = int(sm.group(1)) if sm else 0
    return out
