"""`tilec check --format json|sarif`: diagnostics as data for editors, CI and code review.

JSON: one object with the file, every diagnostic (severity, code, slug, message, 1-based
line/column span, labels, notes, help) and the error and warning counts. SARIF 2.1.0: one run
of the `tilec` tool whose rules are the codes used, one result per diagnostic, so code-review
tools can show them inline. A file-level message (`no kernels found`) has no code and no span.
Both are deterministic: sorted keys, no timestamps.
"""
from __future__ import annotations

import json
from typing import Any

from . import __version__
from .diagnostics import CODES, Diagnostic

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    span = d.span
    out = {"severity": d.severity, "code": d.code, "slug": CODES.get(d.code), "message": d.message,
           "line": span.line, "column": span.col, "end_line": span.end_line, "end_column": span.end_col,
           "labels": [{"line": lb.span.line, "column": lb.span.col, "end_line": lb.span.end_line,
                       "end_column": lb.span.end_col, "text": lb.text} for lb in d.labels],
           "notes": list(d.notes), "help": d.help}
    return out


def file_message(severity: str, message: str) -> dict[str, Any]:
    return {"severity": severity, "code": None, "slug": None, "message": message, "line": None, "column": None,
            "end_line": None, "end_column": None, "labels": [], "notes": [], "help": None}


def to_json(file: str, items: list[dict[str, Any]]) -> str:
    counts = {s: sum(1 for d in items if d["severity"] == s) for s in ("error", "warning")}
    return json.dumps({"file": file, "diagnostics": items, "errors": counts["error"],
                       "warnings": counts["warning"], "tilec_version": __version__}, indent=2, sort_keys=True)


def to_sarif(file: str, items: list[dict[str, Any]]) -> str:
    codes = sorted({d["code"] for d in items if d["code"]})
    rules = [{"id": c, "name": CODES[c], "shortDescription": {"text": CODES[c].replace("-", " ")}} for c in codes]
    results = []
    for d in items:
        text = d["message"] + "".join(f"\nnote: {n}" for n in d["notes"])
        text += f"\nhelp: {d['help']}" if d["help"] else ""
        location = {"physicalLocation": {"artifactLocation": {"uri": file}}}
        if d["line"]:
            location["physicalLocation"]["region"] = {
                "startLine": d["line"], "startColumn": d["column"], "endLine": d["end_line"],
                "endColumn": d["end_column"]}
        result = {"level": d["severity"], "message": {"text": text}, "locations": [location]}
        if d["code"]:
            result["ruleId"] = d["code"]
            result["ruleIndex"] = codes.index(d["code"])
        results.append(result)
    run = {"tool": {"driver": {"name": "tilec", "version": __version__, "rules": rules}}, "results": results}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, sort_keys=True)
