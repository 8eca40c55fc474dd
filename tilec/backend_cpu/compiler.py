"""The CPU backend's compiler driver: which C++ compiler, the ISA the library targets, and the
command that builds `lib<module>_cpu.so`.

Portable by default: the library targets a documented baseline per architecture (BASELINE), so
an output folder built on one machine runs on any CPU of that baseline; `tilec build --native`
opts into `-march=native` (this machine's every extension, e.g. AVX-512). Either way the build
records the ISA and the CPU features the compiler was allowed to use (`cpu_features`, in
/proc/cpuinfo's spelling) in manifest.json, and the generated loader refuses, with a message
naming the missing features, a library this CPU cannot run (instead of dying of SIGILL).
"""
from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess

# The default target per machine: x86-64-v3 is AVX2 + FMA + BMI1/2 + F16C + MOVBE (Intel Haswell
# 2013 and later, AMD Zen and later), which gemm.h's AVX2 micro-kernel needs; arm64 has NEON in
# its baseline.
BASELINE = {"x86_64": "x86-64-v3", "amd64": "x86-64-v3", "aarch64": "armv8-a", "arm64": "armv8-a"}

# Compiler macro -> the CPU feature flag Linux lists in /proc/cpuinfo.
FEATURE_MACROS = {
    "__SSE3__": "pni", "__SSSE3__": "ssse3", "__SSE4_1__": "sse4_1", "__SSE4_2__": "sse4_2",
    "__POPCNT__": "popcnt", "__AVX__": "avx", "__AVX2__": "avx2", "__FMA__": "fma", "__F16C__": "f16c",
    "__BMI__": "bmi1", "__BMI2__": "bmi2", "__LZCNT__": "abm", "__MOVBE__": "movbe",
    "__AVX512F__": "avx512f", "__AVX512DQ__": "avx512dq", "__AVX512CD__": "avx512cd",
    "__AVX512BW__": "avx512bw", "__AVX512VL__": "avx512vl", "__AVX512IFMA__": "avx512ifma",
    "__AVX512VBMI__": "avx512vbmi", "__AVX512VBMI2__": "avx512_vbmi2", "__AVX512VNNI__": "avx512_vnni",
    "__AVX512BF16__": "avx512_bf16", "__AVX512BITALG__": "avx512_bitalg",
    "__AVX512VPOPCNTDQ__": "avx512_vpopcntdq", "__AVX512FP16__": "avx512_fp16", "__AVXVNNI__": "avx_vnni",
    "__GFNI__": "gfni", "__VAES__": "vaes", "__VPCLMULQDQ__": "vpclmulqdq",
    "__ARM_FEATURE_SVE": "sve", "__ARM_FEATURE_SVE2": "sve2", "__ARM_FEATURE_DOTPROD": "asimddp",
    "__ARM_FEATURE_FP16_VECTOR_ARITHMETIC": "asimdhp", "__ARM_FEATURE_MATMUL_INT8": "i8mm",
}  # fmt: skip


def find_cxx(explicit: str | None = None) -> str | None:
    for candidate in (explicit, os.environ.get("CXX"), "clang++", "g++"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def target_isa(native: bool, machine: str | None = None) -> str:
    """`native`, the baseline of this machine's architecture, or `generic` (the compiler's default)."""
    if native:
        return "native"
    return BASELINE.get((machine or platform.machine()).lower(), "generic")


def isa_flags(isa: str) -> list:
    return [] if isa == "generic" else [f"-march={isa}"]


def cxx_command(cxx: str, source: str, output: str, debug: bool, isa: str = "generic") -> list:
    """Run inside the output folder: every path is relative, so none is baked into the library."""
    opt = ["-O0", "-g", "-DTILEC_DEBUG"] if debug else ["-O3"]  # TILEC_DEBUG: asserts
    return [cxx, "-std=c++17", *opt, *isa_flags(isa), "-fPIC", "-shared", "-pthread", "-I.", "-o", output, source]


def cpu_features(cxx: str, isa: str) -> list:
    """The CPU features the compiler may use under `isa` (from its predefined macros), sorted."""
    proc = subprocess.run([cxx, "-std=c++17", *isa_flags(isa), "-dM", "-E", "-x", "c++", os.devnull],
                          capture_output=True, text=True)
    defined = set(re.findall(r"#define (\w+)", proc.stdout))
    return sorted({flag for macro, flag in FEATURE_MACROS.items() if macro in defined})
