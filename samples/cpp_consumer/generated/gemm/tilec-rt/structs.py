"""@wp.struct types for the tilec loader (tilec-rt, tilec 0.1.0): the same file in every module.

Each struct is a class: `Params(scale=2.0, weights=np.ones(8, np.float32))`, fields settable as
attributes, checked on assignment (scalars: Python numbers or numpy scalars; arrays: numpy arrays
of the field's dtype and ndim, or anything the kernel launch accepts for an array; nested structs:
an instance of that struct). Unset fields are zero / None, as in Warp. An array of structs is a
numpy structured array of `Params.numpy_dtype()`, Warp's memory layout (field order, alignment,
padding); `Params.zeros(n)` makes one. For a struct holding arrays each array field is an object field
(every element holds its own numpy or Warp array); `Params.array([p0, p1, ...])` makes one from struct
values. A texture field holds a Texture1D/2D/3D of the field's dimensionality or None (Warp's empty
texture); in an array of structs it holds the texture's id (0 for None), which a launch checks is a
live texture's. A kernel's struct argument is passed to the compiled code as its leaves: scalar
fields by value, array fields as arrays, texture fields as their textures' ids, and an array of
structs as one strided field view per scalar field (`a["x"]`), so no struct memory is copied.
"""
from __future__ import annotations

import numpy as np

_FLOATS = ("float16", "float32", "float64")


class Struct:
    """Base of the generated struct classes (one per @wp.struct of the module); its own attributes
    start with `_tilec_` so that no field name of the user's struct can shadow them."""

    _tilec_name = ""
    _tilec_fields = ()  # manifest field entries: {"name", "kind", "dtype"|"struct", "ndim"}
    _tilec_layout = None  # numpy dtype spec of one element (None: the struct holds arrays)

    def __init__(self, **values):
        for f in self._tilec_fields:
            object.__setattr__(self, f["name"], _default(f))
        for key, value in values.items():
            setattr(self, key, value)

    def __setattr__(self, key, value):
        field = next((f for f in self._tilec_fields if f["name"] == key), None)
        if field is None:
            names = ", ".join(f["name"] for f in self._tilec_fields)
            raise AttributeError(f"struct `{self._tilec_name}` has no field `{key}` (its fields: {names})")
        object.__setattr__(self, key, _checked(self._tilec_name, field, value))

    def __repr__(self):
        return f"{self._tilec_name}(" + ", ".join(f"{f['name']}={getattr(self, f['name'])!r}" for f in self._tilec_fields) + ")"

    @classmethod
    def numpy_dtype(cls):
        """The numpy dtype of one element of an array of this struct: Warp's layout, or for a struct
        holding arrays, its fields in order with an object field per array field (each element
        holds its own array; the scalar fields are strided views, as for any array of structs)."""
        if cls._tilec_layout is not None:
            return np.dtype(cls._tilec_layout)
        fields = []
        for f in cls._tilec_fields:
            if f["kind"] == "array" and "struct" in f:
                raise TypeError(f"struct `{cls._tilec_name}` holds an array of structs (`{f['name']}`); it has no "
                                "array-of-structs layout")
            if f["kind"] in ("array", "indexedarray"):
                fields.append((f["name"], object))
            elif f["kind"] == "struct":
                fields.append((f["name"], CLASSES[f["struct"]].numpy_dtype()))
            elif f["kind"] == "value":
                fields.append((f["name"], _DTYPE_OF.get(f["dtype"], f["dtype"]), tuple(f["shape"])))
            else:
                fields.append((f["name"], _DTYPE_OF.get(f["dtype"], f["dtype"])))
        return np.dtype(fields)

    @classmethod
    def array(cls, items):
        """An array of this struct from a sequence of struct values (this class's or Warp's, read
        by field name), e.g. to pass where a kernel takes wp.array(dtype=...)."""
        items = list(items)
        out = cls.zeros(len(items))
        for k, item in enumerate(items):
            _fill(out, k, cls, item)
        return out

    @classmethod
    def zeros(cls, shape):
        """A zeroed array of this struct, to pass where a kernel takes wp.array(dtype=...); array
        fields (object fields) hold None until set."""
        out = np.zeros(shape, cls.numpy_dtype())
        _clear_arrays(out, cls)
        return out


