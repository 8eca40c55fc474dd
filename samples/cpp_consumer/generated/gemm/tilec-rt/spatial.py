"""Warp's HashGrid, Mesh, Bvh and textures for the tilec loader (tilec-rt, tilec 0.1.0): the same
file in every module.

    grid = <module>.HashGrid(dim_x=128, dim_y=128, dim_z=128)      # as wp.HashGrid (CPU)
    grid.build(points, radius)                                     # points: (n, 3) float32 or float64
    mesh = <module>.Mesh(points, indices, velocities=None)         # as wp.Mesh (CPU)
    bvh = <module>.Bvh(lowers, uppers)                             # as wp.Bvh (CPU): (n, 3) float32 boxes
    tex = <module>.Texture3D(data, filter_mode=..., address_mode=...)  # as wp.Texture3D (CPU; 1D, 2D alike)
    <module>.<kernel>.launch(dim=n, inputs=[grid.id, mesh.id, points, ...])

The build is Warp 1.19's: each point's cell is floor(p * (1 / radius)) per axis in the points'
precision (saturated to int32, NaN to cell 0), wrapped modulo the grid's dimensions; the point
indices are sorted by cell, stably, so a cell lists its points in their original order; each cell's
range of that order is kept. Kernels read it through runtime hash_grid.h, whose `tl::HashGrid` is
`_HashGridDesc` below, field for field.

A Mesh's descriptor (runtime mesh.h `tl::Mesh`, `_MeshDesc` below) points at the caller's points
and velocities, read live by every launch as in Warp (so they must stay alive and keep their shape:
the Mesh holds them), at a checked copy of the indices, and at the mesh's bounding-volume
hierarchy (`_Bvh` below), which its queries walk: built with the mesh, rebuilt in place by `refit()`
after the points moved (as in Warp, a query of moved points before `refit()` sees the old boxes).
A Bvh is the same descriptor without points: its items' boxes are the caller's lowers and uppers,
read live, and the tree is built over them.

A texture's descriptor (runtime texture.h `tl::Texture`, `_TextureDesc` below) points at the
texture's own C-contiguous copy of its texels, [depth][height][width][channels], and at one array
of pointers to its mip levels' (the first those texels); `copy_from` writes the texels of a texture
of one level in place, so the descriptor stays valid.

`id` is the address of a descriptor. Every live grid, mesh, BVH and texture of this process is
registered by its id, whichever tilec module made it, so a launch takes an id only if it is a live
object's of the kind (and precision, or a texture's dimensionality) the kernel reads: any other
number is a ValueError naming the argument. 0, Warp's unset id, is taken too (a texture argument may also
be None): the kernel reads an empty object (no points, no triangles, no texels, no voxels).
"""
from __future__ import annotations

import contextlib
import ctypes
import enum
import struct
import sys
import threading
import types
import weakref
import zlib

import numpy as np

# One registry per process and descriptor layout: an object made by one module is valid in another's kernels.
_REGISTRY = sys.modules.setdefault("_tilec_spatial_v3", types.ModuleType("_tilec_spatial_v3"))
if not hasattr(_REGISTRY, "live"):
    _REGISTRY.live = {}  # id -> weakref.ref(HashGrid, Mesh, Bvh or texture)
if not hasattr(_REGISTRY, "table_lock"):
    _REGISTRY.table_lock = threading.Lock()  # one launch at a time reads the live objects' table (live_ids)

_INT_MAX, _INT_MIN = 2**31 - 1, -(2**31)


class _HashGridDesc(ctypes.Structure):  # runtime hash_grid.h tl::HashGrid
    _fields_ = [("dim_x", ctypes.c_int32), ("dim_y", ctypes.c_int32), ("dim_z", ctypes.c_int32),
                ("num_points", ctypes.c_int32), ("built", ctypes.c_int32), ("dtype_bits", ctypes.c_int32),
                ("cell_width_inv_f", ctypes.c_float), ("cell_width_inv_d", ctypes.c_double),
                ("point_ids", ctypes.c_void_p), ("cell_starts", ctypes.c_void_p), ("cell_ends", ctypes.c_void_p),
                ("point_keys", ctypes.c_void_p), ("has_groups", ctypes.c_int32)]


def _register(obj, desc):
    """obj's id (its descriptor's address), registered while obj lives."""
    key = ctypes.addressof(desc)
    _REGISTRY.live[key] = weakref.ref(obj)
    weakref.finalize(obj, _REGISTRY.live.pop, key, None)
    return key


def _host_array(what, value, wanted, owner="HashGrid.build"):
    """value as a numpy array on the host (a Warp array through its .numpy(), wherever it lives);
    TypeError naming `what` of `owner` (wanted: what it must be) when numpy cannot read it."""
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else value)
    except Exception as e:  # noqa: BLE001 - any unconvertible object is the caller's error
        raise TypeError(f"{owner}: `{what}` must be {wanted}, got {type(value).__name__}") from e


def _groups(groups, n):
    """A grouped build's group per point: n int32 values (Warp's int32 array; its bits sort the keys)."""
    g = _host_array("groups", groups, "an int32 array")
    if g.dtype != np.int32 or g.shape != (n,):
        raise ValueError(f"HashGrid.build: `groups` must be {n} int32 values (one per point), got {g.dtype} of "
                         f"shape {g.shape}")
    return g


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _dim(name, value):
    if not _is_int(value):
        raise TypeError(f"HashGrid: `{name}` must be an int, got {type(value).__name__}")
    if not 1 <= int(value) <= _INT_MAX:
        raise ValueError(f"HashGrid: `{name}` must be at least 1, got {int(value)}")
    return int(value)


class HashGrid:
    """A hash grid of dim_x x dim_y x dim_z cells over all of space (cell coordinates wrap).
    dtype: "float32" (default) or "float64", the precision of the points it is built from."""

    def __init__(self, dim_x, dim_y, dim_z, device=None, dtype=None):
        dims = (_dim("dim_x", dim_x), _dim("dim_y", dim_y), _dim("dim_z", dim_z))
        if dims[0] * dims[1] * dims[2] > _INT_MAX:
            raise ValueError(f"HashGrid: {dims[0]} x {dims[1]} x {dims[2]} cells do not fit in int32 cell indices")
        if device not in (None, "cpu"):
            raise ValueError(f"HashGrid: device {device!r}: tilec's hash grids live on the CPU (device='cpu'); "
                             "GPU hash grids are not supported yet")
        names = {None: "float32", "float32": "float32", "float64": "float64", np.float32: "float32",
                 np.float64: "float64", float: "float32"}
        name = getattr(dtype, "__name__", None) if dtype is not None and dtype not in names else None
        self.dtype = names.get(dtype, {"float32": "float32", "float64": "float64"}.get(name))
        if self.dtype is None:
            raise ValueError(f"HashGrid: dtype must be float32 or float64, got {dtype!r}")
        self.device = "cpu"
        self.dim_x, self.dim_y, self.dim_z = dims
        self._desc = _HashGridDesc(*dims, 0, 0, 32 if self.dtype == "float32" else 64, 0.0, 0.0, None, None, None,
                                   None, 0)
        self._arrays = ()  # the buffers the descriptor points into
        self.id = _register(self, self._desc)

    def reserve(self, num_points, with_groups=False):
        """Warp's pre-allocation: nothing to do here (a build allocates what it needs)."""

    def build(self, points, radius, groups=None):
        """Bucket `points` ((n, 3) of the grid's dtype, or anything numpy reads as one: a Warp
        array of vec3) into cells of edge `radius`."""
        dtype = np.float32 if self.dtype == "float32" else np.float64
        p = _host_array("points", points, "an (n, 3) array")
        if p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(f"HashGrid.build: `points` must have shape (n, 3), got {p.shape}")
        if p.dtype != dtype:
            raise TypeError(f"HashGrid.build: `points` must be {self.dtype} (the grid's dtype), got {p.dtype}")
        if not isinstance(radius, (int, float, np.integer, np.floating)) or isinstance(radius, (bool, np.bool_)):
            raise TypeError(f"HashGrid.build: `radius` must be a number, got {type(radius).__name__}")
        if p.shape[0] > _INT_MAX:
            raise ValueError("HashGrid.build: more points than int32 indices")
        inv = dtype(1) / dtype(radius)
        coords = []
        with np.errstate(all="ignore"):
            for axis, dim in enumerate((self.dim_x, self.dim_y, self.dim_z)):
                c = np.floor(p[:, axis] * inv)
                c = np.clip(np.where(np.isnan(c), 0, c), -(2.0**31), 2.0**31)  # then exact in int64
                coord = np.clip(c.astype(np.int64), _INT_MIN, _INT_MAX - 1)  # saturated as Warp's, NaN at 0
                coords.append(np.mod(coord, dim))  # wrapped into [0, dim) (C's remainder, plus dim if negative)
        cells = (coords[2] * self.dim_y + coords[1]) * self.dim_x + coords[0]
        keys = None
        if groups is not None:  # sorted by (cell << 32 | group): a cell's points grouped, each group in order
            g = _groups(groups, p.shape[0])
            keys = (cells.astype(np.uint64) << np.uint64(32)) | g.astype(np.uint32).astype(np.uint64)
            order = np.argsort(keys, kind="stable").astype(np.int32)
            keys = np.ascontiguousarray(keys[order])
        else:
            order = np.argsort(cells, kind="stable").astype(np.int32)
        ncells = self.dim_x * self.dim_y * self.dim_z
        counts = np.bincount(cells, minlength=ncells)
        ends = np.cumsum(counts)
        starts = np.where(counts > 0, ends - counts, 0).astype(np.int32)
        ends = np.where(counts > 0, ends, 0).astype(np.int32)
        order = np.ascontiguousarray(order)
        self._arrays = (order, starts, ends) + ((keys,) if keys is not None else ())
        d = self._desc
        d.num_points, d.built = p.shape[0], 1
        d.point_keys, d.has_groups = (keys.ctypes.data, 1) if keys is not None else (None, 0)
        d.cell_width_inv_f = float(np.float32(1) / np.float32(radius))  # each precision's own 1 / width, as Warp's
        d.cell_width_inv_d = float(np.float64(1) / np.float64(radius))
        d.point_ids, d.cell_starts, d.cell_ends = (a.ctypes.data for a in self._arrays[:3])


