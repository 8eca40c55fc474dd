"""Conformance cases: Warp programs as Warp's users write them, each launched the same way under
Warp 1.19 (CPU, `enable_cpu_blocks`, by refresh_refs.py) and under tilec (test_conformance.py).

A case names a program under programs/, a kernel, a launch and its arguments. Every area keeps
its cases in a `cases_<area>.py` beside this file (a list `CASES`), so areas grow independently.
Argument specs say how refresh_refs.py makes the inputs; the inputs themselves are stored with
Warp's outputs in refs/<id>.npz, so the comparison never depends on a random generator.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REFS = HERE / "refs"


@dataclass(frozen=True)
class Arr:
    """An array argument. role: "in" (read), "out" (written; starts at zero) or "inout"."""

    shape: tuple
    dtype: str = "float32"
    role: str = "in"
    kind: str = "randn"  # randn | rand (0..1) | int:LO:HI (uniform integers) | halfint:LO:HI (the same plus
    # 0.5: far from the kinks of abs and sign, for finite differences) | zeros | ones | arange
    value: str | None = None  # Warp's element type (vec3, mat33d, quat, transform): shape ends with its axes

    @property
    def differentiable(self) -> bool:
        return self.dtype.startswith("float")


@dataclass(frozen=True)
class Scal:
    """A scalar argument passed by value."""

    value: float | int
    dtype: str = "float32"


@dataclass(frozen=True)
class StructArg:
    """A `@wp.struct` argument passed by value: struct is the class name in the program, fields
    ((name, Arr | Scal | TextureArg), ...) give every field's value (array fields are read, or written
    for role "out"/"inout"; a texture field's texels are stored as in<k>.<name>)."""

    struct: str
    fields: tuple


@dataclass(frozen=True)
class StructArr:
    """An array of `@wp.struct` (a numpy structured array in Warp's layout under tilec): fields
    ((name, dtype[, kind]), ...) are the struct's scalar fields (dtype "float32:3" a vec3 field),
    each filled like an Arr of its kind (default: `kind`)."""

    struct: str
    shape: tuple
    fields: tuple
    role: str = "in"
    kind: str = "randn"


@dataclass(frozen=True)
class HeldArr:
    """A 1-d array of `count` `@wp.struct` values whose struct holds arrays (under tilec: the loader's
    structured array with an object field per array field). arrays ((field, Arr), ...): every element
    holds its own array of that spec, slot "k.field.e"; scalars ((field, dtype, kind), ...): one value
    per element, inputs only (Warp 1.19 drops their gradient when the element is copied, `s = a[i]`)."""

    struct: str
    count: int
    arrays: tuple
    scalars: tuple = ()


@dataclass(frozen=True)
class Grid:
    """A hash grid's id (wp.HashGrid under Warp, the loader's HashGrid under tilec) built over the
    points of argument `points` (an (n, 3) array) with cells of edge `radius`: nothing of it is
    stored, both sides build it from the stored points."""

    points: int
    dims: tuple = (8, 8, 8)
    radius: float = 0.5
    dtype: str = "float32"
    groups: int | None = None  # argument holding a group per point (an int32 array): a grouped build


@dataclass(frozen=True)
class MeshArg:
    """A triangle mesh's id (wp.Mesh under Warp, the loader's Mesh under tilec) over arrays of its
    own, stored as in<k>.points / .indices / .velocities (not the kernel's arguments: the mesh's
    points take no gradient, in Warp neither)."""

    points: Arr
    indices: Arr
    velocities: Arr | None = None
    groups: Arr | None = None  # a grouped mesh: each triangle's group (int32)

    def arrays(self) -> list:
        return [("points", self.points), ("indices", self.indices)] + (
            [("velocities", self.velocities)] if self.velocities is not None else []) + (
            [("groups", self.groups)] if self.groups is not None else [])


@dataclass(frozen=True)
class BvhArg:
    """A Bvh's id (wp.Bvh under Warp, the loader's Bvh under tilec) over boxes of its own, stored as
    in<k>.lowers / .uppers: the lowers drawn by their Arr, each upper the lower plus a draw of its Arr
    (so no box is inverted)."""

    lowers: Arr
    extents: Arr
    groups: Arr | None = None  # a grouped Bvh: each box's group (int32)

    def arrays(self) -> list:
        return [("lowers", self.lowers), ("uppers", self.extents)] + (
            [("groups", self.groups)] if self.groups is not None else [])


