"""Compile-time evaluation of constant expressions (module constants, shapes, `wp.static`).

Only literals (numbers, bools, strings), names of known constants, arithmetic, comparisons,
`and`/`or`/`not` and tuples evaluate; the result is a Python int/float/bool/str/tuple, or
`NOT_CONST`. Strings only compare (`MODE == "relu"`, `act in ("relu", "gelu")`): no arithmetic on
them, so no constant grows without bound.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import libcst as cst

NOT_CONST = object()

# Folding budget: no constant integer grows beyond this many bits (`0xFFFF ** 0xFFFFFFF` or
# `1 << 10**10` would take hours or all memory); a larger one is a diagnostic (FoldTooLarge).
MAX_INT_BITS = 4096
MAX_SEQUENCE = 4096  # items of a tuple or list a constant expression builds (`[QMAX] * 7`)


class FoldError(Exception):
    """A constant expression that cannot be folded, reported by the pipeline as `code` at `node`."""

    code = "TC0113"

    def __init__(self, node: cst.CSTNode, what: str) -> None:
        super().__init__(what)
        self.node = node


class FoldTooLarge(FoldError):
    """A constant expression whose value would exceed MAX_INT_BITS."""


class FoldTypeError(FoldError):
    """A constant expression Python itself refuses for its operands' types (`1 << 0.5`, `1.5 & 3`):
    its module would not import."""

    code = "TC0201"


def apply_bounded(fn: Callable[[Any, Any], object], a: object, b: object, node: cst.CSTNode) -> object:
    """fn(a, b), refusing integer results beyond MAX_INT_BITS before computing them."""
    if isinstance(a, int) and isinstance(b, int) and b > 0 and not (fn is operator.pow and a in (0, 1, -1)):
        x, y = a, b  # ints, for the lambdas (mypy does not narrow a and b inside them)
        sizes: dict[object, Callable[[], int]] = {operator.pow: lambda: x.bit_length() * y,
                                                  operator.lshift: lambda: x.bit_length() + y,
                                                  operator.mul: lambda: x.bit_length() + y.bit_length()}
        bits = sizes.get(fn)
        if bits is not None and bits() > MAX_INT_BITS:
            raise FoldTooLarge(node, f"this constant expression would exceed {MAX_INT_BITS} bits")
    return fn(a, b)


# A binary operator's function, and its symbol for messages.
BINARY: dict[type, tuple[Callable[[Any, Any], object], str]] = {
    cst.Add: (operator.add, "+"),
    cst.Subtract: (operator.sub, "-"),
    cst.Multiply: (operator.mul, "*"),
    cst.FloorDivide: (operator.floordiv, "//"),
    cst.Divide: (operator.truediv, "/"),
    cst.Modulo: (operator.mod, "%"),
    cst.Power: (operator.pow, "**"),
    cst.LeftShift: (operator.lshift, "<<"),
    cst.RightShift: (operator.rshift, ">>"),
    cst.BitAnd: (operator.and_, "&"),
    cst.BitOr: (operator.or_, "|"),
    cst.BitXor: (operator.xor, "^"),
}


def literal(node: cst.BaseExpression) -> object:
    """The value of a number or bool literal, else NOT_CONST."""
    if isinstance(node, cst.Integer):
        if len(node.value) > MAX_INT_BITS // 3 + 8:  # also below Python's own int-from-text limit
            raise FoldTooLarge(node, f"this integer literal exceeds {MAX_INT_BITS} bits")
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) else NOT_CONST  # (a bytes literal is no constant)
    return NOT_CONST


# A comparison operator's function (`in` with its operands swapped, as Python applies it).
COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt, cst.GreaterThanEqual: operator.ge,
    cst.Is: operator.eq, cst.IsNot: operator.ne,  # on constants and dtypes, identity is equality
    cst.In: lambda a, b: operator.contains(b, a), cst.NotIn: lambda a, b: not operator.contains(b, a),
}


def compare(node: cst.Comparison, evaluate_one: Callable[[cst.BaseExpression], object]) -> object:
    """A chained comparison of constants, as Python evaluates it; NOT_CONST where an operand is not
    one or Python refuses the operands (`1 < "a"`). A known value is None only where it is None (a
    factory's `support_func=None`), else `is not None` (`vec(...) if vec is not None else None` of a type
    a property gives)."""
    operand = evaluate_one(node.left)
    for target in node.comparisons:
        if isinstance(target.comparator, cst.Name) and target.comparator.value == "None" and \
                isinstance(target.operator, (cst.Is, cst.IsNot)) and operand is not NOT_CONST:
            if (operand is None) != isinstance(target.operator, cst.Is):
                return False
            continue  # (None is no left operand of the next comparison: Python would compare it)
        other = evaluate_one(target.comparator)
        fn = COMPARE.get(type(target.operator))
        if fn is None or NOT_CONST in (operand, other):
            return NOT_CONST
        try:
            if not fn(operand, other):
                return False
        except TypeError:
            return NOT_CONST
        operand = other
    return True


def membership(node: cst.BaseExpression) -> str | None:
    """NAME of `key in NAME` / `key not in NAME` (one comparison), else None."""
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and \
            isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn)) and \
            isinstance(node.comparisons[0].comparator, cst.Name):
        return node.comparisons[0].comparator.value
    return None


def _with_literal_args(node: cst.Call, lookup: Callable[[cst.BaseExpression], object]) -> cst.Call | None:
    """The call with its arguments spelled as the literals they evaluate to, so that a lookup that knows
    only the module's names (resolve.Scope: a host function's call) reads the values that `lookup` knows
    (a factory's arguments); None where an argument is no number, bool or string, or none needed it."""
    args, changed = [], False
    for a in node.args:
        if a.star:
            return None
        literal_arg = spelled(evaluate(a.value, lookup))
        if literal_arg is None:
            return None
        changed = changed or not isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString))
        args.append(a.with_changes(value=literal_arg))
    return node.with_changes(args=args) if changed else None