def _clear_arrays(out, cls):
    """Sets every array field (an object field) of a structured array of `cls` to None."""
    for f in cls._tilec_fields:
        if f["kind"] in ("array", "indexedarray") and "struct" not in f and cls._tilec_layout is None:
            out[f["name"]] = None
        elif f["kind"] == "struct" and CLASSES[f["struct"]]._tilec_layout is None:
            _clear_arrays(out[f["name"]], CLASSES[f["struct"]])


def _fill(out, k, cls, item):
    """Element k of a structured array `out` of `cls` from one struct value (field by field)."""
    for f in cls._tilec_fields:
        if not hasattr(item, f["name"]):
            raise TypeError(f"element {k} must be a `{cls._tilec_name}` struct (it has no field `{f['name']}`), "
                            f"got {type(item).__name__}")
        v = getattr(item, f["name"])
        if f["kind"] == "struct":
            sub = out[f["name"]]
            _fill(sub, k, CLASSES[f["struct"]], v)
        elif f["kind"] in ("array", "indexedarray"):
            out[f["name"]][k] = _checked(cls._tilec_name, f, v)
        elif f["kind"] == "texture":  # its id (0: Warp's empty texture), checked again by each launch
            texture = _checked(cls._tilec_name, f, v)
            out[f["name"]][k] = 0 if texture is None else texture.id
        else:
            out[f["name"]][k] = _checked(cls._tilec_name, f, v) if f["kind"] != "value" else np.asarray(v)


def _default(field):
    if field["kind"] == "value":
        return np.zeros(field["shape"], _DTYPE_OF.get(field["dtype"], field["dtype"]))
    if field["kind"] == "scalar":
        return False if field["dtype"] == "bool" else (0.0 if field["dtype"] in _FLOATS else 0)
    if field["kind"] == "struct":
        return CLASSES[field["struct"]]()
    return None


def _checked(struct, field, value):
    where = f"field `{struct}.{field['name']}`"
    if field["kind"] == "scalar":
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value[()]
        kinds = (bool, np.bool_) if field["dtype"] == "bool" else (int, float, np.integer, np.floating) \
            if field["dtype"] in _FLOATS else (int, np.integer)
        if not isinstance(value, kinds) or (field["dtype"] != "bool" and isinstance(value, (bool, np.bool_))):
            raise TypeError(f"{where} is a {field['dtype']} scalar, got {value!r}")
        return value
    if field["kind"] == "value":  # a vector or matrix: any sequence of its shape, kept as numpy
        array = np.asarray(value)
        if array.shape != tuple(field["shape"]) or array.dtype.kind not in "biuf":
            raise TypeError(f"{where} is a {field['value_type']} (shape {tuple(field['shape'])}), got {value!r}")
        return array.astype(_DTYPE_OF.get(field["dtype"], field["dtype"]))
    if field["kind"] == "texture":  # a Texture{ndim}D of any module (checked again at the launch), or None:
        label = f"Texture{field['ndim']}D"  # Warp's empty texture
        if value is None or (type(value).__name__ == label and hasattr(value, "id")):
            return value
        raise TypeError(f"{where} is a {label} (or None: an empty texture), got {type(value).__name__}")
    if field["kind"] == "struct":
        if not isinstance(value, CLASSES[field["struct"]]):
            raise TypeError(f"{where} is a `{field['struct']}` struct, got {type(value).__name__}")
        return value
    if value is None:
        return None
    if isinstance(value, np.ndarray) and "struct" in field:
        want = CLASSES[field["struct"]].numpy_dtype()
        if value.dtype != want or value.ndim != field["ndim"]:
            raise TypeError(f"{where} is a {field['ndim']}-d array of `{field['struct']}` (dtype {want}), got "
                            f"{value.ndim}-d {value.dtype}")
        return value
    if field["kind"] == "indexedarray":
        return value  # an IndexedArray, a (data, indices) pair or Warp's indexedarray: checked at the launch
    if isinstance(value, np.ndarray):
        if field.get("dtype") is not None and value.dtype != np.dtype(_DTYPE_OF.get(field["dtype"], field["dtype"])):
            raise TypeError(f"{where} is an array of {field['dtype']}, got dtype {value.dtype}")
        axes = tuple(field.get("element_shape", ()))  # an array of vectors: trailing component axes
        if value.ndim != field["ndim"] + len(axes) or value.shape[value.ndim - len(axes):] != axes:
            what = f" of {field['value_type']} (numpy: trailing axes {axes})" if axes else ""
            raise ValueError(f"{where} is a {field['ndim']}-d array{what}, got shape {value.shape}")
    return value  # other array objects (Warp's, DLPack) are checked when a kernel gets them


