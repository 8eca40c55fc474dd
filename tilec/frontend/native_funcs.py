"""`@wp.func_native(snippet)`: a func whose body is C++/CUDA the user wrote, as Warp compiles it.

Warp pastes the snippet as the body of a C++ function whose parameters are the Python def's, by
their Python names; tilec does the same for defs whose parameters and result are scalars (what
Newton's snippets take: `float_flip(f: float) -> wp.uint32`, a sentinel, a lowest set bit, a
block barrier). The snippet reaches the generated .cpp and .cu as written, inside a function of
its own (codegen/natives.py): it is C++ by the user's choice, compiled, never run, by the build.
Directives that would read other files into the build (`#include`, `#embed`, `__has_include`) or
talk to the compiler (`#pragma`, `_Pragma`) are refused: the snippet stays one function body.

A call is a `native_call` op with effects (a snippet may have some: a barrier, a print), so it runs
where the source calls it, once per call. Its adjoint: none is needed for an integer or void result;
a float result makes the kernel's adjoint a diagnostic (tilec reads no adj_snippet).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from .. import ir
from ..ir.types import NONE, Scalar, describe
from . import annotations as ann

if TYPE_CHECKING:
    from ..diagnostics import Span
    from .resolve import Scope

# C++ keywords and alternative tokens a Python identifier may spell: a parameter named so could
# not be declared under its Python name
CXX_KEYWORDS = frozenset("""alignas alignof and_eq asm auto bitand bitor bool case catch char char8_t char16_t char32_t
compl concept const consteval constexpr constinit const_cast co_await co_return co_yield decltype default delete do
double dynamic_cast enum explicit export extern float friend goto inline int long mutable namespace new noexcept
not_eq nullptr operator or_eq private protected public register reinterpret_cast requires short signed sizeof static
static_assert static_cast struct switch template this thread_local throw typedef typeid typename union unsigned
using virtual void volatile wchar_t xor xor_eq""".split())

_OUTSIDE = re.compile(r"^\s*#\s*(include|include_next|import|embed|pragma)\b|_Pragma|__has_include|__has_embed",
                      re.MULTILINE)


class NativeError(Exception):
    """Why a func_native cannot be compiled (the caller reports it at the call)."""


def native_func(node: cst.FunctionDef, scope: Scope, name: str, span: Span) -> ir.NativeFunc:
    """The snippet def `node` (resolve.Scope.native_funcs) as the IR's NativeFunc named `name`, placed at
    `span` (its def in the file compiled, else the first call)."""
    snippet = _snippet(node, scope)
    params: list[tuple[str, Scalar]] = []
    p = node.params
    if isinstance(p.star_arg, cst.Param) or p.kwonly_params or isinstance(p.star_kwarg, cst.Param) or p.posonly_params:
        raise NativeError("its parameters must be plain positional ones")
    for param in p.params:
        pname = param.name.value
        if not pname.isascii() or pname in CXX_KEYWORDS:
            raise NativeError(f"parameter `{pname}` cannot be a C++ name (the snippet reads it by its Python name)")
        if param.default is not None:
            raise NativeError(f"parameter `{pname}` has a default; tilec passes every argument")
        params.append((pname, _scalar(param.annotation, scope, f"parameter `{pname}`")))
    ret = NONE if node.returns is None or _is_none(node.returns.annotation) else \
        _scalar(node.returns, scope, "its result")
    return ir.NativeFunc(name, node.name.value, tuple(params), ret, snippet, span)


def _snippet(node: cst.FunctionDef, scope: Scope) -> str:
    for deco in node.decorators:
        call = deco.decorator
        if not isinstance(call, cst.Call) or scope.api_attr(call.func) != "func_native":
            continue
        given = [a.value for a in call.args if a.keyword is None][:1] + \
            [a.value for a in call.args if a.keyword is not None and a.keyword.value == "snippet"]
        text: object = None
        if given and isinstance(given[0], (cst.SimpleString, cst.ConcatenatedString)):
            text = given[0].evaluated_value
        elif given:
            text = scope.constant(given[0])  # a module-level string constant
        if not isinstance(text, str):
            raise NativeError("its snippet must be a string literal or a module-level string constant")
        outside = _OUTSIDE.search(text)
        if outside is not None:
            raise NativeError(f"its snippet uses `{outside.group(0).strip()}`: tilec compiles a snippet as one "
                              "function's body, reading no other file and setting no compiler option")
        return text
    raise NativeError("its decorator must be @wp.func_native(snippet)")


def _scalar(annotation: cst.Annotation | None, scope: Scope, what: str) -> Scalar:
    if annotation is None:
        raise NativeError(f"{what} needs a type annotation (a scalar type, as the snippet declares it)")
    try:
        t = ann.annotation(annotation.annotation, scope)
    except ann.AnnotationError as e:
        raise NativeError(f"{what}: {e.message}") from None
    if not isinstance(t, Scalar):
        raise NativeError(f"{what} is {describe(t)}; tilec passes snippets scalars only")
    return t


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
