"""The reference interpreter's textures (ops/textures.py): the ops read the loader's descriptor
behind an id, with Warp's sampling rules written out in numpy, independently of the runtime's
texture.h: a sample is the sum over the cell's corners of each texel times its weight (the product
of the per-axis weights), its gradient in one coordinate that sum with the axis's weight replaced
by its derivative; over mip levels, the levels' samples weighted as the lod picks them."""
from __future__ import annotations

import ctypes
import itertools
import math
from collections.abc import Sequence

import numpy as np

from .. import ir
from .core import registrar
from .reference_values import Context, Impl, Value

IMPL: dict[str, Impl] = {}
impl = registrar(IMPL)


class TextureLayout(ctypes.Structure):  # the loader's descriptor (runtime texture.h tl::Texture)
    _fields_ = [("data", ctypes.c_void_p), ("ndim", ctypes.c_int32), ("width", ctypes.c_int32),
                ("height", ctypes.c_int32), ("depth", ctypes.c_int32), ("channels", ctypes.c_int32),
                ("dtype", ctypes.c_int32), ("filter", ctypes.c_int32), ("address", ctypes.c_int32 * 3),
                ("normalized", ctypes.c_int32), ("num_levels", ctypes.c_int32), ("mip_filter", ctypes.c_int32),
                ("levels", ctypes.POINTER(ctypes.c_void_p))]


# By the descriptor's dtype code: the numpy type and the divisor normalizing it (None: converted as it is).
_DTYPES = [(np.uint8, 255.0), (np.uint16, 65535.0), (np.uint32, None), (np.int8, 127.0), (np.int16, 32767.0),
           (np.int32, None), (np.float16, None), (np.float32, None)]
WRAP, CLAMP, MIRROR, BORDER = range(4)


def _texture(value: Value) -> TextureLayout | None:
    return TextureLayout.from_address(int(value)) if int(value) else None


def _sizes(t: TextureLayout, level: int) -> tuple[int, int, int]:
    """(width, height, depth) of a mip level: floor-halved, at least 1."""
    return tuple(max(1, n >> level) if k < t.ndim else 1  # type: ignore[return-value]
                 for k, n in enumerate((t.width, t.height, t.depth)))


def _texels(t: TextureLayout, level: int) -> np.ndarray:
    """Every texel of a mip level as float32, shape (depth, height, width, channels)."""
    dtype, scale = _DTYPES[t.dtype]
    width, height, depth = _sizes(t, level)
    n = depth * height * width * t.channels
    raw = np.frombuffer((ctypes.c_char * (n * np.dtype(dtype).itemsize)).from_address(t.levels[level]), dtype)
    values = raw.astype(np.float32)
    if scale is not None:
        values = np.maximum(values / np.float32(scale), np.float32(-1.0))
    return values.reshape(depth, height, width, t.channels)


def _levels(t: TextureLayout, lod: float) -> list[tuple[int, float]]:
    """[(mip level, weight)] a sample at `lod` blends."""
    if t.num_levels <= 1 or not lod > 0:
        return [(0, 1.0)]
    clamped = min(float(np.float32(lod)), t.num_levels - 1.0)
    if t.mip_filter == 0:
        return [(min(math.floor(clamped + 0.5), t.num_levels - 1), 1.0)]
    low = math.floor(clamped)
    f = float(np.float32(clamped - low))
    return [(low, 1.0)] if f == 0 or low == t.num_levels - 1 else [(low, 1.0 - f), (low + 1, f)]


def _address(i: int, size: int, mode: int) -> int:
    if mode == WRAP:
        return i % size
    if mode == MIRROR:
        m = i % (2 * size)
        return 2 * size - 1 - m if m >= size else m
    if mode == CLAMP:
        return min(max(i, 0), size - 1)
    return i  # BORDER: read as zero outside