_DTYPE_OF = {"bfloat16": "uint16", "texture1d": "uint64", "texture2d": "uint64", "texture3d": "uint64"}


def leaf_values(kernel, arg, value, adjoint, views=None):
    """[(leaf name, value)] of one source argument of `kernel` (arg: its manifest entry). views:
    (array of structs, field path) -> its field view, when a Tape needs the same view each time."""
    name = arg["name"]
    if "struct" not in arg:
        return [(name, value)]
    cls = CLASSES[arg["struct"]]
    what = f"{kernel}: argument `{name}`" + (" (adjoint)" if adjoint else "")
    if "ndim" in arg:
        return _array_leaves(what, name, cls, arg["ndim"], value, adjoint, views)
    if value is None and adjoint:
        return [(f"{name}.{path}", None) for path in _paths(cls)]
    return _struct_leaves(what, name, cls, value, adjoint, views)


def _paths(cls, prefix=""):
    out = []
    for f in cls._tilec_fields:
        if "struct" in f:  # a nested struct, or an array of structs (one field view per leaf)
            out += _paths(CLASSES[f["struct"]], f"{prefix}{f['name']}.")
        else:
            out.append(prefix + f["name"])
    return out


def _struct_leaves(what, name, cls, value, adjoint, views=None):
    out = []
    for f in cls._tilec_fields:
        if not hasattr(value, f["name"]):  # our classes, or Warp's struct instances (same field names)
            raise TypeError(f"{what} must be a `{cls._tilec_name}` struct (it has no field `{f['name']}`), "
                            f"got {type(value).__name__}")
        v = getattr(value, f["name"])
        if f["kind"] == "struct":
            out += _struct_leaves(what, f"{name}.{f['name']}", CLASSES[f["struct"]], v, adjoint, views)
        elif "struct" in f and (v is not None or not adjoint):  # an array of structs: its field views
            if v is None:
                raise ValueError(f"{what}: array field `{f['name']}` is not set")
            out += _array_leaves(what, f"{name}.{f['name']}", CLASSES[f["struct"]], f["ndim"], v, adjoint, views)
        elif "struct" in f:
            out += [(f"{name}.{f['name']}.{p}", None) for p in _paths(CLASSES[f["struct"]])]
        elif f["kind"] in ("array", "indexedarray") and v is None and not adjoint:
            raise ValueError(f"{what}: array field `{f['name']}` is not set")
        else:
            out.append((f"{name}.{f['name']}", v))
    return out


def _array_leaves(what, name, cls, ndim, value, adjoint, views=None):
    paths = _paths(cls)
    if value is None and adjoint:
        return [(f"{name}.{p}", None) for p in paths]
    if isinstance(value, (list, tuple)) and ndim == 1:  # struct values: copied into one array (writes
        value = cls.array(value)  # to its scalar fields are not seen by the caller; arrays are shared)
    if not isinstance(value, np.ndarray) and hasattr(value, "__array_interface__"):
        _check_warp_struct(what, cls, value)
        value = np.asarray(value)  # Warp's CPU arrays of structs: a view of their memory
    want = cls.numpy_dtype()
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{what} must be a numpy structured array of `{cls._tilec_name}` "
                        f"({cls._tilec_name}.zeros(n) makes one), got {type(value).__name__}")
    if value.dtype != want and _warp_records(cls, value.dtype):
        if value.ndim != ndim:
            raise ValueError(f"{what} must have {ndim} dimension(s), got {value.ndim}")
        return [(f"{name}.{p}", _leaf_view(value, p, cls)) for p in paths]
    if value.dtype != want:
        raise TypeError(f"{what} must have dtype {cls._tilec_name}.numpy_dtype() (Warp's layout: {want}), "
                        f"got {value.dtype}")
    if value.ndim != ndim:
        raise ValueError(f"{what} must have {ndim} dimension(s), got {value.ndim}")
    out = []
    for p in paths:
        if views is not None:
            out.append((f"{name}.{p}", views(value, p)))
            continue
        view = value
        for part in p.split("."):
            view = view[part]  # a strided view of one field: no copy
        out.append((f"{name}.{p}", view))
    return out


