"""Every Warp tile builtin is accounted for: docs/ops.md shows tilec's status for each, the
checked-in list matches an installed Warp, and each one tilec lacks gets a diagnostic that
names it (never a spelling suggestion for another op)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilec.diagnostics import CompileError
from tilec.docs import ops_markdown, warp_status
from tilec.ops import API_OPS
from tilec.ops.warp_names import LOWERED_AS, WARP_NOT_EXPORTED, WARP_OTHER_BUILTINS, WARP_RANDOM_BUILTINS, WARP_TILE_BUILTINS, WARP_VERSION
from tilec.pipeline import compile_source

ROOT = Path(__file__).resolve().parent.parent


def test_docs_are_generated_from_the_op_table():
    text = (ROOT / "docs/ops.md").read_text()
    assert text == ops_markdown(), "docs/ops.md is stale: run `python -m tilec.docs > docs/ops.md`"
    for name in WARP_TILE_BUILTINS + WARP_RANDOM_BUILTINS:
        assert f"| `{name}` | {warp_status(name)} |" in text


def test_list_matches_the_installed_warp():
    wp = pytest.importorskip("warp")
    if wp.__version__ != WARP_VERSION:
        pytest.skip(f"the list is of Warp {WARP_VERSION}, Warp {wp.__version__} is installed")
    from warp._src.context import builtin_functions

    tile_group = {n for n, f in builtin_functions.items() if getattr(f, "group", None) == "Tile Primitives"}
    selected = {n for n in builtin_functions if n.startswith("tile")} | tile_group
    assert sorted(WARP_TILE_BUILTINS) == sorted(selected)
    assert len([n for n in WARP_TILE_BUILTINS if n.startswith("tile")]) == 68
    random_group = {n for n, f in builtin_functions.items() if getattr(f, "group", None) == "Random"}
    assert sorted(WARP_RANDOM_BUILTINS) == sorted(random_group)
    assert sorted(WARP_OTHER_BUILTINS) == sorted(set(builtin_functions) - selected - random_group)
    # a kernel may call the others without `wp.` (Warp reads a bare name as an attribute of warp)
    assert sorted(WARP_NOT_EXPORTED) == sorted(n for n in builtin_functions if not hasattr(wp, n))


def test_bare_names_are_what_warp_exports():
    wp = pytest.importorskip("warp")
    from tilec.frontend.resolve import BARE_API_NAMES

    assert [n for n in sorted(BARE_API_NAMES) if not hasattr(wp, n)] == []


MISSING = sorted(n for n in WARP_TILE_BUILTINS + WARP_RANDOM_BUILTINS if n not in API_OPS and n not in LOWERED_AS)
PROGRAM = """import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=float)):
    a = wp.tile_load(A, shape=(4,))
    x = wp.{name}(a)
"""


@pytest.mark.parametrize("name", MISSING)
def test_missing_builtin_is_named_in_its_diagnostic(name):
    with pytest.raises(CompileError) as err:
        compile_source(PROGRAM.format(name=name), "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.line, diag.span.col) == ("TC0430", 7, 9)
    assert diag.message == f"`{name}` is a Warp builtin not supported by tilec yet"
    assert diag.help is None or "did you mean" not in diag.help


@pytest.mark.parametrize("symbol", ["&=", "|=", "^="])
def test_bit_update_of_a_float_tile_element_is_a_dtype_error(symbol):
    source = ("import warp as wp\n\n\n@wp.kernel\ndef k(A: wp.array1d(dtype=float)):\n"
              f"    a = wp.tile_load(A, shape=(4,))\n    a[1] {symbol} 3\n")
    with pytest.raises(CompileError) as err:
        compile_source(source, "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.line) == ("TC0203", 7)
    assert "needs an integer tile, got float32" in diag.message


@pytest.mark.parametrize("name, note", [
    ("volume_sample_index", "tilec's volumes hold float32, vec3f or int32 voxels (Volume.allocate, allocate_by_tiles, "
                            "load_from_numpy); index volumes (volume_*_index, volume_voxel_count) are not supported yet"),
    ("dense_gemm", None),
])
def test_other_missing_builtins_are_named_as_warp_builtins(name, note):
    """A Warp builtin outside the tile and random groups that tilec lacks (what Warp's own
    examples call: example_nvdb)
    is named as one, with the family's reason where there is one, never as an unknown function."""
    assert name in WARP_OTHER_BUILTINS and name not in API_OPS
    with pytest.raises(CompileError) as err:
        compile_source(PROGRAM.format(name=name), "prog.py")
    (diag,) = err.value.diagnostics
    assert (diag.code, diag.span.line, diag.span.col) == ("TC0430", 7, 9)
    assert diag.message == f"`{name}` is a Warp builtin not supported by tilec yet"
    assert list(diag.notes) == ([note] if note else [])


def test_warp_keyword_names_match_the_installed_warp():
    """WARP_KEYWORDS (Warp's keyword names where tilec's op table names a parameter otherwise) is what
    an installed Warp's signatures give, over its overloads of each op's arity."""
    wp = pytest.importorskip("warp")
    if wp.__version__ != WARP_VERSION:
        pytest.skip(f"the table is of Warp {WARP_VERSION}, Warp {wp.__version__} is installed")
    from warp._src.context import builtin_functions

    from tilec.ops.warp_names import WARP_KEYWORDS

    derived = {}
    for name, spec in sorted(API_OPS.items()):
        f = builtin_functions.get(name)
        if f is None or spec.variadic:
            continue
        ours = [p.name for p in spec.params]
        positions: dict[str, set[int]] = {}
        for o in f.overloads or [f]:
            keys = list((o.input_types or {}).keys())
            if len(keys) == len(ours) and not any(k.startswith("*") for k in keys):
                for i, k in enumerate(keys):
                    positions.setdefault(k, set()).add(i)
        table = {k: min(v) for k, v in positions.items() if len(v) == 1 and k not in ours}
        if table:
            derived[name] = table
    assert WARP_KEYWORDS == derived
