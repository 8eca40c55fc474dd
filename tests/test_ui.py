"""Diagnostic tests: annotated programs in tests/ui/ and their blessed .stderr snapshots.

An annotation `# ERROR <CODE>: <substring>` on a line says `tilec check` reports
exactly one error with that code on that line whose message contains the
substring; the column is pinned by the snapshot. Every reported error must be
annotated. `pytest --bless` rewrites the snapshots.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parent / "ui"
ANNOTATION = re.compile(r"#\s*ERROR\s+(TC\d{4})(?::\s*(.*))?$")
REPORTED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>TC\d{4})\]: (?P<msg>.*)$",
                      re.M)
CASES = sorted(UI.glob("*.py"))


def annotations(path: Path) -> list:
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = ANNOTATION.search(line)
        if m:
            out.append((number, m.group(1), (m.group(2) or "").strip()))
    return out


def run_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilec.cli", "check", path.name], cwd=path.parent,
                          capture_output=True, text=True)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_ui(path: Path, bless: bool):
    proc = run_check(path)
    assert "Traceback" not in proc.stderr, proc.stderr
    expected = annotations(path)
    reported = [(int(m["line"]), int(m["col"]), m["code"], m["msg"]) for m in REPORTED.finditer(proc.stderr)]
    assert proc.returncode == (1 if expected else 0), proc.stderr
    unmatched = list(reported)
    for line, code, text in expected:
        hits = [r for r in unmatched if r[0] == line and r[2] == code and text in r[3]]
        assert len(hits) == 1, f"line {line}: expected one {code} containing {text!r}; got {reported}"
        unmatched.remove(hits[0])
    assert not unmatched, f"unannotated errors: {unmatched}"
    snapshot = path.with_suffix(".stderr")
    if bless or not snapshot.exists():
        if not bless:
            pytest.fail(f"missing snapshot {snapshot.name}: run `pytest tests/test_ui.py --bless`")
        snapshot.write_text(proc.stderr)
    assert proc.stderr == snapshot.read_text()


def test_case_count():
    """The corpus keeps at least 80 annotated diagnostics."""
    assert sum(len(annotations(p)) for p in CASES) >= 80
