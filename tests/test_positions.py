"""frontend/positions.py gives every node the range libcst's PositionProvider gives it."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tilec.frontend.positions import node_positions

ROOT = Path(__file__).resolve().parents[1]
ODD_SOURCES = {
    "crlf": "x = 1\r\ny = (2 +\r\n     3)\r\n",
    "cr": "x = 1\ry = [1,\r 2]\r",
    "no_trailing_newline": "def f(a, b):\n    return a + b",
    "form_feed_and_separator": "if x:\n\tpass\n\x0c\n# c\u2028d\ny = 2\n",
    "multiline_string": "x = '''a\r\nb\r\nc'''\r\nz = f'{x!r:>10}'\n",
    "empty": "",
    "only_comment": "# nothing\n",
    "decorated": "@wp.kernel\ndef k(a: wp.array(dtype=float)):  # c\n    i = wp.tid()\n    a[i] = -a[i] ** 2\n",
}


def _reference(tree: cst.Module) -> dict:
    ranges = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
    return {node: (r.start.line, r.start.column, r.end.line, r.end.column) for node, r in ranges.items()}


def _corpus() -> list:
    files = sorted((ROOT / "samples").glob("*.py")) + sorted((ROOT / "tests" / "ui").glob("*.py"))
    texts = [(p.name, p.read_text(encoding="utf-8")) for p in files]
    return [pytest.param(text, id=name) for name, text in texts if not name.startswith("syntax_")] + [
        pytest.param(text, id=name) for name, text in ODD_SOURCES.items()]


@pytest.mark.parametrize("source", _corpus())
def test_positions_match_libcst(source):
    tree = cst.parse_module(source)
    expected = _reference(tree)
    got = node_positions(tree)
    assert len(got) == len(expected)
    assert {node: got.get(id(node)) for node in expected} == expected
