"""docs/ops.md, generated from the op table: `python -m tilec.docs > docs/ops.md`.

Two tables: tilec's ops (from the op table), and every Warp tile builtin
(`ops/warp_names.py`) with tilec's status for it.
"""
from __future__ import annotations

from .ops import API_OPS
from .ops import warp_names


def ops_markdown() -> str:
    lines = ["# Tile operations", "", "Generated from the op table (`tilec/ops/`) by `python -m tilec.docs`.", "",
             "| op | parameters | C++ runtime | adjoint | description |", "|---|---|---|---|---|"]
    for name in sorted(API_OPS):
        spec = API_OPS[name]
        params = ", ".join(p.name for p in spec.params) + (f", *{spec.variadic}" if spec.variadic else "")
        adjoint = "yes" if spec.adj_cpp else "no gradient"
        lines.append(f"| `{name}` | {params} | `tl::{spec.cpp}` | {adjoint} | {spec.doc} |")
    return "\n".join(lines + [""] + warp_coverage_lines()) + "\n"


def warp_status(name: str) -> str:
    """tilec's status for one Warp builtin, as docs/ops.md shows it."""
    if name in API_OPS:
        return "supported"
    if name in warp_names.LOWERED_AS:
        return f"supported: {warp_names.LOWERED_AS[name]}"
    help_ = warp_names.HELP.get(name)
    if help_:
        return f"supported as syntax ({help_.removeprefix('write ')}); by name: diagnostic TC0430"
    note = warp_names.note(name)
    return "diagnostic TC0430 \"not supported by tilec yet\"" + (f": {note}" if note else "")


def warp_coverage_lines() -> list[str]:
    tile = warp_names.WARP_TILE_BUILTINS
    supported = sum(warp_status(n) == "supported" for n in tile)
    lines = [f"## Warp {warp_names.WARP_VERSION} tile builtins", "",
             f"All tile builtins of Warp {warp_names.WARP_VERSION}: {len(tile)}, the "
             f"{sum(n.startswith('tile') for n in tile)} names in `warp._src.context.builtin_functions` "
             "starting with `tile` plus the other members of Warp's \"Tile Primitives\" group "
             "(the list is `tilec/ops/warp_names.py`); "
             f"{supported} supported. A call to any other Warp builtin listed here is reported as "
             "`error[TC0430]` naming it.", "",
             "| Warp builtin | tilec |", "|---|---|"]
    lines += [f"| `{n}` | {warp_status(n)} |" for n in sorted(tile)]
    rand = warp_names.WARP_RANDOM_BUILTINS
    lines += ["", f"## Warp {warp_names.WARP_VERSION} random builtins", "",
              "Warp's \"Random\" group, used with `tile_randf`/`tile_randi`.", "",
              "| Warp builtin | tilec |", "|---|---|"]
    lines += [f"| `{n}` | {warp_status(n)} |" for n in sorted(rand)]
    return lines


if __name__ == "__main__":
    print(ops_markdown(), end="")
