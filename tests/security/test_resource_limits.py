"""Compiler resource blow-ups (issue #17): deep programs, huge constants and huge or endless inputs
are diagnostics with exit 1, never a traceback, a hang or a MemoryError; emission grows about
linearly with program size (bench/emit_scaling.py measures 2,000 and 20,000 statements)."""
from __future__ import annotations

import resource
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


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_THREAD if hasattr(resource, "RUSAGE_THREAD") else resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def straight_line(n: int) -> str:
    lines = ["    x0 = A[0]"] + [f"    x{i} = x{i - 1} * 1.0001 + A[{i % 8}]" for i in range(1, n)]
    return kernel("\n".join(lines + [f"    A[0] = x{n - 1}"]) + "\n")


def tile_straight_line(n: int) -> str:
    """n elementwise tile statements (bench/emit_scaling.py's `tiles`): every one leaves a take, a
    zero fill and a copy in the adjoint for adjoint_tidy to fold."""
    lines = ["    i = wp.tid()", "    t0 = wp.tile_load(A, shape=8, offset=i * 8)"]
    lines += [f"    t{j} = t{j - 1} * 1.0001 + wp.sin(t{j - 1})" for j in range(1, n)]
    return kernel("\n".join(lines + [f"    wp.tile_store(A, t{n - 1}, offset=i * 8)"]) + "\n")


def _emit_seconds(n: int, runs: int = 2, program=straight_line) -> float:
    """CPU seconds of check + generate (both targets) of an n-statement kernel, run as the command
    line runs a compile (limits.run_deep); the least of `runs`, so a busy machine hurts less."""
    from tilec.driver import generate
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.pipeline import compile_source

    flags = {"block_dim": 256, "target": "all", "debug": False, "max_shared": 48 * 1024, "emit_only": True}
    src = program(n)

    def once() -> float:
        start = _cpu()
        generate(normalize_module(compile_source(src, "s.py").module), src, flags)
        return _cpu() - start

    return min(run_deep(once) for _ in range(runs))


@pytest.mark.parametrize("program", [straight_line, tile_straight_line], ids=["scalar", "tiles"])
def test_emission_grows_about_linearly(program):
    """200 and 800 statements: 4x the program may cost at most ~6x the time (generous for a
    loaded machine; bench/emit_scaling.py measures 2,000 and 20,000). The tile program's adjoint
    tidy once recounted the whole body per candidate: 200 -> 400 statements took 6.6x."""
    small, large = _emit_seconds(200, runs=1, program=program), _emit_seconds(800, runs=1, program=program)
    assert large < 6 * small + 0.5, (small, large)


@pytest.mark.slow
def test_emission_of_4000_statements_is_not_quadratic():
    """1,000 against 4,000 statements: linear is 4x, quadratic 16x; before the cyclic collector was
    turned off during a compile and the liveness passes were made worklists it was 6.3x."""
    small, large = _emit_seconds(1000), _emit_seconds(4000)
    assert large < 5.5 * small, (small, large)


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


def test_liveness_of_a_long_chain_takes_linear_time():
    """Dead-code elimination's liveness over x1 = f(x0), ..., xn = f(xn-1) with only xn stored:
    rounds over every assignment took n rounds (3,000 statements: ~9 million steps, seconds); a
    worklist takes n steps."""
    from tilec.limits import run_deep
    from tilec.passes.normalize import normalize_module
    from tilec.passes.simplify import _live_symbols
    from tilec.pipeline import compile_source

    fn = run_deep(lambda: normalize_module(compile_source(straight_line(3000), "s.py").module).kernels[0])
    start = _cpu()
    live = _live_symbols(fn)
    spent = _cpu() - start
    assert {s.name for s in live} >= {f"x{i}" for i in range(3000)}
    assert spent < 1.0, spent
