"""Elementwise ops: operators and scalar math builtins, on scalars and tiles.

A binary op takes two scalars, two tiles of equal shape and dtype, or a tile
and a scalar (the scalar is broadcast). Untyped literals adapt to the other
operand; typed operands of different dtypes never mix.
"""
from __future__ import annotations

from typing import Callable

from ..ir.types import BOOL, INT32, Dim, MatT, Scalar, TileT, Type, VecT, describe
from . import rules
from .core import Bound, OpSpec, Param

A = Param("a", "value")
LEFT = Param("left", "value")
RIGHT = Param("right", "value")


Rule = Callable[[Bound], Type]


def _operand_dtypes(b: Bound, names: tuple[str, ...]) -> list[Scalar]:
    dts = []
    for n in names:
        t = b.types[n]
        if not isinstance(t, (Scalar, TileT)):
            b.fail("TC0303", f"operand `{n}` must be a scalar or a tile, got {describe(t)}", n)
        d = rules.dtype_of(t)
        if not isinstance(d, Scalar):  # tiles of vectors are refused before any rule runs (check.py)
            b.fail("TC0203", f"not defined for {describe(t)} operands", n)
        dts.append(d)
    return dts


def _result_shape(b: Bound, names: tuple[str, ...]) -> tuple[Dim, ...] | None:
    tiles = [(n, t) for n in names if isinstance(t := b.types[n], TileT)]
    if not tiles:
        return None
    rules.same_shape(b, tuple(n for n, _ in tiles), tuple(t for _, t in tiles))
    return tiles[0][1].shape


def elementwise_rule(names: tuple[str, ...], kinds: tuple[str, ...] = (), result: Scalar | None = None,
                     tiles_ok: bool = True) -> Rule:
    """A rule for an n-ary elementwise op.

    kinds: allowed dtype kinds ("float", "int", "uint", "bool"); empty means any.
    result: fixed result dtype (comparisons give bool), else the unified dtype.
    """

    def rule(b: Bound) -> Type:
        dts = _operand_dtypes(b, names)
        shape = _result_shape(b, names)
        if shape is not None and not tiles_ok:
            b.fail("TC0303", "is defined on scalars only", names[0])
        dt = rules.unify_scalars(b, names, tuple(dts))
        if kinds:
            for n, d in zip(names, dts):
                kind_ok = d.kind in kinds or (n in b.weak and dt.kind in kinds)
                if not kind_ok:
                    b.fail("TC0203", f"not defined for {d} operands", n)
        out = result or dt
        return out if shape is None else TileT(out, shape)

    return rule


FLOAT = ("float",)
INTS = ("int", "uint", "bool")
NUM = ("float", "int", "uint")

_BINARY = [
    # name, C++ name, allowed kinds, tiles allowed, differentiable, doc
    ("add", "add", (), True, True, "a + b"),
    ("sub", "sub", (), True, True, "a - b"),
    ("mul", "mul", (), True, True, "a * b"),
    ("div", "divide", (), True, True, "a / b (integer division truncates, as in Warp)"),
    ("floordiv", "floordiv", NUM, True, False, "a // b"),
    ("mod", "mod", NUM, True, True, "a % b (C remainder, as in Warp)"),
    ("pow", "pow", FLOAT, True, True, "a ** b"),
    ("min", "min", NUM, True, True, "the smaller of a and b"),
    ("max", "max", NUM, True, True, "the larger of a and b"),
    ("atan2", "atan2", FLOAT, True, True, "atan(a / b) in the right quadrant"),
    ("copysign", "copysign", FLOAT, True, True, "a with the sign of b"),
    ("bit_and", "bit_and", INTS, True, False, "a & b"),
    ("bit_or", "bit_or", INTS, True, False, "a | b"),
    ("bit_xor", "bit_xor", INTS, True, False, "a ^ b"),
    ("lshift", "lshift", INTS, True, False, "a << b"),
    ("rshift", "rshift", INTS, True, False, "a >> b"),
]
# Warp's builtins that are an operator (`wp.mod(a, b)` is `a % b`): builtin -> the operator's op
# (None: unary plus) and its operand count. Lowered as the operator, on whatever it takes.
OPERATOR_BUILTINS: dict[str, tuple[str | None, int]] = {
    "mod": ("mod", 2), "floordiv": ("floordiv", 2), "bit_and": ("bit_and", 2), "bit_or": ("bit_or", 2),
    "bit_xor": ("bit_xor", 2), "lshift": ("lshift", 2), "rshift": ("rshift", 2), "invert": ("invert", 1),
    "unot": ("not_", 1), "pos": (None, 1), "div_approx": ("div", 2),  # exact division, as Warp's CPU build
    "inverse_approx": ("inverse", 1),  # the exact inverse: Warp's CPU build uses the same for both
}
_COMPARE = [("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")]
_UNARY_FLOAT = [
    "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "sqrt", "cbrt", "floor", "ceil", "round", "trunc", "erf", "erfc", "erfinv",
    "erfcinv", "rint", "frac",
]  # fmt: skip
_NONDIFF_UNARY = {"floor", "ceil", "round", "trunc", "rint"}  # no gradient (zero almost everywhere)
_UNARY_NUM = [("neg", "-a"), ("abs", "|a|"), ("sign", "-1, 0 or 1 by the sign of a")]


