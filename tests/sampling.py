"""Bounded sampling of the long parametrised suites, so the default run (CI's) stays short.

The default run keeps a deterministic part of a suite's combinations (a stable hash of each one's
key, never Python's salted hash), and every combination it leaves out is covered by another path
that does run (e.g. each conformance case still runs on the CPU). Only the kept ones are collected:
nothing is reported as skipped. TILEC_TESTS_FULL=1 runs every combination; TILEC_TESTS_SHARD=k
(an integer) keeps another part of the same size, so runs with k = 0, 1, 2, ... rotate through all.
"""
from __future__ import annotations

import hashlib
import os


def full() -> bool:
    """Whether this run takes every combination (TILEC_TESTS_FULL=1)."""
    return os.environ.get("TILEC_TESTS_FULL", "") == "1"


def shard() -> int:
    """Which part the sample takes (TILEC_TESTS_SHARD, default 0)."""
    return int(os.environ.get("TILEC_TESTS_SHARD", "0") or 0)


def kept(key: str, keep: int, of: int) -> bool:
    """Whether the combination named `key` is in the sample: `keep` in `of` of all keys."""
    if full():
        return True
    return (int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) + shard()) % of < keep


def describe() -> str:
    """One line for the report header: which sample this run takes."""
    if full():
        return "test sampling: full (TILEC_TESTS_FULL=1)"
    return f"test sampling: CI sample, shard {shard()} (TILEC_TESTS_FULL=1 runs every combination)"
