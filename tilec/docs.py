"""docs/ops.md, generated from the op table: `python -m tilec.docs > docs/ops.md`."""
from __future__ import annotations

from .ops import API_OPS


def ops_markdown() -> str:
    lines = ["# Tile operations", "", "Generated from the op table (`tilec/ops/`).", "",
             "| op | parameters | C++ runtime | adjoint | description |", "|---|---|---|---|---|"]
    for name in sorted(API_OPS):
        spec = API_OPS[name]
        params = ", ".join(p.name for p in spec.params) + (f", *{spec.variadic}" if spec.variadic else "")
        adjoint = "yes" if spec.adj_cpp else "no gradient"
        lines.append(f"| `{name}` | {params} | `tl::{spec.cpp}` | {adjoint} | {spec.doc} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(ops_markdown(), end="")
