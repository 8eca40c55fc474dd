"""clang++'s own flags (backend_cpu/compiler.py): more run-time alias checks for its vectoriser
(ALIAS_CHECKS, an LLVM option, passed only where the compiler takes it), so that a fused element
loop writing array rows and per-thread sums next to its tiles vectorises, as it does under g++;
and the reductions' GNU-vector folds (reduce.h), which clang++ now compiles too. Results are those
of the scalar forms, bit for bit."""
from __future__ import annotations

import shutil
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build_with_flags
from tilec.api import load
from tilec.backend_cpu import compiler as cpu_compiler

CLANG = "Ubuntu clang version 18.1.3"


def test_the_alias_checks_go_to_a_clang_that_takes_them_only(monkeypatch):
    monkeypatch.setattr(cpu_compiler, "compiler_identity", lambda cxx: CLANG)
    for answer, wanted in ((0, cpu_compiler.ALIAS_CHECKS), (1, [])):
        cpu_compiler.clang_alias_checks.cache_clear()
        monkeypatch.setattr(cpu_compiler.subprocess, "run", lambda *a, rc=answer, **k: SimpleNamespace(returncode=rc))
        flags = cpu_compiler.compile_flags(False, "x86-64-v3", "clang++")
        assert all(f in flags for f in wanted) and ("-mllvm" in flags) == bool(wanted)
    cpu_compiler.clang_alias_checks.cache_clear()
    monkeypatch.setattr(cpu_compiler, "compiler_identity", lambda cxx: "g++ (GCC) 12.2.0")
    assert "-mllvm" not in cpu_compiler.compile_flags(False, "x86-64-v3", "g++")


SOURCE = '''
import warp as wp


@wp.kernel
def norm(X: wp.array2d(dtype=float), g: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 256), offset=(i, 0))
    m = wp.tile_broadcast(wp.tile_sum(x) / 256.0, shape=(1, 256))
    v = wp.tile_broadcast(wp.tile_max(x), shape=(1, 256))
    wp.tile_store(Y, (x - m) / v * wp.tile_load(g, shape=(1, 256)), offset=(i, 0))
'''


@needs_cxx
@pytest.mark.build
@pytest.mark.skipif(shutil.which("clang++") is None, reason="needs clang++")
def test_clang_builds_compute_what_g_plus_plus_builds_do(tmp_path, monkeypatch):
    """The same kernel, forward and adjoint (its fused loop adds into the per-thread sums of dg and a
    row of dX), built by clang++ with and without the alias checks: the same bits."""
    X = np.random.default_rng(4).standard_normal((64, 256)).astype(np.float32) + 3.0
    g = np.random.default_rng(5).standard_normal((1, 256)).astype(np.float32)
    monkeypatch.setenv("CXX", "clang++")
    results = []
    for name, edit in (("checks", lambda f: f), ("few", lambda f: [x for x in f if x not in cpu_compiler.ALIAS_CHECKS])):
        kernel = load(build_with_flags(SOURCE, "norm", tmp_path / name, edit=edit)).norm
        Y, dX, dg = np.zeros_like(X), np.zeros_like(X), np.zeros_like(g)
        kernel.launch_tiled(dim=64, inputs=[X, g, Y], num_threads=1)
        kernel.launch_tiled(dim=64, inputs=[X, g, Y], adj_inputs=[dX, dg, np.ones_like(Y)], adjoint=True, num_threads=1)
        results.append((Y, dX, dg))
    want = (X - X.mean(axis=1, keepdims=True)) / X.max(axis=1, keepdims=True) * g
    np.testing.assert_allclose(results[0][0], want, rtol=1e-4, atol=1e-5)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
