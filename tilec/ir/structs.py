"""The leaves of struct types: how a struct value, parameter or array of structs becomes plain
scalars and arrays (the checker's symbols, the kernel's C parameters, the loader's field views).

A leaf is named by its dotted path inside the struct (`inner.x`); the order is declaration order,
depth first, and is the order of the flattened parameters everywhere.
"""
from __future__ import annotations

from typing import cast

from .. import naming
from .types import INT32, ArrayT, Element, IndexedT, MatT, Scalar, StackT, StructT, TileT, Type, VecT


def struct_leaves(t: StructT, prefix: str = "") -> list[tuple[str, Type]]:
    """[(dotted path, leaf type)] of a struct's leaves in declaration order: scalars, vectors,
    matrices, arrays (an indexed array: its base and index arrays, named as an indexed parameter's
    are, naming.index_param); a field that is an array of structs is one array per field of those (the
    fields of a struct an array holds are scalars, vectors, matrices or arrays, not arrays of
    structs: the casts below). An array field of such a struct is an array of array descriptors."""
    out: list[tuple[str, Type]] = []
    for fname, ft in t.fields:
        path = f"{prefix}{fname}"
        if isinstance(ft, StructT):
            out += struct_leaves(ft, path + ".")
        elif isinstance(ft, ArrayT) and isinstance(ft.dtype, StructT):  # field views, as for a parameter
            out += [(sub, ArrayT(cast(Element, lt), ft.ndim)) for sub, lt in struct_leaves(ft.dtype, path + ".")]
        elif isinstance(ft, IndexedT):  # as an indexed parameter: the base, then an int32 index array per axis
            out.append((path, ArrayT(ft.dtype, ft.ndim)))
            out += [(naming.index_param(path, k), ArrayT(INT32, 1)) for k in range(ft.ndim)]
        else:
            out.append((path, ft))
    return out


def leaves(t: Type) -> list[tuple[str, Type]] | None:
    """The leaves a value of type `t` flattens into: [(dotted path, leaf type)] for a struct or an
    array of structs (an array of field views, one per scalar leaf; an array leaf becomes an array
    of array descriptors, `ArrayT(ArrayT(float32, 1), 1)`) or a tile of structs (a tile per leaf),
    None for any other type."""
    if isinstance(t, StructT):
        return struct_leaves(t)
    if isinstance(t, ArrayT) and isinstance(t.dtype, StructT):
        return [(path, ArrayT(cast(Element, lt), t.ndim)) for path, lt in struct_leaves(t.dtype)]
    if isinstance(t, TileT) and isinstance(t.dtype, StructT):  # a tile of structs: one tile per leaf
        return [(path, TileT(cast(Element, lt), t.shape)) for path, lt in struct_leaves(t.dtype)]
    if isinstance(t, StackT) and isinstance(t.dtype, StructT):  # a stack of structs: one stack per leaf
        return [(path, StackT(cast("Scalar | VecT | MatT", lt), t.capacity)) for path, lt in struct_leaves(t.dtype)]
    return None
