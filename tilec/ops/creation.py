"""Tile creation ops: zeros/ones/full/empty/arange, and tile/untile (lanes <-> tile)."""
from __future__ import annotations

from ..ir.types import FLOAT32, INT32, Scalar, TileT, article, describe
from . import rules
from .core import Bound, OpSpec, Param

SHAPE = Param("shape", "shape")
DTYPE_F = Param("dtype", "dtype", FLOAT32)
STORAGE = Param("storage", "storage", "register")


def _filled(b: Bound):
    return TileT(b.attrs["dtype"], rules.check_shape_value(b, "shape", b.attrs["shape"]))


def _full(b: Bound):
    out = _filled(b)
    v = b.types["value"]
    if not isinstance(v, Scalar):
        b.fail("TC0303", f"`value` must be a scalar, got {describe(v)}", "value")
    if "value" not in b.weak and v != out.dtype:
        b.fail("TC0201", f"value is {v} but the tile dtype is {out.dtype}", "value")
    if "value" in b.weak and v.is_float and not out.dtype.is_float:
        b.fail("TC0201", f"float value cannot fill {article(out.dtype.name)} {out.dtype} tile", "value")
    return out


def _arange(b: Bound):
    vals = b.variadic_consts
    if not 1 <= len(vals) <= 3:
        b.fail("TC0303", f"takes 1 to 3 positional arguments (stop | start, stop[, step]), got {len(vals)}")
    if any(v is None for v in vals):
        b.fail("TC0108", "start, stop and step must be compile-time constants")
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
    if step == 0:
        b.fail("TC0111", "step must not be zero")
    n = max(0, -(-(stop - start) // step))
    if n == 0:
        b.fail("TC0111", f"range({start}, {stop}, {step}) is empty")
    return TileT(b.attrs["dtype"], (n,))


def _tile(b: Bound):
    x = b.types["x"]
    if not isinstance(x, Scalar):
        b.fail("TC0303", f"`x` must be a per-lane scalar, got {describe(x)}", "x")
    return TileT(x, (b.attrs["block_dim"],))


def _untile(b: Bound):
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
    OpSpec("tile_full", (SHAPE, Param("value", "value"), DTYPE_F, STORAGE), _full, "tile_full",
           "a tile filled with value", adj_cpp="adj_tile_full"),
    OpSpec("tile_arange", (Param("dtype", "dtype", INT32), STORAGE), _arange, "tile_arange",
           "start, start+step, ... below stop", variadic="args"),
    OpSpec("tile", (Param("x", "value"), Param("preserve_type", "const", False)), _tile,
           "tile_from_lanes", "one value per lane gathered into a (block_dim,) tile",
           adj_cpp="adj_tile_from_lanes"),
    OpSpec("untile", (Param("a", "value"),), _untile, "untile",
           "element `lane` of a (block_dim,) tile, per lane", adj_cpp="adj_untile"),
]
