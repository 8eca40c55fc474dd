"""The user-facing gradient checker: `tilec.gradcheck` on a loaded module and `tilec gradcheck FILE`."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from tilec.gradcheck import gradcheck, parse_assignments, widened


class FakeKernel:
    """The loader's Kernel interface, in numpy: O[i] = X[i]**2 with an adjoint made wrong on purpose
    (or right), to show the checker catches a wrong gradient and a kept seed."""

    def __init__(self, scale=2.0, consume=True):
        self.name = "square"
        self.params = [{"name": "X", "kind": "array", "dtype": "float64", "ndim": 1},
                       {"name": "O", "kind": "array", "dtype": "float64", "ndim": 1}]
        self.meta = {"tiled": False, "entries": {"cpu": {"forward": "f", "backward": "b"}}}
        self.scale, self.consume = scale, consume

    def launch(self, dim, inputs, adj_inputs=None, adjoint=False, device="cpu"):
        X, O = inputs
        if not adjoint:
            O[...] = X * X
            return
        aX, aO = adj_inputs
        aX += self.scale * X * aO
        if self.consume:
            aO[...] = 0


def test_checker_passes_a_right_adjoint_and_reports_the_worst_elements():
    report = gradcheck(FakeKernel(), 4, [np.linspace(0.5, 1.5, 4), np.zeros(4)])
    assert report.ok, str(report)
    assert [(r.argument, r.state) for r in report.rows] == [("X", "before"), ("O", "before"), ("X", "after"),
                                                             ("O", "after")]


def test_checker_fails_a_wrong_derivative_and_a_seed_left_in_place():
    wrong = gradcheck(FakeKernel(scale=2.5), 4, [np.linspace(0.5, 1.5, 4), np.zeros(4)])
    assert not wrong.ok and "FAIL" in str(wrong) and "X (before)" in str(wrong)
    kept = gradcheck(FakeKernel(consume=False), 4, [np.linspace(0.5, 1.5, 4), np.zeros(4)])
    assert not kept.ok
    assert [r.argument for r in kept.rows if r.error > 0] == ["O", "O"]


def test_a_kernel_without_adjoint_is_reported_as_refused():
    k = FakeKernel()
    k.meta = {"tiled": False, "entries": {"cpu": {"forward": "f"}}, "no_backward": "3:4: why"}
    report = gradcheck(k, 4, [np.ones(4), np.zeros(4)])
    assert not report.ok and report.refused == "3:4: why" and "no adjoint: 3:4: why" in str(report)


def test_assignments_and_widening():
    assert parse_assignments(["A=4,8", "n=3"], int) == {"A": (4, 8), "n": (3,)}
    assert parse_assignments(["s=0.5"], float) == {"s": 0.5}
    assert parse_assignments(["4,2"], int) == {None: (4, 2)}
    with pytest.raises(ValueError, match="cannot read `n=`: expected NAME=X"):
        parse_assignments(["n="], float)  # was an IndexError: an internal compiler error in `tilec gradcheck`
    from tilec.pipeline import compile_source

    src = "import warp as wp\n\n@wp.kernel\ndef k(A: wp.array(dtype=float), B: wp.array(dtype=float)):\n" \
          "    i = wp.tid()\n    B[i] = A[i] * 2.0\n"
    module = widened(compile_source(src, "w.py").module)
    assert [str(p.type) for p in module.kernels[0].params] == ["array1d(float64)", "array1d(float64)"]


PROGRAM = '''import warp as wp


@wp.kernel
def scale_in_place(A: wp.array(dtype=float), X: wp.array(dtype=float)):
    i = wp.tid()
    A[i] = A[i] + X[i] * X[i]


@wp.kernel
def square_in_place(A: wp.array(dtype=float)):
    i = wp.tid()
    A[i] = A[i] * A[i]


@wp.kernel
def rows(X: wp.array2d(dtype=float), Y: wp.array2d(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(X, shape=(1, 8), offset=(i, 0))
    wp.tile_store(Y, wp.tile_map(wp.exp, x) / wp.tile_sum(x)[0], offset=(i, 0))
'''


@pytest.mark.build
@needs_cxx
def test_tilec_gradcheck_command(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    run = [sys.executable, "-m", "tilec", "gradcheck", str(path)]
    proc = subprocess.run(run + ["--dim", "4", "--shape", "A=4", "--shape", "X=4"] + [
        "--kernel", "scale_in_place", "--kernel", "square_in_place"], capture_output=True, text=True,
        env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scale_in_place: gradients match finite differences" in proc.stdout
    assert "square_in_place: no adjoint:" in proc.stdout and "`A`" in proc.stdout
    proc = subprocess.run(run + ["--kernel", "rows", "--dim", "3", "--shape", "X=3,8", "--shape", "Y=3,8"],
                          capture_output=True, text=True,
                          env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "rows: gradients match" in proc.stdout and "ok" in proc.stdout
    proc = subprocess.run(run + ["--kernel", "nope"], capture_output=True, text=True)
    assert proc.returncode == 1 and "error: no kernel named nope (kernels: scale_in_place" in proc.stderr


@pytest.mark.parametrize("option, message", [
    (["--dim", "n=4"], "error: --dim n=4: expected launch dimensions"),  # was a KeyError (internal error)
    (["--shape", "4"], "error: --shape 4: expected NAME=D0,D1"),  # was silently unused
    (["--value", "3"], "error: --value 3: expected NAME=X"),  # was silently unused
    (["--value", "n="], "error: cannot read `n=`: expected NAME=X"),  # was an IndexError (internal error)
])
def test_tilec_gradcheck_refuses_an_unusable_option(tmp_path, option, message):
    """Each is refused before anything is compiled: exit 1 and a one-line error, no internal error."""
    from click.testing import CliRunner

    from tilec.cli import main

    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    result = CliRunner().invoke(main, ["gradcheck", str(path), *option])
    assert result.exit_code == 1, result.output
    assert message in result.output and "internal compiler error" not in result.output


VALUE_PROGRAM = '''import warp as wp

@wp.kernel
def place(p: wp.array(dtype=wp.vec3), t: wp.array(dtype=wp.transform), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.transform_point(t[i], p[i])
    out[i] = wp.dot(q, q)
'''


@pytest.mark.build
@needs_cxx
def test_tilec_gradcheck_shapes_arrays_of_value_types(tmp_path):
    """`--shape p=4` names the array's own axes; a vec3 / transform array gets its value's axes
    appended (it asked for `(..., 3)` and refused every shape it could be given)."""
    path = tmp_path / "values.py"
    path.write_text(VALUE_PROGRAM)
    proc = subprocess.run([sys.executable, "-m", "tilec", "gradcheck", str(path), "--dim", "4",
                           "--shape", "p=4", "--shape", "t=4", "--shape", "out=4"],
                          capture_output=True, text=True, env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "place: gradients match finite differences" in proc.stdout
    assert "t (before) worst at (" in proc.stdout and "FAIL" not in proc.stdout
