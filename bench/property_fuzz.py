"""A long property-based campaign: programs over the op table (tests/property_programs.py), built
for the CPU and the CUDA emulation, forward compared with their numpy models and float64 adjoints
with finite differences. With --warp the same programs also run under Warp 1.19 on the CPU and
Warp's forward is compared with the numpy models: the models are Warp's semantics, not tilec's.

    python bench/property_fuzz.py [--programs 240] [--per-module 12] [--seed N] [--warp] [--json]

Without --seed each run draws new programs. Prints counts (and every mismatch); exits 1 if
there was one.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import harness  # noqa: E402
from property_programs import collect, module_source  # noqa: E402
from test_property_ops import check_programs, inputs  # noqa: E402


def warp_mismatches(programs, name, folder: Path, rng) -> list:
    """Runs the programs Warp accepts under Warp (CPU, CPU blocks) and compares with their numpy
    models; the rest are replaced by empty kernels (one module, one Warp build)."""
    import warp as wp

    wp.config.enable_cpu_blocks = True
    wp.config.kernel_cache_dir = str(folder / "wpcache")
    wp.init()
    runnable = [p if p.warp_accepts else None for p in programs]
    source = module_source([p for p in programs if p.warp_accepts])
    (folder / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    module = importlib.import_module(name)
    out = []
    for i, p in enumerate(p for p in runnable if p is not None):
        X, Y, O, A, n = inputs(p, rng)
        want_O, want_A = p.run_model(X.astype(np.float64), Y.astype(np.float64), A.astype(np.float64), n)
        arrays = [wp.array(v, dtype=getattr(wp, p.dtype), device="cpu") for v in (X, Y, O, A)]
        wp.launch_tiled(getattr(module, f"p{i}"), dim=1, inputs=[*arrays, n], block_dim=32, device="cpu")
        tol = dict(rtol=1e-9, atol=1e-9) if p.dtype == "float64" else dict(rtol=2e-3, atol=2e-4)
        scale = max(1.0, float(np.abs(want_O).max()))
        for got, want, what in ((arrays[2].numpy(), want_O, "O"), (arrays[3].numpy(), want_A, "A")):
            if not np.allclose(got, want, rtol=tol["rtol"], atol=tol["atol"] * scale):
                out.append(f"Warp's p{i} {what} differs from the model by {np.abs(got - want).max():.3g}:\n"
                           f"{p.source(f'p{i}')}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=240)
    parser.add_argument("--per-module", type=int, default=12)
    parser.add_argument("--seed", type=int, default=None, help="fixed hypothesis seed (default: random)")
    parser.add_argument("--devices", default="cpu,cuda-emu")
    parser.add_argument("--warp", action="store_true", help="also check the numpy models against Warp")
    parser.add_argument("--json", action="store_true", help="print the totals as one JSON line")
    args = parser.parse_args()
    start = time.time()
    programs = collect(args.programs, seed=args.seed)
    folder = Path(tempfile.mkdtemp(prefix="tilec-propfuzz-"))
    harness.CACHE = folder / "builds"
    totals = {"programs": 0, "forward": 0, "adjoint": 0, "refused": 0, "mismatches": 0, "warp_checked": 0,
              "warp_mismatches": 0}
    ops: set = set()
    devices = args.devices.split(",")
    for batch, first in enumerate(range(0, len(programs), args.per_module)):
        part = programs[first:first + args.per_module]
        device = devices[batch % len(devices)]
        result = check_programs(part, f"propfuzz{batch}", device, (16, 32, 64)[batch % 3],
                                np.random.default_rng(batch))
        if args.warp:
            wrong = warp_mismatches(part, f"propwarp{batch}", folder, np.random.default_rng(batch))
            totals["warp_checked"] += sum(p.warp_accepts for p in part)
            totals["warp_mismatches"] += len(wrong)
            result["failures"] += wrong
        totals["programs"] += len(part)
        for key in ("forward", "adjoint", "refused"):
            totals[key] += result[key]
        totals["mismatches"] += len(result["failures"])
        ops |= set().union(*(p.ops for p in part))
        for text in result["failures"]:
            print(f"--- mismatch:\n{text}\n")
        print(f"{totals['programs']} programs: {totals} ({time.time() - start:.0f} s)", file=sys.stderr, flush=True)
    totals["ops_covered"] = len(ops)
    totals["seconds"] = round(time.time() - start)
    print(json.dumps(totals, sort_keys=True) if args.json else totals)
    return 1 if totals["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
