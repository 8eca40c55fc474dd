"""The op table is complete: every entry has its parts, every C++ name exists in the runtime,
and every differentiable op has an adjoint rule."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilec.ops import API_OPS, OPS, decompositions
from tilec.ops.adjoints import RULES
from tilec.ops.core import PARAM_KINDS

RUNTIME = "\n".join(p.read_text() for p in (Path(__file__).parent.parent / "runtime_headers/tilec").glob("*.h"))
DESIGN_OPS = """tile_zeros tile_ones tile_full tile_arange tile_empty tile untile tile_load tile_store
tile_atomic_add tile_load_indexed tile_store_indexed tile_atomic_add_indexed tile_map tile_sum tile_max
tile_min tile_argmax tile_argmin tile_reduce tile_scan_inclusive tile_scan_exclusive tile_sort tile_matmul
tile_transpose tile_cholesky tile_cholesky_solve tile_lower_solve tile_upper_solve tile_diag_add tile_broadcast
tile_view tile_squeeze tile_reshape tile_astype tile_extract tile_assign atomic_add atomic_min atomic_max""".split()
# Emitted inline by the C++ emitter rather than as a runtime call.
INLINE = {"add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne", "and_", "or_", "not_", "bit_and", "bit_or",
          "bit_xor", "lshift", "rshift", "neg", "invert", "cast", "tid", "block_dim", "array_shape", "array_valid", "lane",
          "tile_map", "custom_call", "native_call", "native_adjoint", "replay_value"}
# Differentiated by a structural rule of the driver, not an entry of RULES.
STRUCTURAL = {"tile_sort", "tile_map", *decompositions.FACTORS}  # reversed by passes/adjoint_statements.py


@pytest.mark.parametrize("name", sorted(OPS))
def test_entry_is_complete(name):
    spec = OPS[name]
    assert spec.name == name and spec.doc and callable(spec.rule) and spec.cpp
    assert all(p.kind in PARAM_KINDS for p in spec.params)
    if name not in INLINE:
        assert re.search(rf"\b{re.escape(spec.cpp)}\s*[<(]", RUNTIME), f"tl::{spec.cpp} missing from the runtime"


def test_design_ops_are_all_in_the_api():
    assert [n for n in DESIGN_OPS if n not in API_OPS] == []


@pytest.mark.parametrize("name", sorted(n for n, s in OPS.items() if s.adj_cpp is not None))
def test_differentiable_ops_have_adjoint_rules(name):
    assert name in RULES or name in STRUCTURAL


def test_generated_op_docs_list_every_api_op():
    from tilec.docs import ops_markdown

    text = ops_markdown()
    for name in API_OPS:
        assert f"`{name}`" in text


def test_bound_keys_tell_constants_of_different_python_types_apart():
    """The checker keeps each accepted rule's type by Bound.key(): 1, 1.0 and True are equal in
    Python, but a rule may answer differently for each, so their keys differ (shapes too)."""
    from tilec.ir.types import FLOAT32
    from tilec.ops import Bound, FuncRef

    def key(**consts):
        return Bound(op="add", types={"a": FLOAT32}, consts=consts, attrs={"shape": consts.get("a", 0)}).key()

    keys = {key(a=1), key(a=1.0), key(a=True), key(a=(1, 2)), key(a=(1.0, 2))}
    assert None not in keys and len(keys) == 5
    assert key(a=1) == key(a=1)
    assert Bound(op="tile_map", funcs={"f": FuncRef("sin", True, lambda ts: ts[0])}).key() is None
    assert Bound(op="add", consts={"a": [1, {}]}).key() is None  # unhashable: the rule runs each time
