"""Emit time against program size (issue #17: 2,000 straight-line statements in under 2 s, 20,000
in under 20 s). Prints the CPU seconds of checking and of generating every file (C++, CUDA, header,
manifest, loader; forward and adjoint) for kernels of N statements, run as the command line runs
a compile (limits.run_deep: large stack, no cyclic garbage collection). Two programs: `scalar`, a
SIMT kernel of N scalar statements, and `tiles`, a tile kernel of N elementwise tile statements.

    python bench/emit_scaling.py                 # 500, 2000 and 20000, both programs
    python bench/emit_scaling.py 1000 4000       # other sizes
    python bench/emit_scaling.py --json 2000     # one JSON object per line, for scripts
"""
from __future__ import annotations

import json
import resource
import sys

PROGRAMS = ("scalar", "tiles")


def program(n: int, kind: str = "scalar") -> str:
    if kind == "scalar":
        lines = ["    x0 = A[0]"] + [f"    x{i} = x{i - 1} * 1.0001 + A[{i % 8}]" for i in range(1, n)]
        return ("import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n"
                + "\n".join(lines + [f"    A[0] = x{n - 1}"]) + "\n")
    lines = ["    i = wp.tid()", "    t0 = wp.tile_load(A, shape=8, offset=i * 8)"]
    lines += [f"    t{j} = t{j - 1} * 1.0001 + wp.sin(t{j - 1})" for j in range(1, n)]
    return ("import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float), B: wp.array(dtype=float)):\n"
            + "\n".join(lines + [f"    wp.tile_store(B, t{n - 1}, offset=i * 8)"]) + "\n")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_THREAD if hasattr(resource, "RUSAGE_THREAD") else resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure_one(n: int, kind: str = "scalar") -> dict:
    """CPU seconds of check and generate for one program, on the compile thread."""
    from tilec.driver import generate
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    flags = {"block_dim": 256, "target": "all", "debug": False, "max_shared": 48 * 1024, "emit_only": True}
    src = program(n, kind)

    def run() -> dict:
        start = cpu()
        module = normalize_module(compile_source(src, "straight.py").module)
        checked = cpu()
        generate(module, src, flags)
        done = cpu()
        return {"program": kind, "statements": n, "check_s": round(checked - start, 3),
                "generate_s": round(done - checked, 3), "total_s": round(done - start, 3)}

    return run_deep(run)


def main(argv) -> None:
    as_json = "--json" in argv
    sizes = [int(a) for a in argv if a != "--json"] or [500, 2000, 20000]
    for kind in PROGRAMS:
        for n in sizes:
            row = measure_one(n, kind)
            if as_json:
                print(json.dumps(row, sort_keys=True), flush=True)
            else:
                print(f"{kind:>6} {n:>6} statements: check {row['check_s']:7.2f} s, generate "
                      f"{row['generate_s']:7.2f} s, total {row['total_s']:7.2f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
