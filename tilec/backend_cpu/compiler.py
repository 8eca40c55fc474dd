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

import dataclasses
import functools
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..cachedir import cache_dir, keep_recent, remove_stale
from ..naming import RUNTIME_DIR
from ..product_cache import product_key
from .clang_pch import precompiled_copy

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


RUNTIME_HEADER = f"{RUNTIME_DIR}/tilec.h"  # what a generated source includes, in the folder compiled in


def isa_flags(isa: str) -> list[str]:
    return [] if isa == "generic" else [f"-march={isa}"]


def cxx_command(cxx: str, source: str, output: str, debug: bool, isa: str = "generic", pch: str | None = None,
                runtime_object: Path | None = None) -> list[str]:
    """Run inside the output folder: every path is relative, so none is baked into the library.
    pch: the runtime header to include first so that the compiler uses its precompiled form
    (Precompiled.include). runtime_object: the cached runtime object (shared_runtime) to link, its
    functions only declared."""
    forced = ["-include", pch] if pch else []
    shared = [SHARED_RUNTIME_FLAG] if runtime_object is not None else []
    linked = [str(runtime_object)] if runtime_object is not None else []
    return [cxx, *compile_flags(debug, isa, cxx), *shared, "-shared", *forced, "-I.", "-o", output, source, *linked]


def part_command(cxx: str, source: str, obj: str, isa: str, gemm_extern: bool = False,
                 include: str = RUNTIME_HEADER) -> list[str]:
    """One translation unit of a module (units.py) to an object, with the precompiled header (its
    Precompiled.include) and the shared runtime object's declarations, as cxx_command(pch=...,
    runtime_object=...); gemm_extern: gemm.h's entry points only declared (gemm_instances.py)."""
    extern = [GEMM_EXTERN_FLAG] if gemm_extern else []
    return [cxx, *compile_flags(False, isa, cxx), SHARED_RUNTIME_FLAG, *extern, "-c", "-include", include,
            "-I.", "-o", obj, source]


def link_command(cxx: str, objects: list[str], output: str, isa: str, runtime_object: Path) -> list[str]:
    return [cxx, *compile_flags(False, isa, cxx), "-shared", "-o", output, *objects, str(runtime_object)]


MAX_JOBS = 4  # translation units of one module compiled at once


def compile_jobs() -> int:
    """How many translation units a module's library may be compiled as, at once: $TILEC_JOBS when
    set (1: the one file, as before), else the cores this process may use that are idle (their
    count less the load average, make -l's rule; at most MAX_JOBS). Parallel parts cost more CPU in
    all (units.py), so a busy machine, a test run on every core say, compiles one."""
    wanted = os.environ.get("TILEC_JOBS", "").strip()
    if wanted:
        try:
            return max(1, int(wanted))
        except ValueError:
            return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        return 1
    return max(1, min(MAX_JOBS, int(cores - busy + 0.5)))


def cpu_features(cxx: str, isa: str) -> list[str]:
    """The CPU features the compiler may use under `isa` (from its predefined macros), sorted.
    Remembered in tilec's cache folder (_features_file): running the preprocessor was ~20 ms of
    every build."""
    import json

    cached = _features_file(cxx, isa)
    try:
        known = json.loads(cached.read_text(encoding="utf-8")) if cached is not None else None
        if isinstance(known, list) and all(isinstance(f, str) for f in known):
            return known
    except (OSError, ValueError):
        pass
    proc = subprocess.run([cxx, "-std=c++17", *isa_flags(isa), "-dM", "-E", "-x", "c++", os.devnull],
                          capture_output=True, text=True)
    defined = set(re.findall(r"#define (\w+)", proc.stdout))
    features = sorted({flag for macro, flag in FEATURE_MACROS.items() if macro in defined})
    if proc.returncode == 0 and cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f".{cached.name}.{os.getpid()}")
            partial.write_text(json.dumps(features), encoding="utf-8")
            os.replace(partial, cached)  # atomic: a concurrent build reads no half-written answer
        except OSError:
            pass
    return features


def _features_file(cxx: str, isa: str) -> Path | None:
    """Where cpu_features keeps its answer for this compiler (its real path, size, mtime and version
    line) and ISA; None for `native`, whose answer is the machine's (a cache folder may be shared),
    and under TILEC_PCH=0 (no compiler cache at all)."""
    import json

    if isa == "native" or os.environ.get("TILEC_PCH") == "0":
        return None
    try:
        real = os.path.realpath(cxx)
        st = os.stat(real)
    except OSError:
        return None
    what = [real, st.st_size, st.st_mtime_ns, compiler_identity(cxx), isa, sorted(FEATURE_MACROS.items())]
    return cache_dir() / "features" / f"{hashlib.sha256(json.dumps(what).encode()).hexdigest()[:24]}.json"


