"""A module's CPU library compiled as several translation units at once (backend_cpu/units.py):
every entry in exactly one unit, the library the same in behaviour as the one-file build, and
TILEC_JOBS choosing how many units (1: the one file)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from tilec import product_cache
from tilec.backend_cpu import units
from tilec.backend_cpu.compiler import compile_jobs

SHARED = '#include "m.h"\n#include "tilec-rt/tilec.h"\n\nnamespace {\n\n' \
         'static void k_a_forward(tl::Ctx& ctx) {\n    x();\n}\n\n' \
         'static void k_a_backward(tl::Ctx& ctx) {\n    x();\n    y();\n    z();\n}\n\n}  // namespace\n\n'


def entry(name: str, body: str) -> str:
    return (f'extern "C" int {name}(const tilec_launch* launch) {{\n'
            "    const int rc = tl::guarded_launch([&]() {\n"
            f"        tl::launch_blocks(d, false, 1, [&](tl::Ctx& ctx) {{ {body}(ctx); }});\n"
            "    });\n    return rc;\n}\n\n")


def test_each_entry_goes_to_exactly_one_unit_after_the_shared_definitions():
    fwd, bwd = entry("m_a_cpu_forward", "k_a_forward"), entry("m_a_cpu_backward", "k_a_backward")
    parts = units.split(SHARED + fwd + bwd, 2)
    assert parts == [SHARED + fwd, SHARED + bwd]
    assert units.split(SHARED + fwd + bwd, 1) is None  # one job: the one file
    assert units.split(SHARED + fwd, 4) is None  # one entry: nothing to split
    assert units.split(SHARED + fwd + bwd, 8) == parts  # never more units than entries


def test_units_balance_the_kernel_bodies_their_entries_launch():
    bodies = "".join(f"static void k_{i}(tl::Ctx& ctx) {{\n{'    x();' * (10 * (i + 1))}\n}}\n\n" for i in range(4))
    shared = "namespace {\n\n" + bodies + "}  // namespace\n\n"
    entries = [entry(f"m_{i}", f"k_{i}") for i in range(4)]
    parts = units.split(shared + "".join(entries), 2)
    assert parts is not None and len(parts) == 2
    kept = [[i for i in range(4) if entries[i] in p] for p in parts]
    assert kept == [[0, 3], [1, 2]]  # weights 1+4 and 2+3, each unit in file order
    assert all(p.startswith(shared) for p in parts)


def test_a_text_not_laid_out_as_the_template_writes_it_is_not_split():
    fwd, bwd = entry("m_a_cpu_forward", "k_a_forward"), entry("m_a_cpu_backward", "k_a_backward")
    assert units.split(SHARED + fwd + "static int after_the_entries() {\n    return 1;\n}\n" + bwd, 2) is None


def test_tilec_jobs_sets_the_number_of_units(monkeypatch):
    monkeypatch.setenv("TILEC_JOBS", "3")
    assert compile_jobs() == 3
    for value in ("1", "0", "-2", "many"):
        monkeypatch.setenv("TILEC_JOBS", value)
        assert compile_jobs() == 1
    monkeypatch.delenv("TILEC_JOBS")
    assert 1 <= compile_jobs() <= 4


PROGRAM = '''import warp as wp


@wp.kernel
def scale(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1, 8), offset=(i, 0))
    wp.tile_store(B, t * t * 3.0, offset=(i, 0))


@wp.kernel
def gemm(A: wp.array2d(dtype=float), W: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(2, 8), offset=(i * 2, 0))
    w = wp.tile_load(W, shape=(8, 8))
    c = wp.tile_zeros(shape=(2, 8), dtype=float)
    wp.tile_matmul(a, w, c)
    wp.tile_store(C, c, offset=(i * 2, 0))
'''

RUN = '''import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import twokernels as m
rng = np.random.default_rng(3)
A = rng.standard_normal((4, 8)).astype(np.float32); W = rng.standard_normal((8, 8)).astype(np.float32)
B = np.zeros_like(A); C = np.zeros_like(A)
m.scale.launch_tiled(dim=4, inputs=[A, B]); m.gemm.launch_tiled(dim=2, inputs=[A, W, C])
dB = rng.standard_normal(A.shape).astype(np.float32); dA1 = np.zeros_like(A)
m.scale.launch_tiled(dim=4, inputs=[A, B], adj_inputs=[dA1, dB.copy()], adjoint=True)
dC = rng.standard_normal(A.shape).astype(np.float32); dA2 = np.zeros_like(A); dW = np.zeros_like(W)
m.gemm.launch_tiled(dim=2, inputs=[A, W, C], adj_inputs=[dA2, dW, dC.copy()], adjoint=True)
np.savez(sys.argv[2], A=A, W=W, B=B, C=C, dB=dB, dA1=dA1, dC=dC, dA2=dA2, dW=dW)
'''


@pytest.mark.build
@needs_cxx
def test_a_library_built_in_units_computes_what_the_one_file_build_does(tmp_path):
    src = tmp_path / "twokernels.py"
    src.write_text(PROGRAM)
    results = {}
    for jobs in ("2", "1"):
        out = tmp_path / f"out{jobs}"
        env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_JOBS=jobs)
        shutil.rmtree(tmp_path / "cache" / product_cache.KIND, ignore_errors=True)  # compiled, not copied
        proc = subprocess.run([sys.executable, "-m", "tilec", "build", str(src), "-o", str(out), "--target", "cpu",
                               "-v"], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        assert (".twokernels.part1.cpp" in proc.stdout) == (jobs == "2"), proc.stdout
        assert not [p.name for p in (out / "twokernels").rglob("*") if ".part" in p.name or p.suffix == ".o"]
        run = subprocess.run([sys.executable, "-c", RUN, str(out), str(tmp_path / f"r{jobs}.npz")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        results[jobs] = dict(np.load(tmp_path / f"r{jobs}.npz"))
    r = results["2"]
    A, W = r["A"].astype(np.float64), r["W"].astype(np.float64)
    np.testing.assert_allclose(r["B"], 3 * A * A, rtol=1e-5)
    np.testing.assert_allclose(r["C"], A @ W, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r["dA1"], 6 * A * r["dB"], rtol=1e-5)
    np.testing.assert_allclose(r["dA2"], r["dC"] @ W.T, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r["dW"], A.T @ r["dC"], rtol=1e-4, atol=1e-5)
    for name, value in results["1"].items():
        np.testing.assert_array_equal(value, r[name], err_msg=name)


@pytest.mark.build
@pytest.mark.cuda
@needs_cxx
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_target_all_compiles_the_cpu_library_and_the_fatbin_side_by_side_into_the_same_manifest(tmp_path):
    """The two compile steps each edit manifest.json: side by side (TILEC_JOBS=2) neither edit is
    lost, and the manifest is the one-at-a-time build's except for the libraries' own hashes (nvcc
    then compiles its architectures two at a time: the same resources, and the same library keys)."""
    src = tmp_path / "twokernels.py"
    src.write_text(PROGRAM)
    manifests = {}
    for jobs in ("2", "1"):
        env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_JOBS=jobs)
        shutil.rmtree(tmp_path / "cache" / product_cache.KIND, ignore_errors=True)  # compiled, not copied
        proc = subprocess.run([sys.executable, "-m", "tilec", "build", str(src), "-o", str(tmp_path / jobs),
                               "--arch", "sm_90", "-v"], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "g++ -> libtwokernels_cpu.so" in proc.stderr and "nvcc -> twokernels.fatbin" in proc.stderr
        assert ("--threads 2" in proc.stdout) == (jobs == "2"), proc.stdout  # nvcc's architectures at once
        manifest = json.loads((tmp_path / jobs / "twokernels/manifest.json").read_text())
        assert manifest["cpu_build"]["cpu_features"] and manifest["cuda_build"]["archs"] == ["sm_90"]
        assert all("cuda_resources" in kernel for kernel in manifest["kernels"].values())
        for library in manifest.pop("libraries").values():
            library.pop("sha256")
        manifests[jobs] = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    assert manifests["2"] == manifests["1"]


def test_side_by_side_steps_all_run_and_the_first_failure_in_order_is_raised(tmp_path):
    from tilec.driver import _side_by_side

    ran = []

    def fails(message):
        def step(folder):
            ran.append(message)
            raise RuntimeError(message)
        return step

    with pytest.raises(RuntimeError, match="first"):
        _side_by_side([fails("first"), lambda folder: ran.append("ok"), fails("third")])(tmp_path)
    assert sorted(ran) == ["first", "ok", "third"]
