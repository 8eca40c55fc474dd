"""ruff (configured in pyproject.toml) finds nothing in the compiler, tests, samples and benches."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_ruff_is_clean():
    if shutil.which("ruff") is None and subprocess.run([sys.executable, "-m", "ruff", "--version"],
                                                       capture_output=True).returncode != 0:
        pytest.fail("ruff is part of the test dependencies: pip install -e '.[test]'")
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "tilec", "tests", "samples", "bench"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
