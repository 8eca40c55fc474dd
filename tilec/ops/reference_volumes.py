"""The reference interpreter's volumes (ops/volumes.py): the ops read the loader's descriptor behind an
id, with Warp's rules written out in numpy, independently of the runtime's volume.h: a voxel is looked up
by its tile in a dictionary of the tiles, a LINEAR sample is the sum over the 8 corners of each voxel times
the product of its per-axis weights, and its derivatives replace one or two of those weights by theirs."""
from __future__ import annotations

import ctypes
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ir
from .core import registrar
from .reference_values import Context, Impl, Value

IMPL: dict[str, Impl] = {}
impl = registrar(IMPL)
F32 = np.float32


class VolumeLayout(ctypes.Structure):  # the loader's descriptor (runtime volume.h tl::Volume)
    _fields_ = [("type", ctypes.c_int32), ("num_leaves", ctypes.c_int32), ("leaf_keys", ctypes.c_void_p),
                ("values", ctypes.c_void_p), ("background", ctypes.c_float * 3), ("background_int", ctypes.c_int32),
                ("mat", ctypes.c_float * 9), ("inv_mat", ctypes.c_float * 9), ("vec", ctypes.c_float * 3),
                ("hash_bits", ctypes.c_int32), ("hash_slots", ctypes.c_void_p)]


TYPE_CODE = {"f": 1, "v": 2, "i": 3}
RANGE = 1 << 20


class _View:
    """A volume's tiles as a dictionary, its background and map, read from the descriptor."""

    def __init__(self, id_: Value):
        d = VolumeLayout.from_address(int(id_)) if int(id_) else VolumeLayout()  # the null id: the empty volume
        self.type = d.type
        n = d.num_leaves
        keys = np.ctypeslib.as_array((ctypes.c_uint64 * n).from_address(d.leaf_keys)) if n else np.zeros(0, np.uint64)
        width = 3 if d.type == 2 else 1
        ctype = ctypes.c_int32 if d.type == 3 else ctypes.c_float
        values = np.ctypeslib.as_array((ctype * (n * 512 * width)).from_address(d.values)) if n else np.zeros(0)
        self.tiles = {int(k): values[t * 512 * width:(t + 1) * 512 * width].reshape(512, width)
                      for t, k in enumerate(keys)}
        self.background = np.int32(d.background_int) if d.type == 3 else np.array(d.background[:width], F32)
        self.mat = np.array(d.mat[:], F32).reshape(3, 3)
        self.inv = np.array(d.inv_mat[:], F32).reshape(3, 3)
        self.vec = np.array(d.vec[:], F32)

    def place(self, ijk: Sequence[Any]) -> tuple[np.ndarray, int] | None:
        """(its tile, its row there) of voxel ijk, or None outside the tiles."""
        i, j, k = (int(c) for c in ijk)
        parts = [(c >> 3) + RANGE for c in (i, j, k)]
        if any(not 0 <= p < 2 * RANGE for p in parts):
            return None
        tile = self.tiles.get((parts[0] << 42) | (parts[1] << 21) | parts[2])
        return None if tile is None else (tile, ((i & 7) << 6) | ((j & 7) << 3) | (k & 7))

    def voxel(self, ijk: Sequence[Any]) -> Value:
        at = self.place(ijk)
        if at is None:
            return self.background
        row = at[0][at[1]]
        return np.int32(row[0]) if self.type == 3 else row.astype(F32).copy()


def _coord(x: float) -> int:
    return int(x) if np.isfinite(x) and abs(x) < 2.0e9 else 1 << 40


def _roundf(x: float) -> float:
    """C's roundf: halves away from zero (numpy's round takes them to even)."""
    return float(np.sign(x) * np.floor(abs(x) + 0.5))


def _weights(uvw: Value) -> tuple[list[int], np.ndarray]:
    u = np.asarray(uvw, F32)
    base = np.floor(u)
    frac = u - base
    return [_coord(b) for b in base], np.array([[F32(1) - f, f] for f in frac], F32)