@dataclass(frozen=True)
class TextureArg:
    """A texture (wp.Texture{ndim}D under Warp, the loader's Texture{ndim}D under tilec) over texels of
    its own, stored as in<k>.data (not a kernel array: they take no gradient, in Warp neither). data's
    shape is the texels' as Warp takes them ((depth, height, width) for 3D, a trailing axis of 2 or 4
    channels), its dtype theirs (uint8 texels: kind "int:0:256"). filter: "closest" or "linear";
    address: "wrap", "clamp", "mirror" or "border" for every axis, or a tuple of one per axis; levels:
    its mip levels (0: all), blended by mip_filter."""

    data: Arr
    ndim: int
    filter: str = "linear"
    address: tuple | str = "clamp"
    normalized: bool = True
    levels: int = 1
    mip_filter: str = "linear"

    def arrays(self) -> list:
        return [("data", self.data)]

    def make(self, side, data):
        """The texture over `data` as `side` makes it: Warp's module (`wp`) or a tilec module, whose
        Texture{ndim}D, TextureFilterMode and TextureAddressMode take the same arguments."""
        modes = side.TextureAddressMode
        address = tuple(getattr(modes, m.upper()) for m in self.address) if isinstance(self.address, tuple) else \
            getattr(modes, self.address.upper())
        texture = getattr(side, f"Texture{self.ndim}D")
        return texture(data, filter_mode=getattr(side.TextureFilterMode, self.filter.upper()), address_mode=address,
                       normalized_coords=self.normalized, num_mip_levels=self.levels,
                       mip_filter_mode=getattr(side.TextureFilterMode, self.mip_filter.upper()), device="cpu")


@dataclass(frozen=True)
class VolumeArg:
    """A sparse volume's id (wp.Volume under Warp, the loader's Volume under tilec), made by both from the
    same dense array by Volume.load_from_numpy, stored as in<k>.data (its voxels take no gradient, in
    Warp neither): float32 data with a float bg_value, int32 data with an int one, (X, Y, Z, 3) data with a
    vec3 one."""

    data: Arr
    min_world: tuple = (0.0, 0.0, 0.0)
    voxel_size: float | tuple = 1.0
    bg_value: float | int | tuple = 0.0
    nvdb: bool = False  # stored as the NanoVDB file Warp writes of that volume, which both sides load

    def arrays(self) -> list:
        return [("data", self.data)]

    def make(self, side, data):
        """The volume over `data` as `side` makes it: Warp's module (`wp`) or a tilec module."""
        if self.nvdb and str(data.dtype) == "uint8":  # the file's bytes (refresh_refs.nvdb_bytes)
            return side.Volume.load_from_nvdb(data.tobytes(), device="cpu")
        return side.Volume.load_from_numpy(data, min_world=self.min_world, voxel_size=self.voxel_size,
                                           bg_value=self.bg_value, device="cpu")


def slots(args: tuple) -> list:
    """[(key, Arr, getter)] of every array a case's arguments hold: an Arr at position k is key
    "k"; an array field f of a struct argument, or field f of an array of structs, is "k.f".
    getter(values) gives that array (a field view of a structured array) from launch values."""
    out = []
    for k, a in enumerate(args):
        if isinstance(a, Arr):
            out.append((str(k), a, lambda v, k=k: v[k]))
        elif isinstance(a, Indexed):  # its base array (an indexed array's values are (base, indices))
            out.append((str(k), a, lambda v, k=k: v[k][0] if isinstance(v[k], tuple) else v[k]))
        elif isinstance(a, StructArg):
            out += [(f"{k}.{f}", spec, lambda v, k=k, f=f: getattr(v[k], f)) for f, spec in a.fields
                    if isinstance(spec, Arr)]
        elif isinstance(a, StructArr):
            out += [(f"{k}.{f[0]}", field_arr(a, f), lambda v, k=k, f=f[0]: field_view(v[k], f)) for f in a.fields]
        elif isinstance(a, HeldArr):
            out += [(f"{k}.{f}.{e}", spec, lambda v, k=k, f=f, e=e: v[k][f][e])
                    for f, spec in a.arrays for e in range(a.count)]
    return out


