"""gemm.h's instances compiled once and cached (backend_cpu/gemm_instances.py): a module with
products is compiled with gemm.h's entry points only declared, and links the cached object of the
instances its object needs; the library computes bit for bit what the whole-file build computes;
a rebuild, or another module with the same tile shapes, reuses the object; only instance names of
gemm.h's entries are ever compiled from nm's output; anything unexpected compiles the file whole."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import INSTALLED_CXX, needs_cxx
from harness import build_flags
from tilec.backend_cpu import gemm_instances


def program(n: int, scale: str = "2.0") -> str:
    """A tiled GEMM of n x n tiles over 2n x 2n matrices, its result scaled (the scale changes the
    module's own code, never its products)."""
    return f'''import warp as wp


@wp.kernel
def mm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=({n}, {n}), dtype=float)
    for k in range(2):
        a = wp.tile_load(A, shape=({n}, {n}), offset=(i * {n}, k * {n}))
        b = wp.tile_load(B, shape=({n}, {n}), offset=(k * {n}, j * {n}))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc * {scale}, offset=(i * {n}, j * {n}))
'''


RUN = '''import sys, numpy as np
sys.path.insert(0, sys.argv[1])
m = __import__(sys.argv[2])
n = int(sys.argv[3])
rng = np.random.default_rng(5)
A = rng.standard_normal((2 * n, 2 * n)).astype(np.float32); B = rng.standard_normal((2 * n, 2 * n)).astype(np.float32)
C = np.zeros_like(A)
m.mm.launch_tiled(dim=(2, 2), inputs=[A, B, C])
dC = rng.standard_normal(C.shape).astype(np.float32); dA = np.zeros_like(A); dB = np.zeros_like(B)
m.mm.launch_tiled(dim=(2, 2), inputs=[A, B, C], adj_inputs=[dA, dB, dC.copy()], adjoint=True)
np.savez(sys.argv[4], A=A, B=B, C=C, dC=dC, dA=dA, dB=dB)
'''


def build(tmp_path: Path, name: str, text: str, **env: str) -> tuple[Path, str]:
    src = tmp_path / f"{name}.py"
    src.write_text(text)
    out = tmp_path / f"out_{name}_{len(list(tmp_path.glob('out_*')))}"
    full_env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"), TILEC_JOBS="1", **env)
    proc = subprocess.run([sys.executable, "-m", "tilec", "build", str(src), "-o", str(out), "--target", "cpu", "-v"],
                          capture_output=True, text=True, env=full_env)
    assert proc.returncode == 0, proc.stderr
    leftovers = [p.name for p in (out / name).rglob("*") if p.suffix == ".o" or p.name.startswith(".")]
    assert not leftovers  # objects and pinned cache files stay in the build's temporary folder
    return out, proc.stdout + proc.stderr


def run(tmp_path: Path, out: Path, name: str, n: int) -> dict:
    result = tmp_path / f"{out.name}.npz"
    proc = subprocess.run([sys.executable, "-c", RUN, str(out), name, str(n), str(result)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return dict(np.load(result))


def cached_objects(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "cache" / "gemm").glob("*.o"))


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("compiler", INSTALLED_CXX)
def test_the_instances_are_compiled_once_per_set_of_shapes_and_compute_what_the_whole_file_does(tmp_path, compiler):
    out, log = build(tmp_path, "first", program(16), CXX=compiler)
    assert "-DTILEC_GEMM_EXTERN" in log and "gemm instances (" in log
    first = cached_objects(tmp_path)
    assert len(first) == 1
    r = run(tmp_path, out, "first", 16)
    A, B, dC = (r[k].astype(np.float64) for k in ("A", "B", "dC"))
    np.testing.assert_allclose(r["C"], 2.0 * A @ B, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["dA"], 2.0 * dC @ B.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r["dB"], 2.0 * A.T @ dC, rtol=1e-4, atol=1e-4)

    # the whole file, as the output folder's CMakeLists.txt compiles it (no compiler cache at all)
    whole_out, whole_log = build(tmp_path, "first", program(16), TILEC_PCH="0", CXX=compiler)
    assert "-DTILEC_GEMM_EXTERN" not in whole_log and cached_objects(tmp_path) == first
    for key, value in run(tmp_path, whole_out, "first", 16).items():
        np.testing.assert_array_equal(value, r[key], err_msg=key)

    # another module, other code around the same products: the same object, compiled no more
    other_out, _ = build(tmp_path, "second", program(16, scale="-0.5"), CXX=compiler)
    assert cached_objects(tmp_path) == first
    np.testing.assert_allclose(run(tmp_path, other_out, "second", 16)["C"], -0.25 * r["C"], rtol=1e-6)

    build(tmp_path, "third", program(8), CXX=compiler)  # other shapes: other instances
    assert len(cached_objects(tmp_path)) == 2 and set(first) < set(cached_objects(tmp_path))


@pytest.mark.build
@needs_cxx
def test_a_module_without_products_compiles_as_before(tmp_path):
    text = '''import warp as wp


@wp.kernel
def twice(A: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=8, offset=i * 8)
    wp.tile_store(A, t * 2.0, offset=i * 8)
'''
    _, log = build(tmp_path, "plain", text)
    assert "-DTILEC_GEMM_EXTERN" not in log and "gemm instances" not in log
    assert not (tmp_path / "cache" / "gemm").exists()


def nm_printing(stdout: str, monkeypatch) -> None:
    monkeypatch.setattr(gemm_instances.shutil, "which", lambda name: "/usr/bin/nm")
    monkeypatch.setattr(gemm_instances.subprocess, "run",
                        lambda *a, **k: SimpleNamespace(returncode=0, stdout=stdout, stderr=""))


ENTRY = "void tl::gemm::matmul<float, 8, 8, 8, false, true>(float const*, float const*, float*, float, float)"
SUM = ("void tl::gemm::matmul_sum<float, 32, 32, 32>(tl::gemm::Strided<float> const*, "
       "tl::gemm::Strided<float> const*, int, float*, int, float, tl::gemm::BlockId const*)")


def test_only_instances_of_the_gemm_entry_points_are_taken_from_nm(monkeypatch, tmp_path):
    nm_printing(f"                 U memcpy\n                 U {SUM}\n                 U {ENTRY}\n"
                f"                 U {ENTRY}\n                 U tl::launch_blocks(tl::LaunchDesc const&)\n", monkeypatch)
    assert gemm_instances.needed([tmp_path / "a.o"]) == [f"template {ENTRY};", f"template {SUM};"]
    source = gemm_instances.instances_source(gemm_instances.needed([tmp_path / "a.o"]) or [])
    assert source.splitlines()[0] == '#include "tilec-rt/tilec.h"' and source.count("template void") == 2


@pytest.mark.parametrize("line", [
    "void tl::gemm::use_avx512()",  # gemm.h, but no entry point
    'void tl::gemm::matmul<float, 8, 8, 8, false, true>(float const*); int x = system("id")',
    "void tl::gemm::matmul<float, 8, 8, 8, false, true>(float const*) /* */",
    "void tl::gemm::matmul_with<tl::gemm::IsaBuild, float, 8, 8, 8, false, true>(float const*)",
])
def test_any_other_undefined_name_of_gemm_h_leaves_the_module_to_compile_whole(monkeypatch, tmp_path, line):
    nm_printing(f"                 U {SUM}\n                 U {line}\n", monkeypatch)
    assert gemm_instances.needed([tmp_path / "a.o"]) is None


def test_without_nm_or_when_it_fails_there_are_no_instances_to_link(monkeypatch, tmp_path):
    monkeypatch.setattr(gemm_instances.shutil, "which", lambda name: None)
    assert gemm_instances.needed([tmp_path / "a.o"]) is None
    monkeypatch.setattr(gemm_instances.shutil, "which", lambda name: "/usr/bin/nm")
    monkeypatch.setattr(gemm_instances.subprocess, "run",
                        lambda *a, **k: SimpleNamespace(returncode=1, stdout="", stderr="nm: a.o: no such file"))
    assert gemm_instances.needed([tmp_path / "a.o"]) is None


@pytest.mark.build
@needs_cxx
def test_when_the_instances_cannot_be_had_the_file_is_compiled_whole(monkeypatch, tmp_path):
    """The driver's fallback, in process: nm answering nothing usable still gives a working library."""
    from harness import compile_ir
    from tilec.driver import build_module

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(gemm_instances, "needed", lambda objects: None)
    text = program(8)
    flags = build_flags(1)
    build_module(compile_ir(text, "fallback", 1), text, str(tmp_path / "out"), flags, echo=lambda *a, **k: None)
    assert not (tmp_path / "cache" / "gemm").exists()
    r = run(tmp_path, tmp_path / "out", "fallback", 8)
    np.testing.assert_allclose(r["C"], 2.0 * r["A"].astype(np.float64) @ r["B"], rtol=1e-4, atol=1e-4)
