"""Kernel bodies applying exp, log or tanh carry TL_CPU_KERNEL (runtime_headers/tilec/core.h): a
portable g++ build on x86-64 Linux compiles them for AVX-512 as well, chosen when the library loads.
Which bodies are marked, that the library holds the clones, and that a build with them and one
without give the same bits (built with the product's -O3: the lower test level does not vectorise)."""
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


@wp.func
def soft(x: float):
    return wp.tanh(x) * x


@wp.kernel
def activations(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float), S: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(256,), offset=(i * 256,))
    y = wp.tile_map(soft, x) + wp.tile_map(wp.exp, x * 0.25)
    wp.tile_store(Y, y, offset=(i * 256,))
    wp.tile_atomic_add(S, wp.tile_sum(y * y), offset=(i,))


@wp.kernel
def logs(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(256,), offset=(i * 256,))
    wp.tile_store(Y, wp.tile_map(wp.log, x * x + 1.0), offset=(i * 256,))


@wp.kernel
def per_thread(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    Y[i] = wp.exp(X[i]) * 2.0


@wp.kernel
def scale(X: wp.array1d(dtype=float), Y: wp.array1d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(256,), offset=(i * 256,))
    wp.tile_store(Y, x * 2.0 + x, offset=(i * 256,))
'''

BLOCKS = 24


def build(tmp_path, name, emit_only=False, extra_flags=()):
    return build_with_flags(SOURCE, name, tmp_path, lambda flags: [*flags, *extra_flags], emit_only=emit_only)


def test_only_bodies_applying_exp_log_or_tanh_are_marked(tmp_path):
    cpp = (build(tmp_path, "marks", emit_only=True) / "marks.cpp").read_text()
    marked = set(re.findall(r"^TL_CPU_KERNEL static void (\w+)\(", cpp, re.MULTILINE))
    plain = set(re.findall(r"^static void (k_\w+)\(", cpp, re.MULTILINE))
    # tanh through a func, exp and log directly; the adjoints apply them too (d tanh, d exp)
    assert marked == {"k_activations_forward", "k_activations_backward", "k_logs_forward"}
    # log's adjoint is a division; the plain kernel applies none of them; a SIMT kernel's body is one
    # thread's scalar work, which no vector width speeds up
    assert plain == {"k_logs_backward", "k_scale_forward", "k_scale_backward", "k_per_thread_forward",
                     "k_per_thread_backward"}


def clones_expected() -> bool:
    compiler = cpu_compiler.find_cxx()
    return (compiler is not None and cpu_compiler.is_gcc(compiler) and platform.system() == "Linux"
            and platform.machine() == "x86_64")


def run(folder):
    mod = load(folder)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(BLOCKS * 256).astype(np.float32) * 6.0
    x[:8] = [0.0, -0.0, 9.5, -9.5, 0.62, -0.63, 88.0, -104.0]
    y, s = np.zeros_like(x), np.zeros(BLOCKS, np.float32)
    mod.activations.launch_tiled(dim=BLOCKS, inputs=[x, y, s])
    gy, gs = rng.standard_normal(x.size).astype(np.float32), rng.standard_normal(BLOCKS).astype(np.float32)
    gx = np.zeros_like(x)
    mod.activations.launch_tiled(dim=BLOCKS, inputs=[x, y, s], adj_inputs=[gx, gy, gs], adjoint=True)
    logs = np.zeros_like(x)
    mod.logs.launch_tiled(dim=BLOCKS, inputs=[x, logs])
    return {"y": y, "s": s, "gx": gx, "logs": logs}


@needs_cxx
@pytest.mark.build
def test_clones_give_the_same_bits_as_the_build_isa_alone(tmp_path):
    cloned = build(tmp_path, "cloned")
    if clones_expected():
        nm = shutil.which("nm")
        if nm is not None:  # binutils: the AVX-512 copies of the three marked bodies, by g++'s names
            symbols = subprocess.run([nm, str(cloned / "libcloned_cpu.so")], capture_output=True, text=True).stdout
            assert len(set(re.findall(r"(k_\w+)\.avx512f", symbols))) == 3, symbols
    single = build(tmp_path, "single", extra_flags=["-DTILEC_KERNEL_CLONES=0"])
    got, want = run(cloned), run(single)
    for key in want:
        assert np.array_equal(got[key], want[key], equal_nan=True), key
    # and the values are the functions': the forward against float64 numpy
    x = np.random.default_rng(7).standard_normal(BLOCKS * 256).astype(np.float32) * 6.0
    x[:8] = [0.0, -0.0, 9.5, -9.5, 0.62, -0.63, 88.0, -104.0]
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(got["y"], np.tanh(x64) * x64 + np.exp(x64 * 0.25), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["logs"], np.log(x64 * x64 + 1.0), rtol=1e-6, atol=1e-6)