def _sample(v: _View, uvw: Value, mode: int, width: int, derivative: tuple[int, ...] = ()) -> np.ndarray:
    """The sample (derivative ()) or its derivative in the axes `derivative` (one axis, or two distinct)."""
    out = np.zeros(width, F32)
    if mode == 0 and not derivative:
        return np.asarray(v.voxel([_coord(_roundf(float(c))) for c in np.asarray(uvw, F32)]), F32).reshape(width)
    if mode != 1:
        return out
    base, w = _weights(uvw)
    for o in itertools.product((0, 1), repeat=3):  # z fastest, Warp's order
        factors = [w[a][o[a]] if a not in derivative else F32(2 * o[a] - 1) for a in range(3)]
        weight = factors[0] * factors[1] * factors[2]
        out += weight * np.asarray(v.voxel([base[a] + o[a] for a in range(3)]), F32).reshape(width)
    return out


def _typed(v: _View, suffix: str) -> bool:
    return bool(v.type == TYPE_CODE[suffix])


@impl("volume_sample_f", "volume_sample_v", "volume_sample_i")
def _sample_op(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    suffix = call.op[-1]
    v = _View(a[0])
    width = 3 if suffix == "v" else 1
    if not _typed(v, suffix):
        return np.int32(0) if suffix == "i" else np.zeros(3, F32) if width == 3 else F32(0)
    if suffix == "i":
        return np.int32(_sample(v, a[1], 0, 1)[0])
    value = _sample(v, a[1], int(a[2]), width)
    return value if width == 3 else F32(value[0])


@impl("volume_sample_grad4")
def _grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _View(a[0])
    if not _typed(v, "f"):
        return np.zeros(4, F32)
    value = _sample(v, a[1], int(a[2]), 1)[0]
    if int(a[2]) != 1:
        return np.array([value, 0, 0, 0], F32)
    return np.array([value, *(_sample(v, a[1], 1, 1, (axis,))[0] for axis in range(3))], F32)


@impl("volume_sample_f_gradient", "volume_sample_v_gradient")
def _sample_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    suffix = call.op[len("volume_sample_")]
    v = _View(a[0])
    if not _typed(v, suffix) or int(a[2]) != 1:
        return np.zeros(3, F32)
    adj = np.asarray(a[3], F32).reshape(-1)
    return np.array([np.dot(_sample(v, a[1], 1, adj.size, (axis,)), adj) for axis in range(3)], F32)


@impl("volume_sample_grad4_gradient")
def _grad_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _View(a[0])
    out = np.zeros(3, F32)
    if not _typed(v, "f") or int(a[2]) != 1:
        return out
    adj = np.asarray(a[3], F32)
    for axis in range(3):  # the sample's slope times adj[0], and the mixed derivatives times the gradient's adjoint
        out[axis] = adj[0] * _sample(v, a[1], 1, 1, (axis,))[0] + sum(
            (adj[1 + b] * _sample(v, a[1], 1, 1, (axis, b))[0] for b in range(3) if b != axis), F32(0))
    return out


@impl("volume_lookup_f", "volume_lookup_v", "volume_lookup_i")
def _lookup(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    suffix = call.op[-1]
    v = _View(a[0])
    if not _typed(v, suffix):
        return np.int32(0) if suffix == "i" else np.zeros(3, F32) if suffix == "v" else F32(0)
    value = v.voxel([int(c) for c in a[1:4]])
    return value if suffix != "f" else F32(np.asarray(value).reshape(-1)[0])


@impl("volume_store_f", "volume_store_v", "volume_store_i")
def _store(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    suffix = call.op[-1]
    v = _View(a[0])
    if not _typed(v, suffix):
        return None
    at = v.place(a[1:4])
    if at is not None:
        at[0][at[1]] = np.asarray(a[4]).reshape(-1)
    return None


@impl("volume_index_to_world", "volume_world_to_index", "volume_index_to_world_dir", "volume_world_to_index_dir")
def _map(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _View(a[0])
    x = np.asarray(a[1], F32)
    m = v.inv if "world_to" in call.op else v.mat
    if call.op == "volume_world_to_index":
        x = x - v.vec
    y = np.array([x[0] * m[r, 0] + x[1] * m[r, 1] + x[2] * m[r, 2] for r in range(3)], F32)
    return y + v.vec if call.op == "volume_index_to_world" else y


@impl("volume_index_to_world_gradient", "volume_world_to_index_gradient")
def _map_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _View(a[0])
    m = v.inv if "world_to" in call.op else v.mat
    g = np.asarray(a[1], F32)
    return np.array([g[0] * m[0, c] + g[1] * m[1, c] + g[2] * m[2, c] for c in range(3)], F32)
