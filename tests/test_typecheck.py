"""mypy (configured in pyproject.toml [tool.mypy]) finds nothing in the compiler's source tree.

The whole package passes --strict, with no per-module exception (test_whole_package_is_strict
keeps it so). mypy reads the checkout's tilec/ (the files named in the
configuration, from the repository root), never an installed copy: in CI the tests run against the
installed wheel, and the check still covers the source this commit holds.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def test_mypy_is_clean():
    if subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode != 0:
        pytest.fail("mypy is part of the test dependencies: pip install -e '.[test]'")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues found" in proc.stdout and "source files" in proc.stdout


def test_whole_package_is_strict():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert "overrides" not in config, "strict for every module: no per-module exceptions"
    assert "untyped_calls_exclude" not in config


def test_lowering_host_is_empty_at_run_time():
    # The lower_* mixins derive from LoweringHost for the type checker; at run time it must add
    # nothing: a method there would sit before some mixins in FunctionChecker's MRO and shadow them.
    from tilec.frontend.check import FunctionChecker
    from tilec.frontend.lowering_host import LoweringHost

    assert [k for k in vars(LoweringHost) if not k.startswith("__")] == []
    assert FunctionChecker.__mro__[-2:] == (LoweringHost, object)
