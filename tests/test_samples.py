"""Every sample builds with `tilec build` and passes its own numpy check when run as a script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, needs_cxx

SAMPLES = sorted(p for p in (ROOT / "samples").glob("*.py"))


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_runs(sample: Path, tmp_path: Path):
    build = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(sample), "-o", str(tmp_path),
                            "--target", "cpu"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    env = dict(os.environ, TILEC_BUILD=str(tmp_path))
    run = subprocess.run([sys.executable, str(sample)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"{sample.stem} ok"