def spelled(value: object) -> cst.BaseExpression | None:
    """A literal that evaluates to value (a bool, a finite number, a string), else None."""
    return cst.SimpleString(repr(value)) if isinstance(value, str) else number_literal(value)


def number_literal(value: object) -> cst.BaseExpression | None:
    """A literal of an int, a finite float (-0.0 keeps its sign) or a bool, else None."""
    if isinstance(value, bool):
        return cst.Name("True" if value else "False")
    if isinstance(value, int):
        made: cst.BaseExpression = cst.Integer(str(abs(value)))
    elif isinstance(value, float) and math.isfinite(value):
        made = cst.Float(repr(abs(value)))  # a finite float's repr has a "." or an exponent
    else:
        return None
    negative = value < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0)
    return cst.UnaryOperation(cst.Minus(), made) if negative else made


def subscripted_name(node: cst.BaseExpression) -> str | None:
    """NAME of `NAME[...]` or `key in NAME`, else None: a lookup that knows local names keeps `D[key]` of
    a local `D` from reading a module's dict of that name."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
        return node.value.value
    return membership(node)


class Attributed:
    """A constant whose attributes and methods tilec evaluates (an enum's member: enum_properties.EnumMember)."""

    def attribute(self, name: str) -> object:
        return NOT_CONST

    def method(self, name: str, args: list[object], kwargs: dict[str, object]) -> object:
        """What `self.name(*args, **kwargs)` returns (the arguments constants), else NOT_CONST."""
        return NOT_CONST


def _method_call(node: cst.Call, lookup: Callable[[cst.BaseExpression], object]) -> object:
    """`dof_type.coords_bound(correction)`: a method of an Attributed constant, called with constants."""
    assert isinstance(node.func, cst.Attribute)
    base = evaluate(node.func.value, lookup)
    if not isinstance(base, Attributed) or any(a.star for a in node.args):
        return NOT_CONST
    args = [evaluate(a.value, lookup) for a in node.args if a.keyword is None]
    kwargs = {a.keyword.value: evaluate(a.value, lookup) for a in node.args if a.keyword is not None}
    if NOT_CONST in args or NOT_CONST in kwargs.values():
        return NOT_CONST
    return base.method(node.func.attr.value, args, kwargs)


class ListValue(tuple):  # type: ignore[type-arg]  # of constants, any kind
    """A list literal's constant value: a tuple of its items (host code never changes it where tilec reads
    it: a return value, an argument), kept apart from a tuple where Python keeps them apart (`+`)."""


def holds_list(value: object) -> bool:
    """A list's value, or a tuple holding one at any depth."""
    return isinstance(value, ListValue) or (isinstance(value, tuple) and any(holds_list(v) for v in value))


def _sequence_operation(operator_: cst.BaseBinaryOp, left: object, right: object, node: cst.CSTNode) -> object:
    """`a + b` of two tuples or two lists, `s * n` / `n * s`, of at most MAX_SEQUENCE items; else NOT_CONST
    (a longer one is made only by running the file)."""
    if isinstance(operator_, cst.Add) and isinstance(left, tuple) and isinstance(right, tuple):
        if isinstance(left, ListValue) != isinstance(right, ListValue):
            raise FoldTypeError(node, "unsupported operand types for `+`: a list and a tuple (Python raises "
                                "TypeError here)")
        made = left + right
    elif isinstance(operator_, cst.Multiply) and isinstance(left, tuple) != isinstance(right, tuple):
        items, times = (left, right) if isinstance(left, tuple) else (right, left)
        if not isinstance(items, tuple) or not isinstance(times, int) or isinstance(times, bool):
            return NOT_CONST
        if len(items) * max(times, 0) > MAX_SEQUENCE:
            return NOT_CONST  # (host code's buffer, `[0] * 1_000_000`: a host value, as when tilec cannot tell)
        made = items * times
    else:
        return NOT_CONST
    if len(made) > MAX_SEQUENCE:
        return NOT_CONST
    return ListValue(made) if isinstance(left, ListValue) or isinstance(right, ListValue) else made


def evaluate(node: cst.BaseExpression, lookup: Callable[[cst.BaseExpression], object]) -> object:
    """Evaluate `node`; `lookup(node)` resolves names/attributes/calls or returns NOT_CONST."""
    value = literal(node)
    if value is not NOT_CONST:
        return value
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call)):
        found = lookup(node)
        if found is NOT_CONST and isinstance(node, cst.Attribute):  # `dof_type.num_dofs` of an enum member
            base = evaluate(node.value, lookup)
            return base.attribute(node.attr.value) if isinstance(base, Attributed) else NOT_CONST
        if found is NOT_CONST and isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.args:
            with_literals = _with_literal_args(node, lookup)  # `make_bitmask(bits)` of a factory's `bits`
            return NOT_CONST if with_literals is None else lookup(with_literals)
        if found is NOT_CONST and isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return _method_call(node, lookup)
        return found
    if isinstance(node, cst.UnaryOperation):
        v = evaluate(node.expression, lookup)
        if v is NOT_CONST or (isinstance(v, (tuple, str)) and not isinstance(node.operator, cst.Not)):
            return NOT_CONST
        if isinstance(node.operator, cst.Minus):
            return -v  # type: ignore[operator]  # v is an int, float or bool here (the contract above)
        if isinstance(node.operator, cst.Plus):
            return +v  # type: ignore[operator]  # as above
        if isinstance(node.operator, cst.Not):
            return not v
        return NOT_CONST
    if isinstance(node, cst.BinaryOperation):
        known = BINARY.get(type(node.operator))
        left, right = evaluate(node.left, lookup), evaluate(node.right, lookup)
        if NOT_CONST not in (left, right) and (isinstance(left, tuple) or isinstance(right, tuple)):
            return _sequence_operation(node.operator, left, right, node)
        if known is None or NOT_CONST in (left, right) or isinstance(left, (tuple, str)) or \
                isinstance(right, (tuple, str)):
            return NOT_CONST
        fn, symbol = known
        try:
            return apply_bounded(fn, left, right, node)
        except (ArithmeticError, ValueError):
            return NOT_CONST
        except TypeError:
            raise FoldTypeError(node, f"unsupported operand types for `{symbol}`: "
                                f"{type(left).__name__} and {type(right).__name__} (Python raises TypeError "
                                "here)") from None
    if isinstance(node, (cst.Tuple, cst.List)):  # a list: host code's `[b, b]` (ListValue)
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return NOT_CONST
        items = tuple(evaluate(e.value, lookup) for e in node.elements)
        return NOT_CONST if NOT_CONST in items else (ListValue(items) if isinstance(node, cst.List) else items)
    if isinstance(node, cst.Comparison):  # `"x" in OPTIONS` of a dict or set: the lookup's (resolve.Scope)
        value = compare(node, lambda n: evaluate(n, lookup))
        return lookup(node) if value is NOT_CONST and membership(node) is not None else value
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        seq, index = evaluate(node.value, lookup), evaluate(node.slice[0].slice.value, lookup)
        if isinstance(seq, tuple) and isinstance(index, int) and not isinstance(index, bool) and \
                -len(seq) <= index < len(seq):
            return seq[index]  # `SOLREF[0]` of a constant tuple
        return lookup(node) if seq is NOT_CONST else NOT_CONST  # `BINS[KIND]` of a dict (resolve.Scope)
    if isinstance(node, cst.BooleanOperation):  # Python's: the operand that decides
        left = evaluate(node.left, lookup)
        if left is NOT_CONST:
            return NOT_CONST
        if bool(left) != isinstance(node.operator, cst.And):  # `False and ...`, `True or ...`
            return left
        return evaluate(node.right, lookup)
    if isinstance(node, cst.IfExp):  # `1e-6 if USE_HENCKY else 1e-2`: the arm Python takes
        test = evaluate(node.test, lookup)
        if test is NOT_CONST:
            return NOT_CONST
        return evaluate(node.body if test else node.orelse, lookup)
    return NOT_CONST
