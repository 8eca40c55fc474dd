"""Emit time against program size (issue #17: 2,000 straight-line statements in under 2 s, 20,000
in under 20 s). Prints the CPU seconds of checking and of generating every file (C++, CUDA, header,
manifest, loader; forward and adjoint) for kernels of N statements.

    python bench/emit_scaling.py            # 2000 and 20000
    python bench/emit_scaling.py 500 1000   # other sizes
"""
from __future__ import annotations

import resource
import sys


def program(n: int) -> str:
    lines = ["    x0 = A[0]"] + [f"    x{i} = x{i - 1} * 1.0001 + A[{i % 8}]" for i in range(1, n)]
    return ("import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n"
            + "\n".join(lines + [f"    A[0] = x{n - 1}"]) + "\n")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_THREAD if hasattr(resource, "RUSAGE_THREAD") else resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(sizes) -> None:
    from tilec.driver import generate
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    flags = {"block_dim": 256, "target": "all", "debug": False, "max_shared": 48 * 1024, "emit_only": True}
    for n in sizes:
        src = program(n)
        start = cpu()
        module = normalize_module(compile_source(src, "straight.py").module)
        checked = cpu()
        generate(module, src, flags)
        done = cpu()
        print(f"{n:>6} statements: check {checked - start:7.2f} s, generate {done - checked:7.2f} s, "
              f"total {done - start:7.2f} s", flush=True)


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [2000, 20000]
    from tilec.limits import run_deep

    run_deep(lambda: measure(sizes))
