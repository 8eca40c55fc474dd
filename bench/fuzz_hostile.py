"""The long hostile-input fuzzing campaign (tests/security/test_fuzz_hostile.py runs 2,000 in CI):
N mutated valid programs through `tilec check` in process; prints the outcome counts and the time.
Any traceback or hang (30 s per example, generous for a loaded machine) stops the run with hypothesis's minimal example.

    python bench/fuzz_hostile.py 20000
"""
from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "security"))

from hypothesis import HealthCheck, given, settings  # noqa: E402

from hostile_fuzz import check_in_process, hostile_programs, prepare  # noqa: E402


def main(examples: int) -> None:
    prepare()
    outcomes: collections.Counter = collections.Counter()

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(hostile_programs())
    def one(data):
        outcomes[check_in_process(data)] += 1

    start = time.monotonic()
    one()
    total = sum(outcomes.values())
    print(f"{total} programs in {time.monotonic() - start:.0f} s: {dict(sorted(outcomes.items()))}; "
          "0 tracebacks, 0 hangs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
