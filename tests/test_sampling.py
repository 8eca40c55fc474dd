"""tests/sampling.py, the bounded sample of the long suites: deterministic, a real part of the
whole, rotating through everything across shards, everything with TILEC_TESTS_FULL=1; and the
suites that sample keep every conformance case on the CPU."""
from __future__ import annotations

from conftest import ROOT

import sampling

KEYS = [f"program{i}:{b}" for i in range(60) for b in (16, 32, 64)]


def test_the_sample_is_deterministic_and_a_part(monkeypatch):
    monkeypatch.delenv("TILEC_TESTS_FULL", raising=False)
    monkeypatch.delenv("TILEC_TESTS_SHARD", raising=False)
    first = [k for k in KEYS if sampling.kept(k, 1, 3)]
    assert first == [k for k in KEYS if sampling.kept(k, 1, 3)]
    assert len(KEYS) // 6 < len(first) < len(KEYS) // 2


def test_shards_rotate_through_every_key(monkeypatch):
    monkeypatch.delenv("TILEC_TESTS_FULL", raising=False)
    runs = []
    for shard in range(3):
        monkeypatch.setenv("TILEC_TESTS_SHARD", str(shard))
        runs.append({k for k in KEYS if sampling.kept(k, 1, 3)})
    assert set().union(*runs) == set(KEYS)
    assert sum(len(r) for r in runs) == len(KEYS)  # each key in exactly one shard


def test_full_runs_everything(monkeypatch):
    monkeypatch.setenv("TILEC_TESTS_FULL", "1")
    assert all(sampling.kept(k, 1, 3) for k in KEYS)
    assert "full" in sampling.describe()


def test_every_conformance_case_runs_on_the_cpu(monkeypatch):
    monkeypatch.delenv("TILEC_TESTS_FULL", raising=False)
    monkeypatch.delenv("TILEC_TESTS_SHARD", raising=False)
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "conformance"))
    import test_conformance

    for cases in (test_conformance.CASES, [c for c in test_conformance.CASES if c.grad]):
        runs = [p.values for p in test_conformance._runs(cases)]
        assert {case.id for case, device in runs if device == "cpu"} == {c.id for c in cases}
        emulated = {case.id for case, device in runs if device == "cuda-emu"}
        assert 0 < len(emulated) < len(cases)
