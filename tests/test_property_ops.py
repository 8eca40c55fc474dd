"""Property-based programs over the op table (tests/property_programs.py): hypothesis draws typed
tile programs (float32/float64, ranks 1-4, register and shared loads, loops with run-time trip
counts, branches, atomics, reductions, scans, matmuls, solves, views); each is built for the CPU
and for the CUDA emulation, its forward compared with its own numpy model and the adjoint of
every float64 program with central finite differences.

CI runs a fixed-seed sample; `bench/property_fuzz.py` runs long campaigns with fresh seeds.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from property_programs import COVERED, STEPS, collect, module_source
from tilec.gradcheck import gradcheck

pytestmark = [needs_cxx]

PER_MODULE = 12
TRIPS = 2


def inputs(p, rng) -> list:
    dt = np.dtype(p.dtype)
    X, Y = rng.uniform(-1.0, 1.0, p.array).astype(dt), rng.uniform(-1.0, 1.0, p.array).astype(dt)
    return [X, Y, np.zeros(p.array, dt), rng.uniform(-1.0, 1.0, p.array).astype(dt), TRIPS]


def check_programs(programs, name, device, block_dim, rng, adjoints=True) -> dict:
    """Builds the programs as one module for `device`; returns counts and failure reports."""
    source = module_source(programs)
    compiled = build(source, name, block_dim=block_dim, target=device)
    out = {"forward": 0, "adjoint": 0, "refused": 0, "failures": []}
    for i, p in enumerate(programs):
        kernel = getattr(compiled, f"p{i}")
        values = inputs(p, rng)
        X, Y, O, A, n = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
        kernel.launch_tiled(dim=1, inputs=[X, Y, O, A, n], device=device)
        want_O, want_A = p.run_model(values[0].astype(np.float64), values[1].astype(np.float64),
                                     values[3].astype(np.float64), n)
        tol = dict(rtol=1e-9, atol=1e-9) if p.dtype == "float64" else dict(rtol=2e-3, atol=2e-4)
        scale = max(1.0, float(np.abs(want_O).max()), float(np.abs(want_A).max()))
        for got, want, what in ((O, want_O, "O"), (A, want_A, "A")):
            if not np.allclose(got, want, rtol=tol["rtol"], atol=tol["atol"] * scale):
                worst = float(np.abs(got - want).max())
                out["failures"].append(f"p{i} forward {what} differs from numpy by {worst:.3g} "
                                       f"({device}, block_dim {block_dim}):\n{p.source(f'p{i}')}")
        out["forward"] += 1
        if adjoints and p.dtype == "float64":
            report = gradcheck(kernel, 1, values, device=device)
            if report.refused is not None:
                out["refused"] += 1
            elif report.ok:
                out["adjoint"] += 1
            else:
                out["failures"].append(f"{report}\n{p.source(f'p{i}')}")
    return out


# (seed, device, block_dim): a bounded fixed-seed sample for CI
RUNS = [(0, "cpu", 32), (1, "cpu", 64), (2, "cpu", 16), (3, "cuda-emu", 32), (4, "cuda-emu", 64)]


@pytest.mark.build
@pytest.mark.parametrize("seed, device, block_dim", RUNS, ids=[f"{d}-seed{s}" for s, d, _ in RUNS])
def test_random_programs_match_numpy_and_finite_differences(seed, device, block_dim):
    programs = collect(PER_MODULE, seed=1000 + seed)
    result = check_programs(programs, f"prop{seed}", device, block_dim, np.random.default_rng(seed))
    assert not result["failures"], f"{len(result['failures'])} mismatch(es):\n\n" + "\n\n".join(
        result["failures"][:3])
    assert result["forward"] == len(programs)
    # the adjoint must be checked, not refused, for most float64 programs
    float64 = sum(p.dtype == "float64" for p in programs)
    assert result["adjoint"] + result["refused"] == float64
    assert result["adjoint"] >= float64 // 2, result


def test_generator_covers_what_it_claims():
    """Every op a step can exercise is in COVERED, every step is drawn, and ranks 1-4, both
    dtypes, both storages, loops, branches and atomics all occur in a fixed-seed sample."""
    programs = collect(600, seed=7)
    used = set().union(*(p.ops for p in programs))
    assert used <= COVERED, used - COVERED
    assert COVERED - used == set(), f"claimed but never drawn: {COVERED - used}"
    assert {len(p.tile) for p in programs} == {1, 2, 3, 4}
    assert {p.dtype for p in programs} == {"float32", "float64"}
    assert {p.storage for p in programs} == {"register", "shared"}
    text = "\n".join("\n".join(p.warp) for p in programs)
    for needle in ("for k in range(n)", "while k < n", "if n >", "wp.tile_atomic_add"):
        assert needle in text
    assert len(STEPS) >= 19


def test_every_api_tile_op_is_generated_or_excused():
    """The generator's reach over the op table: an API tile op it does not draw must be listed with
    the reason and the test module that checks it instead."""
    from not_generated import NOT_GENERATED
    from tilec.ops import OPS

    api_tile_ops = {name for name, spec in OPS.items() if spec.api and name.startswith("tile")}
    missing = api_tile_ops - COVERED - set(NOT_GENERATED)
    assert not missing, f"tile ops neither generated nor excused: {sorted(missing)}"
    stale = set(NOT_GENERATED) & COVERED
    assert not stale, f"excused but generated: {sorted(stale)}"
    from pathlib import Path

    here = Path(__file__).parent
    for op, (reason, test_file) in NOT_GENERATED.items():
        assert reason and (here / test_file).is_file(), op
        assert op in (here / test_file).read_text(), f"{test_file} does not mention {op}"
