"""Warp's own example programs, as written, through `tilec check` and `tilec build --target cpu`:
how much of real Warp code ports by changing nothing but the import line.

    python bench/warp_examples.py [--dirs tile,core] [--no-build] [--json]

The examples are read from the INSTALLED warp package (`warp/examples/<dir>/example_*.py`);
nothing of them is copied into this repository. Each file is checked (a fresh `python -m tilec`
process, as a user runs it) and, when the check passes, built for the CPU into a temporary folder.
Prints one line per file (built, or the first diagnostic) and the counts per folder (a file
without kernels, host code only, is not counted). Whether a built
kernel computes what Warp computes is bench/warp_tile_tests.py's business (Warp's test suite);
this script measures acceptance only.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def warp_examples(folder: str) -> list[Path]:
    import warp

    return sorted((Path(warp.__file__).parent / "examples" / folder).glob("example_*.py"))


def first_error(text: str) -> str:
    for line in text.splitlines():
        if "error[" in line:
            return line.split(": ", 1)[1] if ": " in line else line
    return text.strip().splitlines()[-1] if text.strip() else "failed"


def run(path: Path, build: bool, work: Path) -> dict:
    row = {"file": path.name}
    check = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, text=True)
    if check.returncode != 0:
        return {**row, "status": "rejected", "why": first_error(check.stderr + check.stdout)}
    if "no kernels found" in check.stderr:  # host code only: a warning, and not counted
        return {**row, "status": "no kernels"}
    if not build:
        return {**row, "status": "checked"}
    out = work / path.stem
    made = subprocess.run([sys.executable, "-m", "tilec", "build", str(path), "-o", str(out), "--target", "cpu"],
                          capture_output=True, text=True)
    if made.returncode != 0:
        why = first_error(made.stderr + made.stdout)
        return {**row, "status": "no kernels" if "no kernels found" in why else "build failed", "why": why}
    return {**row, "status": "built"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Warp's example programs through tilec check and build.")
    parser.add_argument("--dirs", default="tile,core", help="folders of warp/examples (comma-separated)")
    parser.add_argument("--no-build", action="store_true", help="check only")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for folder in [d for d in args.dirs.split(",") if d]:
            rows = [run(p, not args.no_build, Path(tmp)) for p in warp_examples(folder)]
            for row in rows:
                row["dir"] = folder
                if args.json:
                    print(json.dumps(row, sort_keys=True), flush=True)
                else:
                    print(f"{folder}/{row['file']}: {row['status']}" + (f" ({row['why']})" if "why" in row else ""),
                          flush=True)
            done = sum(r["status"] in ("built", "checked") for r in rows)
            with_kernels = sum(r["status"] != "no kernels" for r in rows)
            summary = {"dir": folder, "files": len(rows), "with_kernels": with_kernels, "accepted": done}
            print(json.dumps(summary) if args.json else
                  f"{folder}: {done} of {with_kernels} files with kernels accepted ({len(rows)} files)", flush=True)


if __name__ == "__main__":
    main()
