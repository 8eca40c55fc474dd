"""Tile creation ops: zeros/ones/full/empty/arange, and tile/untile (lanes <-> tile)."""
from __future__ import annotations

import math

from ..ir.types import FLOAT32, Element, MatT, Scalar, TileT, VecT, article, component_dtype, describe
from . import rules
from .core import Bound, OpSpec, Param

SHAPE = Param("shape", "shape")
DTYPE_F = Param("dtype", "dtype", FLOAT32)
DTYPE_OF_VALUE = Param("dtype", "dtype", None)  # omitted: the fill value's type (Warp 1.19's tile_full)
STORAGE = Param("storage", "storage", "register")


def _filled(b: Bound) -> TileT:
    return TileT(b.attrs["dtype"], rules.check_shape_value(b, "shape", b.attrs["shape"]))


def _full(b: Bound) -> TileT:
    v = b.types["value"]
    if b.attrs["dtype"] is None:  # no dtype: the tile takes the value's type (a literal 7 is int32)
        if not isinstance(v, (Scalar, VecT, MatT)):
            b.fail("TC0303", f"`value` must be a scalar, vector or matrix, got {describe(v)}", "value")
        return TileT(v, rules.check_shape_value(b, "shape", b.attrs["shape"]))
    out = _filled(b)
    if isinstance(out.dtype, (VecT, MatT)):  # a vec3 value, or a scalar filling every component
        fills_components = isinstance(v, Scalar) and (v == component_dtype(out.dtype) or "value" in b.weak)
        if v != out.dtype and not fills_components:
            b.fail("TC0201", f"value is {describe(v)} but the tile dtype is {out.dtype}", "value")
        return out
    if not isinstance(v, Scalar):
        b.fail("TC0303", f"`value` must be a scalar, got {describe(v)}", "value")
    if "value" not in b.weak and v != out.dtype:
        b.fail("TC0201", f"value is {v} but the tile dtype is {out.dtype}", "value")
    if "value" in b.weak:
        if not isinstance(out.dtype, Scalar):  # a literal cannot fill a struct tile (was an AttributeError)
            b.fail("TC0201", f"value is {v} but the tile dtype is {out.dtype}", "value")
        if v.is_float and not out.dtype.is_float:
            b.fail("TC0201", f"float value cannot fill {article(out.dtype.name)} {out.dtype} tile", "value")
    return out


def _arange(b: Bound) -> TileT:
    vals = b.variadic_consts
    if not 1 <= len(vals) <= 3:
        b.fail("TC0303", f"takes 1 to 3 positional arguments (stop | start, stop[, step]), got {len(vals)}")
    if any(v is None for v in vals):
        b.fail("TC0108", "start, stop and step must be compile-time constants")
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
    dtype = b.attrs["dtype"]
    if not isinstance(dtype, Scalar) or dtype.kind not in ("float", "int", "uint"):
        b.fail("TC0203", f"needs a numeric dtype, got {dtype if isinstance(dtype, Scalar) else describe(dtype)}",
               "dtype")
    if step == 0:
        b.fail("TC0111", "step must not be zero")
    n = _arange_count(b, dtype, start, stop, step)
    if n <= 0:
        b.fail("TC0111", f"range({start}, {stop}, {step}) is empty")
    return TileT(dtype, (n,))


SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def arange_bound(v: float, dtype: Scalar) -> float:
    """A range bound as the float dtype holds it: an integer rounded once, to nearest even, straight to
    the dtype (Warp's rule; float(v) first would round twice: 2**54 + 3 * 2**30 - 1 in float32)."""
    bits = SIGNIFICAND_BITS.get(dtype.name)
    if bits is None or not isinstance(v, int) or isinstance(v, bool) or v == 0:
        return v
    magnitude = abs(v)
    shift = magnitude.bit_length() - bits
    if shift <= 0:
        return float(v)
    q, r = divmod(magnitude, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    try:
        return float(q << shift) * (1 if v > 0 else -1)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _arange_count(b: Bound, dtype: Scalar, start: float, stop: float, step: float) -> int:
    """ceil((stop - start) / step), counted at the output dtype as Warp counts it: integer ranges
    exactly, float ranges from the values (and the quotient) the dtype represents."""
    if not dtype.is_float:
        for v in (start, stop, step):
            if isinstance(v, float) and not v.is_integer():
                b.fail("TC0201", f"{v} has a fractional part, which {dtype} cannot represent")
        start, stop, step = int(start), int(stop), int(step)
        half = 1 << (dtype.bits - 1)
        lo, hi = (0, 2 * half - 1) if dtype.kind == "uint" else (-half, half - 1)
        for name, v in (("start", start), ("stop", stop)):  # (a negative step of an unsigned range is fine)
            if not lo <= v <= hi:  # C++ would narrow it (Warp refuses it too)
                b.fail("TC0201", f"{name}={v} is out of range of {dtype}")
        return -((stop - start) // -step)
    import numpy as np  # here, not at the top: a compile that needs no float range skips numpy's import

    rep = {16: np.float16, 32: np.float32, 64: np.float64}[dtype.bits]
    asked_step = step
    with np.errstate(over="ignore"):
        cast = [float(rep(arange_bound(v, dtype))) for v in (start, stop, step)]
        for name, v, c in zip(("start", "stop", "step"), (start, stop, step), cast):
            if not math.isfinite(c):
                b.fail("TC0201", f"{name}={v} is out of range of {dtype}")
        start, stop, step = cast
        if step == 0:  # a step too small for the dtype (1e-46 in float32)
            b.fail("TC0111", f"step {asked_step} is zero in {dtype}")
        count = float(rep((stop - start) / step))
    if not math.isfinite(count):
        b.fail("TC0111", f"range({start}, {stop}, {step}) spans more elements than can be counted")
    if count == 0 and (stop - start) * step > 0:  # the quotient underflowed: the range still holds its start
        return 1
    return math.ceil(count)


def _tile(b: Bound) -> TileT:
    x = b.types["x"]
    if isinstance(x, (VecT, MatT)) and b.attrs.get("preserve_type") is True:
        return TileT(x, (b.attrs["block_dim"],))  # one vector per lane, as Warp's preserve_type=True
    if isinstance(x, (VecT, MatT)):
        b.fail("TC0303", f"`x` is {describe(x)}: tilec builds a tile of per-lane vectors with preserve_type=True "
               "only (Warp's default spreads the components over a trailing axis)", "x")
    if not isinstance(x, Scalar):
        b.fail("TC0303", f"`x` must be a per-lane scalar, got {describe(x)}", "x")
    return TileT(x, (b.attrs["block_dim"],))


def _untile(b: Bound) -> Element:
    t = rules.tile(b, "a")
    bd = b.attrs["block_dim"]
    if t.shape != (bd,):
        b.fail("TC0101", f"`a` must have shape ({bd},) (one element per lane of block_dim {bd}), "
               f"got {t.shape}", "a")
    return t.dtype


OPS = [
    OpSpec("tile_zeros", (SHAPE, DTYPE_F, STORAGE), _filled, "tile_fill_zero", "a tile of zeros"),
    OpSpec("tile_ones", (SHAPE, DTYPE_F, STORAGE), _filled, "tile_fill_one", "a tile of ones"),
    OpSpec("tile_empty", (SHAPE, DTYPE_F, STORAGE), _filled, "tile_fill_zero",
           "an uninitialised tile (tilec zero-fills it)"),
    OpSpec("tile_full", (SHAPE, Param("value", "value"), DTYPE_OF_VALUE, STORAGE), _full, "tile_full",
           "a tile filled with value", adj_cpp="adj_tile_full"),
    OpSpec("tile_arange", (Param("dtype", "dtype", FLOAT32), STORAGE), _arange, "tile_arange",
           "start, start+step, ... below stop (float32 unless dtype says otherwise, as in Warp)",
           variadic="args"),
    OpSpec("tile", (Param("x", "value"), Param("preserve_type", "const", False)), _tile,
           "tile_from_lanes", "one value per lane gathered into a (block_dim,) tile",
           adj_cpp="adj_tile_from_lanes"),
    OpSpec("untile", (Param("a", "value"),), _untile, "untile",
           "element `lane` of a (block_dim,) tile, per lane", adj_cpp="adj_untile"),
]
