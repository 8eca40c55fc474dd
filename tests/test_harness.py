"""The test harness's own contract: the programs tests build (harness.build) are compiled at the
test optimisation level (harness.TEST_OPT, -O1 unless TILEC_TEST_OPT says otherwise) and still
compute the right values, while the product's own compiler commands keep their -O3 (CPU) and -O2
(CUDA emulation)."""
from __future__ import annotations

import numpy as np
import pytest

import harness
from conftest import needs_cxx
from tilec import driver, product_cache
from tilec.backend_cpu.compiler import cxx_command
from tilec.backend_cuda.compiler import emu_command

SOURCE = '''import warp as wp


@wp.kernel
def twice(X: wp.array1d(dtype=wp.float64), Y: wp.array1d(dtype=wp.float64)):
    x = wp.tile_load(X, shape=(8,))
    wp.tile_store(Y, x * 2.0 + wp.tile_broadcast(wp.tile_sum(x), shape=(8,)))
'''


def test_the_product_keeps_its_optimisation_level():
    assert "-O3" in cxx_command("g++", "m.cpp", "libm_cpu.so", debug=False)
    assert "-O2" in emu_command("g++", "m.cu", "libm_cuda_emu.so", debug=False)


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("target, product_level", [("cpu", "-O3"), ("cuda-emu", "-O2")])
def test_harness_builds_at_the_test_optimisation_level(target, product_level, monkeypatch):
    commands = []
    compile_for_real = driver.run_compiler

    def run_compiler(command, *args, **kwargs):
        commands.append(command)
        return compile_for_real(command, *args, **kwargs)

    monkeypatch.setattr(driver, "run_compiler", run_compiler)
    # a source of its own (the comment): this session's build cache cannot already hold it; and
    # compiled, not copied from a library an earlier run compiled from the same C++ (product_cache)
    monkeypatch.setattr(product_cache, "fetch", lambda key, folder, names: False)
    module = harness.build(SOURCE + f"# {target}\n", "harness_opt", block_dim=32, target=target)
    assert len(commands) == 1, commands
    level = product_level if harness.TEST_OPT == "product" else harness.TEST_OPT
    assert [flag for flag in commands[0] if flag.startswith("-O")] == [level], commands[0]
    X = np.arange(8, dtype=np.float64)
    Y = np.zeros(8)
    module.twice.launch_tiled(dim=1, inputs=[X, Y], device=target)
    np.testing.assert_array_equal(Y, X * 2.0 + X.sum())
    assert "-O3" in cxx_command("g++", "m.cpp", "libm_cpu.so", debug=False)  # restored after the build