def _axis(coord: float, base: int, size: int, mode: int, normalized: bool, linear: bool
          ) -> list[tuple[int, float, float]]:
    """[(texel, weight, d weight / d coordinate)] of one axis at a level of `size` texels (the base
    level's: `base`): one texel (CLOSEST) or two (LINEAR)."""
    if not linear:
        reduced = math.fmod(coord, (1.0 if normalized else base) * (2.0 if mode == MIRROR else 1.0)) \
            if mode in (WRAP, MIRROR) else coord
        texel = reduced * size if normalized else reduced * size / base
        if mode not in (WRAP, MIRROR):
            texel = min(max(texel, -1.0), float(size))
        return [(_address(math.floor(texel), size, mode), 1.0, 0.0)]
    c = np.float32(coord)
    if mode in (WRAP, MIRROR):
        period = np.float32((1.0 if normalized else base) * (2.0 if mode == MIRROR else 1.0))
        c = np.float32(np.fmod(c, period))
        c = np.float32(c + period) if c < 0 else c
    x = c if normalized else np.float32(c / np.float32(base))
    t = np.float32(x * np.float32(size) - np.float32(0.5))
    slope = float(size) if normalized else size / base
    if mode in (CLAMP, BORDER):
        low, high = (0.0, size - 1.0) if mode == CLAMP else (-2.0, float(size))
        if not low <= t <= high:
            slope = 0.0
        t = np.float32(min(max(float(t), low), high))
    i = math.floor(t)
    f = float(t) - i
    return [(_address(i, size, mode), 1.0 - f, -slope), (_address(i + 1, size, mode), f, slope)]


def _terms(t: TextureLayout, uvw: Value, level: int) -> tuple[np.ndarray, list[list[tuple[int, float, float]]]]:
    coords = [float(c) for c in np.atleast_1d(np.asarray(uvw, np.float32))]
    base, sizes = (t.width, t.height, t.depth), _sizes(t, level)
    axes = [_axis(coords[k], base[k], sizes[k], t.address[k], t.normalized != 0, t.filter == 1) for k in range(t.ndim)]
    return _texels(t, level), axes + [[(0, 1.0, 0.0)]] * (3 - t.ndim)


def _sample_at(t: TextureLayout, uvw: Value, level: int, n: int) -> np.ndarray:
    """Channels [0, n) of one level's sample, float64."""
    out = np.zeros(n)
    texels, axes = _terms(t, uvw, level)
    for (x, wx, _), (y, wy, _), (z, wz, _) in itertools.product(*axes):
        v = _corner(texels, x, y, z)
        out[:min(n, v.size)] += wx * wy * wz * v[:n]
    return out


def _corner(texels: np.ndarray, x: int, y: int, z: int) -> np.ndarray:
    depth, height, width, channels = texels.shape
    inside = 0 <= x < width and 0 <= y < height and 0 <= z < depth
    return texels[z, y, x].astype(np.float64) if inside else np.zeros(channels)


@impl("texture_sample_f", "texture_sample_v2", "texture_sample_v4")
def _sample(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    n = {"texture_sample_f": 1, "texture_sample_v2": 2, "texture_sample_v4": 4}[call.op]
    out = np.zeros(n)
    t = _texture(a[0])
    if t is not None:
        for level, weight in _levels(t, float(a[2])):
            out += weight * _sample_at(t, a[1], level, n)
    return np.float32(out[0]) if n == 1 else out.astype(np.float32)


@impl("texture_sample_gradient")
def _sample_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    coords = np.atleast_1d(np.asarray(a[1], np.float32))
    adj = np.atleast_1d(np.asarray(a[3], np.float64))
    out = np.zeros(coords.size)
    t = _texture(a[0])
    if t is not None and t.filter == 1:
        for level, share in _levels(t, float(a[2])):
            texels, axes = _terms(t, a[1], level)
            for k in range(t.ndim):
                for corner in itertools.product(*axes):
                    weight = math.prod(d if j == k else w for j, (_, w, d) in enumerate(corner))
                    v = _corner(texels, *(c[0] for c in corner))[:adj.size]
                    out[k] += share * weight * float(np.dot(v, adj[:v.size]))
    return np.float32(out[0]) if np.ndim(a[1]) == 0 else out.astype(np.float32)


@impl("texture_sample_lod_gradient")
def _lod_gradient(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, lod = _texture(a[0]), float(a[2])
    adj = np.atleast_1d(np.asarray(a[3], np.float64))
    if t is None or t.num_levels <= 1 or t.mip_filter != 1 or not 0 <= lod < t.num_levels - 1:
        return np.float32(0)
    low = math.floor(lod)
    difference = _sample_at(t, a[1], low + 1, adj.size) - _sample_at(t, a[1], low, adj.size)
    return np.float32(np.dot(difference, adj))


@impl("texture_size")
def _size(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t = _texture(a[0])
    return np.int32(0 if t is None else (t.width, t.height, t.depth)[int(a[1])])
