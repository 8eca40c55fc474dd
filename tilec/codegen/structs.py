"""What the manifest says about `@wp.struct` types, for the loader: each struct's fields and the
numpy layout of one element (Warp's C layout), and how a kernel's source parameters map onto its
flattened leaf parameters (ir/structs.py).
"""
from __future__ import annotations

from typing import Any

from ..ir.types import ArrayT, FieldT, IndexedT, MatT, Scalar, StructT, Type, VecT, texture_ndim


def numpy_layout(t: StructT) -> dict[str, Any] | None:
    """Warp's C layout of a struct of scalars and nested structs, as numpy's `dtype(dict)` takes it:
    {"names", "formats", "offsets", "itemsize"}; each field at the next multiple of its alignment,
    the size a multiple of the largest alignment (C's rule, which Warp's ctypes struct follows).
    Array fields have no numpy spelling: None."""
    names: list[str] = []
    formats: list[str | list[Any] | dict[str, Any]] = []
    offsets: list[int] = []
    offset, align = 0, 1
    for fname, ft in t.fields:
        fmt: str | list[Any] | dict[str, Any]
        if isinstance(ft, StructT):
            sub = numpy_layout(ft)
            if sub is None:
                return None
            size, falign, fmt = sub["itemsize"], sub["align"], sub
        elif isinstance(ft, Scalar):
            size = falign = ft.nbytes
            fmt = _NUMPY_FORMATS[ft.name]
        elif isinstance(ft, (VecT, MatT)):  # components in a row (row-major), aligned as one component
            size, falign = ft.nbytes, ft.dtype.nbytes
            fmt = [_NUMPY_FORMATS[ft.dtype.name], [ft.rows, ft.cols] if isinstance(ft, MatT) else [ft.length]]
        else:
            return None
        offset = -(-offset // falign) * falign
        names.append(fname)
        formats.append(fmt)
        offsets.append(offset)
        offset += size
        align = max(align, falign)
    itemsize = -(-offset // align) * align
    return {"names": names, "formats": formats, "offsets": offsets, "itemsize": itemsize, "align": align}


_NUMPY_FORMATS = {"bool": "bool", "int8": "i1", "uint8": "u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
                  "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "bfloat16": "<u2",
                  "float32": "<f4", "float64": "<f8",
                  **{f"texture{n}d": "<u8" for n in (1, 2, 3)}}  # a texture: its id


def manifest_entry(t: StructT) -> dict[str, Any]:
    """How the manifest describes a struct to the loader: its fields (kind, dtype, ndim or struct)
    and, when it has no array fields, the numpy layout of one element."""
    fields: list[dict[str, Any]] = []
    for fname, ft in t.fields:
        if isinstance(ft, StructT):
            fields.append({"name": fname, "kind": "struct", "struct": ft.name})
        elif isinstance(ft, ArrayT) and isinstance(ft.dtype, StructT):
            fields.append({"name": fname, "kind": "array", "struct": ft.dtype.name, "ndim": ft.ndim})
        elif isinstance(ft, (ArrayT, IndexedT)) and isinstance(ft.dtype, (VecT, MatT)):  # numpy: trailing component axes
            shape = [ft.dtype.rows, ft.dtype.cols] if isinstance(ft.dtype, MatT) else [ft.dtype.length]
            fields.append({"name": fname, "kind": "array" if isinstance(ft, ArrayT) else "indexedarray",
                           "dtype": ft.dtype.dtype.name, "ndim": ft.ndim, "element_shape": shape,
                           "value_type": str(ft.dtype)})
        elif isinstance(ft, ArrayT):
            assert isinstance(ft.dtype, Scalar), ft  # the other element types are the branches above
            fields.append({"name": fname, "kind": "array", "dtype": ft.dtype.name, "ndim": ft.ndim})
        elif isinstance(ft, IndexedT):  # the loader takes an indexed array (base and index arrays)
            assert isinstance(ft.dtype, Scalar), ft  # a value type's is the branch above
            fields.append({"name": fname, "kind": "indexedarray", "dtype": ft.dtype.name, "ndim": ft.ndim})
        elif isinstance(ft, Scalar) and texture_ndim(ft):  # a texture object (None: Warp's empty texture)
            fields.append({"name": fname, "kind": "texture", "dtype": ft.name, "ndim": texture_ndim(ft)})
        elif isinstance(ft, (VecT, MatT)):
            shape = [ft.rows, ft.cols] if isinstance(ft, MatT) else [ft.length]
            fields.append({"name": fname, "kind": "value", "dtype": ft.dtype.name, "shape": shape,
                           "value_type": str(ft)})
        else:
            assert isinstance(ft, Scalar), ft  # a struct field is a scalar, value, array or struct
            fields.append({"name": fname, "kind": "scalar", "dtype": ft.name})
    layout = numpy_layout(t)
    entry: dict[str, Any] = {"fields": fields}
    if layout is not None:
        entry["numpy"] = _plain(layout)
    return entry


def _plain(layout: dict[str, Any]) -> dict[str, Any]:
    """A layout with nested structs spelled as nested dicts (JSON), without the `align` key."""
    return {"names": layout["names"], "offsets": layout["offsets"], "itemsize": layout["itemsize"],
            "formats": [_plain(f) if isinstance(f, dict) else f for f in layout["formats"]]}


def kernel_args(struct_params: tuple[tuple[str, Type], ...]) -> list[dict[str, Any]]:
    """The loader's view of a kernel's source parameters: [{"name"[, "struct"[, "ndim"]]}]."""
    out: list[dict[str, Any]] = []
    for name, t in struct_params:
        if isinstance(t, StructT):
            out.append({"name": name, "struct": t.name})
        elif isinstance(t, ArrayT) and isinstance(t.dtype, StructT):
            out.append({"name": name, "struct": t.dtype.name, "ndim": t.ndim})
        else:
            out.append({"name": name})
    return out


def structs_used(struct_params: tuple[tuple[str, Type], ...], into: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every struct a kernel's parameters name, nested ones included: name -> manifest entry."""
    def visit(t: FieldT) -> None:
        t = t.dtype if isinstance(t, ArrayT) else t
        if isinstance(t, StructT) and t.name not in into:
            into[t.name] = manifest_entry(t)
            for _, ft in t.fields:
                visit(ft)

    for _, t in struct_params:
        visit(t)
    return into
