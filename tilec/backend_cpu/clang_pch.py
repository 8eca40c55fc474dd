"""clang++'s precompiled runtime header (compiler.py precompiled_runtime).

clang++ records the absolute paths of the headers a .pch was made from and refuses the .pch once
they are gone, so unlike g++'s .gch (made in a temporary folder, then linked into each build) it
is made in its final place: <cache>/pch-clang/<key>/ holds a copy of the runtime headers and
tilec-rt/tilec.h.pch beside them, and a compile force-includes that copy's tilec.h by its
absolute path, for which clang++ reads the .pch instead. The generated source's own
`#include "tilec-rt/tilec.h"` (its output folder's copy) is another file to clang++, which
tilec.h's include guard skips. The folder is written under a lock, and the .pch renamed into
place when complete; -fno-pch-timestamp keeps it valid whatever the copies' mtimes (their texts
are part of the key). Nothing of the cache's paths reaches a library: the runtime headers use no
__FILE__, and debug builds, whose debug info would name them, do not use it.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..cachedir import cache_dir, keep_recent
from ..naming import RUNTIME_DIR

def precompiled_copy(cxx: str, flags: list[str], headers: dict[str, str], key: str, keep: int) -> Path | None:
    """The cached copy of tilec-rt/tilec.h whose .pch this clang++ made with these flags from these
    header texts (`key` names them), made on first use; None when it cannot be had. The `keep` most
    recently used folders stay."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks: no shared folder to write
        return None
    root = cache_dir() / "pch-clang"
    folder = root / key
    header = folder / RUNTIME_DIR / "tilec.h"
    pch = header.with_name("tilec.h.pch")
    try:
        if pch.exists():
            os.utime(folder)  # a hit counts as new: keep_recent keeps the folders builds use
            return header
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build writes the folder; the others wait, then use it
            if not pch.exists() and not _make(cxx, flags, headers, folder, header, pch):
                return None
        keep_recent(root, "*", keep)
    except OSError:
        return None
    return header if pch.exists() else None


def _make(cxx: str, flags: list[str], headers: dict[str, str], folder: Path, header: Path, pch: Path) -> bool:
    for name, text in headers.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    partial = pch.with_name("tilec.h.pch.partial")
    proc = subprocess.run([cxx, *flags, "-Xclang", "-fno-pch-timestamp", "-x", "c++-header", str(header),
                           "-o", str(partial)], capture_output=True, text=True)
    if proc.returncode != 0 or not partial.exists():
        return False
    os.replace(partial, pch)
    return True
