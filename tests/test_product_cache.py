"""Compiled products kept by the text they were compiled from (tilec/product_cache.py): a build whose
generated C++ (or CUDA) is unchanged copies the library (or fatbin) compiled before instead of
running the compiler; any change to that text, the flags or the compiler compiles again; debug
builds and TILEC_PCH=0 never use the cache; the cache keeps the most recently used entries."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest

from conftest import INSTALLED_CXX, needs_cxx
from tilec import product_cache

pytestmark = [pytest.mark.build, needs_cxx]

PROGRAM = '''import warp as wp


@wp.kernel
def scale(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1, 8), offset=(i, 0))
    wp.tile_store(B, t * {factor} + 1.0, offset=(i, 0))
'''

RUN = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import prog; "
       "A = np.arange(32, dtype=np.float32).reshape(4, 8); B = np.zeros_like(A); "
       "prog.scale.launch_tiled(dim=4, inputs=[A, B]); print(B.tolist())")


def logging_compiler(tmp_path, real: str):
    """`real`, run through a script that appends each command line to compiler.log."""
    log = tmp_path / "compiler.log"
    script = tmp_path / "logged-cxx"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{shutil.which(real)}" "$@"\n')
    script.chmod(0o755)
    return script, log


def build(tmp_path, out, *extra, factor="2.0", comment="", cxx=None, umask=0o022, **env):
    src = tmp_path / "prog.py"
    src.write_text(PROGRAM.format(factor=factor) + comment)
    environ = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), **env)
    command = [sys.executable, "-m", "tilec", "build", str(src), "-o", str(tmp_path / out), *extra]
    proc = subprocess.run(command + (["--cxx", str(cxx)] if cxx else []), capture_output=True, text=True,
                          env=environ, preexec_fn=lambda: os.umask(umask))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def compiles(log) -> list[str]:
    """The logged command lines that write a file (not `--version`), and the log emptied."""
    lines = log.read_text().splitlines() if log.exists() else []
    log.write_text("")
    return [line for line in lines if " -o " in f" {line} "]


def run(tmp_path, out):
    proc = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return np.array(json.loads(proc.stdout))


@pytest.mark.parametrize("compiler", INSTALLED_CXX)
def test_a_library_from_unchanged_cpp_is_copied_and_a_change_compiles_again(tmp_path, compiler):
    cxx, log = logging_compiler(tmp_path, compiler)
    A = np.arange(32, dtype=np.float32).reshape(4, 8)
    build(tmp_path, "first", "--target", "cpu", cxx=cxx)
    assert compiles(log)
    np.testing.assert_array_equal(run(tmp_path, "first"), A * 2 + 1)

    # a comment added: the same C++, in a new output folder and over the first
    for out in ("second", "first"):
        said = build(tmp_path, out, "--target", "cpu", "-v", comment="# a comment\n", cxx=cxx)
        assert compiles(log) == [] and "libprog_cpu.so: copied from the cache" in said, said
        np.testing.assert_array_equal(run(tmp_path, out), A * 2 + 1)
    first, second = (tmp_path / out / "prog/libprog_cpu.so" for out in ("first", "second"))
    assert first.read_bytes() == second.read_bytes()
    assert json.loads((tmp_path / "second/prog/manifest.json").read_text())["cpu_build"]["cpu_features"]

    # the kernel changed: compiled, and computing the new kernel
    build(tmp_path, "second", "--target", "cpu", factor="3.0", cxx=cxx)
    assert compiles(log)
    np.testing.assert_array_equal(run(tmp_path, "second"), A * 3 + 1)


@pytest.mark.parametrize("setting", ["--debug", "TILEC_PCH=0"])
def test_debug_builds_and_no_compiler_cache_always_compile(tmp_path, setting):
    cxx, log = logging_compiler(tmp_path, INSTALLED_CXX[0])
    extra, env = (["--debug"], {}) if setting == "--debug" else ([], {"TILEC_PCH": "0"})
    for out in ("first", "second"):
        build(tmp_path, out, "--target", "cpu", *extra, cxx=cxx, **env)
        assert compiles(log), out
        np.testing.assert_array_equal(run(tmp_path, out), np.arange(32).reshape(4, 8) * 2 + 1)
    assert not (tmp_path / "cache" / product_cache.KIND).exists()


@pytest.mark.cuda
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_fatbin_from_unchanged_cuda_is_copied_with_its_resources(tmp_path):
    build(tmp_path, "first", "--target", "cuda", "--arch", "sm_90")
    said = build(tmp_path, "second", "--target", "cuda", "--arch", "sm_90", "-v", comment="# a comment\n")
    assert "prog.fatbin: copied from the cache" in said and "-gencode" not in said, said
    folders = [tmp_path / out / "prog" for out in ("first", "second")]
    assert (folders[0] / "prog.fatbin").read_bytes() == (folders[1] / "prog.fatbin").read_bytes()
    resources = [json.loads((f / "manifest.json").read_text())["kernels"]["scale"]["cuda_resources"] for f in folders]
    assert resources[0] == resources[1] and resources[0]
    assert not list(folders[1].glob("*.log"))  # ptxas's report stays in the cache
    changed = build(tmp_path, "second", "--target", "cuda", "--arch", "sm_90", "-v", factor="3.0")
    assert "-gencode" in changed and "copied from the cache" not in changed


def test_the_most_recently_used_entries_stay(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(product_cache, "KEEP", 3)
    product = tmp_path / "lib.so"
    keys = [product_cache.product_key(["g++"], ["g++ 1"], ["-O3"], {"m.cpp": f"int x = {i};"}) for i in range(4)]
    assert len(set(keys)) == 4
    for i, key in enumerate(keys[:3]):
        product.write_text(f"library {i}")
        product_cache.store(key, [product])
        os.utime(tmp_path / "cache" / product_cache.KIND / key, ns=(i, i))  # stored in this order
    got = tmp_path / "got"
    got.mkdir()
    assert product_cache.fetch(keys[0], got, ["lib.so"])  # the oldest, used now
    assert (got / "lib.so").read_text() == "library 0"
    product.write_text("library 3")
    product_cache.store(keys[3], [product])
    kept = sorted(p.name for p in (tmp_path / "cache" / product_cache.KIND).iterdir())
    assert kept == sorted([keys[0], keys[2], keys[3]])  # keys[1]: least recently used
    assert not product_cache.fetch(keys[1], got, ["lib.so"])
    assert not product_cache.fetch(keys[0], got, ["lib.so", "missing.log"]) and not (got / "lib.so").exists()


def test_the_key_covers_compiler_version_options_and_every_text():
    base = (["g++"], ["g++ 12"], ["-O3"], {"m.cpp": "a", "tilec-rt/x.h": "b"})
    key = product_cache.product_key(*base)
    assert key == product_cache.product_key(*base)
    assert key != product_cache.product_key(["clang++"], *base[1:])
    assert key != product_cache.product_key(base[0], ["g++ 13"], *base[2:])
    assert key != product_cache.product_key(*base[:2], ["-O1"], base[3])
    assert key != product_cache.product_key(*base[:3], {"m.cpp": "a", "tilec-rt/x.h": "c"})
    assert key != product_cache.product_key(*base[:3], {"m.cpp": "a", "tilec-rt/y.h": "b"})


def test_a_copied_library_has_the_permissions_a_compiled_one_would(tmp_path):
    """The umask of the build that copies it, not of the one that compiled it: executable where the
    compiler makes it so."""
    build(tmp_path, "first", "--target", "cpu", umask=0o022)
    assert stat.S_IMODE((tmp_path / "first/prog/libprog_cpu.so").stat().st_mode) == 0o755
    said = build(tmp_path, "second", "--target", "cpu", "-v", comment="# a comment\n", umask=0o027)
    assert "copied from the cache" in said
    assert stat.S_IMODE((tmp_path / "second/prog/libprog_cpu.so").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "second/prog/manifest.json").stat().st_mode) == 0o640


def test_a_damaged_entry_is_refused_removed_and_compiled_anew(tmp_path):
    cxx, log = logging_compiler(tmp_path, INSTALLED_CXX[0])
    build(tmp_path, "first", "--target", "cpu", cxx=cxx)
    (entry,) = (tmp_path / "cache" / product_cache.KIND).iterdir()
    stored = entry / "libprog_cpu.so"
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 1  # one bit, as a crash mid-write or a bad disk might leave it
    stored.write_bytes(bytes(data))
    compiles(log)
    build(tmp_path, "second", "--target", "cpu", comment="# a comment\n", cxx=cxx)
    assert compiles(log)  # refused: compiled again
    np.testing.assert_array_equal(run(tmp_path, "second"), np.arange(32).reshape(4, 8) * 2 + 1)
    assert (entry / "libprog_cpu.so").read_bytes() == (tmp_path / "second/prog/libprog_cpu.so").read_bytes()


def test_a_change_to_any_command_that_makes_the_library_is_another_key(monkeypatch):
    """The compile, unit and link commands (their flags), so that a tilec that links differently
    never copies what an older one linked."""
    from tilec import driver

    before = driver._commands("/usr/bin/g++", "libm_cpu.so", "x86-64-v3")
    link = driver.link_command
    monkeypatch.setattr(driver, "link_command", lambda *a, **k: [*link(*a, **k), "-Wl,--gc-sections"])
    assert driver._commands("/usr/bin/g++", "libm_cpu.so", "x86-64-v3") != before
