"""Tile copies and fills stay vectorised loops in a g++ build (backend_cpu/compiler.py passes
-fno-tree-loop-distribute-patterns to g++ only): g++ otherwise turns them into memcpy / memset,
expanded inline as `rep movsq` / `rep stosq`, slower on tiles of a few KiB."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build_with_flags
from tilec.api import load
from tilec.backend_cpu import compiler as cpu_compiler

SOURCE = '''
import warp as wp


@wp.kernel
def rows(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 256), offset=(i, 0))
    s = wp.tile_broadcast(wp.tile_sum(x), shape=(1, 256))
    wp.tile_store(Y, x * x - s, offset=(i, 0))
'''

FLAG = "-fno-tree-loop-distribute-patterns"


def test_the_flag_goes_to_gcc_only(monkeypatch):
    monkeypatch.setattr(cpu_compiler, "compiler_identity", lambda cxx: "g++ (Ubuntu 13.3.0-6ubuntu2) 13.3.0")
    assert FLAG in cpu_compiler.compile_flags(False, "x86-64-v3", "g++")
    monkeypatch.setattr(cpu_compiler, "compiler_identity", lambda cxx: "Ubuntu clang version 18.1.3")
    assert FLAG not in cpu_compiler.compile_flags(False, "x86-64-v3", "clang++")


@needs_cxx
@pytest.mark.build
def test_a_row_kernel_copies_and_fills_in_vector_loops(tmp_path):
    folder = build_with_flags(SOURCE, "rows", tmp_path, block_dim=64)
    X = np.random.default_rng(2).standard_normal((6, 256)).astype(np.float32)
    Y = np.zeros_like(X)
    load(folder).rows.launch_tiled(dim=6, inputs=[X, Y])
    np.testing.assert_allclose(Y, X * X - X.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-4)
    compiler, objdump = cpu_compiler.find_cxx(), shutil.which("objdump")
    if compiler is None or not cpu_compiler.is_gcc(compiler) or objdump is None or platform.machine() != "x86_64":
        return  # the instructions below are g++'s on x86-64
    text = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", str(folder / "librows_cpu.so")],
                          capture_output=True, text=True).stdout
    bodies = re.findall(r"<\(anonymous namespace\)::k_rows_forward[^\n]*>:\n(.*?)\n\n", text, re.DOTALL)
    assert bodies, "the forward kernel's body is in the library"
    assert not re.search(r"\brep (movs|stos)", bodies[0]), "a copy or fill as rep movs / rep stos"
