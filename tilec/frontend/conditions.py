"""The truth of an `if` test that tilec can evaluate without running the file: what a
`wp.overload` (or `@wp.overload` stub) under that `if` needs, since Warp declares only the
overloads of the branch taken.

A test is evaluated from constants only: literals, module constants, loop values and dtypes (as
`evaluate` gives them), `wp.static(expr)`, comparisons (`== != < <= > >= is is not in not in`),
`and`/`or`/`not`, and `__name__` (the file as the program run: "__main__"). Anything else is
unknown (None), and the caller names the test in a diagnostic. Never runs user code.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from . import consts

Evaluate = Callable[[cst.BaseExpression], object]  # a value, or consts.NOT_CONST
StaticCall = Callable[[cst.Call], bool]  # whether a call is wp.static(...)


def truth(test: cst.BaseExpression, evaluate: Evaluate, is_static: StaticCall) -> bool | None:
    """bool(test), or None when it cannot be known statically."""
    value = _value(test, evaluate, is_static)
    if value is consts.NOT_CONST:
        return None
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - a value whose truth Python cannot tell here
        return None


def _value(node: cst.BaseExpression, evaluate: Evaluate, is_static: StaticCall) -> object:
    if isinstance(node, cst.Call) and is_static(node) and len(node.args) == 1 and node.args[0].keyword is None:
        return _value(node.args[0].value, evaluate, is_static)
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) else consts.NOT_CONST
    if isinstance(node, cst.Name) and node.value == "__name__":
        return "__main__"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        inner = truth(node.expression, evaluate, is_static)
        return consts.NOT_CONST if inner is None else not inner
    if isinstance(node, cst.BooleanOperation):
        left = truth(node.left, evaluate, is_static)
        want_and = isinstance(node.operator, cst.And)
        if left is not None and left != want_and:  # `False and ...`, `True or ...`: short circuit
            return left
        right = truth(node.right, evaluate, is_static)
        return consts.NOT_CONST if left is None or right is None else right
    if isinstance(node, cst.Comparison):
        return consts.compare(node, lambda n: _value(n, evaluate, is_static))
    if isinstance(node, (cst.Tuple, cst.List)):
        items = tuple(_value(e.value, evaluate, is_static) for e in node.elements)
        return consts.NOT_CONST if consts.NOT_CONST in items else items
    return evaluate(node)
