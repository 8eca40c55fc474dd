"""The reference interpreter's hash grids and meshes (ops/spatial.py): the ops read the loader's
descriptor behind an id (the interpreter runs in the process that made it), with Warp's rules
written out in numpy, independently of the runtime's hash_grid.h and mesh.h."""
from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ir
from .core import registrar
from .reference_values import Context, Impl, Value

IMPL: dict[str, Impl] = {}
impl = registrar(IMPL)
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


class HashGridLayout(ctypes.Structure):  # the loader's descriptor (runtime hash_grid.h tl::HashGrid)
    _fields_ = [("dim_x", ctypes.c_int32), ("dim_y", ctypes.c_int32), ("dim_z", ctypes.c_int32),
                ("num_points", ctypes.c_int32), ("built", ctypes.c_int32), ("dtype_bits", ctypes.c_int32),
                ("cell_width_inv_f", ctypes.c_float), ("cell_width_inv_d", ctypes.c_double),
                ("point_ids", ctypes.POINTER(ctypes.c_int32)), ("cell_starts", ctypes.POINTER(ctypes.c_int32)),
                ("cell_ends", ctypes.POINTER(ctypes.c_int32)), ("point_keys", ctypes.POINTER(ctypes.c_uint64)),
                ("has_groups", ctypes.c_int32)]


class MeshLayout(ctypes.Structure):  # runtime mesh.h tl::Mesh
    _fields_ = [("points", ctypes.POINTER(ctypes.c_float)), ("velocities", ctypes.POINTER(ctypes.c_float)),
                ("indices", ctypes.POINTER(ctypes.c_int32)), ("num_points", ctypes.c_int32),
                ("num_tris", ctypes.c_int32)]


def _grid(id_: Value) -> HashGridLayout:
    return HashGridLayout.from_address(int(id_))


def _mesh(id_: Value) -> MeshLayout:
    return MeshLayout.from_address(int(id_))


def cell_coord(v: Value) -> int:
    """floor, saturated to [INT_MIN, INT_MAX - 1], NaN to 0 (Warp's hash_grid_cell_coord)."""
    c = float(np.floor(v))
    if math.isnan(c):
        return 0
    return int(min(max(c, INT_MIN), INT_MAX - 1))


def _scaled(g: HashGridLayout, x: Value, offset: Value) -> Value:
    """(x + offset) * 1 / cell_width, in the point's precision."""
    if np.asarray(x).dtype == np.float64:
        return (np.float64(x) + np.float64(offset)) * np.float64(g.cell_width_inv_d)
    return (np.float32(x) + np.float32(offset)) * np.float32(g.cell_width_inv_f)


@impl("hash_grid_query_start", "hash_grid_query_stop")
def _query_bounds(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g, point, radius, axis = _grid(a[0]), np.asarray(a[1]), a[2], int(a[3])
    start = cell_coord(_scaled(g, point[axis], -radius))
    if call.op == "hash_grid_query_start":
        return np.int32(start)
    end = cell_coord(_scaled(g, point[axis], radius))
    dim = (g.dim_x, g.dim_y, g.dim_z)[axis]
    end = min(end, start + dim - 1)  # one pass over the axis's cells at most
    return np.int32(max(end, start) + 1)  # and the start cell at least


@impl("hash_grid_cell")
def _cell(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g = _grid(a[0])
    x, y, z = (int(v) % d for v, d in zip(a[1:4], (g.dim_x, g.dim_y, g.dim_z)))  # Python's % is into [0, d)
    return np.int32((z * g.dim_y + y) * g.dim_x + x)


@impl("hash_grid_cell_begin", "hash_grid_cell_end")
def _cell_range(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g = _grid(a[0])
    if not g.built:
        return np.int32(0)
    return np.int32((g.cell_starts if call.op == "hash_grid_cell_begin" else g.cell_ends)[int(a[1])])


@impl("hash_grid_group_begin", "hash_grid_group_end")
def _group_range(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g, cell, group = _grid(a[0]), int(a[1]), int(a[2])
    lo, hi = (int(g.cell_starts[cell]), int(g.cell_ends[cell])) if g.built else (0, 0)
    if not (g.built and g.point_keys and g.has_groups):
        return np.int32(hi if call.op == "hash_grid_group_end" else lo)
    keys = [int(g.point_keys[k]) for k in range(lo, hi)]  # sorted: the group's are one run of them
    key = (cell << 32) | (group & 0xFFFFFFFF)
    first = lo + sum(k < key for k in keys)
    return np.int32(first if call.op == "hash_grid_group_begin" else lo + sum(k <= key for k in keys))


@impl("hash_grid_point_id")
def _point_id(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g, k = _grid(a[0]), int(a[1])
    return np.int32(g.point_ids[k] if g.built and 0 <= k < g.num_points else -1)


def _values(m: MeshLayout, field: int) -> Any:  # a ctypes pointer to float
    """The mesh's points (field 0) or velocities (field 1): a null pointer for a mesh without velocities."""
    return m.points if field == 0 else m.velocities


def _corner(m: MeshLayout, field: int, vertex: int) -> Value:
    values = _values(m, field)
    return np.array([values[3 * vertex + c] for c in range(3)], np.float32)


def _corners(m: MeshLayout, face: int, field: int) -> list[Value] | None:
    if not _values(m, field) or not 0 <= face < m.num_tris:
        return None
    return [_corner(m, field, m.indices[3 * face + k]) for k in range(3)]


@impl("mesh_eval_position", "mesh_eval_velocity")
def _eval(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    c = _corners(_mesh(a[0]), int(a[1]), 0 if call.op == "mesh_eval_position" else 1)
    if c is None:
        return np.zeros(3, np.float32)
    u, v = np.float32(a[2]), np.float32(a[3])
    return c[0] * u + c[1] * v + c[2] * (np.float32(1) - u - v)


@impl("mesh_eval_adjoint")
def _eval_adjoint(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    c = _corners(_mesh(a[0]), int(a[1]), int(a[3]))
    if c is None:
        return np.float32(0)
    d, adj = c[int(a[4])] - c[2], np.asarray(a[2], np.float32)
    return d[0] * adj[0] + d[1] * adj[1] + d[2] * adj[2]


@impl("mesh_eval_face_normal")
def _face_normal(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    c = _corners(_mesh(a[0]), int(a[1]), 0)
    if c is None:
        return np.zeros(3, np.float32)
    n = np.cross(c[1] - c[0], c[2] - c[0])
    length = np.float32(np.sqrt(np.sum(n * n)))
    return n / length if length > 0 else np.zeros(3, np.float32)


@impl("mesh_get_point", "mesh_get_velocity", "mesh_get_index")
def _get(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m, k = _mesh(a[0]), int(a[1])
    inside = 0 <= k < 3 * m.num_tris
    if call.op == "mesh_get_index":
        return np.int32(m.indices[k] if inside else -1)
    field = 0 if call.op == "mesh_get_point" else 1
    if not inside or not _values(m, field):
        return np.zeros(3, np.float32)
    return _corner(m, field, m.indices[k])
