"""wp.static(D[key]) reads a module-level dict literal only when nothing in the file can change it
(tilec/frontend/static_items.py): every other mention of the name is an item read."""
from __future__ import annotations

import libcst as cst
import pytest

from tilec.frontend import consts, static_items


def dicts(source: str) -> set:
    tree = cst.parse_module(source)
    values = {}
    for stmt in tree.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
            values[small.targets[0].target.value] = small.value
    return set(static_items.literal_dicts(tree, values))


def test_a_dict_only_read_is_taken():
    assert dicts("D = {'a': f}\nx = D['a']\ndef k():\n    return D['b']\n") == {"D"}


@pytest.mark.parametrize("change", [
    "D['a'] = g",        # an item assigned
    "D['a'] += 1",       # updated
    "del D['a']",        # deleted
    "D.update(a=g)",     # a method (may change it)
    "setup(D)",          # passed away
    "E = D",             # aliased
    "def h():\n    D['a'] = g",  # changed in a host function
])
def test_a_dict_the_file_may_change_is_not(change):
    assert dicts(f"D = {{'a': f}}\n{change}\n") == set()


def test_items_and_keys():
    d = cst.parse_expression("{'a': f, 3: g, 'a': h}")
    assert isinstance(d, cst.Dict)
    assert cst.Module([]).code_for_node(static_items.item(d, "a", lambda n: consts.NOT_CONST)) == "h"  # the last wins
    assert cst.Module([]).code_for_node(static_items.item(d, 3, lambda n: consts.evaluate(n, lambda _: consts.NOT_CONST))) == "g"
    assert static_items.item(d, "b", lambda n: consts.NOT_CONST) is None
    starred = cst.parse_expression("{'a': f, **other}")
    assert isinstance(starred, cst.Dict) and static_items.item(starred, "a", lambda n: consts.NOT_CONST) is None
