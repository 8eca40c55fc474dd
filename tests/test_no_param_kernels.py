"""A kernel without parameters (Warp accepts one: a kernel that only prints, or whose tiles are
all made in the body) builds for the CPU and the CUDA emulation and runs (the emitted call of
its body passed `ctx, ` with nothing after the comma: a C++ error)."""
from __future__ import annotations

import pytest
from conftest import needs_cxx
from harness import build

PROGRAM = '''\
import warp as wp


@wp.kernel
def doubled_ids():
    i = wp.tid()
    print(i * 2)


@wp.kernel
def tile_only():
    t = wp.tile_ones(shape=(4, 8), dtype=float)
    s = wp.tile_sum(t)
    if s[0] != 32.0:
        print(-1)
'''


@needs_cxx
@pytest.mark.parametrize("target", ["cpu", "cuda-emu"])
def test_kernels_without_parameters_build_and_run(target, capfd):
    mod = build(PROGRAM, "no_params", block_dim=16, target=target)
    device = "cpu" if target == "cpu" else "cuda-emu"
    mod.doubled_ids.launch(dim=(3,), inputs=[], device=device)
    mod.tile_only.launch_tiled(dim=(2,), inputs=[], device=device, block_dim=16)
    printed = capfd.readouterr().out.split()
    assert sorted(printed) == ["0", "2", "4"]
