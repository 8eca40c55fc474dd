"""The project's docs stand alone: every file they point to is in the repository, and nothing in
the repository refers to a design document outside it."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PATH_LIKE = re.compile(r"`((?:tilec|docs|tests|samples|bench|runtime_headers)/[\w./-]*\w)`|\]\(([^)#:]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_path_a_doc_names_exists(doc):
    missing = []
    for m in PATH_LIKE.finditer(doc.read_text()):
        target = m.group(1) or m.group(2)
        if "*" in target or "<" in target:
            continue
        base = ROOT if m.group(1) else doc.parent
        if not (base / target).exists():
            missing.append(target)
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


def test_nothing_refers_outside_the_repository():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:
        pytest.skip("not a git checkout (an installed copy of the tests)")
    outside = [f for f in files if (ROOT / f).is_file() and f != "tests/test_docs.py"
               and "../shared" in (ROOT / f).read_text(errors="ignore")]
    assert not outside, f"files referring to ../shared: {outside}"
