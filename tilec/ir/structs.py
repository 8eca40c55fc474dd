"""The leaves of struct types: how a struct value, parameter or array of structs becomes plain
scalars and arrays (the checker's symbols, the kernel's C parameters, the loader's field views).

A leaf is named by its dotted path inside the struct (`inner.x`); the order is declaration order,
depth first, and is the order of the flattened parameters everywhere.
"""
from __future__ import annotations

from .types import ArrayT, StructT


def struct_leaves(t: StructT, prefix: str = "") -> list:
    """[(dotted path, Scalar | ArrayT)] of a struct's leaves in declaration order."""
    out = []
    for fname, ft in t.fields:
        path = f"{prefix}{fname}"
        if isinstance(ft, StructT):
            out += struct_leaves(ft, path + ".")
        else:
            out.append((path, ft))
    return out


def leaves(t) -> list | None:
    """The leaves a value of type `t` flattens into: [(dotted path, leaf type)] for a struct or an
    array of structs (an array of field views, one per scalar leaf), None for any other type."""
    if isinstance(t, StructT):
        return struct_leaves(t)
    if isinstance(t, ArrayT) and isinstance(t.dtype, StructT):
        return [(path, ArrayT(lt, t.ndim)) for path, lt in struct_leaves(t.dtype)]
    return None
