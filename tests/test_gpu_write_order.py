"""A tile stored where the block just loaded another tile from (write after read, across threads).

Each thread of a block loads and stores its own runs of a register tile. Storing `t` at offset 3
of the array `t` was loaded from (offset 0) overwrites elements another thread still had to load:
without a barrier before the store the CUDA emulation (and a GPU) read A[4..6] already overwritten,
where the CPU did not (found by a gradient fuzz on the emulation: forward and adjoint differed from
the CPU's). Every register tile store and atomic add now waits for the block first."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import needs_cxx
from harness import EMULATIONS, build, build_emulated, emulation_id

from tilec.gradcheck import gradcheck

pytestmark = [needs_cxx, pytest.mark.build]

PROGRAM = '''\
import warp as wp


@wp.kernel
def shifted(X: wp.array(dtype=wp.float64), A: wp.array(dtype=wp.float64), B: wp.array(dtype=wp.float64)):
    x = wp.tile_load(X, shape=(8,))
    t = x + wp.tile_load(A, shape=(8,))
    wp.tile_store(A, t * 2.0, offset=3)
    a = wp.tile_load(A, shape=(8,))
    wp.tile_store(A, a + x * x)
    wp.tile_store(B, a * 0.5)
'''


def _inputs():
    rng = np.random.default_rng(4)
    return [rng.uniform(0.5, 1.5, 8), rng.uniform(0.5, 1.5, 8), np.zeros(8)]


@pytest.mark.parametrize("variant", EMULATIONS, ids=emulation_id)
def test_a_store_over_what_the_block_loaded_waits_for_the_loads(variant, monkeypatch):
    x, a, b = _inputs()
    t = x + a
    shifted = a.copy()
    shifted[3:] = 2.0 * t[:5]
    expect_a, expect_b = shifted + x * x, 0.5 * shifted

    emulated = build_emulated(PROGRAM, "shifted", variant, monkeypatch)
    out = _inputs()
    emulated.shifted.launch_tiled(dim=1, inputs=out, device="cuda-emu")
    np.testing.assert_allclose(out[1], expect_a, rtol=1e-14)
    np.testing.assert_allclose(out[2], expect_b, rtol=1e-14)

    report = gradcheck(emulated.shifted, 1, _inputs(), device="cuda-emu")
    assert report.refused is None and report.ok, report


def test_the_cpu_computes_the_same():
    cpu = build(PROGRAM, "shifted", block_dim=64)
    out = _inputs()
    cpu.shifted.launch_tiled(dim=1, inputs=out)
    x, a, _ = _inputs()
    shifted = a.copy()
    shifted[3:] = 2.0 * (x + a)[:5]
    np.testing.assert_allclose(out[1], shifted + x * x, rtol=1e-14)
    assert gradcheck(cpu.shifted, 1, _inputs()).ok
