"""Build: generated files -> an output folder, compiled, written atomically.

The folder `OUTDIR/<module>/` is assembled in a temporary sibling and swapped
in by rename, under a lock, so a failed or interrupted build leaves the previous
output intact and concurrent builds of the same module are safe. A rebuild whose
inputs hash matches the existing manifest is a no-op.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import __version__


class BuildError(Exception):
    """A compiler failed: the command and where its log is."""

    def __init__(self, message: str, command: list, log_path: str | None):
        super().__init__(message)
        self.command = command
        self.log_path = log_path


@dataclass
class BuildResult:
    folder: Path
    up_to_date: bool  # nothing was rebuilt


def inputs_hash(files: dict, flags: dict) -> str:
    h = hashlib.sha256(f"tilec {__version__}\n".encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    h.update(repr(sorted(flags.items())).encode())
    return h.hexdigest()


def up_to_date(folder: Path, digest: str, expected: list) -> bool:
    manifest = folder / "manifest.json"
    if not manifest.exists() or not all((folder / name).exists() for name in expected):
        return False
    import json

    try:
        return json.loads(manifest.read_text()).get("inputs_hash") == digest
    except (OSError, ValueError):
        return False


def write_and_build(outdir: Path, module: str, files: dict, digest: str, compile_steps: list,
                    products: list) -> BuildResult:
    """files: relative path -> text. compile_steps: callables(tmp_folder) that build products."""
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    final = outdir / module
    lock_path = outdir / f".{module}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _recover(outdir, module)
        if up_to_date(final, digest, list(files) + products):
            return BuildResult(final, True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{module}.tmp-", dir=outdir))
        try:
            for name, text in files.items():
                path = tmp / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            for step in compile_steps:
                step(tmp)
            old = outdir / f".{module}.old"
            if final.exists():
                os.rename(final, old)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return BuildResult(final, False)


def _recover(outdir: Path, module: str) -> None:
    """An interrupted swap leaves `.module.old` without `module`: put it back."""
    final, old = outdir / module, outdir / f".{module}.old"
    if old.exists() and not final.exists():
        os.rename(old, final)
    for stale in outdir.glob(f".{module}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)


def run_compiler(command: list, cwd: Path, log_name: str, outdir: Path) -> str:
    """Runs a compiler; returns its output, or raises BuildError with the command and a log."""
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        log_dir = outdir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / log_name
        log_path.write_text(" ".join(command) + "\n\n" + proc.stdout + proc.stderr)
        raise BuildError(f"{Path(command[0]).name} failed (exit {proc.returncode})", command, str(log_path))
    return proc.stdout + proc.stderr
