"""Compiler resource blow-ups (issue #17): deep programs, huge constants and huge or endless inputs
are diagnostics with exit 1, never a traceback, a hang or a MemoryError; liveness does linear work
(counted; tests/test_emit_linear.py counts the whole emission, bench/emit_scaling.py times it)."""
from __future__ import annotations

import time

import pytest

from common import ROOT, tilec

HEADER = "import warp as wp\n\n\n"


def kernel(body: str, funcs: str = "") -> str:
    return HEADER + funcs + "@wp.kernel\ndef k(A: wp.array(dtype=float)):\n" + body


def test_a_400_term_expression_compiles(tmp_path):
    terms = " + ".join(f"A[{i % 4}]" for i in range(400))
    (tmp_path / "prog.py").write_text(kernel(f"    A[0] = {terms}\n"))
    proc = tilec("emit", "prog.py", "--target", "cpu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_150_nested_func_calls_compile(tmp_path):
    nested = "A[0]"
    for _ in range(150):
        nested = f"f({nested})"
    funcs = "@wp.func\ndef f(x: float) -> float:\n    return x + 1.0\n\n\n"
    (tmp_path / "prog.py").write_text(kernel(f"    A[0] = {nested}\n", funcs))
    proc = tilec("emit", "prog.py", "--target", "cuda", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_an_expression_deeper_than_the_limit_is_a_diagnostic(tmp_path):
    (tmp_path / "prog.py").write_text(kernel("    A[0] = " + "-" * 3000 + "A[0]\n"))
    proc = tilec("check", "prog.py", cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "error[TC0113]" in proc.stderr and "Traceback" not in proc.stderr


def test_many_deep_expressions_are_a_diagnostic_before_parsing(tmp_path):
    """Each under the depth limit, together too much for libcst's parser (its time grows with how deep
    calls nest, summed over the calls: found by bench/fuzz_hostile.py, a 184 KB file of 151 sums of
    160-deep calls that took 54 s of CPU). Checked on Python's own parse, so it answers at once."""
    term = "wp.abs(" * 120 + "A[0]" + ")" * 120
    (tmp_path / "prog.py").write_text(kernel("    A[0] = " + " + ".join([term] * 60) + "\n"))
    proc = tilec("check", "prog.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "error[TC0113]: calls nested too deeply, too many of them for the parser" in proc.stderr


@pytest.mark.parametrize("expr,col", [("0xFFFF ** 0xFFFFFFF", 5), ("1 << 10**10", 5), ("3 * 7 ** 10**9", 9)])
def test_constant_folding_has_a_budget(tmp_path, expr, col):
    (tmp_path / "prog.py").write_text(f"N = {expr}\n")
    start = time.monotonic()
    proc = tilec("check", "prog.py", cwd=tmp_path, timeout=60)
    assert time.monotonic() - start < 30
    assert proc.returncode == 1 and f"prog.py:1:{col}: error[TC0113]" in proc.stderr, proc.stderr


def test_a_5000_digit_literal_is_a_clean_error(tmp_path):
    (tmp_path / "prog.py").write_text("N = " + "1" * 5000 + "\n")
    proc = tilec("check", "prog.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "prog.py:1:" in proc.stderr and "Traceback" not in proc.stderr


def test_folding_inside_a_kernel_has_the_same_budget(tmp_path):
    (tmp_path / "prog.py").write_text(kernel("    A[0] = float(2 ** 100000000)\n"))
    proc = tilec("check", "prog.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "error[TC0113]" in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [["check"], ["emit", "--target", "cpu"], ["build", "--emit-only"]])
def test_dev_zero_and_other_non_files_are_refused(command):
    proc = tilec(command[0], "/dev/zero", *command[1:], timeout=60)
    assert proc.returncode == 1 and "/dev/zero: error: not a regular file" in proc.stderr


def test_a_huge_input_is_refused_with_a_message(tmp_path):
    (tmp_path / "big.py").write_bytes(b"#" * (17 * 1024 * 1024))
    proc = tilec("check", "big.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "larger than 16 MiB" in proc.stderr


def test_random_bytes_are_a_clean_error(tmp_path):
    import random

    data = bytes(random.Random(7).randrange(256) for _ in range(4096))
    (tmp_path / "noise.py").write_bytes(data)
    proc = tilec("check", "noise.py", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr


def straight_line(n: int) -> str:
    lines = ["    x0 = A[0]"] + [f"    x{i} = x{i - 1} * 1.0001 + A[{i % 8}]" for i in range(1, n)]
    return kernel("\n".join(lines + [f"    A[0] = x{n - 1}"]) + "\n")


def test_the_compile_runs_without_the_cyclic_collector():
    """Full collections re-walk every live IR node, and their number grows with the program: with
    the collector on, 4,000 statements spent 4 s of 15 collecting. It is back on afterwards."""
    import gc

    from tilec.limits import run_deep

    assert gc.isenabled()
    assert run_deep(gc.isenabled) is False
    assert gc.isenabled()


def test_the_cli_run_in_process_turns_the_collector_back_on():
    """`main` switches the collector off for its own short-lived process; a caller running the CLI
    in-process (click's test runner) gets it back when the command ends."""
    import gc

    from click.testing import CliRunner

    from tilec.cli import main

    result = CliRunner().invoke(main, ["check", str(ROOT / "samples" / "gemm.py")])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()


def _calls_of(work) -> int:
    """Python and builtin calls made by work() on this thread (counted, not timed)."""
    import sys

    count = [0]

    def hook(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(hook)
    try:
        work()
    finally:
        sys.setprofile(None)
    return count[0]


def test_liveness_of_a_long_chain_takes_linear_work():
    """Dead-code elimination's liveness over x1 = f(x0), ..., xn = f(xn-1) with only xn stored:
    rounds over every assignment took n rounds (3,000 statements: ~9 million steps, seconds); a
    worklist takes n steps, so twice the chain costs twice the calls (quadratic: 4x). Emission as
    a whole is counted the same way in tests/test_emit_linear.py; bench/emit_scaling.py times it."""
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.passes.simplify import _live_symbols
    from tilec.pipeline import compile_source

    def chain(n: int):
        return run_deep(lambda: normalize_module(compile_source(straight_line(n), "s.py").module).kernels[0])

    short, long = chain(1500), chain(3000)
    assert {s.name for s in _live_symbols(long)} >= {f"x{i}" for i in range(3000)}
    calls_short, calls_long = _calls_of(lambda: _live_symbols(short)), _calls_of(lambda: _live_symbols(long))
    assert calls_long <= 2.3 * calls_short, (calls_short, calls_long)
