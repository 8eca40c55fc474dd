"""How long `tilec check` takes on a 500-line tile program (target: < 0.5 s).

Prints the CPU and wall time of the command (interpreter start included; CPU time from getrusage,
which other load on a shared machine inflates less) and the time of the checking pipeline inside
one process, median of repeats. The command runs with Python's bytecode cache on, in a temporary
PYTHONPYCACHEPREFIX (as an installed tilec has its .pyc files), and with an empty tilec cache (no
record of an earlier clean check answers it). --json prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = '''

@wp.kernel
def kernel_{n}(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float), s: float):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range(A.shape[1] // T):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    m = wp.tile_broadcast(wp.tile_reshape(wp.tile_max(acc, axis=1), shape=(T, 1)), shape=(T, T))
    e = wp.tile_map(wp.exp, acc - m) * s
    d = wp.tile_broadcast(wp.tile_reshape(wp.tile_sum(e, axis=1), shape=(T, 1)), shape=(T, T))
    y = wp.tile_map(act_{n}, e / d)
    if s > 0.0:
        y = y + 1.0
    wp.tile_store(C, y, offset=(i * T, j * T))


@wp.func
def act_{n}(x: float):
    return wp.max(x, 0.0) + 0.01 * wp.min(x, 0.0)
'''


def program(lines: int = 500) -> str:
    text, n = "import warp as wp\n\nT = 32\n", 0
    while text.count("\n") < lines:
        text += KERNEL.format(n=n)
        n += 1
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    args = parser.parse_args(argv)
    source = program()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        path.write_text(source)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env["TILEC_CACHE_DIR"] = str(Path(tmp) / "cache")
        walls, cpus = [], []
        for i in range(6):  # the first run fills the bytecode cache
            shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)  # no record of a clean check: a full check
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "tilec", "check", str(path)], capture_output=True, env=env)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert proc.returncode == 0, proc.stderr.decode()
            if i:
                walls.append(wall)
                cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        from tilec.pipeline import compile_source

        inproc = []
        for _ in range(5):
            t0 = time.perf_counter()
            compile_source(source, "big.py")
            inproc.append(time.perf_counter() - t0)
    row = {"lines": source.count("\n"), "kernels": source.count("@wp.kernel"),
           "command_cpu_s": round(statistics.median(cpus), 3), "command_wall_s": round(statistics.median(walls), 3),
           "pipeline_wall_s": round(statistics.median(inproc), 3), "repeats": 5}
    if args.json:
        print(json.dumps(row, sort_keys=True))
        return
    print(f"program: {row['lines']} lines, {row['kernels']} kernels")
    print(f"tilec check, whole command: {row['command_cpu_s']:.3f} s CPU, {row['command_wall_s']:.3f} s wall "
          "(median of 5)")
    print(f"check pipeline in-process:  {row['pipeline_wall_s']:.3f} s wall (median of 5)")


if __name__ == "__main__":
    main()
