"""Warp's own test files through `tilec check`: which of the language's features they use tilec
still lacks, counted by diagnostic (a gap finder; bench/warp_examples.py measures the examples).

    python bench/warp_test_files.py [--top 40] [--json]

The files are read from the INSTALLED warp package (`warp/tests/test_*.py`); nothing of them is
copied here. Warp's tests stress edge cases and host-side APIs, so many diagnostics name features no
user kernel needs (fabric arrays, mesh handles, func_native snippets): read the counts as a list of
candidates. Each file is checked in a fresh `python -m tilec` process; the messages are grouped with
their backquoted names replaced by `X`, except the name of a Warp builtin tilec lacks.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

DIAGNOSTIC = re.compile(r"error\[(TC\d+)\]: (.*)")
MISSING_BUILTIN = re.compile(r"`(\w+)` is a Warp builtin")


def warp_test_files() -> list[Path]:
    import warp

    return sorted((Path(warp.__file__).parent / "tests").glob("test_*.py"))


def kind(code: str, message: str) -> str:
    missing = MISSING_BUILTIN.match(message)
    return f"{code} {missing.group(1)}" if missing else f"{code} {re.sub(r'`[^`]*`', '`X`', message)[:100]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Warp's test files through tilec check, diagnostics counted.")
    parser.add_argument("--top", type=int, default=40, help="how many kinds of diagnostic to list")
    parser.add_argument("--json", action="store_true", help="one JSON object: clean files and the counts")
    args = parser.parse_args(argv)
    files = warp_test_files()
    counts: collections.Counter = collections.Counter()
    clean = 0
    for path in files:
        proc = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, text=True)
        found = DIAGNOSTIC.findall(proc.stderr)
        clean += proc.returncode == 0
        counts.update(kind(code, message) for code, message in found)
    if args.json:
        print(json.dumps({"files": len(files), "clean": clean, "diagnostics": dict(counts.most_common())},
                         sort_keys=True))
        return
    print(f"{clean} of {len(files)} test files check cleanly")
    for text, n in counts.most_common(args.top):
        print(f"{n:5d} {text}")


if __name__ == "__main__":
    main()
