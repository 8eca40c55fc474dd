"""The layering contract: tilec's imports point one way, frontend -> IR -> passes -> backends.

Every import in tilec/ (module level or inside a function; `if TYPE_CHECKING:` imports excluded,
they never run) is an edge between two layers. An edge may stay inside its package, or go to a
lower layer; the frontend and the passes never import each other, nor do the two backends. The
runtime import graph has no cycles.
"""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "tilec"
LIBRARY = PACKAGE / "library"  # Warp-language source the frontend parses, never imports: no module

# Lowest first. A module belongs to the first layer one of whose prefixes it matches.
LAYERS = [
    ("base", ["tilec", "tilec.diagnostics", "tilec.naming", "tilec.cachedir", "tilec.product_cache"]),
    ("ir", ["tilec.ir"]),
    ("ops", ["tilec.ops"]),
    ("frontend|passes", ["tilec.frontend", "tilec.passes"]),
    ("codegen", ["tilec.codegen", "tilec.interp"]),
    ("backends", ["tilec.backend_cpu", "tilec.backend_cuda"]),
    ("driver", ["tilec.build", "tilec.driver", "tilec.pipeline", "tilec.docs", "tilec.api", "tilec.gradcheck",
                "tilec.staleness", "tilec.uptodate", "tilec.console", "tilec.report", "tilec.limits", "tilec.cli", "tilec.__main__"]),
]
# Siblings of one layer that must stay independent of each other.
APART = [("tilec.frontend", "tilec.passes"), ("tilec.backend_cpu", "tilec.backend_cuda")]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> set:
    """Absolute names of the tilec modules `path` imports (not under `if TYPE_CHECKING:`)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from pkg import module` imports the module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if resolves(candidate) else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {t for t in found if t == "tilec" or t.startswith("tilec.")}


def resolves(name: str) -> bool:
    path = ROOT / name.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def layer_of(name: str) -> int:
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if name == prefix or (prefix != "tilec" and name.startswith(prefix + ".")):
                best = rank if best is None else best
    assert best is not None, f"{name} belongs to no layer: add it to LAYERS in {Path(__file__).name}"
    return best


def graph() -> dict:
    return {module_name(p): runtime_imports(p) for p in sorted(PACKAGE.rglob("*.py"))
            if LIBRARY not in p.parents}


def test_every_module_has_a_layer():
    for name in graph():
        layer_of(name)


def test_imports_point_down_the_layers():
    wrong = []
    for source, targets in graph().items():
        for target in targets:
            if layer_of(target) > layer_of(source):
                wrong.append(f"{source} ({LAYERS[layer_of(source)][0]}) imports {target} "
                             f"({LAYERS[layer_of(target)][0]})")
            for a, b in APART:
                if (source.startswith(a) and target.startswith(b)) or (source.startswith(b) and target.startswith(a)):
                    wrong.append(f"{source} imports {target}: {a} and {b} stay independent")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    edges = {m: {t for t in ts if t != m} for m, ts in graph().items()}
    # A package's __init__ importing its own submodules is how packages work; not a cycle of design.
    for m, ts in edges.items():
        edges[m] = {t for t in ts if not t.startswith(m + ".")}
    state: dict = {}
    cycles = []

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_contract_catches_an_upward_import(tmp_path, monkeypatch):
    """The checker itself: an ops module importing a pass is reported."""
    fake = PACKAGE / "ops" / "core.py"
    text = fake.read_text() + "\nfrom ..passes import autodiff\n"
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: text if self == fake else _read(self))
    try:
        test_imports_point_down_the_layers()
    except AssertionError as e:
        assert "tilec.ops.core (ops) imports tilec.passes.autodiff (frontend|passes)" in str(e)
    else:
        raise AssertionError("an upward import went unnoticed")


_read = Path.read_text
