"""The reference interpreter's hash grids and meshes (ops/spatial.py): the ops read the loader's
descriptor behind an id (the interpreter runs in the process that made it), with Warp's rules
written out in numpy, independently of the runtime's hash_grid.h and mesh.h."""
from __future__ import annotations

import ctypes
import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ir
from .core import registrar
from .reference_random import pcg, unit
from .reference_values import Context, Impl, Value
from .spatial import LIVE_KINDS

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


_FLOATS, _INTS = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int32)


class MeshLayout(ctypes.Structure):  # runtime mesh.h tl::Mesh
    _fields_ = [("points", _FLOATS), ("velocities", _FLOATS), ("indices", _INTS), ("num_points", ctypes.c_int32),
                ("num_tris", ctypes.c_int32), ("face_lowers", _FLOATS), ("face_uppers", _FLOATS),
                ("nodes", _FLOATS), ("face_order", _INTS), ("num_nodes", ctypes.c_int32),
                ("average_edge_length", ctypes.c_float), ("group_ids", _INTS), ("group_roots", _INTS),
                ("num_groups", ctypes.c_int32)]


# What the null id reads as (runtime mesh.h, hash_grid.h): an empty mesh, an empty unbuilt grid.
_EMPTY_MESH = MeshLayout()
_EMPTY_GRID = HashGridLayout(dim_x=1, dim_y=1, dim_z=1, dtype_bits=32)


def _grid(id_: Value) -> HashGridLayout:
    return HashGridLayout.from_address(int(id_)) if int(id_) else _EMPTY_GRID  # the null id: the empty grid


def _mesh(id_: Value) -> MeshLayout:
    return MeshLayout.from_address(int(id_)) if int(id_) else _EMPTY_MESH


# The kind (ops/spatial.py LIVE_KINDS) of each class of the loader's live objects.
_CLASS_KINDS = {"HashGrid": "hash_grid", "Mesh": "mesh", "Bvh": "bvh", "Volume": "volume"}


