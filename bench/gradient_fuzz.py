"""A long gradient-fuzzing campaign: random kernels (tests/gradient_programs.py), each refused at
build time or checked against float64 finite differences in both launch states.

    python bench/gradient_fuzz.py [--kernels 5000] [--per-module 100] [--seed N] [--keep DIR]
                                  [--device cpu|cuda-emu]

`--device cuda-emu` checks the modules' CUDA code on the CUDA emulation (blocks of 256 threads).

Without --seed each run draws new kernels. Prints counts and every silently wrong kernel (with
its report); exits 1 if there was one.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from gradient_programs import check_batch, collect


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=5000)
    parser.add_argument("--per-module", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None, help="fixed hypothesis seed (default: random)")
    parser.add_argument("--keep", default=None, help="folder for the generated modules (default: temporary)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda-emu"))
    args = parser.parse_args()
    start = time.time()
    bodies = collect(args.kernels, seed=args.seed)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="tilec-gradfuzz-"))
    if args.device != "cpu":  # harness.build keeps its builds under a cache folder (conftest.py sets it in tests)
        import harness

        harness.CACHE = folder / "builds"
        harness.CACHE.mkdir(exist_ok=True)
    totals = {"exact": 0, "refused": 0, "wrong": 0}
    for batch in range(0, len(bodies), args.per_module):
        part = bodies[batch:batch + args.per_module]
        result = check_batch(part, f"gradfuzz{batch}", folder, np.random.default_rng(batch), args.device)
        totals["exact"] += result["exact"]
        totals["refused"] += result["refused"]
        totals["wrong"] += len(result["wrong"])
        for text in result["wrong"]:
            print(f"--- silently wrong gradient:\n{text}\n")
        print(f"{batch + len(part)} kernels: {totals} ({time.time() - start:.0f} s)", flush=True)
    return 1 if totals["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
