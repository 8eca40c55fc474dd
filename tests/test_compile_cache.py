"""The precompiled runtime header (g++'s .gch, clang++'s .pch beside a cached copy of the headers)
and the shared runtime object (the launch machinery, linked into each CPU library): built once per
compiler, flags and header texts into tilec's cache folder, reused by later builds, never left in
an output folder nor named in a library; a precompiled header that cannot be used leaves the build
to compile the headers; TILEC_PCH=0 turns both off."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import INSTALLED_CXX, needs_cxx
from harness import build_with_flags
from tilec import driver
from tilec.api import load
from tilec.backend_cpu.compiler import PCH_KEEP, Precompiled, find_cxx, is_gcc, pinned
from tilec.cachedir import STALE_SECONDS, keep_recent

pytestmark = [pytest.mark.build, needs_cxx]

PROGRAM = '''import warp as wp


@wp.kernel
def {name}(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1, 8), offset=(i, 0))
    wp.tile_store(B, t + 1.0, offset=(i, 0))
'''


def build(tmp_path, name, **env):
    src = tmp_path / f"{name}.py"
    src.write_text(PROGRAM.format(name=name))
    environ = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), **env)
    proc = subprocess.run([sys.executable, "-m", "tilec", "build", str(src), "-o", str(tmp_path / "out"),
                           "--target", "cpu", "-v"], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run(tmp_path, name):
    script = (f"import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import {name} as m; "
              "A = np.ones((4, 8), np.float32); B = np.zeros_like(A); "
              f"m.{name}.launch_tiled(dim=4, inputs=[A, B]); print(float(B.sum()))")
    return subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], capture_output=True, text=True).stdout


@pytest.mark.parametrize("compiler", INSTALLED_CXX)
def test_precompiled_header_is_cached_reused_and_not_left_behind(tmp_path, compiler):
    first = build(tmp_path, "first", CXX=compiler)
    if is_gcc(find_cxx(compiler)):
        cached = list((tmp_path / "cache/pch").glob("*.gch"))
        include = "-include tilec-rt/tilec.h"
    else:  # clang++: the .pch beside a copy of the headers, force-included by that copy's path
        cached = list((tmp_path / "cache/pch-clang").glob("*/tilec-rt/tilec.h.pch"))
        include = f"-include {cached[0].with_suffix('')}" if cached else "(no .pch)"
    assert len(cached) == 1 and include in first
    made = cached[0].stat().st_ino
    assert not [p.name for p in (tmp_path / "out").rglob("*") if p.suffix in (".gch", ".pch")]
    assert run(tmp_path, "first").strip() == "64.0"

    second = build(tmp_path, "second", CXX=compiler)
    assert include in second and cached[0].stat().st_ino == made  # reused, not made again
    assert run(tmp_path, "second").strip() == "64.0"
    for library in (tmp_path / "out").rglob("*.so"):  # the cache's paths reach no product
        assert str(tmp_path / "cache").encode() not in library.read_bytes()


def test_a_precompiled_header_that_cannot_be_used_leaves_the_headers_to_compile(tmp_path, monkeypatch):
    """clang++'s copy pruned by another build between the lookup and the compile (a clang++ .pch
    is never ignored the way g++ ignores a .gch that does not fit): the build compiles the headers."""
    gone = Precompiled(str(tmp_path / "pruned" / "tilec-rt" / "tilec.h"))
    monkeypatch.setattr(driver, "precompiled_runtime", lambda *args, **kwargs: gone)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    folder = build_with_flags(PROGRAM.format(name="kept"), "kept", tmp_path / "out")
    A = np.ones((4, 8), np.float32)
    B = np.zeros_like(A)
    load(folder).kept.launch_tiled(dim=4, inputs=[A, B])
    assert float(B.sum()) == 64.0


def test_the_shared_runtime_object_is_built_once_and_linked_into_each_library(tmp_path):
    first = build(tmp_path, "first")
    objects = list((tmp_path / "cache/runtime").glob("*.o"))
    pinned = f".pinned-{objects[0].name}"  # the build links a private hard link of the cached object
    assert len(objects) == 1 and "-DTILEC_SHARED_RUNTIME" in first and pinned in first
    second = build(tmp_path, "second")
    assert list((tmp_path / "cache/runtime").glob("*.o")) == objects and pinned in second
    assert not [p for p in (tmp_path / "out").rglob("*") if p.suffix == ".o"]
    # both libraries in one process, each launching through its own copy of the launch machinery
    script = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import first, second; "
              "A = np.ones((4, 8), np.float32); B = np.zeros_like(A); C = np.zeros_like(A); "
              "first.first.launch_tiled(dim=4, inputs=[A, B]); second.second.launch_tiled(dim=4, inputs=[B, C]); "
              "print(float(C.sum()))")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.stdout.strip() == "96.0", proc.stderr


def test_tilec_pch_0_compiles_the_headers_as_usual(tmp_path):
    out = build(tmp_path, "plain", TILEC_PCH="0")
    assert "-include" not in out and "TILEC_SHARED_RUNTIME" not in out
    assert not (tmp_path / "cache").exists()
    assert run(tmp_path, "plain").strip() == "64.0"


def test_a_cached_object_another_build_prunes_stays_usable_through_its_pinned_name(tmp_path):
    cached = tmp_path / "cache" / "abc.o"
    cached.parent.mkdir()
    cached.write_bytes(b"object bytes")
    private = pinned(cached, tmp_path)
    cached.unlink()  # another build's prune, between this build's lookup and its link
    assert private is not None and private.read_bytes() == b"object bytes"
    assert pinned(cached, tmp_path / "elsewhere") is None  # gone before the pin: the caller compiles inline


def test_prune_keeps_the_most_recently_used_and_a_hit_counts_as_a_use(tmp_path):
    first = build(tmp_path, "first")
    (used,) = (tmp_path / "cache/runtime").glob("*.o")
    os.utime(used, (0, 0))  # made long ago ...
    build(tmp_path, "second")  # ... and used again now
    assert used.stat().st_mtime > 0 and ".pinned-" in first
    folder = tmp_path / "cache/runtime"
    for k in range(PCH_KEEP):  # newer entries made since, never used again
        (folder / f"other{k}.o").write_bytes(b"")
        os.utime(folder / f"other{k}.o", (1000 + k, 1000 + k))
    keep_recent(folder, "*.o", PCH_KEEP)
    left = sorted(p.name for p in folder.glob("*.o"))
    assert used.name in left and "other0.o" not in left and len(left) == PCH_KEEP


def test_cpu_features_are_remembered_per_compiler_and_isa_but_not_for_native(tmp_path, monkeypatch):
    from tilec.backend_cpu import compiler

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    cxx, isa = find_cxx(), compiler.target_isa(False)
    first = compiler.cpu_features(cxx, isa)
    (remembered,) = (tmp_path / "cache/features").glob("*.json")

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"ran {args[0]}")

    monkeypatch.setattr(compiler.subprocess, "run", no_compiler)
    assert compiler.cpu_features(cxx, isa) == first  # answered from the cache
    remembered.write_text('{"not": "a list"}')  # damaged: asked again
    with pytest.raises(AssertionError, match="-dM"):
        compiler.cpu_features(cxx, isa)
    with pytest.raises(AssertionError, match="-dM"):
        compiler.cpu_features(cxx, "native")  # this machine's features: never from a shared cache


def test_a_killed_builds_temporary_folder_in_the_cache_goes_once_stale(tmp_path):
    """A build killed while compiling into the cache leaves its `.build-*` folder (a SIGKILL skips
    the cleanup; tests/test_build.py kills one): the next build into that cache folder removes it
    once it is older than any live build's, and leaves a fresh one (a build running now) alone."""
    build(tmp_path, "first")
    runtime = tmp_path / "cache" / "runtime"
    stale, live = runtime / ".build-killed", runtime / ".build-running"
    for folder in (stale, live):
        (folder / "tilec-rt").mkdir(parents=True)
        (folder / "tilec-rt" / "core.h").write_text("// a header copy")
    old = time.time() - STALE_SECONDS - 60
    os.utime(stale, (old, old))
    keep = runtime / "notes.txt"  # not a build's folder: never touched
    keep.write_text("mine")
    os.utime(keep, (old, old))
    build(tmp_path, "second")  # a cache hit: nothing built, nothing cleaned
    assert stale.exists()
    cached = sorted(runtime.glob("*.o"))
    for o in cached:
        o.unlink()  # the next build compiles the runtime object again, into this folder
    build(tmp_path, "third")
    assert not stale.exists() and live.exists() and keep.read_text() == "mine"