class _MeshDesc(ctypes.Structure):  # runtime mesh.h tl::Mesh
    _fields_ = [("points", ctypes.c_void_p), ("velocities", ctypes.c_void_p), ("indices", ctypes.c_void_p),
                ("num_points", ctypes.c_int32), ("num_tris", ctypes.c_int32),
                ("face_lowers", ctypes.c_void_p), ("face_uppers", ctypes.c_void_p),
                ("nodes", ctypes.c_void_p), ("face_order", ctypes.c_void_p),
                ("num_nodes", ctypes.c_int32), ("average_edge_length", ctypes.c_float),
                ("group_ids", ctypes.c_void_p), ("group_roots", ctypes.c_void_p), ("num_groups", ctypes.c_int32)]


_LEAF_SIZE = 4  # faces per leaf at most
_BINS = 16  # candidate splits per node and axis
_SAH_DEPTH = 64  # levels split by the heuristic; medians below (at most 31 more levels)


class _Bvh:
    """A bounding-volume hierarchy over boxes (a mesh's faces', a Bvh's items'): splits of the box centres along the widest axis
    (binned surface-area heuristic, _split), leaves of at most _LEAF_SIZE faces, built level by level
    with numpy.

    The nodes are stored in depth-first order (runtime mesh.h reads them so): node n's subtree is
    the nodes n .. skip[n] - 1; an inner node (count 0) has its children at n + 1 and skip[n + 1];
    a leaf holds the faces face_order[first : first + count]. Only the boxes depend on the points,
    so a refit recomputes them over the same tree. Kernels read `nodes`, one 32-byte record per node
    (runtime mesh_query.h `tl::MeshNode`): lower x y z, an int, upper x y z, an int: an inner node's
    skip and right child, a leaf's count and -1 - first."""

    def __init__(self, lower, upper, groups=None):
        num_faces = lower.shape[0]
        centre = (lower + upper) * np.float32(0.5)
        order = np.arange(num_faces, dtype=np.int64)
        group_of = None  # a grouped tree: each position's group, the items sorted by group
        if groups is not None:
            order = np.argsort(groups, kind="stable").astype(np.int64)
            group_of = groups[order]
            cuts = np.flatnonzero(group_of[1:] != group_of[:-1]) + 1  # where a group's items start
        levels = []  # per level, breadth first: (first, count) of each node (count 0: inner, first = left child)
        ranges = []  # per level: (starts, ends) of each node's positions
        starts = np.zeros(1 if num_faces else 0, np.int64)
        ends = np.full(starts.shape, num_faces, np.int64)
        made = 0
        while starts.size:
            made += starts.size
            ranges.append((starts, ends))
            inner = ends - starts > _LEAF_SIZE
            spans = np.zeros(starts.shape, bool)
            if group_of is not None:  # a node over several groups splits at a group's start: each group a subtree
                spans = group_of[starts] != group_of[ends - 1]
                inner |= spans
            s, e = starts[inner], ends[inner]
            middle = (s + e) // 2
            one = ~spans[inner]
            if one.any():  # past _SAH_DEPTH levels, medians (the depth stays under runtime's stack: 128 levels)
                middle[one] = self._split(s[one], e[one], order, lower, upper, centre, len(levels) < _SAH_DEPTH)
            for k in np.flatnonzero(~one):  # the group start nearest the middle (one node per group boundary in all)
                inside = cuts[np.searchsorted(cuts, s[k], "right"):np.searchsorted(cuts, e[k], "left")]
                middle[k] = inside[np.argmin(np.abs(inside - middle[k]))]
            first = np.where(inner, made + 2 * (np.cumsum(inner) - 1), starts)
            levels.append((first, np.where(inner, 0, ends - starts)))
            starts = np.stack([s, middle], axis=1).reshape(-1)
            ends = np.stack([middle, e], axis=1).reshape(-1)
        self.face_order = order.astype(np.int32)
        first = np.concatenate([f for f, _ in levels]) if levels else np.zeros(0, np.int64)
        count = np.concatenate([c for _, c in levels]) if levels else np.zeros(0, np.int64)
        n = first.size
        bases = np.cumsum([0] + [f.size for f, _ in levels])  # each level's first breadth-first id
        inner = [np.arange(bases[k], bases[k + 1])[c == 0] for k, (_, c) in enumerate(levels)]  # its inner nodes
        size = np.ones(n, np.int64)  # nodes in each subtree, bottom up
        for ids in reversed(inner):
            size[ids] += size[first[ids]] + size[first[ids] + 1]
        depth_first = np.zeros(n, np.int64)  # breadth-first node -> its depth-first position
        for ids in inner:
            left = first[ids]
            depth_first[left] = depth_first[ids] + 1
            depth_first[left + 1] = depth_first[ids] + 1 + size[left]
        self.node_skip = np.zeros(n, np.int32)
        self.node_skip[depth_first] = depth_first + size
        self.node_first = np.zeros(n, np.int32)
        self.node_first[depth_first] = np.where(count == 0, 0, first)
        self.node_count = np.zeros(n, np.int32)
        self.node_count[depth_first] = count
        self.nodes = np.zeros((n, 8), np.float32)
        self.node_lowers, self.node_uppers = self.nodes[:, 0:3], self.nodes[:, 4:7]
        ints = self.nodes.view(np.int32)
        leaf = self.node_count > 0
        ints[:, 3] = np.where(leaf, self.node_count, self.node_skip)
        right = self.node_skip[np.minimum(np.arange(n) + 1, n - 1)]  # an inner node's right child: after its left's subtree
        ints[:, 7] = np.where(leaf, -1 - self.node_first, right)
        # what a refit recomputes, in depth-first ids: the leaves (in face_order's order, which they
        # partition), then each level's inner nodes and their children, the deepest level first
        self._leaves = np.flatnonzero(leaf)
        self._inner_levels = [(d, d + 1, right[d]) for d in (depth_first[ids] for ids in reversed(inner)) if d.size]
        # a grouped tree: each group's node (the shallowest over exactly its positions), by group id ascending
        self.group_ids, self.group_roots = np.zeros(0, np.int32), np.zeros(0, np.int32)
        if group_of is not None and num_faces:
            bounds = np.concatenate(([0], cuts, [num_faces]))
            node_of = {}
            for node, (a, b) in enumerate(zip(np.concatenate([r[0] for r in ranges]), np.concatenate([r[1] for r in ranges]))):
                node_of.setdefault((int(a), int(b)), node)
            self.group_ids = group_of[bounds[:-1]].astype(np.int32)
            self.group_roots = np.array([depth_first[node_of[int(a), int(b)]] for a, b in zip(bounds[:-1], bounds[1:])],
                                        np.int32)
        self.refit(lower, upper)

    @staticmethod
    def _split(s, e, order, lower, upper, centre, heuristic):
        """Where each node's faces order[s:e] split (reordered in place): binned surface-area heuristic
        along the widest axis of their centres, _BINS bins, the cost of a side its box's half area times
        its faces; a node whose centres fall in one bin splits at its median."""
        sizes = e - s
        segment = np.repeat(np.arange(s.size), sizes)
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        covered = np.arange(sizes.sum()) - np.repeat(offsets - s, sizes)  # positions in `order`
        faces = order[covered]
        c = centre[faces]
        low = np.minimum.reduceat(c, offsets)
        extent = np.maximum.reduceat(c, offsets) - low
        axis = np.argmax(extent, axis=1)
        rows = np.arange(c.shape[0])
        key = c[rows, axis[segment]]
        width = extent[np.arange(s.size), axis]
        scale = np.where(width > 0, _BINS / np.where(width > 0, width, 1), 0)
        bins = np.clip(((key - low[segment, axis[segment]]) * scale[segment]).astype(np.int64), 0, _BINS - 1)
        cell = segment * _BINS + bins  # (node, bin)
        counts = np.bincount(cell, minlength=s.size * _BINS).reshape(s.size, _BINS)
        by_cell = np.argsort(cell, kind="stable")  # the faces by node, then bin: each node's split is a cut
        cells = cell[by_cell]
        runs = np.flatnonzero(np.concatenate(([True], cells[1:] != cells[:-1])))
        box_lo = np.full((s.size * _BINS, 3), np.inf, np.float32)
        box_hi = np.full((s.size * _BINS, 3), -np.inf, np.float32)
        box_lo[cells[runs]] = np.minimum.reduceat(lower[faces[by_cell]], runs)
        box_hi[cells[runs]] = np.maximum.reduceat(upper[faces[by_cell]], runs)
        box_lo, box_hi = box_lo.reshape(s.size, _BINS, 3), box_hi.reshape(s.size, _BINS, 3)

        def half_area(lo, hi):
            d = np.maximum(hi - lo, 0)
            return d[..., 0] * d[..., 1] + d[..., 1] * d[..., 2] + d[..., 2] * d[..., 0]

        left = half_area(np.minimum.accumulate(box_lo, axis=1), np.maximum.accumulate(box_hi, axis=1))
        right = half_area(np.minimum.accumulate(box_lo[:, ::-1], axis=1),
                          np.maximum.accumulate(box_hi[:, ::-1], axis=1))[:, ::-1]
        n_left = np.cumsum(counts, axis=1)
        cost = left[:, :-1] * n_left[:, :-1] + right[:, 1:] * (sizes[:, None] - n_left[:, :-1])
        cost = np.where((n_left[:, :-1] > 0) & (n_left[:, :-1] < sizes[:, None]), cost, np.inf)
        best = np.argmin(cost, axis=1)  # the last bin of the left side
        binned = np.isfinite(cost[np.arange(s.size), best]) & heuristic
        if binned.all():  # the left side's bins, then the right side's
            order[covered] = faces[by_cell]
        else:  # and a median split's faces by their key
            side = (bins > best[segment]) & binned[segment]
            order[covered] = faces[np.lexsort((np.where(binned[segment], 0, key), side, segment))]
        return np.where(binned, s + n_left[np.arange(s.size), best], (s + e) // 2)

    def refit(self, lower, upper):
        """Every node's box, from the boxes as they are now (kept: kernels read them as the items')."""
        self.face_lowers, self.face_uppers = lower, upper
        if self._leaves.size:
            self.node_lowers[self._leaves] = np.minimum.reduceat(lower[self.face_order], self.node_first[self._leaves])
            self.node_uppers[self._leaves] = np.maximum.reduceat(upper[self.face_order], self.node_first[self._leaves])
        for ids, left, right in self._inner_levels:
            self.node_lowers[ids] = np.minimum(self.node_lowers[left], self.node_lowers[right])
            self.node_uppers[ids] = np.maximum(self.node_uppers[left], self.node_uppers[right])

    def fill(self, desc):
        """Point the descriptor's BVH fields at this hierarchy's arrays."""
        desc.face_lowers, desc.face_uppers = self.face_lowers.ctypes.data, self.face_uppers.ctypes.data
        desc.nodes, desc.face_order = self.nodes.ctypes.data, self.face_order.ctypes.data
        desc.num_nodes = self.node_skip.size
        desc.group_ids, desc.group_roots = self.group_ids.ctypes.data, self.group_roots.ctypes.data
        desc.num_groups = self.group_ids.size


def _corners(points, indices):
    """Each face's three corners: three (faces, 3) arrays."""
    return tuple(points[indices[k::3]] for k in range(3))


def _face_boxes(corners):
    a, b, c = corners
    return np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c)


def _average_edge_length(corners):
    """Warp's: |p0 - p1| + |p0 - p2| + |p2 - p1| per face, summed in float32 face by face, over 3 per face."""
    p0, p1, p2 = corners
    if not p0.size:
        return np.float32(np.nan)  # Warp's 0 / 0

    def length(d):
        return np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2])

    per_face = length(p0 - p1) + length(p0 - p2) + length(p2 - p1)
    return np.cumsum(per_face, dtype=np.float32)[-1] / np.float32(3 * len(per_face))


def _vec3_array(what, value, owner="Mesh"):
    """A C-contiguous (n, 3) float32 view of value, sharing its memory (numpy, or anything with the
    array interface: a Warp CPU array of vec3)."""
    if value is not None and not isinstance(value, np.ndarray) and hasattr(value, "__array_interface__"):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{owner}: `{what}` must be an (n, 3) float32 array, got {type(value).__name__}")
    if value.dtype != np.float32 or value.ndim != 2 or value.shape[1] != 3:
        raise ValueError(f"{owner}: `{what}` must be an (n, 3) float32 array (a Warp array of vec3), got "
                         f"{value.dtype} of shape {value.shape}")
    if not value.flags.c_contiguous:
        raise ValueError(f"{owner}: `{what}` must be contiguous: kernels read it in place")
    return value


def _group_ids(owner, groups, count, what):
    """A grouped tree's groups, one int32 per item (a copy: the tree is built from it, rebuild() reads it
    again); None for none."""
    if groups is None:
        return None
    try:
        grouped = np.asarray(groups)
    except Exception as e:  # noqa: BLE001 - any unconvertible object is the caller's error
        raise TypeError(f"{owner}: `groups` must be an int32 array, got {type(groups).__name__}") from e
    if grouped.dtype.kind not in "iu" or grouped.ndim != 1:
        raise ValueError(f"{owner}: `groups` must be one integer per {what}, got {grouped.dtype} of shape "
                         f"{grouped.shape}")
    if grouped.shape[0] != count:
        raise ValueError(f"{owner}: `groups` must hold one group per {what} ({count}), got {grouped.shape[0]}")
    if grouped.size and (grouped.min() < _INT_MIN or grouped.max() > _INT_MAX):
        raise ValueError(f"{owner}: `groups` must be int32 values")
    return grouped.astype(np.int32)


