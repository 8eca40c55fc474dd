"""Build a tile program from source text and load its generated module (for tests)."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import subprocess
from pathlib import Path
from unittest import mock

from tilec.api import load
from tilec.driver import build_module
from tilec.frontend.check import Options
from tilec.passes.normalize import normalize_module
from tilec.pipeline import compile_source
from tilec.passes.verify import verify_module

# Build folders of this test session (conftest.py points it into pytest's temporary folder).
CACHE: Path | None = None

# The optimisation level of the programs `build` compiles (the CPU library and the CUDA emulation;
# the product builds with -O3 and -O2). These tests check results, never speed, and -O1 compiles in
# about 0.6x the time with the same results: no level changes a value (no -ffast-math, and
# -ffp-contract=off: tests/test_contraction.py). TILEC_TEST_OPT=product builds them with the product's flags.
TEST_OPT = os.environ.get("TILEC_TEST_OPT", "-O1")


def compile_ir(source: str, name: str = "prog", block_dim: int = 256):
    compiled = compile_source(source, f"{name}.py", Options(block_dim=block_dim))
    assert verify_module(compiled.module) == []
    module = normalize_module(compiled.module)
    assert verify_module(module) == [], "normalize broke the IR"
    return module


def first_error(source: str, block_dim: int = 32) -> str:
    """`line:col: code: message` of the first diagnostic compiling source reports (it must fail)."""
    import pytest

    from tilec.diagnostics import CompileError

    with pytest.raises(CompileError) as info:
        compile_source(source, "prog.py", Options(block_dim=block_dim))
    d = info.value.diagnostics[0]
    return f"{d.span.line}:{d.span.col}: {d.code}: {d.message}"


def build(source: str, name: str = "prog", block_dim: int = 256, target: str = "cpu"):
    """Compile, build for the CPU (or the CUDA emulation) and import; cached by content."""
    with optimisation_for_tests():
        return _built(f"{target}\0{TEST_OPT}\0{toolchain()}", source, name, block_dim, build_flags(block_dim, target))


def build_for_device(source: str, name: str, block_dim: int, arch: str):
    """Compile and build the fatbin for a real GPU of architecture `arch` (tests/on_gpu.py); cached
    by content like `build`."""
    return _built(f"cuda {arch}", source, name, block_dim, build_flags(block_dim, "cuda"), arch)


def _built(how: str, source: str, name: str, block_dim: int, flags: dict, arch: str = ""):
    """The module built from source with flags (and nvcc's arch), in a folder of the session's cache
    named by all of them: `how` spells what else decides the product (target, compiler...)."""
    key = hashlib.sha256(f"{name}\0{block_dim}\0{how}\0{source}".encode())
    assert CACHE is not None, "harness.CACHE is set by conftest.py"
    outdir = CACHE / key.hexdigest()[:16]
    build_module(compile_ir(source, name, block_dim), source, str(outdir), flags, arch=arch, echo=lambda *a, **k: None)
    return load(outdir / name)


def build_flags(block_dim: int, target: str = "cpu", emit_only: bool = False, debug: bool = False) -> dict:
    """The build options `tilec build` passes the driver, as the tests build."""
    return {"block_dim": block_dim, "target": target, "debug": debug, "max_shared": 48 * 1024, "emit_only": emit_only}


def build_with_flags(source: str, name: str, outdir: Path, edit=lambda flags: flags, block_dim: int = 64,
                     emit_only: bool = False) -> Path:
    """The module built for the CPU with the product's compiler flags passed through `edit` (not the
    tests' lower level; for tests comparing builds); returns its folder, for `load`."""
    with cpu_flags_edited(edit):
        build_module(compile_ir(source, name, block_dim), source, str(outdir / name),
                     build_flags(block_dim, emit_only=emit_only), echo=lambda *a, **k: None)
    return outdir / name / name


@contextlib.contextmanager
def cpu_flags_edited(edit):
    """Builds inside it compile the CPU library with the product's flags passed through `edit`."""
    from tilec import driver
    from tilec.backend_cpu import compiler as cpu_compiler

    product = cpu_compiler.compile_flags

    def edited(*args, **kwargs):
        return edit(product(*args, **kwargs))

    with mock.patch.object(cpu_compiler, "compile_flags", edited), mock.patch.object(driver, "compile_flags", edited):
        yield


@contextlib.contextmanager
def optimisation_for_tests():
    """The compiler commands of builds inside it use TEST_OPT for the product's -O3 (CPU) and -O2
    (CUDA emulation); debug builds (-O0) are left as they are."""
    if TEST_OPT == "product":
        yield
        return
    from tilec import driver

    def lowered(flags: list) -> list:
        return [TEST_OPT if flag in ("-O3", "-O2") else flag for flag in flags]

    emu_command = driver.emu_command
    with cpu_flags_edited(lowered), \
            mock.patch.object(driver, "emu_command", lambda *a, **k: lowered(emu_command(*a, **k))):
        yield


@functools.cache
def toolchain() -> str:
    """The C++ compiler's path and version: a build from another compiler is never reused."""
    from tilec.backend_cpu.compiler import find_cxx

    cxx = find_cxx()
    if cxx is None:
        return "no compiler"
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    return f"{cxx}\n{version}"


class OnEmulator:
    """A kernel whose launches (tiled or SIMT) run on the CUDA emulation (for gradcheck.check_gradients)."""

    def __init__(self, kernel):
        import functools

        self.launch_tiled = functools.partial(kernel.launch_tiled, device="cuda-emu")
        self.launch = functools.partial(kernel.launch, device="cuda-emu")


class OnEmulatorModule:
    """A built module whose kernels all launch on the CUDA emulation."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        return OnEmulator(getattr(self.module, name))


# Emulation variants for GPU-model tests: (block_dim, thread order within each barrier phase).
EMULATIONS = [(32, ""), (64, ""), (64, "reverse")]


def emulation_id(variant) -> str:
    block_dim, schedule = variant
    return f"block{block_dim}" + (f"-{schedule}" if schedule else "")


def build_emulated(source: str, name: str, variant, monkeypatch):
    """Builds for the CUDA emulation; a "reverse" variant runs each phase between barriers from the
    last thread down, which must not change any result."""
    block_dim, schedule = variant
    if schedule:
        monkeypatch.setenv("TILEC_EMU_SCHEDULE", schedule)
    return build(source, name, block_dim=block_dim, target="cuda-emu")


def import_under_warp(source: str, name: str, tmp_path, monkeypatch):
    """(warp, the program imported as a Python module under Warp 1.19 on the CPU with CPU blocks),
    for tests comparing with Warp itself; skipped where Warp is not installed."""
    import importlib
    import os

    import pytest

    wp = pytest.importorskip("warp")
    monkeypatch.setattr(wp.config, "enable_cpu_blocks", True)
    wp.init()  # first: monkeypatch then restores the real cache folder, not None
    monkeypatch.setattr(wp.config, "kernel_cache_dir", os.environ.get("TILEC_WARP_CACHE", str(tmp_path / "wpcache")))
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return wp, importlib.import_module(name)
