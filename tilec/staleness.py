"""`tilec build --check`: is a committed output folder what `build` would write now?

Compares the text files `build` generates with OUTDIR/<module>/ and sorts them into missing,
changed and extra. What a build measures (nvcc's resource report) and the flags that only steer
the compilers (`--emit-only`, `--target`, `--debug`, `--arch`) are not compared: a folder written
with `--emit-only` (the natural way to commit generated sources) checks as current with a plain
`build --check`. The flags the folder was built with are read back to print the exact rebuild
command.
"""
from __future__ import annotations

import difflib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Recorded in manifest.json["flags"] but shaping no generated text.
BUILD_ONLY_FLAGS = ("emit_only", "target", "debug", "native")
# manifest.json keys a build measures or derives from build-only flags.
UNCOMPARED_KEYS = ("cuda_build", "cpu_build", "inputs_hash", "libraries", "manifest_sha256")
KERNEL_BUILD_FACTS = ("cuda_resources",)
# Files a build compiles from the generated ones; never "extra".
PRODUCT_SUFFIXES = (".so", ".fatbin", ".log", ".pyc")
DEFAULT_FLAGS: dict[str, Any] = {"block_dim": 256, "target": "all", "debug": False, "max_shared": None,
                 "emit_only": False, "line_directives": False}


@dataclass
class Staleness:
    folder: Path
    exists: bool
    missing: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)  # name -> unified diff text
    recorded: dict[str, Any] = field(default_factory=dict)  # the folder's manifest: flags, cuda archs

    @property
    def stale(self) -> bool:
        return not self.exists or bool(self.missing or self.changed or self.extra)


def comparable_manifest(text: str) -> str:
    """manifest.json without measured facts and build-only flags (unparsable text: unchanged)."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    for key in UNCOMPARED_KEYS:
        data.pop(key, None)
    flags = data.get("flags")
    if isinstance(flags, dict):
        for key in BUILD_ONLY_FLAGS:
            flags.pop(key, None)
    kernels = data.get("kernels")
    for kernel in kernels.values() if isinstance(kernels, dict) else ():
        if isinstance(kernel, dict):
            for key in KERNEL_BUILD_FACTS:
                kernel.pop(key, None)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def compare(generated: dict[str, str], folder: Path) -> Staleness:
    """generated: relative path -> text, as `build` would write it."""
    result = Staleness(folder, folder.is_dir())
    if not result.exists:
        return result
    manifest = folder / "manifest.json"
    try:
        recorded = json.loads(manifest.read_text())
    except (OSError, ValueError):
        recorded = {}
    # valid JSON that is not an object (a hand-edited or truncated manifest) records nothing
    result.recorded = recorded if isinstance(recorded, dict) else {}
    for name, text in sorted(generated.items()):
        path = folder / name
        if not path.is_file():
            result.missing.append(name)
            continue
        try:
            old = path.read_text()
        except (OSError, UnicodeDecodeError):
            old = ""
        new = text
        if name == "manifest.json":
            old, new = comparable_manifest(old), comparable_manifest(text)
        if old != new:
            result.changed.append(name)
            result.diffs[name] = "".join(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True),
                fromfile=f"{folder.name}/{name} (committed)", tofile=f"{folder.name}/{name} (generated)"))
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if (path.is_file() and rel not in generated and not rel.endswith(PRODUCT_SUFFIXES)
                and "__pycache__" not in path.parts and not rel.startswith("logs/")):
            result.extra.append(rel)
    return result


def rebuild_command(file: str, outdir: str, recorded: dict[str, Any], fallback: dict[str, Any]) -> str:
    """`tilec build FILE -o OUTDIR` with the flags the folder was built with (else `fallback`)."""
    flags = recorded.get("flags")
    if not isinstance(flags, dict):
        flags = fallback
    args = ["tilec", "build", file, "-o", outdir]
    if flags.get("target", "all") != "all":
        args += ["--target", str(flags["target"])]
    cuda_build = recorded.get("cuda_build")
    archs = (cuda_build.get("archs") if isinstance(cuda_build, dict) else None) or flags.get("cuda_archs")
    if isinstance(archs, list) and archs and all(isinstance(a, str) for a in archs):
        args += ["--arch", ",".join(archs)]
    if flags.get("block_dim", 256) != 256:
        args += ["--block-dim", str(flags["block_dim"])]
    if flags.get("max_shared", DEFAULT_FLAGS["max_shared"]) != DEFAULT_FLAGS["max_shared"]:
        args += ["--max-shared", str(flags["max_shared"])]
    for key in ("emit_only", "debug", "line_directives"):
        if flags.get(key):
            args.append("--" + key.replace("_", "-"))
    return " ".join(shlex.quote(a) for a in args)


def summary(result: Staleness, max_lines: int | None = 40) -> str:
    """Counts, the file names, then at most max_lines diff lines (None: all)."""
    lines = []
    for what, names in (("missing", result.missing), ("changed", result.changed), ("extra", result.extra)):
        if names:
            lines.append(f"{len(names)} {what}: {', '.join(names)}")
    diff_lines = [line for name in result.changed for line in result.diffs[name].splitlines()]
    shown = diff_lines if max_lines is None else diff_lines[:max_lines]
    lines += shown
    if len(shown) < len(diff_lines):
        lines.append(f"... {len(diff_lines) - len(shown)} more diff lines (--diff shows all)")
    return "\n".join(lines)
