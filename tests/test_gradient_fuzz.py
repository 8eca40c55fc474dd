"""Random kernels (tests/gradient_programs.py, drawn by hypothesis with a fixed seed): every one is
either refused at build time or has gradients matching float64 finite differences in both launch
states. 500 kernels in five modules of 100 (one C++ compile each; the default run takes three of
them, TILEC_TESTS_FULL=1 all), and 100 more on the CUDA
emulation (the GPU's code: its own adjoint form, its barriers); `bench/gradient_fuzz.py` runs
longer campaigns on the CPU."""
from __future__ import annotations

import numpy as np
import pytest

import sampling
from conftest import needs_cxx

pytestmark = [pytest.mark.build, needs_cxx]

KERNELS = 500
PER_MODULE = 100


@pytest.fixture(scope="module")
def bodies():
    from gradient_programs import collect

    found = collect(KERNELS, seed=16)
    assert len(found) == KERNELS
    return found


# The default run (CI's) checks three of the five modules, rotated by TILEC_TESTS_SHARD (tests/sampling.py)
BATCHES = range(KERNELS // PER_MODULE) if sampling.full() else \
    sorted((sampling.shard() + k) % (KERNELS // PER_MODULE) for k in range(3))


@pytest.mark.parametrize("batch", BATCHES)
def test_random_kernels_are_exact_or_refused(bodies, batch, tmp_path):
    from gradient_programs import check_batch

    part = bodies[batch * PER_MODULE:(batch + 1) * PER_MODULE]
    result = check_batch(part, f"gradfuzz{batch}", tmp_path, np.random.default_rng(batch))
    assert not result["wrong"], f"{len(result['wrong'])} silently wrong gradient(s):\n\n" + "\n\n".join(
        result["wrong"][:3])
    assert result["exact"] + result["refused"] == len(part)
    # the model must not refuse its way out: most kernels get an adjoint that is checked
    assert result["exact"] >= len(part) // 4, result


def test_random_kernels_on_the_cuda_emulation_are_exact_or_refused(tmp_path):
    """The GPU's code, blocks of 256 threads: seed 11's first 100 kernels hold one that stores a tile
    over elements other threads were still to load (tests/test_gpu_write_order.py)."""
    from gradient_programs import check_batch, collect

    part = collect(100, seed=11)
    result = check_batch(part, "gradfuzz_emu", tmp_path, np.random.default_rng(11), device="cuda-emu")
    assert not result["wrong"], f"{len(result['wrong'])} silently wrong gradient(s):\n\n" + "\n\n".join(
        result["wrong"][:3])
    assert result["exact"] + result["refused"] == len(part)
    assert result["exact"] >= len(part) // 4, result