def field_arr(a: StructArr, f: tuple) -> Arr:
    """The Arr spec of field f = (name, dtype[, kind]) of an array of structs; a dtype "float32:3"
    or "float32:2x2" is a vector or matrix field (trailing axes, as numpy's subarray fields)."""
    dtype, _, tail = f[1].partition(":")
    shape = a.shape + (tuple(int(n) for n in tail.split("x")) if tail else ())
    return Arr(shape, dtype, a.role, f[2] if len(f) > 2 else a.kind)


def field_view(structured, path: str):
    """The view of field `path` ("box.lo": a nested struct's field) of a numpy structured array."""
    for part in path.split("."):
        structured = structured[part]
    return structured


@dataclass(frozen=True)
class Indexed:
    """An indexed array argument (Warp's wp.indexedarray), read only: a random base of `shape` and
    per dimension the length of a random int32 index array into it, or None (not indexed). Its
    inputs are stored as in<k> (the base) and in<k>_idx<d>; its gradient is the base's."""

    shape: tuple
    indices: tuple
    dtype: str = "float32"
    role: str = "in"
    value: str | None = None  # a Warp value type the base holds (vec3, transform...): trailing component axes

    @property
    def differentiable(self) -> bool:
        return self.dtype.startswith("float")

    @property
    def base_shape(self) -> tuple:
        return self.shape + (_value_axes(self.value) if self.value else ())


def arr(*shape, dtype="float32", kind="randn"):
    return Arr(tuple(shape), dtype, "in", kind)


def out(*shape, dtype="float32"):
    return Arr(tuple(shape), dtype, "out", "zeros")


VALUE_AXES = {"vec2": (2,), "vec3": (3,), "vec4": (4,), "quat": (4,), "transform": (7,), "spatial_vector": (6,),
              "mat22": (2, 2), "mat33": (3, 3), "mat44": (4, 4), "spatial_matrix": (6, 6)}


def _value_axes(value: str) -> tuple:
    return VALUE_AXES[value.rstrip("fdh") if value[-1] in "fdh" and value[:-1] in VALUE_AXES else value]


def varr(n, value, role="in", kind="randn"):
    """A 1-d array of n Warp values (vec3, mat33d, quat, ...) as numpy stores it: trailing component axes."""
    dtype = "float64" if value.endswith("d") else "float32"
    return Arr((n, *_value_axes(value)), dtype, role, "zeros" if role == "out" else kind, value)


@dataclass(frozen=True)
class Case:
    """One launch of one kernel.

    kernel: the kernel's name in the module tilec builds (for a kernel made by a factory, the name
    tilec gives that instantiation); warp_kernel: a Python expression evaluated in the program's
    namespace under Warp that yields the kernel (default: `kernel`).
    launch: "tiled" (wp.launch_tiled, dim = blocks) or "simt" (wp.launch, dim = threads).
    grad: compare the adjoint too (Warp's tape.backward with random output seeds).
    fd: also check tilec's adjoint against central finite differences (a directional derivative).
    warp_wrong: Warp's result is known wrong (DESIGN §6); the reference is numpy/FD, say why.
    build_block_dim: the --block-dim tilec builds with, when not `block_dim`.
    """

    id: str
    program: str
    kernel: str
    dim: tuple
    args: tuple
    block_dim: int = 64
    launch: str = "tiled"
    grad: bool = True
    fd: bool = True
    warp_kernel: str | None = None
    rtol: float = 1e-5
    atol: float = 1e-5
    warp_wrong: str | None = None
    tags: tuple = field(default_factory=tuple)
    build_block_dim: int | None = None  # tilec's --block-dim when not block_dim (a program whose kernels
    # take their block_dims from the launches in the file builds once for all its cases)

    @property
    def path(self) -> Path:
        return PROGRAMS / self.program

    @property
    def ref_path(self) -> Path:
        return REFS / f"{self.id}.npz"


def all_cases() -> list:
    """Every case of every cases_<area>.py, in a stable order; ids are unique."""
    cases = []
    for path in sorted(HERE.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(f"conformance_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += list(module.CASES)
    ids = [c.id for c in cases]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate conformance case ids: {sorted(duplicates)}"
    return cases