# ---------------------------------------------------------------- precompiled runtime header
# Parsing the runtime headers is about half of a module's compile time. The build compiles
# tilec-rt/tilec.h once per (compiler, flags, header texts) into the cache and force-includes it.
# g++: a cached .gch, linked next to the output folder's tilec-rt/tilec.h for the compile (a .gch
# that does not match is ignored by g++, never misused). clang++ (backend_cpu/clang_pch.py): a
# .pch beside a cached copy of the headers, which the compile force-includes by that copy's path.
# Other compilers, and builds with TILEC_PCH=0 in the environment, compile the headers as usual.

PCH_KEEP = 8  # cached precompiled headers kept (the newest; each is tens of MB)


@dataclasses.dataclass(frozen=True)
class Precompiled:
    """A precompiled tilec-rt/tilec.h: `include` is what a compile force-includes to use it; `gch`
    (g++) the file to link as tilec-rt/tilec.h.gch in the folder compiled in, None where `include`
    is the cached copy of the header whose .pch sits beside it (clang++)."""

    include: str
    gch: Path | None = None


@functools.lru_cache(maxsize=None)
def compiler_identity(cxx: str) -> str:
    """`cxx --version`'s first line ('' when it cannot run)."""
    try:
        proc = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.splitlines()[0] if proc.stdout else ""


def is_gcc(cxx: str) -> bool:
    ident = compiler_identity(cxx)
    return "clang" not in ident.lower() and ("g++" in ident or "GCC" in ident)


def is_clang(cxx: str) -> bool:
    return "clang" in compiler_identity(cxx).lower()


def compile_flags(debug: bool, isa: str, cxx: str) -> list[str]:
    """The flags a module's translation unit and its precompiled header share.

    -fno-trapping-math (clang's default already): generated code never reads floating-point
    exception flags, and without it g++ will not vectorise a loop with a conditional around
    arithmetic, such as every tile loop calling the branch-free exp/tanh of scalar.h (measured:
    softmax 2.6x, the fused map 4.5x faster). Results are unchanged: no value-changing
    optimisation (no -ffast-math).

    -fno-math-errno: nothing in a tilec program reads errno, and a sqrt that may set it is a
    library call clang++ keeps inside the loop instead of one vector instruction (layernorm
    forward, one thread, clang++ 14: 1.57 -> 0.66 ms; g++ hoisted it and keeps its code). The
    square root is IEEE's either way: results are unchanged.

    -ffp-contract=off: `a * b + c` rounds twice, as ISO C++ evaluates it. g++ otherwise fuses
    multiplies and adds into FMAs, even across statements, but only from -O2 up, and clang only
    within an expression: the same module would round differently at -O1 and -O3, and with g++
    and clang++. FMAs stay where the runtime asks for them explicitly (scalar.h's polynomials,
    gemm.h's micro-kernel).

    -fno-tree-loop-distribute-patterns (g++ only; clang++ has no such flag): g++ turns a loop that
    copies or zeroes a tile row (tile_load, a tile assignment, a fill) into memcpy / memset, which
    it expands inline as `rep movsq` / `rep stosq`: slower on 1-4 KiB tiles than the loop it
    replaced, vectorised (one thread, thread CPU: layernorm forward 0.53 -> 0.50 ms and adjoint
    1.67 -> 1.63, softmax adjoint 1.29 -> 1.26, GEMM 512 adjoint 5.38 -> 5.28)."""
    opt = ["-O0", "-g", "-DTILEC_DEBUG"] if debug else ["-O3"]  # TILEC_DEBUG: asserts
    own = ["-fno-tree-loop-distribute-patterns"] if is_gcc(cxx) else clang_alias_checks(cxx) if is_clang(cxx) else []
    return ["-std=c++17", *opt, *isa_flags(isa), "-fno-trapping-math", "-fno-math-errno", "-ffp-contract=off", *own,
            "-fPIC", "-pthread"]


# How many run-time checks that two pointers do not overlap clang++'s vectoriser may add to a loop
# (LLVM's default 8; g++'s --param vect-max-version-for-alias-checks is 10). A fused element loop
# writes rows of arrays and of the per-thread sums next to its tiles (codegen/cxx.py), which
# clang++ cannot prove apart: with 8 checks layernorm's adjoint loop stayed scalar (one thread,
# clang++ 14: 3.2 ms, g++ 1.4; 1.39 with 32). The checks keep a loop over overlapping arrays exact.
ALIAS_CHECKS = ["-mllvm", "-runtime-memory-check-threshold=32"]