@impl("live_id")
def _live_id(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """The id if the loader's registry (tilec-rt/spatial.py, this process's) holds a live object of the kind
    read under it, else the null id (read as that kind's empty object)."""
    key, wanted = int(a[0]), int(a[1])
    registry = sys.modules.get("_tilec_spatial_v3")
    ref = getattr(registry, "live", {}).get(key)
    obj = ref() if ref is not None else None
    kind = _CLASS_KINDS.get(type(obj).__name__, "")
    read_as = {LIVE_KINDS.get((kind, str(getattr(obj, "dtype", "")))), LIVE_KINDS.get((kind, "any"))}
    return np.uint64(key if wanted in read_as else 0)


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


@impl("mesh_points", "mesh_velocities", "mesh_indices")
def _arrays(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """wp.mesh_get(id)'s arrays: views of the mesh's own memory (vectors as trailing axes)."""
    m = _mesh(a[0])
    if call.op == "mesh_indices":
        return np.ctypeslib.as_array(m.indices, (3 * m.num_tris,)) if m.num_tris else np.zeros(0, np.int32)
    values = _values(m, 0 if call.op == "mesh_points" else 1)
    return np.ctypeslib.as_array(values, (m.num_points, 3)) if values and m.num_points else np.zeros((0, 3), np.float32)


# ---------------------------------------------------------------- mesh queries
# Brute force over the faces in index order (the runtime walks a tree: the same face unless two tie
# exactly), in float64 where Warp's arithmetic is not what is being checked (the closest point by
# projection and the edges, the ray by Moller and Trumbore's test), so the two are independent.


def _triangles(m: MeshLayout) -> np.ndarray:
    """(faces, 3 corners, 3) float64."""
    return np.array([_corners(m, f, 0) for f in range(m.num_tris)], np.float64).reshape(-1, 3, 3)


def _closest_on_segment(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    d = b - a
    t = np.clip(np.dot(p - a, d) / np.dot(d, d), 0.0, 1.0) if np.dot(d, d) > 0 else 0.0
    return np.asarray(a + t * d)


def _closest_on_triangle(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The point of triangle t closest to p: the projection if it falls inside, else the nearest edge's."""
    a, b, c = t
    n = np.cross(b - a, c - a)
    q = p - np.dot(p - a, n) / np.dot(n, n) * n
    inside = [np.dot(np.cross(y - x, q - x), n) >= 0 for x, y in ((a, b), (b, c), (c, a))]
    if all(inside):
        return np.asarray(q)
    edges = [_closest_on_segment(x, y, p) for x, y in ((a, b), (b, c), (c, a))]
    return min(edges, key=lambda e: float(np.dot(e - p, e - p)))


def _is_sliver(t: np.ndarray) -> bool:
    e0, e1, e2 = t[1] - t[0], t[2] - t[0], t[2] - t[1]
    return bool(np.linalg.norm(np.cross(e0, e1)) / (e0 @ e0 + e1 @ e1 + e2 @ e2) < 1e-6)


def _closest_faces(m: MeshLayout, point: Value) -> list[tuple[float, int, np.ndarray]]:
    """(distance, face, closest point) of every face that is not a sliver, in face order."""
    p = np.asarray(point, np.float64)
    out = []
    for f, t in enumerate(_triangles(m)):
        if not _is_sliver(t):
            c = _closest_on_triangle(t, p)
            out.append((float(np.linalg.norm(c - p)), f, c))
    return out


@impl("mesh_closest_face")
def _closest_face(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    found = [(d, f) for d, f, _ in _closest_faces(_mesh(a[0]), a[1]) if d < float(a[2])]
    return np.int32(min(found)[1] if found else -1)


def _weighted_normal(m: MeshLayout, point: Value, max_dist: float, epsilon: float) -> tuple[int, np.ndarray]:
    """mesh_query_point_sign_normal's closest face and the angle-weighted normals of the faces whose
    distance is within epsilon x the mean edge length of the least (a face's angle at the corner it
    is closest to, pi on an edge, 2 pi inside)."""
    eps = float(m.average_edge_length) * epsilon
    faces = _closest_faces(m, point)
    best = min((d for d, _, _ in faces), default=math.inf)
    if not best < max_dist:
        return -1, np.zeros(3)
    total = np.zeros(3)
    for d, f, c in faces:
        if abs(d - best) >= eps:
            continue
        t = _triangles(m)[f]
        n = np.cross(t[1] - t[0], t[2] - t[0])
        near = [k for k in range(3) if np.linalg.norm(c - t[k]) < eps]
        if near:
            k = near[0]
            e1, e2 = t[(k + 1) % 3] - t[k], t[(k + 2) % 3] - t[k]
            weight = math.acos(np.clip(e1 @ e2 / np.linalg.norm(e1) / np.linalg.norm(e2), -1, 1))
        else:
            on_edge = any(np.linalg.norm(c - _closest_on_segment(t[k], t[(k + 1) % 3], c)) < eps for k in range(3))
            weight = math.pi if on_edge else 2 * math.pi
        total += weight * n / np.linalg.norm(n)
    return min((d, f) for d, f, _ in faces)[1], total


@impl("mesh_closest_signed")
def _closest_signed(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m, point = _mesh(a[0]), np.asarray(a[1], np.float64)
    face, normal = _weighted_normal(m, point, float(a[2]), float(a[3]))
    if face < 0:
        return np.int64(-1)
    closest = _closest_on_triangle(_triangles(m)[face], point)
    return np.int64(2 * face + (1 if normal @ (point - closest) > 0 else 0))


@impl("mesh_signed_face", "mesh_signed_sign")
def _signed_parts(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    code = int(a[0])
    if call.op == "mesh_signed_face":
        return np.int32(-1 if code < 0 else code >> 1)
    return np.float32(0 if code < 0 else 1 if code & 1 else -1)


def _weights(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(u, v): the weights of t's first two corners at its point closest to p (least squares on the edges)."""
    c = _closest_on_triangle(t, p)
    vw = np.linalg.lstsq(np.stack([t[1] - t[0], t[2] - t[0]], axis=1), c - t[0], rcond=None)[0]
    return np.array([1 - vw[0] - vw[1], vw[0]])


@impl("mesh_closest_weight")
def _closest_weight(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m, face = _mesh(a[0]), int(a[1])
    if not 0 <= face < m.num_tris:
        return np.float32(0)
    return np.float32(_weights(_triangles(m)[face], np.asarray(a[2], np.float64))[int(a[3])])


@impl("mesh_closest_weight_gradient")
def _closest_weight_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """By central differences in float64."""
    m, face, which = _mesh(a[0]), int(a[1]), int(a[3])
    if not 0 <= face < m.num_tris:
        return np.zeros(3, np.float32)
    t, p = _triangles(m)[face], np.asarray(a[2], np.float64)
    g = np.zeros(3)
    for k in range(3):
        step = np.eye(3)[k] * 1e-7
        g[k] = (_weights(t, p + step)[which] - _weights(t, p - step)[which]) / 2e-7
    return g.astype(np.float32)


def _faces_under(m: MeshLayout, root: int) -> set[int]:
    """The faces of the leaves in node `root`'s subtree (-1, or no node: every face)."""
    if not 0 <= root < m.num_nodes:
        return set(range(m.num_tris))
    faces: set[int] = set()
    n = root
    end = _node(m, root)[1]
    while n < end:
        _, _, first, count = _node(m, n)
        if first is not None:
            faces |= {m.face_order[k] for k in range(first, first + count)}
        n += 1
    return faces


def _ray_hits(m: MeshLayout, start: Value, direction: Value, root: int = -1) -> list[tuple[float, int, float, float, float]]:
    """(t, face, u, v, det) of each face the ray meets at t >= 0 (Moller and Trumbore, float64), of the
    faces under node `root`; u and v weigh the first and second corners, det is Warp's: n . -dir /
    |dir's largest component|."""
    s, d = np.asarray(start, np.float64), np.asarray(direction, np.float64)
    hits = []
    under = _faces_under(m, root)
    for f, (a, b, c) in enumerate(_triangles(m)):
        if f not in under:
            continue
        e1, e2 = b - a, c - a
        h = np.cross(d, e2)
        det = e1 @ h
        if det == 0:
            continue
        r = s - a
        v = (r @ h) / det
        q = np.cross(r, e1)
        w = (d @ q) / det
        t = (e2 @ q) / det
        if v < 0 or w < 0 or v + w > 1 or t < 0:
            continue
        n = np.cross(e1, e2)
        hits.append((t, f, 1 - v - w, v, -(n @ d) / np.abs(d).max()))
    return hits


@impl("mesh_ray_face")
def _ray_face(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    hits = [h for h in _ray_hits(_mesh(a[0]), a[1], a[2], int(a[4])) if h[0] < float(a[3])]
    return np.int32(min(hits)[1] if hits else -1)


@impl("mesh_ray_hit")
def _ray_hit(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    hit = [h for h in _ray_hits(_mesh(a[0]), a[2], a[3]) if h[1] == int(a[1])]
    if not hit:
        return np.float32(0)
    t, _, u, v, det = hit[0]
    return np.float32((t, u, v, det)[int(a[4])])


@impl("mesh_ray_hit_gradient")
def _ray_hit_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """By central differences in float64 of the hit's value in the ray's start or direction."""
    m, face, which, wrt = _mesh(a[0]), int(a[1]), int(a[4]), int(a[5])
    ray = [np.asarray(a[2], np.float64), np.asarray(a[3], np.float64)]

    def value(r: list[np.ndarray]) -> float:
        hit = [h for h in _ray_hits(m, r[0], r[1]) if h[1] == face]
        return float((hit[0][0], hit[0][2], hit[0][3], hit[0][4])[which]) if hit else 0.0

    g = np.zeros(3)
    for k in range(3):
        step = 1e-6 * max(1.0, abs(ray[wrt][k]))
        up, down = [r.copy() for r in ray], [r.copy() for r in ray]
        up[wrt][k] += step
        down[wrt][k] -= step
        g[k] = (value(up) - value(down)) / (2 * step)
    return g.astype(np.float32)


@impl("mesh_inside_rays")
def _inside_rays(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    if not 0 <= int(a[1]) < _mesh(a[0]).num_tris:
        return np.float32(0)
    votes = 0
    for axis in range(3):
        hits = _ray_hits(_mesh(a[0]), a[2], np.eye(3)[axis])
        votes += bool(hits) and min(hits)[4] < 0
    return np.float32(-1 if votes >= 2 else 1)


def _box(m: MeshLayout, lowers: Any, uppers: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([lowers[3 * k + c] for c in range(3)], np.float32),
            np.array([uppers[3 * k + c] for c in range(3)], np.float32))


def _overlap(box: tuple[np.ndarray, np.ndarray], lo: Value, hi: Value) -> bool:
    return bool(np.all(np.asarray(lo) <= box[1]) and np.all(np.asarray(hi) >= box[0]))


def _node(m: MeshLayout, n: int) -> tuple[tuple[np.ndarray, np.ndarray], int, int | None, int]:
    """Node n's box, the node after its subtree, and a leaf's first position (None: an inner node)
    and count (the loader's 32-byte record: lower, an int, upper, an int)."""
    record = np.array([m.nodes[8 * n + k] for k in range(8)], np.float32)
    a, item = (int(v) for v in record[[3, 7]].view(np.int32))
    box = (record[0:3], record[4:7])
    return (box, n + 1, -1 - item, a) if item < 0 else (box, a, None, 0)


def _next_leaf(m: MeshLayout, after: int, touches: Any, root: int = -1) -> Value:
    """The tree's leaves in depth-first order: the first after node `after`'s subtree under a path of
    boxes the query's shape `touches`, within node `root`'s subtree (-1, or no node: the whole tree)."""
    whole = not 0 <= root < m.num_nodes
    end = m.num_nodes if whole else _node(m, root)[1]
    n = (0 if whole else root) if after < 0 else _node(m, after)[1]
    while n < end:
        box, skip, first, _ = _node(m, n)
        if not touches(box):
            n = skip
        elif first is not None:
            return np.int32(n)
        else:
            n += 1
    return np.int32(-1)


@impl("mesh_box_next_leaf")
def _box_next_leaf(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return _next_leaf(_mesh(a[0]), int(a[1]), lambda box: _overlap(box, a[3], a[4]), int(a[2]))


@impl("bvh_get_group_root", "mesh_get_group_root")
def _group_root(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m = _mesh(a[0])
    roots = {m.group_ids[k]: m.group_roots[k] for k in range(m.num_groups)}
    return np.int32(roots.get(int(a[1]), -1))


@impl("mesh_leaf_begin", "mesh_leaf_end")
def _leaf_range(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    _, _, first, count = _node(_mesh(a[0]), int(a[1]))
    assert first is not None  # (a leaf: the loop's walk found it)
    return np.int32(first + (count if call.op == "mesh_leaf_end" else 0))


@impl("mesh_box_face")
def _box_face(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m = _mesh(a[0])
    face = m.face_order[int(a[1])]
    return np.int32(face if _overlap(_box(m, m.face_lowers, m.face_uppers, face), a[2], a[3]) else -1)


@impl("intersect_tri_tri")
def _intersect_tri_tri(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """By separating axes in float64 (the two normals and the nine edge cross products; coplanar pairs
    by the in-plane edge normals): touching counts as intersecting."""
    v, u = np.array(a[:3], np.float64), np.array(a[3:], np.float64)
    ev, eu = [v[(k + 1) % 3] - v[k] for k in range(3)], [u[(k + 1) % 3] - u[k] for k in range(3)]
    nv, nu = np.cross(ev[0], ev[1]), np.cross(eu[0], eu[1])
    axes = [nv, nu] + [np.cross(x, y) for x in ev for y in eu]
    if np.linalg.norm(np.cross(nv, nu)) <= 1e-12 * max(1.0, np.linalg.norm(nv) * np.linalg.norm(nu)):
        axes += [np.cross(nv, e) for e in ev + eu]  # coplanar: the edges' normals within the plane
    for axis in axes:
        if np.dot(axis, axis) == 0:
            continue
        pv, pu = v @ axis, u @ axis
        if pv.max() < pu.min() or pu.max() < pv.min():
            return np.int32(0)
    return np.int32(1)


def _furthest_corner(t: np.ndarray, p: np.ndarray) -> int:
    """Which corner of t is farthest from p: the first on a strict maximum over the others, else the second
    over the third, else the third (Warp's order of comparisons)."""
    d = [float(np.dot(p - c, p - c)) for c in t]
    return 0 if d[0] > d[1] and d[0] > d[2] else 1 if d[1] > d[2] else 2


@impl("mesh_furthest_face")
def _furthest_face(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    p, best, found = np.asarray(a[1], np.float64), float(a[2]) ** 2, -1
    for f, t in enumerate(_triangles(_mesh(a[0]))):
        if not _is_sliver(t):
            c = t[_furthest_corner(t, p)]
            if float(np.dot(c - p, c - p)) > best:
                best, found = float(np.dot(c - p, c - p)), f
    return np.int32(found)


@impl("mesh_furthest_weight")
def _furthest_weight(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m, face = _mesh(a[0]), int(a[1])
    if not 0 <= face < m.num_tris:
        return np.float32(0)
    return np.float32(_furthest_corner(_triangles(m)[face], np.asarray(a[2], np.float64)) == int(a[3]))


@impl("mesh_parity_sign")
def _parity_sign(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """Warp's perturbed directions (its generator seeded 42, float32 draws), each ray's crossings counted
    in float64."""
    m, face, point, n, scale = _mesh(a[0]), int(a[1]), a[2], int(a[3]), np.float32(a[4])
    if not 0 <= face < m.num_tris:
        return np.float32(0)
    state, votes = pcg(42), 0
    for _ in range(n):
        while True:
            d = []
            for _ in range(3):
                state = pcg(state)
                d.append(np.float32(1) + ((scale - -scale) * unit(state) + -scale))
            if float(np.dot(d, d)) >= 1e-8:
                break
        votes += len(_ray_hits(m, point, np.array(d, np.float32))) % 2
    return np.float32(-1 if 2 * votes >= n else 1)


@impl("mesh_query_ray_anyhit")
def _ray_anyhit(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.bool_(any(h[0] < float(a[3]) for h in _ray_hits(_mesh(a[0]), a[1], a[2], int(a[4]))))


@impl("mesh_query_ray_count_intersections")
def _ray_count(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.int32(len(_ray_hits(_mesh(a[0]), a[1], a[2], int(a[3]))))


def _sphere_reaches(box: tuple[np.ndarray, np.ndarray], centre: np.ndarray, radius: float) -> bool:
    gap = np.maximum(np.maximum(box[0] - centre, centre - box[1]), 0.0)
    return float(gap @ gap) <= max(radius, 0.0) ** 2


@impl("mesh_sphere_next_leaf")
def _sphere_next_leaf(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    centre, radius = np.asarray(a[3], np.float64), float(a[4])
    return _next_leaf(_mesh(a[0]), int(a[1]), lambda box: _sphere_reaches(box, centre, radius), int(a[2]))


def _ray_reaches(box: tuple[np.ndarray, np.ndarray], start: Value, direction: Value, max_dist: float) -> bool:
    """Warp's slab test in float32 (NaN from 0 * inf dropped by fmin/fmax as there), its half-open max_dist."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s, rcp = np.asarray(start, np.float32), np.float32(1) / np.asarray(direction, np.float32)
        a, b = (box[0] - s) * rcp, (box[1] - s) * rcp
    near, far = float(np.fmin(a[0], b[0])), float(np.fmax(a[0], b[0]))
    for k in (1, 2):
        near, far = float(np.fmax(np.fmin(a[k], b[k]), near)), float(np.fmin(np.fmax(a[k], b[k]), far))
    return far >= 0.0 and far >= near and not near >= max_dist


def _capsule_reaches(box: tuple[np.ndarray, np.ndarray], start: Value, direction: Value, radius: float,
                     max_dist: float) -> bool:
    """Warp's capsule test in float32: the box grown by the radius, an axis whose direction (1 / (1 / d))
    is 0 a slab the start must lie in, the others as the slab test; its closed max_dist."""
    r = np.float32(max(radius, 0.0))
    lo, hi, s = box[0] - r, box[1] + r, np.asarray(start, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        rcp = np.float32(1) / np.asarray(direction, np.float32)
        recovered = np.float32(1) / rcp
        a, b = (lo - s) * rcp, (hi - s) * rcp
    near, far = float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)
    for k in range(3):
        if recovered[k] == 0:
            if s[k] < lo[k] or s[k] > hi[k]:
                return False
        else:
            near, far = float(np.fmax(np.fmin(a[k], b[k]), near)), float(np.fmin(np.fmax(a[k], b[k]), far))
    return far >= 0.0 and far >= near and not near > max_dist


@impl("mesh_capsule_next_leaf")
def _capsule_next_leaf(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return _next_leaf(_mesh(a[0]), int(a[1]), lambda box: _capsule_reaches(box, a[3], a[4], float(a[5]), float(a[6])),
                      int(a[2]))


def _batch_items(m: MeshLayout, cursor: int, a: Value, b: Value, test: int) -> Any:
    """(cursor, item) of each item from the cursor the shape touches, in the walk's order."""
    def touches(box: tuple[np.ndarray, np.ndarray]) -> bool:
        return _overlap(box, a, b) if test == 0 else _ray_reaches(box, a, b, float("inf"))

    if cursor < 0:
        return
    leaf, k = cursor >> 32, cursor & 0xFFFFFFFF
    while leaf >= 0:
        _, _, first, count = _node(m, leaf)
        assert first is not None  # (a leaf)
        for position in range(k, first + count):
            item = m.face_order[position]
            if touches(_box(m, m.face_lowers, m.face_uppers, item)):
                yield (leaf << 32) | position, item
        leaf = int(_next_leaf(m, leaf, touches))
        k = _node(m, leaf)[2] or 0 if leaf >= 0 else 0


@impl("mesh_batch_start")
def _batch_start(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m = _mesh(a[0])
    leaf = int(_next_leaf(m, -1, lambda box: _overlap(box, a[1], a[2]) if int(a[3]) == 0 else
                          _ray_reaches(box, a[1], a[2], float("inf"))))
    return np.int64(-1 if leaf < 0 else (leaf << 32) | (_node(m, leaf)[2] or 0))


@impl("mesh_batch_item", "mesh_batch_advance")
def _batch_step(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    walk = _batch_items(_mesh(a[0]), int(a[1]), a[3], a[4], int(a[5]))
    for n, (cursor, item) in enumerate(walk):
        if n == int(a[2]):
            return np.int32(item) if call.op == "mesh_batch_item" else np.int64(cursor)
    return np.int32(-1) if call.op == "mesh_batch_item" else np.int64(-1)


@impl("mesh_ray_next_leaf")
def _ray_next_leaf(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return _next_leaf(_mesh(a[0]), int(a[1]), lambda box: _ray_reaches(box, a[3], a[4], float(a[5])), int(a[2]))


@impl("bvh_ray_item", "bvh_capsule_item", "bvh_sphere_item")
def _bvh_item(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m = _mesh(a[0])
    item = m.face_order[int(a[1])]
    box = _box(m, m.face_lowers, m.face_uppers, item)
    hit = _ray_reaches(box, a[2], a[3], float(a[4])) if call.op == "bvh_ray_item" else \
        _capsule_reaches(box, a[2], a[3], float(a[4]), float(a[5])) if call.op == "bvh_capsule_item" else \
        _sphere_reaches(box, np.asarray(a[2], np.float64), float(a[3]))
    return np.int32(item if hit else -1)


@impl("mesh_sphere_face")
def _sphere_face(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """The face's box, then its closest point to the centre (float64; a face without area: its edges')."""
    m, centre, radius = _mesh(a[0]), np.asarray(a[2], np.float64), float(a[3])
    face = m.face_order[int(a[1])]
    if not _sphere_reaches(_box(m, m.face_lowers, m.face_uppers, face), centre, radius):
        return np.int32(-1)
    t = _triangles(m)[face]
    if np.linalg.norm(np.cross(t[1] - t[0], t[2] - t[0])) == 0:
        c = min((_closest_on_segment(t[k], t[(k + 1) % 3], centre) for k in range(3)),
                key=lambda e: float(np.dot(e - centre, e - centre)))
    else:
        c = _closest_on_triangle(t, centre)
    return np.int32(face if float(np.dot(c - centre, c - centre)) <= max(radius, 0.0) ** 2 else -1)
