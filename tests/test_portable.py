"""Portable builds: the CPU library targets a documented baseline unless `--native`, the manifest
records its ISA and CPU features, the loader refuses a library this CPU cannot run (a clear error,
not SIGILL), and the CUDA fatbin carries PTX for the newest requested architecture."""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_cxx
from tilec.backend_cpu.compiler import cpu_features, find_cxx, target_isa
from tilec.backend_cuda.compiler import nvcc_command, nvcc_threads, ptx_arch

PROGRAM = '''import warp as wp


@wp.kernel
def scale(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1, 8), offset=(i, 0))
    wp.tile_store(B, t * 2.0, offset=(i, 0))
'''


def tilec_build(src, out, *extra, cached=True):
    """cached=False: no compiler cache (TILEC_PCH=0), so that the products are compiled here and -v
    prints their commands, never copied from what an earlier run compiled (product_cache.py)."""
    env = None if cached else dict(os.environ, TILEC_PCH="0")
    return subprocess.run([sys.executable, "-m", "tilec", "build", str(src), "-o", str(out), *extra],
                          capture_output=True, text=True, env=env)


def load_and_run(folder: Path) -> subprocess.CompletedProcess:
    """Imports the generated package in a fresh interpreter and launches it once."""
    script = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import scaled; "
              "A = np.ones((4, 8), np.float32); B = np.zeros_like(A); "
              "scaled.scale.launch_tiled(dim=4, inputs=[A, B]); assert (B == 2).all(); print('ran')")
    return subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True)


def test_baseline_isa_per_machine():
    assert target_isa(True) == "native"
    assert target_isa(False, "x86_64") == "x86-64-v3"
    assert target_isa(False, "aarch64") == "armv8-a"
    assert target_isa(False, "riscv64") == "generic"


@pytest.mark.build
@needs_cxx
def test_cpu_library_records_its_isa_and_the_loader_refuses_missing_features(tmp_path):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM)
    built = tilec_build(src, tmp_path / "out", "--target", "cpu", "-v", cached=False)
    assert built.returncode == 0, built.stderr
    isa = target_isa(False)
    assert (f"-march={isa}" in built.stdout) == (isa != "generic")
    assert "-march=native" not in built.stdout
    manifest_path = tmp_path / "out/scaled/manifest.json"
    manifest = json.loads(manifest_path.read_text())
    build = manifest["cpu_build"]
    assert build["isa"] == isa and build["machine"] == platform.machine().lower()
    if isa == "x86-64-v3":
        assert {"avx2", "fma", "bmi2"} <= set(build["cpu_features"]) and "avx512f" not in build["cpu_features"]
    assert load_and_run(tmp_path / "out").stdout.strip() == "ran"

    # The same folder claiming a feature no CPU has: a RuntimeError naming it, before the library loads.
    build["cpu_features"] = sorted(build["cpu_features"] + ["avx9000"])
    manifest_path.write_text(json.dumps(manifest))
    refused = load_and_run(tmp_path / "out")
    assert refused.returncode != 0 and refused.returncode > 0  # an exception, not a signal
    assert "RuntimeError" in refused.stderr and "CPU features this CPU lacks: avx9000" in refused.stderr
    assert "without --native" in refused.stderr

    build["cpu_features"].remove("avx9000")
    build["machine"] = "sparc64"
    manifest_path.write_text(json.dumps(manifest))
    refused = load_and_run(tmp_path / "out")
    assert "built for sparc64 CPUs" in refused.stderr


@pytest.mark.build
@needs_cxx
def test_native_opts_into_march_native_and_is_recorded(tmp_path):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM)
    built = tilec_build(src, tmp_path / "out", "--target", "cpu", "--native", "-v")
    assert built.returncode == 0, built.stderr
    assert "-march=native" in built.stdout
    manifest = json.loads((tmp_path / "out/scaled/manifest.json").read_text())
    assert manifest["flags"]["native"] is True and manifest["cpu_build"]["isa"] == "native"
    assert manifest["cpu_build"]["cpu_features"] == cpu_features(find_cxx(), "native")
    assert load_and_run(tmp_path / "out").stdout.strip() == "ran"
    # switching back to the portable baseline rebuilds
    again = tilec_build(src, tmp_path / "out", "--target", "cpu")
    assert "up to date" not in again.stdout
    assert json.loads((tmp_path / "out/scaled/manifest.json").read_text())["cpu_build"]["isa"] == target_isa(False)


def test_nvcc_compiles_architectures_at_once_on_idle_cores_where_it_can():
    assert nvcc_threads("release 13.0, V13.0.88", 2) == ["--threads", "2"]
    assert nvcc_threads("release 11.2, V11.2.67", 4) == ["--threads", "4"]
    assert nvcc_threads("release 11.1, V11.1.105", 4) == []  # before the option
    assert nvcc_threads("unknown", 4) == [] and nvcc_threads("release 12.4, V12.4.131", 1) == []


def test_nvcc_command_has_sass_per_arch_and_ptx_for_the_newest():
    cmd = nvcc_command("nvcc", "m.cu", "m.fatbin", ["sm_90", "sm_80"], False)
    gencode = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-gencode"]
    assert gencode == ["arch=compute_90,code=sm_90", "arch=compute_80,code=sm_80", "arch=compute_90,code=compute_90"]
    assert ptx_arch(["sm_80", "sm_100", "sm_90"]) == "compute_100"
    assert ptx_arch(["sm_90a", "sm_80"]) == "compute_90a"


@pytest.mark.cuda
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_fatbin_builds_with_ptx_and_the_manifest_records_it(tmp_path):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM)
    built = tilec_build(src, tmp_path / "out", "--target", "cuda", "--arch", "sm_80,sm_90", "-v", cached=False)
    assert built.returncode == 0, built.stderr
    assert "arch=compute_90,code=compute_90" in built.stdout
    assert (tmp_path / "out/scaled/scaled.fatbin").stat().st_size > 0
    cuda_build = json.loads((tmp_path / "out/scaled/manifest.json").read_text())["cuda_build"]
    assert cuda_build["archs"] == ["sm_80", "sm_90"] and cuda_build["ptx"] == "compute_90"
