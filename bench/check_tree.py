"""A project's Warp files through `tilec check`: every .py file under a folder that defines a kernel
(`@wp.kernel`), each checked in a fresh `python -m tilec` process, the clean ones counted and the
diagnostics grouped (bench/warp_test_files.py's grouping). An acceptance measure on real projects,
e.g. a checkout of newton-physics/newton (its tests left out by default):

    python bench/check_tree.py PATH/newton [--top 40] [--json] [--with-tests] [--files] [--jobs N] [--save DIR]

`--files` also lists each file that does not check cleanly with its first error; `--jobs N` checks N
files at once; `--save DIR` keeps each file's diagnostics (DIR/<path with __ for />.txt). The slowest
files' check times (wall seconds, with other files' checks running beside them under --jobs) close the
report: a file that takes minutes is a defect of its own (geometry/narrow_phase.py took 300 s).

Files that import names from the project's other files are checked with them (frontend/imports.py).
Nothing of the project is copied here.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from warp_test_files import DIAGNOSTIC, kind  # noqa: E402


def kernel_files(root: Path, with_tests: bool) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if not with_tests and "tests" in path.relative_to(root).parts:
            continue
        try:
            if "@wp.kernel" in path.read_text(encoding="utf-8"):
                found.append(path)
        except (OSError, UnicodeDecodeError):
            continue
    return found


def _check(path: Path, timeout: float) -> tuple[subprocess.CompletedProcess | None, float]:
    """`tilec check` of one file in a fresh process (None when it ran past the timeout), and its seconds."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        proc = None
    return proc, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A project's kernel files through tilec check, diagnostics counted.")
    parser.add_argument("root", type=Path, help="the project's folder")
    parser.add_argument("--top", type=int, default=40, help="how many kinds of diagnostic to list")
    parser.add_argument("--json", action="store_true", help="one JSON object: clean files and the counts")
    parser.add_argument("--with-tests", action="store_true", help="also files under folders named tests")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per file")
    parser.add_argument("--files", action="store_true", help="list each file that fails with its first error")
    parser.add_argument("--jobs", type=int, default=1, help="files checked at once (each its own process)")
    parser.add_argument("--save", type=Path, default=None, help="a folder to keep each file's diagnostics in")
    args = parser.parse_args(argv)
    files = kernel_files(args.root, args.with_tests)
    counts: collections.Counter = collections.Counter()
    clean = crashed = timed_out = 0
    failed: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # each a process
        results = list(pool.map(lambda path: _check(path, args.timeout), files))
    seconds = {path: took for path, (_, took) in zip(files, results)}
    for path, (proc, _) in zip(files, results):
        label = path.relative_to(args.root)
        if args.save is not None:  # the file's whole output, for reading every diagnostic later
            saved = args.save / (str(label).replace("/", "__") + ".txt")
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text("timed out\n" if proc is None else proc.stderr + f"rc={proc.returncode}\n")
        if proc is None:
            timed_out += 1
            failed.append(f"{label}: timed out")
            continue
        if proc.returncode != 0:
            first = next((line for line in proc.stderr.splitlines() if "error[" in line or "Traceback" in line), "")
            failed.append(f"{label}: {first.split(': ', 1)[-1] if first else proc.returncode}")
        clean += proc.returncode == 0
        crashed += "Traceback" in proc.stderr or "internal compiler error" in proc.stderr
        counts.update(kind(code, message) for code, message in DIAGNOSTIC.findall(proc.stderr))
    if args.json:
        print(json.dumps({"files": len(files), "clean": clean, "crashed": crashed, "timed_out": timed_out,
                          "diagnostics": dict(counts.most_common()),
                          "seconds": {str(p.relative_to(args.root)): round(t, 2) for p, t in seconds.items()}},
                         sort_keys=True))
        return
    print(f"{clean} of {len(files)} files check cleanly ({crashed} crashed, {timed_out} timed out)")
    for text, n in counts.most_common(args.top):
        print(f"{n:5d} {text}")
    if args.files:
        print()
        print("\n".join(failed))
    slowest = sorted(seconds.items(), key=lambda item: -item[1])[:5]
    print("\nslowest: " + ", ".join(f"{p.relative_to(args.root)} {t:.1f} s" for p, t in slowest))


if __name__ == "__main__":
    main()
