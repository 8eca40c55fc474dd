"""`@wp.func_native(snippet, adj_snippet, replay_snippet)`: a func whose body is C++/CUDA the user
wrote, as Warp compiles it.

Warp pastes the snippet as the body of a C++ function whose parameters are the Python def's, by
their Python names; tilec does the same for defs whose parameters are scalars, vectors, matrices
and arrays of them and whose result is a scalar, vector or matrix or nothing. An array reaches the
snippet as Warp's `array_t<T>` does (codegen/natives.py): `x[i]` indexes its data pointer,
`x.shape[0]` is an extent; Warp's `wp::vec_t<3, wp::float32>`, `wp::vec3`, `wp::mat_t<2, 2, float>`
name tilec's vectors and matrices there. The snippet reaches the generated .cpp and .cu as
written, inside a function of its own: it is C++ by the user's choice, compiled, never run, by the
build. Directives that would read other files into the build (`#include`, `#embed`,
`__has_include`) or talk to the compiler (`#pragma`, `_Pragma`) are refused: the snippet stays
one function body.

A call is a `native_call` op with effects (a snippet may have some: a barrier, a print, a store),
so it runs where the source calls it, once per call; it may read every array it takes and write
those its text may write (`_may_write`; the others are passed const). The adjoint launch replays
it (the replay_snippet instead, for a snippet returning nothing, as Warp does) and runs the
adj_snippet where the reverse sweep reaches the call (`native_adjoint`): scalar parameters'
adjoints are `adj_<name>` variables it adds to, arrays' the adjoint arrays, the result's
`adj_ret`. Without an adj_snippet a call with no float result and writing no float array needs
none (its floats reach only its integers); otherwise the kernel's adjoint is a diagnostic, never a
zero gradient.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from .. import ir
from ..ir.types import NONE, ArrayT, MatT, Scalar, VecT, describe
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
    snippet, adj_snippet, replay_snippet = _snippets(node, scope)
    params: list[tuple[str, ir.NativeParam]] = []
    p = node.params
    if isinstance(p.star_arg, cst.Param) or p.kwonly_params or isinstance(p.star_kwarg, cst.Param) or p.posonly_params:
        raise NativeError("its parameters must be plain positional ones")
    for param in p.params:
        pname = param.name.value
        if not pname.isascii() or pname in CXX_KEYWORDS:
            raise NativeError(f"parameter `{pname}` cannot be a C++ name (the snippet reads it by its Python name)")
        if param.default is not None:
            raise NativeError(f"parameter `{pname}` has a default; tilec passes every argument")
        if f"adj_{pname}" in (q.name.value for q in p.params):
            raise NativeError(f"parameter `adj_{pname}` would hide the adjoint of `{pname}` in the adj_snippet")
        params.append((pname, _param_type(param.annotation, scope, f"parameter `{pname}`", arrays=True)))
    floats = {t for _, t in params if isinstance(t, Scalar) and t.is_float}
    if adj_snippet is not None and len(floats) > 1:
        raise NativeError("its adj_snippet's float parameters must share one precision (tilec returns their "
                          "adjoints together)")
    ret = NONE if node.returns is None or _is_none(node.returns.annotation) else \
        _param_type(node.returns, scope, "its result", arrays=False)
    replay = replay_snippet if ret == NONE else None  # Warp replays a value's snippet itself
    arrays = [pname for pname, t in params if isinstance(t, ArrayT)]
    texts = [t for t in (snippet, adj_snippet, replay) if t is not None]
    written = frozenset(a for a in arrays if any(_may_write(_code_only(t), a) for t in texts))
    return ir.NativeFunc(name, node.name.value, tuple(params), ret, snippet, span, adj_snippet, replay, written)


_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
_ASSIGNS = re.compile(r"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|\s*(?:\+\+|--)")
_READS = re.compile(r"\s*\.\s*(?:shape|ndim|strides)\b")


_EFFECTS = re.compile(r"\b(?:printf|atomic\w*|static|volatile|asm|__syncthreads\w*|__threadfence\w*|__\w*sync\w*|"
                      r"assert|exit|abort|malloc|free|new|delete|memcpy|memset|reinterpret_cast)\b"
                      r"|->|\(\s*[\w:]+\s*\*+\s*\)")  # (and a pointer cast or member access: a write through one)


def values_only(native: ir.NativeFunc) -> bool:
    """Whether a call of `native` gives its value and nothing else: it takes no array and no 64-bit integer
    (what a snippet could write through), and no snippet of it names what could reach beyond its values
    (printing, atomics, statics, a block's or warp's synchronisation, assertions, memory, a pointer cast;
    math intrinsics such as `__frsqrt_rn` are values). A func that returns several values may then call it in each
    value's instance (frontend/values_only.py)."""
    texts = [t for t in (native.snippet, native.adj_snippet, native.replay_snippet) if t is not None]
    pointers = any(isinstance(t, ArrayT) or (isinstance(t, Scalar) and t.is_integral and t.bits == 64)
                   for _, t in native.params)  # an array, or an address passed as a 64-bit integer (kamino's)
    return native.ret != NONE and not pointers and not any(_EFFECTS.search(_code_only(t)) for t in texts)