# Warp 1.19's array_t in memory (an array field of a Warp array of structs): what the loader reads.
_WARP_ARRAY_FIELDS = ("data", "grad", "shape", "strides", "ndim")


class WarpRecords:
    """An array field of a Warp array of structs (wp.array(dtype=S) or its numpy view): Warp's own
    array descriptors (data and grad pointers, int32 extents and byte strides, ndim), read into
    tilec's and written back by the loader. Their element dtype is the struct's field's (Warp
    stores none): checked where the Warp array says its struct type."""

    def __init__(self, records):
        self.records = records


def _warp_records(cls, dtype):
    """Whether `dtype` is the numpy layout of a Warp array of `cls`: the same field names, each
    array field one of Warp's array descriptors."""
    if dtype.names is None or tuple(dtype.names) != tuple(f["name"] for f in cls._tilec_fields):
        return False
    for f in cls._tilec_fields:
        sub = dtype.fields[f["name"]][0]
        if f["kind"] == "array" and "struct" not in f:
            if sub.names is None or not set(_WARP_ARRAY_FIELDS) <= set(sub.names):
                return False
        elif f["kind"] == "indexedarray":
            return False  # Warp's indexed array records are not read (pass IndexedArray values instead)
        elif f["kind"] == "struct" and not _warp_records(CLASSES[f["struct"]], sub) and sub.names is None:
            return False
    return True


def _leaf_view(value, path, cls):
    """One leaf of a Warp array of structs: a field view, an array field's records wrapped."""
    view = value
    for part in path.split("."):
        view = view[part]
    held = cls
    for part in path.split(".")[:-1]:
        held = CLASSES[next(f for f in held._tilec_fields if f["name"] == part)["struct"]]
    field = next(f for f in held._tilec_fields if f["name"] == path.split(".")[-1])
    return WarpRecords(view) if field["kind"] == "array" else view


def _check_warp_struct(what, cls, value):
    """A Warp array of structs names its struct type: each array field's element type and ndim must
    be the field's here (its memory alone cannot tell)."""
    struct = getattr(value, "dtype", None)
    fields = getattr(struct, "vars", None)
    if not isinstance(fields, dict):
        return
    for f in cls._tilec_fields:
        if f["kind"] != "array" or "struct" in f or f["name"] not in fields:
            continue
        t = getattr(fields[f["name"]], "type", None)
        dtype, ndim = getattr(getattr(t, "dtype", None), "__name__", None), getattr(t, "ndim", None)
        if (dtype, ndim) != (f["dtype"], f["ndim"]):
            raise TypeError(f"{what}: field `{f['name']}` of the Warp struct is {ndim}-d {dtype}, the kernel's "
                            f"`{cls._tilec_name}.{f['name']}` is {f['ndim']}-d {f['dtype']}")


def make_classes(manifest_structs):
    for name, entry in manifest_structs.items():
        layout = entry.get("numpy")
        CLASSES[name] = type(name, (Struct,), {"_tilec_name": name, "_tilec_fields": tuple(entry["fields"]),
                                                "_tilec_layout": _dtype_spec(layout) if layout else None,
                                                "__doc__": f"The @wp.struct `{name}` of a tilec module."})
    return CLASSES


def _dtype_spec(layout):
    """The manifest's JSON layout as numpy's dtype spec: nested structs as dicts, a vector or
    matrix field [component, shape] as a subarray (component, shape)."""
    def spec(f):
        if isinstance(f, dict):
            return _dtype_spec(f)
        return (f[0], tuple(f[1])) if isinstance(f, list) else f

    return {**layout, "formats": [spec(f) for f in layout["formats"]]}


CLASSES = {}
