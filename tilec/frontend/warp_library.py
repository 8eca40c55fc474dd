"""Warp's builtins that Warp writes as Python functions (`wp.norm_huber`, `wp.quat_to_rpy`, ...),
provided by tilec's own source of them in the language it compiles (tilec/library/warp_math.py).

The file is parsed on the first call of one of them and resolved into a Scope of its own, whose
funcs are named `wp.<name>` (so their instances never meet a user's func of the same name). A
kernel's call `wp.norm_huber(v)` then lowers as a call of that func (lower_call.py), and the func's
body is checked with every node placed at the user's call: a diagnostic inside it, and the line
comments of its generated code, point at the line that called the builtin.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import libcst as cst

from ..diagnostics import Diagnostics, Span
from ..ir.types import MatT, Type, VecT, describe
from .parse import Parsed, parse
from .resolve import FuncDef, Scope, resolve

SOURCE = Path(__file__).resolve().parent.parent / "library" / "warp_math.py"
PREFIX = "wp."
# The builtins the file provides (a test checks the list against the file): kept here so that
# telling whether a call is one of them never parses the file.
BUILTINS = frozenset({
    "norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize",
    "spatial_top", "spatial_bottom", "spatial_dot", "spatial_cross", "spatial_cross_dual", "velocity_at_point",
    "transform_twist", "transform_wrench", "quat_twist", "quat_twist_angle", "quat_twist_angle_signed",
    "quat_to_rpy", "quat_rpy", "quat_from_euler", "transform_to_matrix", "transform_compose", "spatial_adjoint",
    "quat_to_axis_angle", "quat_from_matrix", "transform_from_matrix", "transform_decompose", "quat_to_euler",
    "quat_slerp", "transform_set_translation_copy", "transform_set_rotation_copy", "argmax", "argmin",
    "closest_point_edge_edge", "quat_between_vectors",
})
# Warp's builtins that update their first argument in place, as a statement: the variable is
# assigned the library's copying variant (`t = transform_set_translation_copy(t, p)`).
IN_PLACE = {"transform_set_translation": "transform_set_translation_copy",
            "transform_set_rotation": "transform_set_rotation_copy"}

# Builtins whose first parameter is `v: Any`: Warp's take a vector of floats there, checked at the call
# (so that a scalar is refused where it is passed, not inside the body).
TAKE_FLOAT_VECTOR = frozenset({"norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize"})
TAKE_VECTOR = frozenset({"argmax", "argmin"})  # a vector of any scalar type
# `wp.min(v)` / `wp.max(v)` of one vector (Warp's reduction overloads): the library's helpers, named
# `_...` so that no user calls them by name
VECTOR_REDUCTIONS = {"min": "_min_of", "max": "_max_of"}
SHOWN_AS = {helper: api for api, helper in VECTOR_REDUCTIONS.items()}


def refusal(fd: FuncDef, first: Type) -> str | None:
    """Why a call of library func `fd` cannot take `first` as its first argument, where its body
    would only fail inside (the message names the builtin), else None."""
    api = fd.name.removeprefix(PREFIX)
    api = SHOWN_AS.get(api, api)
    if api in TAKE_FLOAT_VECTOR and not (isinstance(first, VecT) and first.family == "vec" and first.dtype.is_float):
        return f"{api}: takes a vector of floats, got {describe(first)}"
    if (api in TAKE_VECTOR or api in VECTOR_REDUCTIONS) and not (isinstance(first, VecT) and first.family == "vec"):
        return f"{api}: takes a vector, got {describe(first)}"
    if api == "quat_from_matrix" and not (isinstance(first, MatT) and first.dtype.is_float
                                          and (first.rows, first.cols) in ((3, 3), (4, 4))):
        return f"quat_from_matrix: takes a mat33 or mat44 of floats, got {describe(first)}"
    if api in ("transform_from_matrix", "transform_decompose") and not (
            isinstance(first, MatT) and first.dtype.is_float and (first.rows, first.cols) == (4, 4)):
        return f"{api}: takes a mat44 of floats, got {describe(first)}"
    if api == "transform_to_matrix" and not (isinstance(first, VecT) and first.family == "transform"):
        return f"transform_to_matrix: takes a transform, got {describe(first)}"
    if api == "transform_compose" and not (isinstance(first, VecT) and first.family == "vec" and first.length == 3
                                           and first.dtype.is_float):
        return f"transform_compose: takes a vec3 of floats as its position, got {describe(first)}"
    return None


def vector_reduction(api: str, node: cst.Call) -> str | None:
    """The library func a call `min(v)` / `wp.max(v)` (one positional argument) lowers as, else None."""
    helper = VECTOR_REDUCTIONS.get(api)
    one = len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star
    return PREFIX + helper if helper is not None and one else None


def provides(api: str, caller: Scope) -> bool:
    """Whether `wp.<api>` called from code resolved into `caller` is one of the file's funcs (its
    helpers, named `_...`, only from the file itself)."""
    return api in BUILTINS or (api.startswith("_") and caller is library_scope())


@functools.lru_cache(maxsize=1)
def library() -> tuple[Parsed, Scope]:
    parsed = parse(SOURCE.read_text(encoding="utf-8"), SOURCE.name, SOURCE.stem)
    diags = Diagnostics()
    scope = resolve(parsed, diags)
    assert not diags.items, diags.items  # the file is tilec's own: tests/test_warp_builtins.py checks it
    renamed = {}
    for name, fd in scope.funcs.items():
        renamed[PREFIX + name] = dataclasses.replace(fd, name=PREFIX + name, scope=scope, library=True)
    scope.funcs = renamed
    return parsed, scope


def library_scope() -> Scope:
    return library()[1]


def func_def(scope: Scope, name: str) -> FuncDef:
    """The func a call names: the module's (or a nested def's), else `wp.<api>` of the library."""
    found = scope.funcs.get(name)
    return found if found is not None else library_scope().funcs[name]


class CallSiteParsed(Parsed):
    """The library's parse seen from one call of the user's: every node is at that call."""

    def __init__(self, library_parsed: Parsed, user: Parsed, call: Span) -> None:
        super().__init__(user.name, user.filename, user.source, library_parsed.tree)
        self.call = call

    def span(self, node: cst.CSTNode) -> Span:
        return self.call

    def place_like(self, made: cst.CSTNode, original: cst.CSTNode) -> None:
        pass  # every node is placed at the call already


def seen_from(user: Parsed, call: Span) -> Parsed:
    return CallSiteParsed(library()[0], user, call)
