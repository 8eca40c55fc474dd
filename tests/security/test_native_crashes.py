"""Valid programs never crash the process natively (issue #17, "Native crashes from valid programs"):
each case runs in a fresh interpreter, which must exit cleanly."""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from common import tilec

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None,
                                reason="needs a C++ compiler")

BIG = '''
import warp as wp


@wp.func
def twice(x: float) -> float:
    return x * 2.0


@wp.kernel
def big(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(1024, 1024))
    u = wp.tile_map(twice, t)
    wp.tile_store(B, u)


@wp.kernel
def huge(A: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_zeros(shape=(1 << 26,), dtype=float)
    wp.tile_store(A, t + t)
'''

DIV = '''
import warp as wp


@wp.kernel
def d(a: wp.array(dtype=int), b: wp.array(dtype=int), q: wp.array(dtype=int), r: wp.array(dtype=int)):
    i = wp.tid()
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]


@wp.kernel
def d64(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int64), q: wp.array(dtype=wp.int64),
        r: wp.array(dtype=wp.int64)):
    i = wp.tid()
    q[i] = a[i] // b[i]
    r[i] = a[i] % b[i]
'''


def run_isolated(tmp_path, source, name, script, limit_mb=None):
    (tmp_path / f"{name}.py").write_text(source)
    proc = tilec("build", f"{name}.py", "-o", "out", "--target", "cpu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    prelude = "import sys, numpy as np\nsys.path.insert(0, 'out')\n"
    if limit_mb:
        prelude += textwrap.dedent(f"""
            import resource
            used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()
            resource.setrlimit(resource.RLIMIT_AS, (used + {limit_mb} * 2**20, resource.RLIM_INFINITY))
        """)
    run = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300, env={"TILEC_NUM_THREADS": "1", "PATH": ""})
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    return run.stdout


def test_a_megabyte_tile_and_its_map_run_from_the_heap(tmp_path):
    out = run_isolated(tmp_path, BIG, "big", """
        import big
        A = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024) % 7
        B = np.zeros_like(A)
        big.big.launch_tiled(dim=1, inputs=[A, B], device="cpu")
        assert np.array_equal(B, 2 * A)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_allocation_failure_is_a_memory_error(tmp_path):
    out = run_isolated(tmp_path, BIG, "big", """
        import big
        A = np.zeros(4, np.float32)
        try:
            big.huge.launch_tiled(dim=1, inputs=[A], device="cpu")
        except MemoryError as e:
            print("MemoryError", e)
    """, limit_mb=128)
    assert out.startswith("MemoryError huge: out of memory")


def test_a_tile_beyond_the_size_limit_is_a_diagnostic(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n"
        "    t = wp.tile_zeros(shape=(1 << 30,), dtype=float)\n    wp.tile_store(A, t)\n")
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 1 and "error[TC0111]" in proc.stderr and "more than 67108864 elements" in proc.stderr


def test_integer_division_by_zero_and_overflow_never_trap(tmp_path):
    """Warp 1.19 on the CPU dies of SIGFPE here; tilec returns numpy's values (documented in scalar.h):
    x // 0 = x % 0 = 0, MIN // -1 = MIN, MIN % -1 = 0."""
    out = run_isolated(tmp_path, DIV, "divz", """
        import divz
        for dt, k in ((np.int32, divz.d), (np.int64, divz.d64)):
            lo = np.iinfo(dt).min
            a = np.array([7, -7, 5, -5, lo, lo, 0, 9], dt)
            b = np.array([0, 0, 2, 2, -1, 0, 0, -4], dt)
            q, r = np.zeros_like(a), np.zeros_like(a)
            k.launch(dim=len(a), inputs=[a, b, q, r], device="cpu")
            with np.errstate(all="ignore"):
                assert q.tolist() == np.floor_divide(a, b).tolist(), q
                assert r.tolist() == np.fmod(a, b).tolist(), r
        print("ok")
    """)
    assert out.strip() == "ok"
