"""Silent overflow (issue #17): every integer reaching generated code is range-checked at compile
time, annotated locals convert like Python or are refused, and the loader validates `dim` and its
boolean keywords strictly."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from common import tilec

KERNEL = '''import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float), B: wp.array(dtype=int), C: wp.array(dtype=wp.int64)):
    {body}
'''


@pytest.mark.parametrize("body,where,message", [
    ("t = wp.tile_zeros(shape=(1 << 70, 2), dtype=float)", "6:30: error[TC0111]",
     "(1180591620717411303424, 2) has more than 67108864 elements"),
    ("for i in range(2**32 + 3):\n        A[0] = A[0] + 1.0", "6:20: error[TC0112]",
     "integer 4294967299 does not fit in int32"),
    ("B[0] = 3000000000", "6:12: error[TC0112]", "integer 3000000000 does not fit in int32"),
    ("x = -2147483649\n    B[0] = x", "6:9: error[TC0112]", "integer -2147483649 does not fit in int32"),
    ("x: int = 1.5\n    B[0] = x", "6:14: error[TC0201]", "`x` is annotated an int32 scalar but the value is a float"),
    ("C[0] = 2**64", "6:12: error[TC0112]", "integer 18446744073709551616 does not fit in int64"),
    ("t = wp.tile_load(A, shape=(4,), offset=(2**40,))", "error[TC0112]", "does not fit in int32"),
])
def test_out_of_range_integers_are_diagnostics(tmp_path, body, where, message):
    (tmp_path / "prog.py").write_text(KERNEL.format(body=body))
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert where in proc.stderr and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("body", ["C[0] = 3000000000", "B[0] = 2147483647", "B[0] = -2147483648",
                                  "y: float = 3\n    A[0] = y", "x: int = 7\n    B[0] = x"])
def test_in_range_integers_are_accepted(tmp_path, body):
    (tmp_path / "prog.py").write_text(KERNEL.format(body=body))
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


LOADER = '''
import warp as wp


@wp.kernel
def k(A: wp.array(dtype=float)):
    i = wp.tid()
    A[i] = A[i] + 1.0
'''


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("clang++") is None, reason="needs a C++ compiler")
def test_the_loader_refuses_huge_grids_and_loose_flags(tmp_path):
    from harness import build

    mod = build(LOADER, "overflow_loader")
    A = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"`dim` \(2147483647, 2147483647, 4\) has 18446744056529682436 points"):
        mod.k.launch(dim=(2**31 - 1, 2**31 - 1, 4), inputs=[A])
    with pytest.raises(ValueError, match=r"`dim` entries must be in \[1, 2147483647\]"):
        mod.k.launch(dim=2**31, inputs=[A])
    # issue #17: each extent >= 1; an empty grid is refused (Warp runs nothing), both launch forms
    for dim in (0, (4, 0), (0, 2**31 - 1), np.int64(0)):
        with pytest.raises(ValueError, match=r"k: `dim` entries must be in \[1, 2147483647\], got 0 \(a launch "
                                             r"without work: skip the call\)"):
            mod.k.launch(dim=dim, inputs=[A])
        with pytest.raises(ValueError, match=r"`dim` entries must be in \[1, 2147483647\], got 0"):
            mod.k.launch_tiled(dim=dim, inputs=[A])
    for flag in ("no", 0, 1, None, "False"):
        with pytest.raises(TypeError, match=r"k: `adjoint` must be True or False, got"):
            mod.k.launch(dim=4, inputs=[A], adj_inputs=[np.zeros(4, np.float32)], adjoint=flag)
    assert not A.any()  # nothing ran
    with pytest.raises(TypeError, match=r"`num_threads` must be a non-negative int"):
        mod.k.launch(dim=4, inputs=[A], num_threads=-1)
    mod.k.launch(dim=4, inputs=[A], adjoint=np.bool_(False))
    assert A.tolist() == [1, 1, 1, 1]
