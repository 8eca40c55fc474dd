"""Source handling (issue #17, "Front-end gaps"): encodings as Python reads them, `return` inside
loops in funcs, every command inside the error guard, snippets right with any line separator."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from common import tilec

PROG = '''import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float)):
    i = wp.tid()
    A[i] = A[i] * 2.0  # caf\u00e9
'''


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf" + PROG.encode("utf-8"),
    b"# -*- coding: latin-1 -*-\n" + PROG.encode("latin-1"),
    b"# vim: set fileencoding=utf-8 :\n" + PROG.encode("utf-8"),
], ids=["bom", "latin-1-cookie", "utf-8-cookie"])
def test_bom_and_coding_cookies_are_honoured(tmp_path, data):
    (tmp_path / "prog.py").write_bytes(data)
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("data,message", [
    (b"# -*- coding: klingon -*-\n" + PROG.encode(), "unknown encoding"),
    (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + PROG.encode(), "encoding problem"),
    (PROG.encode("latin-1"), "not valid utf-8 text"),
])
def test_bad_encodings_are_clean_errors(tmp_path, data, message):
    (tmp_path / "prog.py").write_bytes(data)
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


RETURN_IN_LOOP = '''import warp as wp


@wp.func
def first_above(A: wp.array(dtype=float), t: float) -> int:
    for i in range(A.shape[0]):
        for j in range(2):
            if A[i] > t + float(j) * 0.0:
                return i
    return -1


@wp.kernel
def k(A: wp.array(dtype=float), out: wp.array(dtype=int)):
    out[0] = first_above(A, 2.5)
'''


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_return_inside_loops_in_a_func_compiles_for_both_targets(tmp_path):
    (tmp_path / "retloop.py").write_text(RETURN_IN_LOOP)
    for target in ("cpu", "cuda-emu"):
        proc = tilec("build", "retloop.py", "-o", "out", "--target", target, cwd=tmp_path)
        assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    import tilec as tl

    mod = tl.load(tmp_path / "out" / "retloop")
    for device in ("cpu", "cuda-emu"):
        for values, want in (([1, 2, 3, 4], 2), ([1, 2, 2, 1], -1), ([9, 0], 0)):
            out = np.zeros(1, np.int32)
            mod.k.launch(dim=1, inputs=[np.array(values, np.float32), out], device=device)
            assert out[0] == want, (device, values)


CRASHER = '''import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float)):
    A[0] = {expr}
'''


@pytest.mark.parametrize("command", [["check", "--show-types"], ["emit", "--target", "loader"],
                                     ["build", "--emit-only"]])
def test_every_command_runs_inside_the_error_guard(tmp_path, command):
    """A program deeper than the compiler's recursion budget fails the same clean way in every command."""
    (tmp_path / "prog.py").write_text(CRASHER.format(expr="-" * 3000 + "A[0]"))
    proc = tilec(command[0], "prog.py", *command[1:], cwd=tmp_path, timeout=600)
    assert proc.returncode == 1 and "error[TC0113]" in proc.stderr, proc.stderr[-2000:]


@pytest.mark.parametrize("separator", ["\u2028", "\x0c", "\x1c", "\x85"])
def test_snippets_follow_pythons_lines_with_any_separator_in_a_comment(tmp_path, separator):
    src = f"import warp as wp\n\n# one{separator}two\n\n@wp.kernel\ndef k(A: wp.array(dtype=float)):\n    A[0] = nope\n"
    (tmp_path / "prog.py").write_text(src, encoding="utf-8")
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "prog.py:7:12: error[TC0301]" in proc.stderr and "7 |     A[0] = nope" in proc.stderr, proc.stderr
