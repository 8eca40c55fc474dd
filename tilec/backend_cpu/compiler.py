"""The CPU backend's compiler driver: which C++ compiler, and the command that builds `lib<module>_cpu.so`."""
from __future__ import annotations

import os
import shutil


def find_cxx(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("CXX"), "clang++", "g++"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def cxx_command(cxx: str, source: str, output: str, debug: bool) -> list:
    """Run inside the output folder: every path is relative, so none is baked into the library."""
    opt = ["-O0", "-g", "-DTILEC_DEBUG"] if debug else ["-O3", "-march=native"]  # TILEC_DEBUG: asserts
    return [cxx, "-std=c++17", *opt, "-fPIC", "-shared", "-pthread", "-I.", "-o", output, source]
