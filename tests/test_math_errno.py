"""A square root in a tile loop is one vector instruction in the CPU library, with g++ and with
clang++ (backend_cpu/compiler.py passes -fno-math-errno): a sqrt that may set errno is a libm call,
which clang++ keeps inside the loop (the loop then runs element by element: layernorm 2.4x slower)
and g++ keeps as a slow path. Nothing in a tilec program reads errno, and IEEE's square root is the
instruction's: the results are the same either way."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import INSTALLED_CXX, needs_cxx
from harness import build_with_flags
from tilec.api import load

SOURCE = '''
import warp as wp


@wp.func
def rstd(v: float):
    return 1.0 / wp.sqrt(v + 1.0e-5)


@wp.kernel
def norm(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 64), offset=(i, 0))
    wp.tile_store(Y, x * wp.tile_map(rstd, x * x), offset=(i, 0))
'''

FLAG = "-fno-math-errno"


def _sqrt_calls(library) -> int | None:
    """Calls to libm's sqrtf in the library's code (None where objdump or x86-64 is missing)."""
    objdump = shutil.which("objdump")
    if objdump is None or platform.machine() != "x86_64":
        return None
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True).stdout
    return len(re.findall(r"call.*<sqrtf", text))


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("compiler", INSTALLED_CXX)
def test_a_sqrt_in_a_tile_loop_is_no_library_call(tmp_path, monkeypatch, compiler):
    monkeypatch.setenv("CXX", compiler)
    X = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    X[0, :3] = [0.0, -0.0, np.inf]  # -0.0 * 1/sqrt(1e-5) stays -0.0; inf * 1/sqrt(inf) = inf * 0 is NaN
    with np.errstate(invalid="ignore"):
        want = X * (1.0 / np.sqrt(X * X + np.float32(1.0e-5)))
    built = build_with_flags(SOURCE, "norm", tmp_path / "product")
    errno = build_with_flags(SOURCE, "norm", tmp_path / "errno", edit=lambda f: [x for x in f if x != FLAG])
    outputs = []
    for folder in (built, errno):
        Y = np.zeros_like(X)
        load(folder).norm.launch_tiled(dim=5, inputs=[X, Y])
        np.testing.assert_allclose(Y, want, rtol=1e-6)
        outputs.append(Y)
    np.testing.assert_array_equal(outputs[0], outputs[1])  # the same square roots, bit for bit
    calls, errno_calls = _sqrt_calls(built / "libnorm_cpu.so"), _sqrt_calls(errno / "libnorm_cpu.so")
    if calls is not None:
        assert errno_calls > 0, "without the flag the compiler calls sqrtf (else this test shows nothing)"
        assert calls == 0
