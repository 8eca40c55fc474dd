"""`@wp.struct` declarations: module-level classes -> StructT, and the leaves they flatten into.

Expects a Scope whose imports and earlier declarations are resolved (a struct may name the
structs declared above it, as in Python). Guarantees: every struct in `scope.structs` has
fields of a type the checker compiles (scalars, vectors and matrices, arrays of scalars, indexed arrays, nested structs; arrays of
structs whose fields are scalars, vectors, matrices, nested structs or arrays); anything else is a diagnostic at the
field. `ir.structs.leaves()` is the one definition of how a struct value, parameter or array of structs
becomes plain symbols: one per scalar or array leaf, named `s.field.sub`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..diagnostics import MODULE_DOT, Diagnostics
from ..ir.structs import leaves, struct_leaves
from ..ir.types import ArrayT, FieldT, MatT, Scalar, StructT, TileT, Type, VecT
from . import annotations as ann

if TYPE_CHECKING:  # resolve imports this module to declare structs; only the types are needed
    from .parse import Parsed
    from .resolve import Scope


def is_struct_decl(scope: Scope, node: cst.ClassDef) -> bool:
    """A class decorated `@wp.struct` (any alias of the API module)."""
    return any(scope.api_attr(d.decorator) == "struct" for d in node.decorators)


def declare(scope: Scope, node: cst.ClassDef, parsed: Parsed, diags: Diagnostics) -> None:
    """Records the struct in `scope.structs`, or reports why a field cannot be compiled (then the
    struct is recorded without that field's type, so uses of it fail at the use, not here)."""
    name = node.name.value
    if name.startswith("__"):  # the loader's module attributes
        diags.error("TC0002", f"struct name `{name}` starts with `__`, reserved for Python", parsed.span(node.name))
        return
    fields: list[tuple[str, FieldT]] = []
    for stmt in node.body.body:
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else (stmt,):
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue  # docstring
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.FunctionDef) and not small.decorators:
                continue  # a host method (`def to(self, device)`): Python's, never a kernel's (Warp ignores it too)
            if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                diags.error("TC0401", f"unsupported syntax in @wp.struct `{name}`: only annotated fields "
                            "(`x: float`) are allowed", parsed.span(small))
                continue
            fname = small.target.value
            if fname.startswith("__"):  # would shadow the loader class's Python internals
                diags.error("TC0002", f"struct field `{name}.{fname}` starts with `__`, reserved for Python",
                            parsed.span(small.target))
                continue
            if small.value is not None:
                diags.error("TC0401", f"struct field `{name}.{fname}`: default values are not supported "
                            "(Warp zero-initialises struct fields)", parsed.span(small.value))
                continue
            if any(f == fname for f, _ in fields):
                diags.error("TC0409", f"struct field `{name}.{fname}` is declared twice", parsed.span(small.target))
                continue
            try:
                t = ann.read_annotation(small.annotation.annotation, scope)
            except ann.AnnotationError as e:
                diags.error("TC0409", f"struct field `{name}.{fname}`: {e.message}", parsed.span(e.node))
                continue
            why = _unsupported_field(t)
            if why:
                diags.error("TC0409", f"struct field `{name}.{fname}`: {why}", parsed.span(small.annotation.annotation))
                continue
            assert not isinstance(t, str), t  # _unsupported_field refuses ANY
            fields.append((fname, t))
    scope.structs[name] = StructT(name.replace(MODULE_DOT, "."), tuple(fields))  # `Outer·Inner`: nested_classes.py
    scope.constants.pop(name, None)
    scope.type_aliases.pop(name, None)


def _unsupported_field(t: ann.Declared) -> str | None:
    held = t.dtype if isinstance(t, ArrayT) else t
    if t == ann.ANY:
        return "`Any` is not a struct field type"
    if isinstance(t, TileT):
        return "a tile cannot be a struct field"
    why = array_of_array_structs(t)
    if why:
        return why
    if isinstance(t, ann.IndexedT):  # read element by element, as an indexed parameter (frontend/indexed.py)
        return None
    if not isinstance(held, (Scalar, StructT, VecT, MatT)):
        return f"`{t}` is not a struct field type"
    return None


def array_of_array_structs(t: object) -> str | None:
    """Why `t` cannot be a struct field or a parameter: an array of structs that hold arrays of
    structs (an array of field views per element, which tilec's descriptors cannot express); None
    when it is not one. An array of structs holding plain arrays is an array of array descriptors
    per array field (ir/structs.py)."""
    if isinstance(t, ArrayT) and isinstance(t.dtype, StructT):
        inner = _struct_array_fields(t.dtype)
        if inner:
            return (f"an array of `{t.dtype}` structs, which hold arrays of structs ({', '.join(inner)}), "
                    "is not supported")
    return None


def _struct_array_fields(t: StructT, prefix: str = "") -> list[str]:
    """Dotted paths of the fields of `t` (nested structs included) that are arrays of structs."""
    out: list[str] = []
    for fname, ft in t.fields:
        if isinstance(ft, StructT):
            out += _struct_array_fields(ft, f"{prefix}{fname}.")
        elif isinstance(ft, ArrayT) and isinstance(ft.dtype, StructT):
            out.append(prefix + fname)
    return out


def is_structured(t: Type) -> bool:
    return leaves(t) is not None


__all__ = ["array_of_array_structs", "declare", "is_struct_decl", "is_structured", "leaves", "struct_leaves"]
