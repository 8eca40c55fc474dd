"""`print("text")`, `wp.print("text")` and `wp.printf(format, args...)` in kernels and funcs.

Warp 1.19 prints a string literal (`print("done")`, one line) and formats scalars with C's printf
(`wp.printf("%d: %f\\n", i, x)`); it refuses f-strings and `str.format` in kernels, and so does
tilec, with the printf spelling in the help. Each lowers to one `print_format` op whose format is
checked here, conversion by conversion, against its arguments: integers (and bools) take
`d i u x X o`, floats take `f F e E g G`, a string literal argument takes `%s` (its text goes into
the format); any other conversion (`%n`, `%p`, `%c`, `*` widths, ...) or a count mismatch is a
diagnostic. The checked format passes every integer as `long long` (`%lld`) and every float as
`double`, so no argument can be read at the wrong width (runtime debug.h print_format).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import NoReturn, TypeGuard

import libcst as cst

from .. import ir
from ..ir.types import Scalar, TileT, describe

SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?P<prec>\.\d*)?(?P<length>hh|h|ll|l|j|z|t|L)?(?P<conv>.?)",
                  re.S)
INT_CONVS = "diuxXo"
FLOAT_CONVS = "fFeEgG"
PRINTF_HELP = 'wp.printf("i = %d, x = %f\\n", i, x)'


def string_literal(node: cst.CSTNode) -> str | None:
    """The text of a str literal (plain or implicitly concatenated), else None (bytes too)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def escape(text: str) -> str:
    """Text as a printf format that prints it verbatim."""
    return text.replace("%", "%%")


class FormatError(Exception):
    def __init__(self, message: str, arg: int | None = None):
        super().__init__(message)
        self.message = message
        self.arg = arg  # the argument to blame (index into the printf arguments), None: the format


def checked_format(fmt: str, args: list[str | Scalar]) -> str:
    """The C format printing `fmt` with `args` (each a Scalar type, or a str for a string literal),
    integers widened to long long; raises FormatError."""
    out, pos, k = [], 0, 0
    for m in SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv = m["conv"]
        if conv == "%" and not (m["flags"] or m["width"] or m["prec"] or m["length"]):
            out.append("%%")
            continue
        spec = m.group(0)
        if conv not in INT_CONVS + FLOAT_CONVS + "s":
            raise FormatError(f"the format's `{spec}` is not a conversion tilec prints (integers: "
                              f"%d %i %u %x %X %o, floats: %f %e %g and capitals, strings: %s)")
        if k >= len(args):
            raise FormatError(f"the format's `{spec}` has no argument (the format has more conversions than "
                              f"the {len(args)} argument(s))")
        arg = args[k]
        head = f"%{m['flags']}{m['width']}{m['prec'] or ''}"
        if conv == "s":
            if not isinstance(arg, str):
                raise FormatError(f"`{spec}` prints a string literal, got {describe(arg)}", k)
            out.append(escape((head + "s") % arg))
        elif isinstance(arg, str):
            raise FormatError(f"a string literal is printed with `%s`, not `{spec}`", k)
        elif conv in INT_CONVS:
            if not (isinstance(arg, Scalar) and (arg.is_integral or arg.kind == "bool")):
                raise FormatError(f"`{spec}` prints an integer, got {describe(arg)}", k)
            out.append(f"{head}ll{conv}")
        else:
            if not (isinstance(arg, Scalar) and arg.is_float):
                raise FormatError(f"`{spec}` prints a float, got {describe(arg)}", k)
            out.append(f"{head}{conv}")
        k += 1
    out.append(fmt[pos:])
    if k != len(args):
        raise FormatError(f"{len(args) - k} argument(s) more than the format's {k} conversion(s)", k)
    return "".join(out)


class PrintLowering:
    """Mixin of FunctionChecker: print of strings and wp.printf."""

    # Supplied by FunctionChecker (lower_call.py, lower_expr.py): declared for the type checker only.
    fail: Callable[..., NoReturn]
    lower_op: Callable[..., ir.Expr]
    make_op: Callable[..., ir.Expr]
    expr: Callable[[cst.BaseExpression], ir.Expr]
    is_weak: Callable[[ir.Expr], TypeGuard[ir.Const]]  # an untyped literal: a Const

    def lower_print(self, node: cst.Call) -> ir.Expr:
        args = [a.value for a in node.args]
        if len(args) == 1 and any(a.keyword is not None for a in node.args):
            self.fail("TC0401", "unsupported syntax: keyword arguments of print()", node.args[0])
        if len(args) != 1:
            self.fail("TC0401", f"unsupported syntax: print() of {len(args)} values; Warp's print in a kernel "
                      "takes one", node, help=PRINTF_HELP)
        self.refuse_string_building(args[0])
        text = string_literal(args[0])
        if text is None:
            value = self.expr(args[0])
            # a tile: printed once per block (Warp's tile print)
            return self.make_op("print_tile" if isinstance(value.type, TileT) else "print", [value], {}, node)
        return self.make_op("print_format", [], {"format": escape(text) + "\n"}, node)

    def refuse_string_building(self, value: cst.CSTNode) -> None:
        if isinstance(value, cst.FormattedString):
            self.fail("TC0401", "unsupported syntax: f-strings in a kernel (Warp 1.19 refuses them too)", value,
                      help=PRINTF_HELP)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value == "format" and string_literal(value.func.value) is not None:
            self.fail("TC0401", "unsupported syntax: str.format in a kernel (Warp 1.19 refuses it too)", value,
                      help=PRINTF_HELP)

    def lower_printf(self, node: cst.Call) -> ir.Expr:
        if not node.args or any(a.keyword is not None for a in node.args):
            self.fail("TC0401", "wp.printf takes a format string literal and then the values, by position", node,
                      help=PRINTF_HELP)
        fmt = string_literal(node.args[0].value)
        if fmt is None:
            self.refuse_string_building(node.args[0].value)
            self.fail("TC0305", "the format of wp.printf must be a string literal", node.args[0].value)
        nodes = [a.value for a in node.args[1:]]
        kinds: list[str | Scalar] = []
        values: list[ir.Expr] = []
        where: list[cst.BaseExpression] = []
        for n in nodes:
            text = string_literal(n)
            if text is not None:
                kinds.append(text)
                continue
            where.append(n)
            self.refuse_string_building(n)
            e = self.expr(n)
            t = e.type
            if not isinstance(t, Scalar):
                self.fail("TC0203", f"wp.printf prints scalars, got {describe(t)}", n)
            if self.is_weak(e):
                e = ir.Const(e.value, t, e.span)
            kinds.append(t)
            values.append(e)
        try:
            c_format = checked_format(fmt, kinds)
        except FormatError as err:
            self.fail("TC0303", f"wp.printf: {err.message}", node.args[0].value if err.arg is None or
                      err.arg >= len(nodes) else nodes[err.arg])
        return self.make_op("print_format", values, {"format": c_format}, node, where=where)