def _code_only(text: str) -> str:
    """The snippet without its comments and string or character literals (each made one space)."""
    return _NOT_CODE.sub(" ", text)


def _may_write(code: str, name: str) -> bool:
    """Whether the snippet `code` may write array parameter `name`: unless every use indexes it,
    `name[...]`, as a value (no assignment or increment after, no `&` or increment before) or reads
    its `.shape`, `.ndim` or `.strides`. An array it only reads is passed const (codegen/natives.py),
    so that whatever this reading misses, a write through it does not compile."""
    for use in re.finditer(rf"(?<![\w.])\s*{re.escape(name)}\b", code):
        before = code[:use.start()].rstrip()
        if before.endswith(("&", "++", "--")) and not before.endswith("&&"):
            return True
        after = use.end()
        if _READS.match(code, after):
            continue
        rest = code[after:].lstrip()
        if not rest.startswith("["):
            return True  # the array itself: a pointer passed on, converted, or named otherwise
        end = _access_end(code, code.index("[", after))
        if end is None or _ASSIGNS.match(code, end) or code[end:].lstrip().startswith("("):
            return True  # assigned, incremented, or a member called (which may write it)
    return False


_MEMBER = re.compile(r"\s*(?:\.|->)\s*\w+")


def _access_end(code: str, start: int) -> int | None:
    """Where `x[...]` starting at the `[` at `start` ends, with the components and members read
    after it (`x[i][0]`, `x[i].x`); None for an unmatched bracket."""
    end = start
    while True:
        if code[end:].lstrip().startswith("["):
            close = _matching_bracket(code, code.index("[", end))
            if close is None:
                return None
            end = close + 1
        elif (member := _MEMBER.match(code, end)) is not None:
            end = member.end()
        else:
            return end


def _matching_bracket(code: str, start: int) -> int | None:
    depth = 0
    for i in range(start, len(code)):
        depth += {"[": 1, "]": -1}.get(code[i], 0)
        if depth == 0:
            return i
    return None


_SNIPPETS = ("snippet", "adj_snippet", "replay_snippet")  # func_native's parameters, in order


def _snippets(node: cst.FunctionDef, scope: Scope) -> tuple[str, str | None, str | None]:
    """The decorator's snippet, adj_snippet and replay_snippet (None where not given)."""
    for deco in node.decorators:
        call = deco.decorator
        if not isinstance(call, cst.Call) or scope.api_attr(call.func) != "func_native":
            continue
        given: dict[str, cst.BaseExpression] = {}
        for k, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else (_SNIPPETS[k] if k < len(_SNIPPETS) else "")
            if key not in _SNIPPETS or a.star:
                raise NativeError("its decorator takes snippet, adj_snippet and replay_snippet only")
            given[key] = a.value
        if "snippet" not in given:
            break
        texts = [None if key not in given or _is_none(given[key]) else _text(given[key], scope, key) for key in _SNIPPETS]
        assert texts[0] is not None
        return texts[0], texts[1], texts[2]
    raise NativeError("its decorator must be @wp.func_native(snippet)")


def _text(node: cst.BaseExpression, scope: Scope, what: str) -> str:
    text: object = None
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        text = node.evaluated_value
    else:
        text = scope.constant(node)  # a string constant: a module-level one, or a local beside a nested def
    if not isinstance(text, str):
        raise NativeError(f"its {what} must be a string literal or a string constant (module-level, or a local the function defining it assigns once)")
    outside = _OUTSIDE.search(text)
    if outside is not None:
        raise NativeError(f"its {what} uses `{outside.group(0).strip()}`: tilec compiles a snippet as one "
                          "function's body, reading no other file and setting no compiler option")
    return text


def _param_type(annotation: cst.Annotation | None, scope: Scope, what: str, arrays: bool) -> ir.NativeParam:
    kinds = "a scalar, vector or matrix type" + (" or an array of them" if arrays else "")
    if annotation is None:
        raise NativeError(f"{what} needs a type annotation ({kinds}, as the snippet declares it)")
    try:
        t = ann.annotation(annotation.annotation, scope)
    except ann.AnnotationError as e:
        raise NativeError(f"{what}: {e.message}") from None
    if isinstance(t, (Scalar, VecT, MatT)) or (arrays and type(t) is ArrayT and isinstance(t.dtype, (Scalar, VecT, MatT))):
        return t
    passed = "scalars, vectors, matrices and arrays of them" if arrays else "scalars, vectors and matrices"
    raise NativeError(f"{what} is {describe(t)}; tilec passes snippets {passed} only")


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
