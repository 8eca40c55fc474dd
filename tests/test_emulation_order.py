"""The CUDA emulation's reverse thread order catches a missing barrier: a block in which each
thread reads its neighbour's shared-memory slot gives the right answer in the forward order by
accident, and a wrong one in reverse order, unless a barrier separates the writes from the reads
(the GPU model's tests run both orders for exactly this reason)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import ROOT, needs_cxx
from tilec.backend_cpu.compiler import find_cxx

pytestmark = [pytest.mark.cuda, needs_cxx]

PROGRAM = r"""
#include "tilec/cuda_emu.h"
#include <cstdio>

static float out[64];

int main(int argc, char** argv) {
    const bool barrier = argc > 1;
    tl::LaunchDesc launch = {{1, 0, 0, 0}, 1, 0, 64, 1};
    tl::emu_launch(launch, 64 * sizeof(float), 256 * 1024, [&]() {
        tl::Ctx ctx = tl::device_ctx(launch, nullptr);
        float* slots = reinterpret_cast<float*>(ctx.smem);
        slots[ctx.lane] = float(ctx.lane + 1);
        if (barrier) ctx.sync();
        out[ctx.lane] = ctx.lane > 0 ? slots[ctx.lane - 1] : 0.0f;  // the neighbour's slot
    });
    for (float v : out) std::printf("%g\n", v);
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("order")
    (folder / "racy.cpp").write_text(PROGRAM)
    exe = folder / "racy"
    subprocess.run([find_cxx(), "-std=c++17", "-O1", "-pthread", "-DTILEC_CUDA_EMU",
                    f"-I{ROOT / 'runtime_headers'}", "-o", str(exe), str(folder / "racy.cpp")], check=True)
    return exe


def run(exe, schedule: str, barrier: bool) -> np.ndarray:
    env = {"TILEC_EMU_SCHEDULE": schedule, "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([str(exe)] + (["barrier"] if barrier else []), capture_output=True, text=True,
                          env=env, check=True)
    return np.array([float(v) for v in proc.stdout.split()])


def test_a_missing_barrier_passes_forward_and_fails_in_reverse(program):
    right = np.arange(64, dtype=float)  # thread l reads l, written by thread l - 1
    np.testing.assert_array_equal(run(program, "", barrier=False), right)  # luck of the order
    assert not np.array_equal(run(program, "reverse", barrier=False), right)  # the race shows


def test_with_the_barrier_both_orders_agree(program):
    right = np.arange(64, dtype=float)
    for schedule in ("", "reverse"):
        np.testing.assert_array_equal(run(program, schedule, barrier=True), right)
