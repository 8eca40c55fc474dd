"""Helpers for the security tests: run the tilec CLI in a subprocess, list generated text."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tilec(*args, cwd=None, timeout=300, env=None):
    """`python -m tilec ARGS` in a subprocess (a native crash shows as a negative return code)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilec", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env=full_env)


def generated_texts(folder: Path) -> dict:
    """Every generated text artefact under folder: relative path -> text."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in (".cpp", ".cu", ".h", ".py", ".json", ".txt"):
            out[str(path.relative_to(folder))] = path.read_text(encoding="utf-8")
    return out
