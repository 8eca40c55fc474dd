"""Fuzzing hostile input (issue #17): 2,000 mutated valid programs (token edits, hostile names and
numbers, random bytes, deep nesting) through `tilec check` in process: zero tracebacks, zero hangs
(30 s per example, generous for a loaded machine). bench/fuzz_hostile.py runs the longer campaign."""
from __future__ import annotations

import collections
import threading

from hypothesis import HealthCheck, given, settings

from hostile_fuzz import check_in_process, hostile_programs, prepare

OUTCOMES: collections.Counter = collections.Counter()


def test_two_thousand_hostile_programs_give_no_traceback_and_no_hang():
    prepare()

    @settings(max_examples=2000, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(hostile_programs())
    def one(data):
        OUTCOMES[check_in_process(data)] += 1

    assert threading.current_thread() is threading.main_thread()  # SIGALRM times each example
    one()
    assert sum(OUTCOMES.values()) >= 2000
    assert OUTCOMES["diagnostic"] > 0 and OUTCOMES["ok"] > 0, OUTCOMES
    print(dict(OUTCOMES))
