"""Emit time against program size (issue #17: 2,000 straight-line statements in under 2 s, 20,000
in under 20 s). Prints the CPU seconds (the compile thread's user + system time, not wall clock:
the numbers hold on a shared machine) of checking and of generating every file (C++, CUDA, header,
manifest, loader; forward and adjoint) for kernels of N statements, run as the command line runs
a compile (limits.run_deep: large stack, no cyclic garbage collection). Two programs: `scalar`, a
SIMT kernel of N scalar statements, and `tiles`, a tile kernel of N elementwise tile statements.

Generation is split into what both targets share and each target's own emission, measured in a
second run of the same steps (driver.generate's): `plan_s` (the adjoint derivations,
sources.plan_kernels), `cpu_s` (backend_cpu: .cpp and .h), `cuda_s` (backend_cuda: plan and .cu).
`emit_cpu_s` = check + plan + cpu and `emit_cuda_s` = check + plan + cuda are what `tilec emit
--target cpu|cuda` costs; `total_s` = check + generate (every file, both targets) is the target.

    python bench/emit_scaling.py                 # 2000 and 20000, both programs
    python bench/emit_scaling.py 500 4000        # other sizes
    python bench/emit_scaling.py --json 2000     # one JSON object per line, for scripts
"""
from __future__ import annotations

import argparse
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
        plan, cpu_s, cuda_s = _by_target(module)
        check = checked - start
        return {"program": kind, "statements": n, "clock": "thread_cpu", "check_s": round(check, 3),
                "generate_s": round(done - checked, 3), "total_s": round(done - start, 3),
                "plan_s": round(plan, 3), "cpu_s": round(cpu_s, 3), "cuda_s": round(cuda_s, 3),
                "emit_cpu_s": round(check + plan + cpu_s, 3), "emit_cuda_s": round(check + plan + cuda_s, 3)}

    return run_deep(run)


def _by_target(module) -> tuple:
    """CPU seconds of driver.generate's steps: the shared plans, the CPU files, the CUDA file."""
    from tilec.backend_cpu import emit as cpu_emit
    from tilec.backend_cuda import emit as cuda_emit
    from tilec.codegen import sources

    start = cpu()
    plans = sources.plan_kernels(module)
    planned = cpu()
    cpu_emit.emit_cpu(module, plans)
    cpu_done = cpu()
    cuda_emit.emit_cuda(module, cuda_emit.plan_cuda(module, plans), False, 48 * 1024)
    return planned - start, cpu_done - planned, cpu() - cpu_done


def main(argv) -> None:
    parser = argparse.ArgumentParser(description="CPU seconds of checking and generating every file for "
                                     "kernels of N straight-line statements (issue #17).")
    parser.add_argument("sizes", nargs="*", type=int, default=[2000, 20000], help="statements per kernel")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    as_json, sizes = args.json, args.sizes
    for kind in PROGRAMS:
        for n in sizes:
            row = measure_one(n, kind)
            if as_json:
                print(json.dumps(row, sort_keys=True), flush=True)
            else:
                print(f"{kind:>6} {n:>6} statements: check {row['check_s']:6.2f} s, generate "
                      f"{row['generate_s']:6.2f} s, total {row['total_s']:6.2f} s (limit {n / 1000:g} s); "
                      f"plan {row['plan_s']:6.2f} s, cpu {row['cpu_s']:6.2f} s, cuda {row['cuda_s']:6.2f} s; "
                      f"emit --target cpu {row['emit_cpu_s']:6.2f} s, cuda {row['emit_cuda_s']:6.2f} s "
                      "(CPU time)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
