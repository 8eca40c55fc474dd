"""Where tilec keeps its per-user compiler cache (precompiled runtime headers, up-to-date stamps)."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

# A build's temporary folder in the cache this old belongs to a build killed mid-way (a live one's
# is seconds old: the slowest, a precompiled header, takes about ten).
STALE_SECONDS = 3600


def cache_dir() -> Path:
    """$TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec."""
    if os.environ.get("TILEC_CACHE_DIR"):
        return Path(os.environ["TILEC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tilec"


def keep_recent(folder: Path, pattern: str, keep: int) -> None:
    """Deletes all but the `keep` files (or folders, with what they hold) matching pattern in folder
    with the latest mtime (a use may refresh it). Other tilec processes may prune the same folder at
    once: an entry gone meanwhile is skipped, and nothing here raises."""
    dated: list[tuple[int, Path]] = []
    for entry in folder.glob(pattern):
        try:
            dated.append((entry.stat().st_mtime_ns, entry))
        except OSError:
            continue
    for _, old in sorted(dated, reverse=True)[keep:]:
        try:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink()
        except OSError:
            pass


def remove_stale(folder: Path, prefix: str) -> None:
    """Deletes the temporary folders (`prefix*`) that builds killed mid-way left in folder (a
    SIGKILL skips their cleanup), once older than STALE_SECONDS; nothing here raises."""
    now = time.time()
    for entry in folder.glob(f"{prefix}*"):
        try:
            if entry.is_dir() and not entry.is_symlink() and now - entry.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue
