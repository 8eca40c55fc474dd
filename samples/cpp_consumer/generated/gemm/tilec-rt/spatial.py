"""Warp's HashGrid, Mesh and Bvh for the tilec loader (tilec-rt, tilec 0.1.0): the same file in
every module.

    grid = <module>.HashGrid(dim_x=128, dim_y=128, dim_z=128)      # as wp.HashGrid (CPU)
    grid.build(points, radius)                                     # points: (n, 3) float32 or float64
    mesh = <module>.Mesh(points, indices, velocities=None)         # as wp.Mesh (CPU)
    bvh = <module>.Bvh(lowers, uppers)                             # as wp.Bvh (CPU): (n, 3) float32 boxes
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

`id` is the address of a descriptor. Every live grid and mesh of this process is registered by its
id, whichever tilec module made it, so a launch takes an id only if it is a live object's of the
kind (and precision) the kernel reads: any other number is a ValueError naming the argument.
"""
from __future__ import annotations

import ctypes
import sys
import types
import weakref

import numpy as np

# One registry per process and descriptor layout: an object made by one module is valid in another's kernels.
_REGISTRY = sys.modules.setdefault("_tilec_spatial_v3", types.ModuleType("_tilec_spatial_v3"))
if not hasattr(_REGISTRY, "live"):
    _REGISTRY.live = {}  # id -> weakref.ref(HashGrid or Mesh)

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


def _host_array(what, value, wanted):
    """value as a numpy array on the host (a Warp array through its .numpy(), wherever it lives);
    TypeError naming `what` (wanted: what it must be) when numpy cannot read it."""
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else value)
    except Exception as e:  # noqa: BLE001 - any unconvertible object is the caller's error
        raise TypeError(f"HashGrid.build: `{what}` must be {wanted}, got {type(value).__name__}") from e


def _groups(groups, n):
    """A grouped build's group per point: n int32 values (Warp's int32 array; its bits sort the keys)."""
    g = _host_array("groups", groups, "an int32 array")
    if g.dtype != np.int32 or g.shape != (n,):
        raise ValueError(f"HashGrid.build: `groups` must be {n} int32 values (one per point), got {g.dtype} of "
                         f"shape {g.shape}")
    return g


def _dim(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
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


_KINDS = {"hash_grid": "HashGrid", "mesh": "Mesh", "bvh": "Bvh"}


def object_arg(name, p, value, device):
    """The ctypes value of a kernel's hash-grid, mesh or BVH id argument (meta `hash_grid`, `mesh` or `bvh`): `value`
    the id of a live object of that kind (or the object itself), on the CPU, of the precision the
    kernel reads."""
    kind = next(k for k in _KINDS if k in p)
    label = _KINDS[kind]
    if type(value).__name__ in _KINDS.values() and hasattr(value, "id"):  # the object itself (any module's class)
        value = value.id
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a {label}'s id ({label}.id), got {type(value).__name__}")
    ref = _REGISTRY.live.get(int(value))
    obj = ref() if ref is not None else None
    if obj is None or type(obj).__name__ != label:
        raise ValueError(f"{name} = {int(value)} is not the id of a live tilec {label} (make one with "
                         f"<module>.{label}(...) and pass its .id; keep it alive while kernels use it)")
    if device not in ("cpu", "cuda-emu"):  # (the emulation runs the .cu code on the host, in host memory)
        raise ValueError(f"{name}: tilec's {label}s live on the CPU; launching on {device!r} is not supported yet")
    wanted = p[kind]
    if wanted != "any" and obj.dtype != wanted:
        raise ValueError(f"{name}: the kernel reads {wanted} points, and this {label} holds {obj.dtype} ones")
    return ctypes.c_uint64(obj.id), obj
