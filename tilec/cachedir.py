"""Where tilec keeps its per-user compiler cache (precompiled runtime headers, up-to-date stamps)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec."""
    if os.environ.get("TILEC_CACHE_DIR"):
        return Path(os.environ["TILEC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tilec"