@functools.lru_cache(maxsize=None)
def clang_alias_checks(cxx: str) -> list[str]:
    """ALIAS_CHECKS where this clang++ takes them (an LLVM option: asked once), else nothing."""
    try:
        proc = subprocess.run([cxx, *ALIAS_CHECKS, "-x", "c++", "-fsyntax-only", "-"], input="", capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return list(ALIAS_CHECKS) if proc.returncode == 0 else []


def precompiled_runtime(cxx: str, flags: list[str], headers: dict[str, str], debug: bool = False) -> Precompiled | None:
    """The cached precompiled tilec-rt/tilec.h for this compiler, these flags and these header
    texts ({'tilec-rt/x.h': text}), built on first use; None when it cannot be had (and for a
    clang++ debug build, whose debug info would name the cache)."""
    if os.environ.get("TILEC_PCH") == "0":  # TILEC_PCH=0: no precompiled header
        return None
    if is_gcc(cxx):
        gch = cached_build(cxx, flags, headers, "pch", ".gch",
                           lambda tmp: [cxx, *flags, "-x", "c++-header", RUNTIME_HEADER, "-o", "out.gch"])
        return Precompiled(RUNTIME_HEADER, gch) if gch is not None else None
    if is_clang(cxx) and not debug:
        header = precompiled_copy(cxx, flags, headers, cache_key(cxx, flags, headers), PCH_KEEP)
        return Precompiled(str(header)) if header is not None else None
    return None


# ---------------------------------------------------------------- shared runtime object
# The launch machinery (lanes.h's launch_blocks: worker threads, fibers) is the same in every
# module and was most of a small module's compile time (a one-line kernel: g++ 0.87 s, 0.29 s
# without it). It is compiled once per (compiler, flags, header texts) into a cached object that
# each CPU library links; the module's translation unit only declares it (SHARED_RUNTIME_FLAG).
# Debug builds (whose debug info would name the cache) and TILEC_PCH=0 compile it inline as before;
# the output folder's CMakeLists.txt always does.

SHARED_RUNTIME_FLAG = "-DTILEC_SHARED_RUNTIME"
GEMM_EXTERN_FLAG = "-DTILEC_GEMM_EXTERN"  # gemm.h's entry points only declared (gemm_instances.py)
RUNTIME_SOURCE = f'#define TILEC_RUNTIME_IMPL 1\n#include "{RUNTIME_HEADER}"\n'


def shared_runtime(cxx: str, flags: list[str], headers: dict[str, str], debug: bool) -> Path | None:
    """The cached runtime object for this compiler, these flags and header texts; None when it
    cannot be had (then the module compiles the runtime inline)."""
    if debug or os.environ.get("TILEC_PCH") == "0":  # TILEC_PCH=0: no compiler cache at all
        return None

    def command(tmp: Path) -> list[str]:
        (tmp / "runtime.cpp").write_text(RUNTIME_SOURCE)
        return [cxx, *flags, "-c", "-I.", "runtime.cpp", "-o", "out.o"]

    return cached_build(cxx, [*flags, RUNTIME_SOURCE], headers, "runtime", ".o", command)


def cache_key(cxx: str, flags: list[str], headers: dict[str, str]) -> str:
    """The name of what this compiler makes from these flags and header texts in the cache."""
    return product_key([cxx], [compiler_identity(cxx)], flags, headers)[:24]


def cached_build(cxx: str, flags: list[str], headers: dict[str, str], kind: str, suffix: str,
                 command: Callable[[Path], list[str]], keep: int = PCH_KEEP) -> Path | None:
    """cache_dir()/kind/<key>suffix, made on first use by running command(tmp) in a temporary
    folder holding the headers (relative paths only: none reaches the product) that writes
    out<suffix> there; None when it cannot be had. The `keep` most recently used files of the
    kind stay."""
    folder = cache_dir() / kind
    target = folder / f"{cache_key(cxx, flags, headers)}{suffix}"
    try:
        os.utime(target)  # a hit counts as new: keep_recent keeps the files builds use, not the newest made
        return target
    except OSError:
        pass  # not made yet, or pruned by another build since
    try:
        folder.mkdir(parents=True, exist_ok=True)
        remove_stale(folder, ".build-")
        with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
            for name, text in headers.items():
                path = Path(tmp) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            out = Path(tmp) / f"out{suffix}"
            proc = subprocess.run(command(Path(tmp)), cwd=tmp, capture_output=True, text=True)
            if proc.returncode != 0 or not out.exists():
                return None
            os.replace(out, target)
        keep_recent(folder, f"*{suffix}", keep)
    except OSError:
        return None
    return target if target.exists() else None


def pinned(cached: Path, folder: Path) -> Path | None:
    """A private name in folder for the cached file (a hard link, else a copy), so that another
    build's prune (keep_recent) cannot delete it between this build's lookup and its use; None when
    it is gone already. The caller removes it after the use."""
    private = folder / f".pinned-{cached.name}"
    try:
        os.link(cached, private)
    except OSError:
        try:
            shutil.copyfile(cached, private)
        except OSError:
            return None
    return private