class Mesh:
    """A triangle mesh: points ((n, 3) float32), indices (3 per triangle, int32, each a point's)
    and optionally per-point velocities. The points and velocities are read in place by every
    launch (update them in place, as with Warp, and call `refit()` before querying the moved mesh)."""

    def __init__(self, points, indices, velocities=None, support_winding_number=False, bvh_constructor=None,
                 bvh_leaf_size=None, groups=None, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f"Mesh: device {device!r}: tilec's meshes live on the CPU (device='cpu'); "
                             "GPU meshes are not supported yet")
        if support_winding_number:
            raise ValueError("Mesh: support_winding_number=True is not supported by tilec yet (its queries' "
                             "winding-number sign); mesh_query_point_sign_winding_number signs by rays without it")
        self.points = _vec3_array("points", points)
        self.velocities = None if velocities is None else _vec3_array("velocities", velocities)
        if self.velocities is not None and self.velocities.shape != self.points.shape:
            raise ValueError(f"Mesh: `velocities` must match the points' shape {self.points.shape}, got "
                             f"{self.velocities.shape}")
        try:
            idx = np.asarray(indices)
        except Exception as e:  # noqa: BLE001 - any unconvertible object is the caller's error
            raise TypeError(f"Mesh: `indices` must be an int32 array, got {type(indices).__name__}") from e
        if idx.dtype.kind not in "iu" or idx.size % 3:
            raise ValueError(f"Mesh: `indices` must be integers, three per triangle; got {idx.size} of {idx.dtype}")
        n = self.points.shape[0]
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"Mesh: `indices` must index the {n} points, got values in [{idx.min()}, {idx.max()}]")
        if n > _INT_MAX or idx.size // 3 > _INT_MAX:
            raise ValueError("Mesh: more points or triangles than int32 indices")
        self.indices = np.ascontiguousarray(idx.reshape(-1), dtype=np.int32).copy()  # kernels index with it
        self.device = "cpu"
        self.dtype = "float32"
        self._desc = _MeshDesc(self.points.ctypes.data, None if self.velocities is None else
                               self.velocities.ctypes.data, self.indices.ctypes.data, n, self.indices.size // 3)
        self.groups = _group_ids("Mesh", groups, self.indices.size // 3, "triangle")
        corners = _corners(self.points, self.indices)
        self._bvh = _Bvh(*_face_boxes(corners), self.groups)
        self._bvh.fill(self._desc)
        self._desc.average_edge_length = float(_average_edge_length(corners))
        self.id = _register(self, self._desc)

    def refit(self):
        """After the points moved (in place): the queries' boxes recomputed from them, as Warp's refit."""
        corners = _corners(self.points, self.indices)
        self._bvh.refit(*_face_boxes(corners))
        self._bvh.fill(self._desc)
        self._desc.average_edge_length = float(_average_edge_length(corners))


class Bvh:
    """Boxes, `lowers` and `uppers` ((n, 3) float32, item k the box [lowers[k], uppers[k]]), and a tree
    over them that kernels' wp.bvh_query_aabb / _sphere / _ray walk, as wp.Bvh (CPU). The boxes are read
    in place by every launch: after moving them in place, `refit()` (the tree's boxes recomputed) or
    `rebuild()` (a new tree), as in Warp."""

    def __init__(self, lowers, uppers, constructor=None, groups=None, leaf_size=None, device=None):
        if device not in (None, "cpu"):
            raise ValueError(f"Bvh: device {device!r}: tilec's BVHs live on the CPU (device='cpu'); GPU BVHs are "
                             "not supported yet")
        self.lowers = _vec3_array("lowers", lowers, "Bvh")
        self.uppers = _vec3_array("uppers", uppers, "Bvh")
        if self.uppers.shape != self.lowers.shape:
            raise ValueError(f"Bvh: `uppers` must match the lowers' shape {self.lowers.shape}, got {self.uppers.shape}")
        if self.lowers.shape[0] > _INT_MAX:
            raise ValueError("Bvh: more boxes than int32 indices")
        self.groups = _group_ids("Bvh", groups, self.lowers.shape[0], "box")
        self.device = "cpu"
        self.dtype = "float32"
        self._desc = _MeshDesc(None, None, None, 0, self.lowers.shape[0])  # a mesh without points: items only
        self.rebuild()
        self.id = _register(self, self._desc)

    def refit(self):
        """After the boxes moved (in place): the tree's boxes recomputed over the same tree, as Warp's refit."""
        self._bvh.refit(self.lowers, self.uppers)
        self._bvh.fill(self._desc)

    def rebuild(self, constructor=None):
        """A new tree over the boxes as they are now, as Warp's rebuild."""
        self._bvh = _Bvh(self.lowers, self.uppers, self.groups)
        self._bvh.fill(self._desc)


class _VolumeDesc(ctypes.Structure):  # runtime volume.h tl::Volume
    _fields_ = [("type", ctypes.c_int32), ("num_leaves", ctypes.c_int32), ("leaf_keys", ctypes.c_void_p),
                ("values", ctypes.c_void_p), ("background", ctypes.c_float * 3), ("background_int", ctypes.c_int32),
                ("mat", ctypes.c_float * 9), ("inv_mat", ctypes.c_float * 9), ("vec", ctypes.c_float * 3),
                ("hash_bits", ctypes.c_int32), ("hash_slots", ctypes.c_void_p)]


def _volume_hash(keys):
    """(bits, slots) of an open-addressing table of the leaves' keys (volume.h volume_hash): 2^bits slots, at
    most half full, each a leaf's index + 1 or 0; placed in rounds, each key probing one slot further."""
    bits = max(1, int(len(keys) * 2 - 1).bit_length())
    mask = (1 << bits) - 1
    slots = np.zeros(1 << bits, np.int32)
    home = ((keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64)
    pending, probe = np.arange(len(keys)), 0
    while pending.size:
        at = (home[pending] + probe) & mask
        free = slots[at] == 0
        first = np.zeros(pending.size, bool)
        _, winners = np.unique(at[free], return_index=True)  # one key per free slot (the earliest)
        first[np.flatnonzero(free)[winners]] = True
        slots[at[first]] = pending[first] + 1
        pending, probe = pending[~first], probe + 1
    return bits, slots


_VOLUME_TYPES = {"float32": (1, 1), "vec3f": (2, 3), "int32": (3, 1)}  # dtype -> (volume.h VolumeType, components)
_LEAF_RANGE = 1 << 20  # volume.h kVolumeLeafRange: tile coordinates in [-2^20, 2^20)


def _leaf_keys(x, y, z):
    """The keys of tiles (x, y, z) (voxel coordinates >> 3), volume.h volume_leaf_key's."""
    return ((x + _LEAF_RANGE) << 42) | ((y + _LEAF_RANGE) << 21) | (z + _LEAF_RANGE)


class Volume:
    """A sparse volume of float32, vec3f or int32 voxels in dense 8x8x8 tiles, as wp.Volume (CPU): made by
    `Volume.allocate`, `Volume.allocate_by_tiles` or `Volume.load_from_numpy` with Warp's arguments. A voxel
    outside the tiles reads `bg_value`; kernels read and write (wp.volume_store) the tiles' voxels in place.
    World and index space: world = transform index + translation (transform: diag(voxel_size) unless given)."""

    CLOSEST = 0
    LINEAR = 1

    def __init__(self, tiles, bg_value, transform, translation, inverse=None, values=None):
        self.device = "cpu"
        bg = np.asarray(bg_value)
        if bg.shape == (3,):
            self.dtype = "vec3f"
        elif bg.shape == () and _is_int(bg_value):
            self.dtype = "int32"
        elif bg.shape == () and isinstance(bg_value, (float, np.floating)):
            self.dtype = "float32"
        else:
            raise TypeError(f"Volume: `bg_value` must be a float (a float32 volume), an int (int32) or three floats "
                            f"(vec3f), got {bg_value!r}; tilec's volumes hold one of those")
        kind, components = _VOLUME_TYPES[self.dtype]
        tiles = np.asarray(tiles, np.int64).reshape(-1, 3)
        if values is None:  # (tiles given by a volume's own values are distinct already)
            tiles = np.unique(tiles, axis=0)
        if tiles.size and (tiles.min() < -_LEAF_RANGE or tiles.max() >= _LEAF_RANGE):
            raise ValueError(f"Volume: tiles must lie within {_LEAF_RANGE * 8} voxels of the origin")
        keys = _leaf_keys(tiles[:, 0], tiles[:, 1], tiles[:, 2])
        order = np.argsort(keys, kind="stable")
        self._tiles = tiles[order].astype(np.int32)
        self._keys = np.ascontiguousarray(keys[order].astype(np.uint64))
        shape = (len(keys), 512) if components == 1 else (len(keys), 512, 3)
        self._values = np.empty(shape, np.int32 if self.dtype == "int32" else np.float32)
        self._values[...] = bg_value if values is None else np.asarray(values).reshape(shape)[order]
        m = np.asarray(transform, np.float64).reshape(3, 3)
        if not np.all(np.isfinite(m)) or abs(np.linalg.det(m)) == 0.0:
            raise ValueError(f"Volume: the transform must be finite and invertible, got {m.tolist()}")
        self.transform, self.translation = m.astype(np.float32), np.asarray(translation, np.float32).reshape(3)
        inverse = np.linalg.inv(m) if inverse is None else np.asarray(inverse, np.float64).reshape(3, 3)
        hash_bits, self._slots = _volume_hash(self._keys)
        self._desc = _VolumeDesc(kind, len(keys), self._keys.ctypes.data, self._values.ctypes.data,
                                 (ctypes.c_float * 3)(*(np.broadcast_to(bg, (3,)) if self.dtype == "vec3f" else
                                                        (float(bg_value), 0.0, 0.0))),
                                 int(bg_value) if self.dtype == "int32" else 0,
                                 (ctypes.c_float * 9)(*self.transform.reshape(-1)),
                                 (ctypes.c_float * 9)(*inverse.astype(np.float32).reshape(-1)),
                                 (ctypes.c_float * 3)(*self.translation), hash_bits, self._slots.ctypes.data)
        self.bg_value = bg_value
        self.id = _register(self, self._desc)

    @staticmethod
    def _transform(voxel_size, transform):
        if transform is not None:
            if voxel_size is not None:
                raise ValueError("Volume: give `voxel_size` or `transform`, not both")
            return np.asarray(transform, np.float64).reshape(3, 3)
        if voxel_size is None:
            raise ValueError("Volume: `voxel_size` or `transform` is needed")
        size = np.broadcast_to(np.asarray(voxel_size, np.float64), (3,))
        if not np.all(np.isfinite(size) & (size > 0)):
            raise ValueError(f"Volume: `voxel_size` must be finite and positive, got {voxel_size!r}")
        return np.diag(size)

    @classmethod
    def allocate_by_tiles(cls, tile_points, voxel_size=None, bg_value=0.0, translation=(0.0, 0.0, 0.0), device=None,
                          transform=None, **unsupported):
        """Tiles holding each of `tile_points`: int32 points are index-space voxels, float32 points world-space
        positions (their nearest voxel), as Warp's; every tile's voxels start as `bg_value`."""
        if device not in (None, "cpu") or unsupported:
            raise ValueError(f"Volume.allocate_by_tiles: tilec's volumes live on the CPU and are not rebuildable "
                             f"(got device={device!r}{', ' + ', '.join(sorted(unsupported)) if unsupported else ''})")
        m = cls._transform(voxel_size, transform)
        points = _host_array("tile_points", tile_points, "an (n, 3) array of int32 voxels or float32 positions",
                             "Volume.allocate_by_tiles")
        if points.size % 3 or points.dtype.kind not in "iuf":
            raise ValueError(f"Volume.allocate_by_tiles: `tile_points` must be n points of 3 coordinates, got "
                             f"{points.shape} of {points.dtype}")
        points = points.reshape(-1, 3)
        if points.dtype.kind == "f":  # NanoVDB's round of the index-space point: floor(x + 0.5)
            inv = np.linalg.inv(m).astype(np.float32)
            index = (points.astype(np.float32) - np.asarray(translation, np.float32)) @ inv.T
            if not np.all(np.isfinite(index)) or np.abs(index).max(initial=0) >= _LEAF_RANGE * 8:
                raise ValueError("Volume.allocate_by_tiles: a point lies outside the volumes tilec can hold")
            points = np.floor(index + np.float32(0.5)).astype(np.int64)
        return cls(np.asarray(points, np.int64) >> 3, bg_value, m, translation)

    @classmethod
    def allocate(cls, min, max, voxel_size, bg_value=0.0, translation=(0.0, 0.0, 0.0), points_in_world_space=False,
                 device=None):
        """Every tile of the box [min, max] (voxels, or world positions with points_in_world_space), as Warp's."""
        size = np.broadcast_to(np.asarray(voxel_size, np.float32), (3,))
        lo, hi = np.asarray(min, np.float32), np.asarray(max, np.float32)
        if points_in_world_space:
            lo = np.around((lo - np.asarray(translation, np.float32)) / size)
            hi = np.around((hi - np.asarray(translation, np.float32)) / size)
        first, last = lo.astype(np.int64) >> 3, hi.astype(np.int64) >> 3
        grid = np.stack(np.meshgrid(*(np.arange(a, b + 1) for a, b in zip(first, last)), indexing="ij"), -1)
        return cls.allocate_by_tiles(grid.reshape(-1, 3).astype(np.int32) * 8, voxel_size, bg_value, translation,
                                     device)

    @classmethod
    def load_from_numpy(cls, ndarray, min_world=(0.0, 0.0, 0.0), voxel_size=1.0, bg_value=0.0, device=None):
        """A volume of a dense array: voxel (i, j, k) holds ndarray[i, j, k] (a (X, Y, Z, 3) array: vec3f), its
        index space starting at `min_world`, as Warp's."""
        data = np.asarray(ndarray)
        size = np.broadcast_to(np.asarray(voxel_size, np.float64), (3,))
        extent = [int(np.ceil(n / 8) * 8) for n in data.shape[:3]]
        volume = cls.allocate(min_world, [min_world[a] + (extent[a] - 1) * size[a] for a in range(3)], voxel_size,
                              bg_value, min_world, True, device)
        i, j, k = np.meshgrid(*(np.arange(n) for n in data.shape[:3]), indexing="ij")
        volume._store(i.reshape(-1), j.reshape(-1), k.reshape(-1), data.reshape(i.size, -1))
        return volume

    @classmethod
    def load_from_nvdb(cls, file_or_buffer, device=None):
        """A volume of a NanoVDB file (an open binary file or its bytes; uncompressed or zip) holding a float32,
        int32 or vec3f grid, as Warp's: its leaves' voxels, its map, and its tiles of other values than the
        background made into leaves (a root tile of its own value, 4096^3 voxels, is refused)."""
        if device not in (None, "cpu"):
            raise ValueError(f"Volume.load_from_nvdb: device {device!r}: tilec's volumes live on the CPU")
        data = file_or_buffer.read() if hasattr(file_or_buffer, "read") else bytes(file_or_buffer)
        try:
            return cls(*_nvdb_grid(_nvdb_grid_bytes(data)))
        except (struct.error, zlib.error, IndexError) as e:
            raise ValueError(f"Volume.load_from_nvdb: the file is cut short or damaged ({e})") from None

    def _store(self, i, j, k, values):
        """Voxels (i, j, k) (in the tiles) set to `values`, one row each."""
        leaf = np.searchsorted(self._keys, _leaf_keys(i >> 3, j >> 3, k >> 3).astype(np.uint64))
        offset = ((i & 7) << 6) | ((j & 7) << 3) | (k & 7)
        flat = self._values.reshape(len(self._keys) * 512, -1)
        flat[leaf * 512 + offset] = values

    def get_voxel_size(self):
        """The transform's diagonal (Warp's voxel size)."""
        return tuple(float(s) for s in np.diag(self.transform))

    def get_tiles(self):
        """The tiles' first voxels, (n, 3) int32, in index space."""
        return self._tiles * 8

    def get_tile_count(self):
        return len(self._keys)

    def array(self):
        """The tiles' voxels, (tiles, 512[, 3]), voxel (i & 7, j & 7, k & 7) of a tile at (i & 7) * 64 + (j & 7) * 8 +
        (k & 7): the memory kernels read and write."""
        return self._values


# A NanoVDB grid's layout (NanoVDB 32, its PNanoVDB.h): by grid type, (dtype, components, root size,
# table stride, upper node's table offset and size, lower's, leaf's table offset and size).
_NVDB_TYPES = {1: ("float32", 1, 64, 8, 8256, 270400, 1088, 33856, 96, 2144),
               4: ("int32", 1, 64, 8, 8256, 270400, 1088, 33856, 96, 2144),
               6: ("vec3f", 3, 96, 16, 8256, 532544, 1088, 66624, 128, 6272)}
_NVDB_MAX_LEAVES = 1 << 21  # tiles made leaves included: 4 GiB of float32 voxels


def _nvdb_grid_bytes(data):
    """The first grid's buffer of a NanoVDB file's bytes (Warp's load_from_nvdb reads the same)."""
    magic, version, count, codec = struct.unpack_from("<QIHH", data, 0)
    if magic not in (0x304244566F6E614E, 0x324244566F6E614E) or version >> 21 != 32:
        raise ValueError("Volume.load_from_nvdb: not a NanoVDB file of version 32")
    at, size = 16, 0
    for _ in range(count):
        size += struct.unpack_from("<Q", data, at + 8)[0]
        at += 176 + struct.unpack_from("<I", data, at + 136)[0]
    if codec == 0:
        if len(data) < at + size:
            raise ValueError("Volume.load_from_nvdb: the file is cut short")
        grid = bytes(data[at:at + size])
    elif codec == 1:
        grid, end = b"", at + size
        while at < end:
            chunk = struct.unpack_from("<Q", data, at)[0]
            grid += zlib.decompress(data[at + 8:at + 8 + chunk])
            at += 8 + chunk
    else:
        raise ValueError(f"Volume.load_from_nvdb: codec {codec} (blosc) is not supported; save it uncompressed or zip")
    if len(grid) < 736 or struct.unpack_from("<Q", grid, 0)[0] not in (0x304244566F6E614E, 0x314244566F6E614E):
        raise ValueError("Volume.load_from_nvdb: no NanoVDB grid found")
    return grid


def _nvdb_grid(buf):
    """(tiles, bg_value, transform, translation, inverse, values) of a NanoVDB grid's buffer (the Volume's
    arguments): its tree walked from the root a node's table at a time (numpy), every leaf's 512 voxels,
    tiles of other values than the background made into leaves of that value."""

    def read(fmt, at):
        if at < 0 or at + struct.calcsize(fmt) > len(buf):
            raise ValueError("Volume.load_from_nvdb: the grid's tree points outside its buffer")
        return struct.unpack_from(fmt, buf, at)

    grid_type = read("<I", 636)[0]
    if grid_type not in _NVDB_TYPES:
        raise ValueError(f"Volume.load_from_nvdb: grid type {grid_type} is not supported (float32, int32 and vec3f "
                         "grids are)")
    dtype, width, root_size, stride, up_table, up_size, low_table, low_size, leaf_table, leaf_size = \
        _NVDB_TYPES[grid_type]
    scalar = np.dtype("<i4" if dtype == "int32" else "<f4")
    mat, inv, vec = read("<9f", 296), read("<9f", 332), read("<3f", 368)
    tree = 672
    root = tree + read("<Q", tree + 24)[0]
    background = np.asarray(read("<" + scalar.char * width, root + 28), scalar)
    leaf_origins, leaf_addresses, tiles, values = [], [], [], []

    def table(node, offset, dim):
        """(child?, child offset, tile value) of each entry of an internal node's dim^3 table."""
        count = dim ** 3
        mask_at, start = node + (4128 if dim == 32 else 544), node + offset
        read("<%dB" % (count // 8), mask_at)
        read("<%dB" % (count * stride), start)  # (their bounds checked)
        mask = np.unpackbits(np.frombuffer(buf, np.uint8, count // 8, mask_at), bitorder="little").astype(bool)
        entries = np.frombuffer(buf, np.uint8, count * stride, start).reshape(count, stride)
        return mask, entries[:, :8].copy().view("<i8")[:, 0], entries[:, :4 * width].copy().view(scalar)

    def constants(origins, span, tile_values):  # tiles of `span`^3 voxels of other values, as leaves
        n = span // 8
        if len(origins) and sum(map(len, tiles)) + len(origins) * n ** 3 > _NVDB_MAX_LEAVES:
            raise ValueError("Volume.load_from_nvdb: the grid's tiles make too many leaves")
        grid = np.stack(np.meshgrid(*(np.arange(n) for _ in range(3)), indexing="ij"), -1).reshape(-1, 3)
        for origin, v in zip(origins, tile_values):
            tiles.append((origin >> 3) + grid)
            values.append(np.broadcast_to(v, (len(grid), 512, width)))

    def entry_coords(dim, shift):  # (x, y, z) of each entry of a dim^3 table, x slowest
        n = np.arange(dim ** 3)
        return np.stack([n >> (2 * shift), (n >> shift) & (dim - 1), n & (dim - 1)], -1)

    upper_coords, lower_coords = entry_coords(32, 5) * 128, entry_coords(16, 4) * 8
    for t in range(read("<I", root + 24)[0]):
        tile = root + root_size + t * 32
        key, child = read("<Q", tile)[0], read("<q", tile + 8)[0]
        origin = np.array([np.int32(np.uint32(((key >> s) & 0x1FFFFF) << 12)) for s in (42, 21, 0)], np.int64)
        if child == 0:
            if not np.array_equal(np.asarray(read("<" + scalar.char * width, tile + 20), scalar), background):
                raise ValueError("Volume.load_from_nvdb: a root tile (4096^3 voxels) of its own value")
            continue
        upper = root + child
        mask, offsets, own = table(upper, up_table, 32)
        at = origin + upper_coords
        other = ~mask & (own != background).any(axis=1)
        constants(at[other], 128, own[other])
        for n in np.flatnonzero(mask):
            lower = upper + int(offsets[n])
            lmask, loffsets, lown = table(lower, low_table, 16)
            corners = at[n] + lower_coords
            other = ~lmask & (lown != background).any(axis=1)
            constants(corners[other], 8, lown[other])
            leaf_origins.append(corners[lmask] >> 3)
            leaf_addresses.append(lower + loffsets[lmask])
    addresses = np.concatenate(leaf_addresses) if leaf_addresses else np.zeros(0, np.int64)
    if len(addresses) + sum(map(len, tiles)) > _NVDB_MAX_LEAVES:
        raise ValueError("Volume.load_from_nvdb: the grid has too many leaves")
    words = np.frombuffer(buf, scalar, len(buf) // 4)
    first = (addresses + leaf_table) // 4
    if len(first) and ((addresses % 4).any() or first.min() < 0 or first.max() + 512 * width > len(words)):
        raise ValueError("Volume.load_from_nvdb: the grid's tree points outside its buffer")
    leaf_values = words[first[:, None] + np.arange(512 * width)].reshape(-1, 512, width)
    all_tiles = np.concatenate([*leaf_origins, *tiles]) if leaf_origins or tiles else np.zeros((0, 3), np.int64)
    stacked = np.concatenate([leaf_values, *values]) if values else leaf_values
    bg = background[0].item() if width == 1 else tuple(background.tolist())
    matrix, inverse = np.asarray(mat, np.float64).reshape(3, 3), np.asarray(inv, np.float64).reshape(3, 3)
    return (all_tiles.astype(np.int64).reshape(-1, 3), bg, matrix, vec, inverse,
            stacked if width > 1 else stacked[..., 0])


class TextureFilterMode(enum.IntEnum):
    """How a texture is read between texels, as Warp's wp.TextureFilterMode (whose members are accepted too)."""

    CLOSEST = 0
    LINEAR = 1


class TextureAddressMode(enum.IntEnum):
    """What a coordinate outside a texture reads, per axis, as Warp's wp.TextureAddressMode (whose members
    are accepted too)."""

    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class _TextureDesc(ctypes.Structure):  # runtime texture.h tl::Texture
    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("width", ctypes.c_int32),
                ("height", ctypes.c_int32), ("depth", ctypes.c_int32), ("channels", ctypes.c_int32),
                ("dtype", ctypes.c_int32), ("filter", ctypes.c_int32), ("address", ctypes.c_int32 * 3),
                ("normalized", ctypes.c_int32), ("num_levels", ctypes.c_int32), ("mip_filter", ctypes.c_int32),
                ("levels", ctypes.POINTER(ctypes.c_void_p))]


_MAX_MIP_LEVELS = 16  # Warp's limit

# Texel types as texture.h numbers them (float16: its bits, which the runtime decodes).
_TEXEL_TYPES = {"uint8": 0, "uint16": 1, "uint32": 2, "int8": 3, "int16": 4, "int32": 5, "float16": 6, "float32": 7}
_SIZES = ("width", "height", "depth")  # axes u, v, w: the data's last axes first


def _mode(owner, what, value, modes):
    """value (an int, or a member of ours or of Warp's enum: IntEnums) as a member of `modes`."""
    if not _is_int(value) or int(value) not in [m.value for m in modes]:
        names = ", ".join(f"{m.name} ({m.value})" for m in modes)
        raise ValueError(f"{owner}: `{what}` must be a {modes.__name__}: {names}; got {value!r}")
    return modes(int(value))


def _texel_dtype(owner, dtype):
    """The texels' numpy dtype of a texture made without data: `dtype` as numpy's, Warp's scalar types
    (by name), a name, or float / int (Warp's float32 / int32)."""
    if dtype is None or dtype is float:
        return np.dtype(np.float32)
    if dtype is int:
        return np.dtype(np.int32)
    name = dtype if isinstance(dtype, str) else dtype.name if isinstance(dtype, np.dtype) else \
        getattr(dtype, "__name__", None)
    if name not in _TEXEL_TYPES:
        raise TypeError(f"{owner}: `dtype` must be one of {', '.join(_TEXEL_TYPES)}, got {dtype!r}")
    return np.dtype(name)


_TEXTURE_CLASSES = ("Texture1D", "Texture2D", "Texture3D")


def _texture_like(value):
    """Whether value is a tilec texture (any module's class)."""
    return type(value).__name__ in _TEXTURE_CLASSES and hasattr(value, "_texels")


class _Texture:
    """A texture of `ndim` axes (Texture1D, Texture2D, Texture3D), as Warp's on the CPU: its own copy
    of the texels and of its mip levels (num_mip_levels: 1 by default; 0 for all down to one texel),
    each made from the last by Warp's rule: along each axis in turn (u, v, w) a texel is the mean of
    texels 2i and 2i + 1 (the last one where 2i + 1 is past the edge), in float64, integers rounded
    to even and clipped to their type. Its attributes are read only: the descriptor kernels read is
    made once (the texels of a texture of one level change in place through copy_from)."""

    ndim = 0
    device = "cpu"

    def _make(self, data, sizes, num_channels, dtype, filter_mode, address_mode, per_axis, normalized_coords,
              num_mip_levels, mip_filter_mode, device, surface_access, cuda_array):
        owner = type(self).__name__
        if device not in (None, "cpu"):
            raise ValueError(f"{owner}: device {device!r}: tilec's textures live on the CPU (device='cpu'); "
                             "GPU textures are not supported yet")
        if not (surface_access is None or isinstance(surface_access, (bool, np.bool_, int, np.integer)) and
                not surface_access):
            raise ValueError(f"{owner}: `surface_access` needs a CUDA texture; tilec's textures live on the CPU")
        if not _is_int(cuda_array) or cuda_array != 0:
            raise ValueError(f"{owner}: `cuda_array` (wrapping a CUDA array) is not supported: tilec's textures "
                             "live on the CPU")
        if not _is_int(num_mip_levels) or num_mip_levels < 0:
            raise ValueError(f"{owner}: `num_mip_levels` must be an int >= 0, got {num_mip_levels!r}")
        if num_mip_levels != 1 and data is None:
            raise ValueError(f"{owner}: a mipmapped texture needs `data` (its levels are made from it)")
        if not isinstance(normalized_coords, (bool, np.bool_)) and not (_is_int(normalized_coords) and
                                                                        normalized_coords in (0, 1)):
            raise TypeError(f"{owner}: `normalized_coords` must be a bool, got {normalized_coords!r}")
        self._texels = self._texel_copy(owner, data, sizes, num_channels, dtype)
        integer = self._texels.dtype.name in ("int32", "uint32")  # read only by CLOSEST, as in Warp
        default = TextureFilterMode.CLOSEST if integer else TextureFilterMode.LINEAR
        filt = default if filter_mode is None else _mode(owner, "filter_mode", filter_mode, TextureFilterMode)
        if integer and filt == TextureFilterMode.LINEAR:
            raise ValueError(f"{owner}: `filter_mode` LINEAR is not available for {self._texels.dtype} texels "
                             "(32-bit integer textures are read CLOSEST, as in Warp)")
        self._mip_filter_mode = default if mip_filter_mode is None else \
            _mode(owner, "mip_filter_mode", mip_filter_mode, TextureFilterMode)  # unused with one level
        self._levels = self._mip_levels(owner, int(num_mip_levels))
        if integer and len(self._levels) > 1 and self._mip_filter_mode != TextureFilterMode.CLOSEST:
            raise ValueError(f"{owner}: a mipmapped texture of {self._texels.dtype} texels needs `mip_filter_mode` "
                             "CLOSEST, as in Warp")
        address = [TextureAddressMode.CLAMP] * 3  # axes the texture lacks (and a short tuple's rest: Warp's)
        if isinstance(address_mode, (tuple, list)):
            if len(address_mode) > 3:
                raise ValueError(f"{owner}: `address_mode` must be one mode or one per axis, got "
                                 f"{len(address_mode)} modes")
            for k, m in enumerate(address_mode):
                address[k] = _mode(owner, f"address_mode[{k}]", m, TextureAddressMode)
        else:
            address[:self.ndim] = [_mode(owner, "address_mode", address_mode, TextureAddressMode)] * self.ndim
        for k, m in enumerate(per_axis):  # address_mode_u / _v / _w override it
            if m is not None:
                address[k] = _mode(owner, f"address_mode_{'uvw'[k]}", m, TextureAddressMode)
        depth, height, width, channels = self._texels.shape
        self._level_pointers = (ctypes.c_void_p * len(self._levels))(*[level.ctypes.data for level in self._levels])
        self._desc = _TextureDesc(self._texels.ctypes.data, self.ndim, width, height, depth, channels,
                                  _TEXEL_TYPES[self._texels.dtype.name], int(filt),
                                  (ctypes.c_int32 * 3)(*address), int(bool(normalized_coords)), len(self._levels),
                                  int(self._mip_filter_mode), self._level_pointers)
        self._id = _register(self, self._desc)

    def _mip_levels(self, owner, count):
        """The texels of each mip level, the base first: `count` of them (0: down to one texel)."""
        base = self._texels.shape[:3]
        axes = [k for k in (2, 1, 0) if 2 - k < self.ndim]  # u, v, w: the array's last axes first
        full = max(base[k] for k in axes).bit_length()  # floor(log2(largest)) + 1
        count = count or full
        if count > min(full, _MAX_MIP_LEVELS):
            raise ValueError(f"{owner}: `num_mip_levels` = {count} exceeds the {min(full, _MAX_MIP_LEVELS)} levels "
                             f"sizes {tuple(base[k] for k in axes)} have")
        levels = [self._texels]
        info = np.iinfo(self._texels.dtype) if self._texels.dtype.kind in "iu" else None
        for _ in range(1, count):
            level = levels[-1].astype(np.float64)
            for k in axes:
                size = level.shape[k]
                half = max(1, size // 2)
                if half != size:
                    even = np.take(level, np.arange(half) * 2, axis=k)
                    odd = np.take(level, np.minimum(np.arange(half) * 2 + 1, size - 1), axis=k)
                    level = (even + odd) * 0.5
            if info is not None:
                level = np.clip(np.rint(level), info.min, info.max)
            levels.append(np.ascontiguousarray(level.astype(self._texels.dtype)))
        return levels

    num_mip_levels = property(lambda self: len(self._levels), doc="Mip levels, the base included.")
    is_mipmapped = property(lambda self: len(self._levels) > 1, doc="Whether it has more than one mip level.")

    def _texel_copy(self, owner, data, sizes, num_channels, dtype):
        """The texels, C-contiguous [depth][height][width][channels] (the axes the texture lacks 1): a
        copy of `data`, or zeros of the sizes given."""
        for what, size in zip(_SIZES, sizes):
            if not _is_int(size):
                raise TypeError(f"{owner}: `{what}` must be an int, got {type(size).__name__}")
        if not _is_int(num_channels):
            raise TypeError(f"{owner}: `num_channels` must be an int, got {type(num_channels).__name__}")
        axes = ", ".join(reversed(_SIZES[:self.ndim])) + ("," if self.ndim == 1 else "")
        if data is None:
            for what, size in zip(_SIZES, sizes):
                if not 1 <= size <= _INT_MAX:
                    raise ValueError(f"{owner}: `{what}` must be at least 1 (and fit int32) when `data` is None, "
                                     f"got {size}")
            channels = int(num_channels) or 1
            if channels not in (1, 2, 4):
                raise ValueError(f"{owner}: `num_channels` must be 1, 2 or 4, got {channels}")
            shape = (1,) * (3 - self.ndim) + tuple(int(s) for s in reversed(sizes)) + (channels,)
            return np.zeros(shape, _texel_dtype(owner, dtype))
        array = _host_array("data", data, "a numpy or Warp array", owner)
        if array.dtype.name not in _TEXEL_TYPES:
            raise TypeError(f"{owner}: `data` must hold {', '.join(_TEXEL_TYPES)} texels, got {array.dtype}")
        if array.ndim not in (self.ndim, self.ndim + 1):
            raise ValueError(f"{owner}: `data` must have shape ({axes}) or ({axes}, channels), got {array.shape}")
        channels = array.shape[self.ndim] if array.ndim > self.ndim else 1
        if channels not in (1, 2, 4):
            raise ValueError(f"{owner}: `data` has {channels} channels (its last axis); a texture has 1, 2 or 4")
        for what, size, given in zip(_SIZES, reversed(array.shape[:self.ndim]), sizes):
            if not 1 <= size <= _INT_MAX:
                raise ValueError(f"{owner}: `data`'s {what} must be at least 1 (and fit int32), got {size}")
            if given and given != size:
                raise ValueError(f"{owner}: `{what}` = {given} differs from the data's {what}, {size}")
        if num_channels and num_channels != channels:
            raise ValueError(f"{owner}: `num_channels` = {num_channels} differs from the data's channels, {channels}")
        shape = (1,) * (3 - self.ndim) + array.shape[:self.ndim] + (channels,)
        return np.array(array.reshape(shape), dtype=np.dtype(array.dtype.name), order="C")  # native byte order

    width = property(lambda self: self._desc.width, doc="Texels along u.")
    height = property(lambda self: self._desc.height, doc="Texels along v (1 for a 1D texture).")
    depth = property(lambda self: self._desc.depth, doc="Texels along w (1 for a 1D or 2D texture).")
    num_channels = property(lambda self: self._desc.channels, doc="Channels per texel: 1, 2 or 4.")
    dtype = property(lambda self: self._texels.dtype, doc="The texels' numpy dtype.")
    filter_mode = property(lambda self: TextureFilterMode(self._desc.filter), doc="A TextureFilterMode.")
    mip_filter_mode = property(lambda self: self._mip_filter_mode, doc="A TextureFilterMode (between mip levels).")
    address_mode_u = property(lambda self: TextureAddressMode(self._desc.address[0]), doc="u's TextureAddressMode.")
    address_mode_v = property(lambda self: TextureAddressMode(self._desc.address[1]), doc="v's TextureAddressMode.")
    address_mode_w = property(lambda self: TextureAddressMode(self._desc.address[2]), doc="w's TextureAddressMode.")
    normalized_coords = property(lambda self: bool(self._desc.normalized),
                                 doc="Whether coordinates are in [0, 1] (else in texels).")
    id = property(lambda self: self._id, doc="The id a kernel's texture argument takes (the object itself too).")

    @property
    def shape(self):
        """The texels' shape as the data's: the axes, then the channels when more than one."""
        d, h, w, c = self._texels.shape
        return (d, h, w)[3 - self.ndim:] + ((c,) if c > 1 else ())

    def _fits(self, what, array):
        """array (numpy) checked against the texture's dtype and shape (a single channel's axis optional)."""
        if array.dtype != self.dtype:
            raise TypeError(f"{what} must hold {self.dtype} texels (the texture's), got {array.dtype}")
        if array.shape not in (self.shape, self.shape + ((1,) if self.num_channels == 1 else ())):
            raise ValueError(f"{what} must have the texture's shape {self.shape}, got {array.shape}")

    def copy_from(self, src):
        """The texels replaced in place (kernels read them at their next launch) by those of `src`: a
        numpy or Warp array, or another texture, of the texture's shape and dtype."""
        owner = f"{type(self).__name__}.copy_from: `src`"
        if self.is_mipmapped:  # its levels were made from the texels given at construction (Warp's rule too)
            raise RuntimeError(f"{owner}: a mipmapped texture's texels are fixed when it is made")
        array = src._texels.reshape(src.shape) if _texture_like(src) else \
            _host_array("src", src, "a numpy or Warp array or a texture", f"{type(self).__name__}.copy_from")
        self._fits(owner, array)
        np.copyto(self._texels, array.reshape(self._texels.shape))

    def copy_to(self, dst):
        """The texels written into `dst`: a numpy array (or a Warp CPU array) of the texture's shape and
        dtype, or another texture (its copy_from)."""
        owner = f"{type(self).__name__}.copy_to: `dst`"
        if _texture_like(dst):
            dst.copy_from(self)
            return
        if not isinstance(dst, np.ndarray) and hasattr(dst, "__array_interface__"):
            dst = np.asarray(dst)  # a Warp CPU array: a view of its memory
        if not isinstance(dst, np.ndarray):
            raise TypeError(f"{owner} must be a numpy array, a Warp CPU array or a texture, got {type(dst).__name__}")
        self._fits(owner, dst)
        if not dst.flags.writeable:
            raise ValueError(f"{owner} is read only")
        np.copyto(dst, self._texels.reshape(dst.shape))

    def __repr__(self):
        sizes = "x".join(str(s) for s in (self.width, self.height, self.depth)[:self.ndim])
        return (f"<tilec {type(self).__name__} {sizes}, {self.num_channels} channel(s) of {self.dtype}, "
                f"{self.filter_mode.name}>")


class Texture1D(_Texture):
    """A 1D texture, as wp.Texture1D (CPU): data of shape (width,) or (width, channels)."""

    ndim = 1

    def __init__(self, data=None, width=0, num_channels=0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, normalized_coords=True, num_mip_levels=1,
                 mip_filter_mode=None, device=None, surface_access=False, cuda_array=0):
        self._make(data, (width,), num_channels, dtype, filter_mode, address_mode, (address_mode_u,),
                   normalized_coords, num_mip_levels, mip_filter_mode, device, surface_access, cuda_array)


class Texture2D(_Texture):
    """A 2D texture, as wp.Texture2D (CPU): data of shape (height, width) or (height, width, channels)."""

    ndim = 2

    def __init__(self, data=None, width=0, height=0, num_channels=0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None,
                 normalized_coords=True, num_mip_levels=1, mip_filter_mode=None, device=None, surface_access=False,
                 cuda_array=0):
        self._make(data, (width, height), num_channels, dtype, filter_mode, address_mode,
                   (address_mode_u, address_mode_v), normalized_coords, num_mip_levels, mip_filter_mode, device,
                   surface_access, cuda_array)


class Texture3D(_Texture):
    """A 3D texture, as wp.Texture3D (CPU): data of shape (depth, height, width) or (depth, height, width,
    channels)."""

    ndim = 3

    def __init__(self, data=None, width=0, height=0, depth=0, num_channels=0, dtype=None, filter_mode=None,
                 address_mode=TextureAddressMode.CLAMP, address_mode_u=None, address_mode_v=None, address_mode_w=None,
                 normalized_coords=True, num_mip_levels=1, mip_filter_mode=None, device=None, surface_access=False,
                 cuda_array=0):
        self._make(data, (width, height, depth), num_channels, dtype, filter_mode, address_mode,
                   (address_mode_u, address_mode_v, address_mode_w), normalized_coords, num_mip_levels,
                   mip_filter_mode, device, surface_access, cuda_array)


TEXTURE_DTYPES = ("texture1d", "texture2d", "texture3d")  # a kernel's textures: scalars of these dtypes
_KINDS = {"hash_grid": "HashGrid", "mesh": "Mesh", "bvh": "Bvh", "volume": "Volume",
          **dict(zip(TEXTURE_DTYPES, _TEXTURE_CLASSES))}


def _live(value):
    """The live object registered under id `value`, or None."""
    ref = _REGISTRY.live.get(int(value))
    return ref() if ref is not None else None


def _on_host(name, label, device):
    """ValueError naming the argument unless the launch runs on the host (the emulation runs the .cu code
    there, in host memory), where tilec's objects live."""
    if device not in ("cpu", "cuda-emu"):
        raise ValueError(f"{name}: tilec's {label}s live on the CPU; launching on {device!r} is not supported yet")


def is_object_param(p):
    """Whether a kernel parameter's meta marks an object's id (a hash grid, mesh, BVH or texture: object_arg)."""
    return any(k in p for k in _KINDS) or p.get("dtype") in TEXTURE_DTYPES


# The kind of each live object in the table of a kernel that reads ids from values (runtime live_ids.h LiveKind)
_LIVE_KINDS = {("HashGrid", "float32"): 1, ("HashGrid", "float64"): 2, ("Mesh", "float32"): 3, ("Bvh", "float32"): 4,
               **{("Volume", dtype): 5 for dtype in _VOLUME_TYPES}}


def live_ids_on(kernel, device):
    """ValueError unless `device` runs on the host, where the live objects' table a kernel that reads ids
    from values checks them against lives (live_ids)."""
    if device not in ("cpu", "cuda-emu"):
        raise ValueError(f"{kernel}: it reads hash-grid, mesh or BVH ids from values, which tilec checks on the "
                         f"CPU only; launching it on {device!r} is not supported yet")


@contextlib.contextmanager
def live_ids(kernel, lib, setter, device):
    """Around the launch of a kernel that reads hash-grid, mesh or BVH ids from values (an element of a
    uint64 array, a local) rather than from checked parameters: the library's table of the objects alive
    now (runtime live_ids.h), which the kernel checks each such id against, held (with the objects) until
    the launch returns and then cleared."""
    live_ids_on(kernel, device)
    with _REGISTRY.table_lock:
        alive = sorted((key, obj) for key, obj in ((key, ref()) for key, ref in list(_REGISTRY.live.items()))
                       if obj is not None and (type(obj).__name__, getattr(obj, "dtype", None)) in _LIVE_KINDS)
        ids = np.array([key for key, _ in alive], np.uint64)
        kinds = np.array([_LIVE_KINDS[type(obj).__name__, obj.dtype] for _, obj in alive], np.int32)
        table = getattr(lib, setter)
        table.argtypes, table.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64], ctypes.c_int
        if table(ids.ctypes.data, kinds.ctypes.data, len(alive)) != 0:
            raise RuntimeError(f"{kernel}: the library refused the table of live objects")
        try:
            yield
        finally:
            table(None, None, 0)


def texture_ids(name, p, value, device):
    """An array of texture ids (the texture field of an array of structs, Struct.array's): each 0 (Warp's
    empty texture) or the id of a live texture of the kernel's dimensionality; ValueError naming the
    argument and the first element that is not."""
    label = _KINDS[p["dtype"]]
    _on_host(name, label, device)
    if not isinstance(value, np.ndarray) or value.dtype != np.uint64:
        return  # the array check that follows names what it must be
    for index in zip(*np.nonzero(value)):
        obj = _live(value[index])
        if obj is None or type(obj).__name__ != label:
            raise ValueError(f"{name}[{', '.join(map(str, index))}] = {int(value[index])} is not the id of a live "
                             f"tilec {label} (set the struct field to a {label} or None)")


def object_arg(name, p, value, device):
    """The ctypes value of a kernel's hash-grid, mesh, BVH, volume or texture id argument (meta `hash_grid`,
    `mesh`, `bvh`, `volume`, `texture1d`, `texture2d` or `texture3d`): `value` the id of a live object of that
    kind (or the object itself), on the CPU, of the precision the kernel reads, or 0, Warp's unset id (the
    kernel reads an empty object); for a texture also None, Warp's empty texture (zero texels)."""
    kind = p["dtype"] if p.get("dtype") in TEXTURE_DTYPES else next(k for k in _KINDS if k in p)
    label = _KINDS[kind]
    texture = kind.startswith("texture")
    if texture and value is None:
        return ctypes.c_uint64(0), None
    if not texture and _is_int(value) and int(value) == 0:  # Warp's unset id: the kernel reads an empty object
        _on_host(name, label, device)
        return ctypes.c_uint64(0), None
    if type(value).__name__ in _KINDS.values() and hasattr(value, "id"):  # the object itself (any module's class)
        value = value.id
    if not _is_int(value):
        what = f"a {label} or its id ({label}.id), or None (an empty texture)" if texture else \
            f"a {label}'s id ({label}.id)"
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    obj = _live(value)
    if texture and _texture_like(obj) and type(obj).__name__ != label:
        raise ValueError(f"{name}: the kernel reads a {label}, got a {type(obj).__name__}")
    if obj is None or type(obj).__name__ != label:
        raise ValueError(f"{name} = {int(value)} is not the id of a live tilec {label} (make one with "
                         f"<module>.{label}(...) and pass its .id; keep it alive while kernels use it)")
    _on_host(name, label, device)
    wanted = p.get(kind, "any")
    if not texture and wanted != "any" and obj.dtype != wanted:  # (a texture's texel type is any: no check)
        raise ValueError(f"{name}: the kernel reads {wanted} points, and this {label} holds {obj.dtype} ones")
    return ctypes.c_uint64(obj.id), obj
