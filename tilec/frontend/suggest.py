"""Suggestions for unknown names, and hints for host modules used inside kernels.

`closest(name, candidates)` proposes a known name only when it is close (a small
edit distance relative to the name's length); callers pass candidates of the
same kind as the unknown name (tile operations for `wp.tile_*`, scalar
functions for `wp.exp`-like names, variables for a bare name), so a misspelt
`tile_fft` is never answered with an unrelated `tile_sort`.

`host_hint(module, name, api)` is the help for `np.exp(x)` / `math.exp(x)` in a
kernel: the host module is not available there, and the API spelling is.
"""
from __future__ import annotations

from collections.abc import Container, Iterable

# Modules a Warp user may reach for inside a kernel out of habit; none runs in compiled code.
HOST_MODULES = ("numpy", "math", "cmath", "torch", "scipy", "jax", "cupy")

# numpy/math names whose tile-API counterpart has another name.
HOST_EQUIVALENTS = {
    "absolute": "abs", "fabs": "abs", "power": "pow", "clip": "clamp", "maximum": "max",
    "minimum": "min", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
    "sum": "tile_sum", "matmul": "tile_matmul", "dot": "tile_matmul", "transpose": "tile_transpose",
    "zeros": "tile_zeros", "ones": "tile_ones", "full": "tile_full", "arange": "tile_arange",
    "empty": "tile_empty", "reshape": "tile_reshape", "sort": "tile_sort", "argmax": "tile_argmax",
    "argmin": "tile_argmin", "cumsum": "tile_scan_inclusive", "broadcast_to": "tile_broadcast",
    "squeeze": "tile_squeeze",
}


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions counting one edit."""
    prev2: list[int] = []  # the row before prev, once there is one (read from i = 2 on)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The nearest candidate within max(1, len(name) // 4) edits (ties: alphabetical), or None.
    The shared `tile_` prefix does not count as length: `tile_exp` is not close to `tile_map`."""
    stem = name.removeprefix("tile_")
    limit = max(1, len(stem) // 4)
    best: tuple[int, str] | None = None
    for c in sorted(set(candidates)):
        if c == name:
            continue
        d = edit_distance(stem, c.removeprefix("tile_")) if stem != name else edit_distance(name, c)
        if d <= limit and (best is None or d < best[0]):
            best = (d, c)
    return best[1] if best else None


def is_tile_name(name: str) -> bool:
    return name.startswith("tile") or name == "untile"


def same_kind(name: str, names: Iterable[str]) -> list[str]:
    """The names of `names` of the same kind as `name`: tile operations, or everything else."""
    return [n for n in names if is_tile_name(n) == is_tile_name(name)]


def did_you_mean(name: str, candidates: Iterable[str], prefix: str = "") -> str | None:
    close = closest(name, candidates)
    return f"did you mean `{prefix}{close}`?" if close else None


def host_hint(module: str, name: str, api_names: Container[str], alias: str) -> str:
    """`numpy is not available in kernels; use wp.exp` (or without the `use` part)."""
    what = f"{module} is not available in kernels"
    target = name if name in api_names else HOST_EQUIVALENTS.get(name)
    if target is not None and target in api_names:
        return f"{what}; use {alias}.{target}"
    return what
