"""The clean-check shortcut (uptodate.py): `tilec check` of a file whose last check, with the same
options and the same tilec, printed nothing exits 0 before loading the command line or the
frontend; any other check runs in full and prints its diagnostics every time."""
from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = '''import warp as wp


@wp.kernel
def scale(A: wp.array(dtype=float), B: wp.array(dtype=float)):
    i = wp.tid()
    B[i] = A[i] * {factor}
'''


def check(tmp_path, *args):
    """`python -X importtime -m tilec check ARGS`: (exit code, stdout and stderr without the import
    lines, whether the frontend (libcst) was imported)."""
    env = dict(os.environ, TILEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tilec", "check", *args], capture_output=True,
                          text=True, env=env)
    lines = proc.stderr.splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    output = proc.stdout + "\n".join(line for line in lines if not line.startswith("import time:"))
    assert "Traceback" not in output, output
    return proc.returncode, output, "libcst" in imported


def test_a_clean_check_is_answered_from_its_record(tmp_path):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM.format(factor="2.0"))
    assert check(tmp_path, str(src)) == (0, "", True)
    assert check(tmp_path, str(src)) == (0, "", False)
    assert check(tmp_path, str(src), "--color", "never") == (0, "", False)  # colour changes nothing printed
    assert check(tmp_path, str(src), "--block-dim", "64") == (0, "", True)  # another option: checked
    assert check(tmp_path, str(src), "--block-dim=64") == (0, "", False)
    assert check(tmp_path, str(src), "-v")[2]  # the verbose listing is never replayed


def test_a_check_that_reports_is_never_replayed(tmp_path):
    src = tmp_path / "scaled.py"
    src.write_text(PROGRAM.format(factor="2.0"))
    check(tmp_path, str(src))
    src.write_text(PROGRAM.format(factor="wp.tile_zeros(shape=3, dtype=float)"))  # same size: a new hash decides
    for _ in range(2):
        code, stderr, frontend = check(tmp_path, str(src))
        assert code == 1 and frontend and f"{src}:7:" in stderr, stderr
    src.write_text(PROGRAM.format(factor="2.0"))
    assert check(tmp_path, str(src)) == (0, "", False)  # the clean record of these bytes still holds


def test_the_check_argv_reader_leaves_other_commands_to_the_command_line():
    from tilec import uptodate

    read = uptodate.read_check_argv
    assert read(["check", "p.py"]) == ("p.py", {"block_dim": 256, "max_shared": None})
    assert read(["check", "p.py", "--max-shared=1024", "--color", "always"]) == (
        "p.py", {"block_dim": 256, "max_shared": 1024})
    for refused in (["check"], ["build", "p.py"], ["check", "p.py", "--show-types"], ["check", "p.py", "-v"],
                    ["check", "p.py", "--format", "json"], ["check", "p.py", "-o", "x"], ["check", "p.py", "--target", "cpu"],
                    ["check", "p.py", "--dump-after", "parse"], ["check", "p.py", "q.py"]):
        assert read(refused) is None, refused
