"""Messages a new user meets first: unknown names and their suggestions, host modules in kernels,
syntax errors, files without kernels. (The full rendering is pinned by tests/ui snapshots.)"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from tilec.cli import main
from tilec.frontend.suggest import closest, edit_distance

KERNEL = """import math
import numpy as np
import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    i = wp.tid()
    x = A[i]
    t = wp.tile_load(A, shape=(4,))
    {line}
    A[i] = x
"""


def check(tmp_path, text: str, *extra):
    (tmp_path / "prog.py").write_text(text)
    return CliRunner().invoke(main, ["check", str(tmp_path / "prog.py"), *extra])


def first_error(tmp_path, line: str) -> list:
    result = check(tmp_path, KERNEL.format(line=line))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    head = next(i for i, s in enumerate(lines) if ": error[" in s)
    helps = [s.strip() for s in lines[head + 1:head + 5] if s.strip().startswith("= help")]
    return [lines[head].split(": ", 1)[1]] + helps


@pytest.mark.parametrize("line, message, help_", [
    ("y = wp.expp(x)", "error[TC0302]: unknown tile API function `expp`", "= help: did you mean `wp.exp`?"),
    ("u = wp.volume_sample_index(t)", "error[TC0430]: `volume_sample_index` is a Warp builtin not supported by tilec yet",
     None),
    ("u = wp.tile_srot(t)", "error[TC0302]: unknown tile API operation `tile_srot`",
     "= help: did you mean `wp.tile_sort`?"),
    ("y = wp.tile_exp(x)", "error[TC0302]: unknown tile API operation `tile_exp`", None),  # not `exp`: a tile op
    ("y = np.exp(x)", "error[TC0301]: numpy is not available in kernels; use wp.exp", None),
    ("y = math.tanh(x)", "error[TC0301]: math is not available in kernels; use wp.tanh", None),
    ("y = np.maximum(x, 0.0)", "error[TC0301]: numpy is not available in kernels; use wp.max", None),
    ("y = helpr(x)", "error[TC0301]: unknown function `helpr`", None),
    ("y = xs + 1.0", "error[TC0301]: unknown name `xs`", "= help: did you mean `x`?"),
])
def test_unknown_names_say_unknown_and_suggest_only_close_names_of_their_kind(tmp_path, line, message, help_):
    got = first_error(tmp_path, line)
    assert got[0].endswith(message), got
    assert got[1:] == ([help_] if help_ else []), got


def test_suggestions_need_a_small_edit_distance():
    assert edit_distance("tile_srot", "tile_sort") == 1  # a transposition is one edit
    assert closest("tile_fft", ["tile_sort", "tile_sum", "tile_full"]) is None
    assert closest("expp", ["exp", "exp2"]) == "exp"


def test_a_syntax_error_shows_pythons_message_once_with_the_caret(tmp_path):
    result = check(tmp_path, "import warp as wp\n\n@wp.kernel\ndef k(A: wp.array(dtype=float):\n    pass\n")
    assert result.exit_code == 1
    assert result.output.splitlines()[:4] == [
        f"{tmp_path / 'prog.py'}:4:31: error[TC0001]: invalid syntax",
        "  |",
        "4 | def k(A: wp.array(dtype=float):",
        "  |                               ^",
    ]
    assert result.output.count("invalid syntax") == 1
    unclosed = check(tmp_path, "x = (1 +\n")
    assert "error[TC0001]: syntax error: '(' was never closed" in unclosed.output


@pytest.mark.parametrize("text", ["", "import warp as wp\nN = 4\n"])
def test_no_kernels_is_a_warning_for_check_and_an_error_for_build(tmp_path, text):
    result = check(tmp_path, text)
    assert result.exit_code == 0
    warning = "warning: no kernels found (no function decorated with @wp.kernel)"
    assert result.output == f"{tmp_path / 'prog.py'}: {warning}\n"
    built = CliRunner().invoke(main, ["build", str(tmp_path / "prog.py"), "-o", str(tmp_path / "out"), "--emit-only"])
    assert built.exit_code == 1
    assert "error: no kernels found" in built.output
    assert not (tmp_path / "out").exists()


def test_a_plain_class_attribute_that_is_no_constant_is_named_with_its_class(tmp_path):
    text = ("import warp as wp\n\n\nclass Settings:\n    GAIN = 1.5\n    NAME = 'x'\n\n\n@wp.kernel\n"
            "def k(z: wp.array(dtype=float)):\n    z[0] = Settings.GAIN * Settings.NAME\n")
    result = check(tmp_path, text)
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        f"{tmp_path / 'prog.py'}:11:28: error[TC0301]: unknown name `Settings.NAME`: tilec reads a plain class's "
        "attributes bound to int, float or bool constants")


def test_numpys_float_limits_are_numpys():
    """resolve.FLOAT_LIMITS (np.finfo(t).eps / max / min / tiny in module constants) holds numpy's values."""
    import numpy as np

    from tilec.frontend.resolve import FLOAT_LIMITS

    for bits, t in ((16, np.float16), (32, np.float32), (64, np.float64)):
        for limit, values in FLOAT_LIMITS.items():
            assert values[bits] == float(getattr(np.finfo(t), limit)), (limit, bits)


def test_a_func_factory_called_with_a_host_value_says_which_argument(tmp_path):
    text = ("import os\nimport warp as wp\n\n\ndef make(offset: float):\n    @wp.func\n    def shift(x: float):\n"
            "        return x + offset\n\n    return shift\n\n\nshift_env = make(float(os.environ.get('X', 1)))\n"
            "shift_one = make(1.0)\n\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n"
            "    y[0] = shift_one(y[0]) + shift_env(y[0])\n")
    result = check(tmp_path, text)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"{tmp_path / 'prog.py'}:19:30: error[TC0301]: unknown function `shift_env`", lines
    assert "= help: `shift_env` is the func `make(...)` gives, which tilec cannot tell: `offset` of `make` is " \
           "`float(os.environ.get('X', 1))`, not a compile-time constant, type or func" in result.output


def test_a_match_statement_in_host_code_is_left_to_python_and_in_a_kernel_is_named(tmp_path):
    host = ("import warp as wp\n\n\ndef host(x):\n    match x:\n        case 1:\n            return 'one'\n"
            "        case _:\n            return 'other'\n\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n"
            "    y[0] = 1.0\n")
    assert check(tmp_path, host).exit_code == 0  # was an internal error (statement_walk on `match`)
    kernel = "import warp as wp\n\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n    match 1:\n        case 1:\n" \
             "            y[0] = 1.0\n"
    result = check(tmp_path, kernel)
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith(f"{tmp_path / 'prog.py'}:6:5: error[TC0401]: unsupported syntax")