def _table() -> list[OpSpec]:
    ops = []
    for name, cpp, kinds, tiles_ok, diff, doc in _BINARY:
        ops.append(
            OpSpec(
                name, (LEFT, RIGHT), elementwise_rule(("left", "right"), kinds, tiles_ok=tiles_ok), cpp, doc,
                adj_cpp=f"adj_{name}" if diff else None,
                api=name in ("min", "max", "pow", "atan2", "copysign", "add", "sub", "mul", "div"),
                elementwise=True,
            )
        )
    for name, sym in _COMPARE:
        ops.append(
            OpSpec(
                name, (LEFT, RIGHT), elementwise_rule(("left", "right"), result=BOOL, tiles_ok=False), name,
                f"a {sym} b", api=False, elementwise=True,
            )
        )
    for name in ("and_", "or_"):
        ops.append(
            OpSpec(name, (LEFT, RIGHT), elementwise_rule(("left", "right"), result=BOOL, tiles_ok=False),
                   name, f"boolean {name[:-1]}", api=False, elementwise=True)
        )
    ops.append(OpSpec("not_", (A,), elementwise_rule(("a",), result=BOOL, tiles_ok=False),
                      "not_", "boolean not", api=False, elementwise=True))
    ops.append(OpSpec("invert", (A,), elementwise_rule(("a",), INTS), "invert", "~a",
                      api=False, elementwise=True))
    ops.append(OpSpec("bit_count", (A,), elementwise_rule(("a",), ("int", "uint"), result=INT32), "bit_count",
                      "the set bits of an integer (a signed one's two's complement), as int32", elementwise=True))
    for name in _UNARY_FLOAT:
        diff = name not in _NONDIFF_UNARY
        ops.append(
            OpSpec(name, (A,), elementwise_rule(("a",), FLOAT), name, f"{name}(a), elementwise",
                   adj_cpp=f"adj_{name}" if diff else None, elementwise=True)
        )
    for name, doc in _UNARY_NUM:
        ops.append(
            OpSpec(name, (A,), elementwise_rule(("a",), NUM), name, doc, adj_cpp=f"adj_{name}",
                   api=name != "neg", elementwise=True)
        )
    ops.append(
        OpSpec("clamp", (Param("x", "value"), Param("lo", "value"), Param("hi", "value")),
               elementwise_rule(("x", "lo", "hi"), NUM), "clamp", "x limited to [lo, hi]",
               adj_cpp="adj_clamp", elementwise=True)
    )
    ops.append(
        OpSpec("select", (Param("cond", "value"), Param("if_false", "value"),
                          Param("if_true", "value")),
               _select_rule(("if_false", "if_true")), "select",
               "if_true where cond else if_false (Warp's argument order)",
               adj_cpp="adj_select", nondiff=frozenset({"cond"}), elementwise=True)
    )
    ops.append(
        OpSpec("where", (Param("cond", "value"), Param("if_true", "value"),
                         Param("if_false", "value")),
               _select_rule(("if_true", "if_false")), "where", "if_true where cond else if_false",
               adj_cpp="adj_where", nondiff=frozenset({"cond"}), elementwise=True)
    )
    ops.append(
        OpSpec("bitcast", (A, Param("dtype", "dtype")), _bitcast_rule, "bitcast",
               "a's bits read as dtype, a scalar type of a's size (Warp's wp.cast(a, dtype))", api=False)
    )
    ops.append(
        OpSpec("cast", (A, Param("dtype", "dtype")), _cast_rule, "cast",
               "a converted to dtype (float(x), int(x), wp.float64(x))", adj_cpp="adj_cast",
               api=False, elementwise=True)
    )
    return ops


def _select_rule(value_names: tuple[str, ...]) -> Rule:
    inner = elementwise_rule(value_names)

    def rule(b: Bound) -> Type:
        c = b.types["cond"]
        if not isinstance(c, Scalar):
            b.fail("TC0406", "the condition must be a scalar", "cond")
        picked = [b.types[n] for n in value_names]
        if any(isinstance(t, (VecT, MatT)) for t in picked):  # Warp's where of vectors, matrices, quaternions, ...
            if picked[0] != picked[1]:
                b.fail("TC0201", f"{b.op}: both values must have one type, got {describe(picked[0])} and "
                       f"{describe(picked[1])}", value_names[1])
            return picked[0]
        return inner(b)

    return rule


def _cast_rule(b: Bound) -> Type:
    t = b.types["a"]
    if not isinstance(t, (Scalar, TileT)):
        b.fail("TC0303", f"cannot convert {describe(t)}", "a")
    if isinstance(t, TileT):
        b.fail("TC0303", "use wp.tile_astype to convert a tile", "a")
    dtype: Type = b.attrs["dtype"]  # a "dtype" param: the binder resolved it to a Type
    return dtype


def _bitcast_rule(b: Bound) -> Type:
    t, dtype = b.types["a"], b.attrs["dtype"]
    if not (isinstance(t, Scalar) and isinstance(dtype, Scalar)):
        b.fail("TC0303", f"reinterprets a scalar as a scalar type (tilec's), got {describe(t)} as {describe(dtype)}",
               "a")
    if t.bits != dtype.bits:
        b.fail("TC0201", f"{t} has {t.bits} bits and {dtype} {dtype.bits}: a reinterpretation keeps the size", "a")
    return dtype


OPS = _table()
