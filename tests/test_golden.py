"""Golden files: tests/golden/<sample>/ holds the emitted sources of every sample.

`pytest --update-golden` rewrites them; a missing golden fails with that command.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from harness import compile_ir
from tilec.cli import build_flags
from tilec.driver import generate

GOLDEN = Path(__file__).resolve().parent / "golden"
SAMPLES = sorted((ROOT / "samples").glob("*.py"))
KEPT = ("{m}.cpp", "{m}.cu", "{m}.h", "manifest.json", "__init__.py", "CMakeLists.txt")


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_emitted_sources_match_golden(sample: Path, update_golden: bool):
    source = sample.read_text()
    module = compile_ir(source, sample.stem)
    files = generate(module, source, build_flags(256))
    for pattern in KEPT:
        name = pattern.format(m=sample.stem)
        golden = GOLDEN / sample.stem / name
        if update_golden:
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(files[name])
            continue
        if not golden.exists():
            pytest.fail(f"missing golden {golden.relative_to(ROOT)}: run `python -m pytest tests/test_golden.py "
                        "--update-golden`")
        assert files[name] == golden.read_text(), (
            f"{name} differs from {golden.relative_to(ROOT)}; if the change is intended run "
            "`python -m pytest tests/test_golden.py --update-golden` and review the diff")
