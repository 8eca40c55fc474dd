"""How long `tilec check` takes on a 500-line tile program (target: < 0.5 s).

Prints the wall time of the command (interpreter start included) and the time of
the checking pipeline inside one process, median of repeats.
"""
from __future__ import annotations

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


def main() -> None:
    source = program()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.py"
        path.write_text(source)
        walls = []
        for _ in range(5):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", str(path)], capture_output=True)
            walls.append(time.perf_counter() - t0)
            assert proc.returncode == 0, proc.stderr.decode()
        from tilec.pipeline import compile_source

        inproc = []
        for _ in range(5):
            t0 = time.perf_counter()
            compile_source(source, "big.py")
            inproc.append(time.perf_counter() - t0)
    print(f"program: {source.count(chr(10))} lines, {source.count('@wp.kernel')} kernels")
    print(f"tilec check, whole command: {statistics.median(walls):.3f} s (median of 5)")
    print(f"check pipeline in-process:  {statistics.median(inproc):.3f} s (median of 5)")


if __name__ == "__main__":
    main()
