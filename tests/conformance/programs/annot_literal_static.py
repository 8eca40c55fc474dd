"""Array annotations with a Literal ndim (`wp.array[float, Literal[2]]`, typing.Literal), tile annotations with
Literal extents (`wp.tile[float, Literal[4], Literal[8]]`) or none (`wp.tile[float]`), and
wp.static(len(x)) of a tile or vector, in a shape and as a value (issue #13 items 1, 6)."""
import typing
from typing import Literal

import warp as wp

ROWS = 4
COLS = 8


@wp.func
def doubled_rows(t: wp.tile[float, Literal[4], Literal[8]]) -> wp.tile[float, Literal[4], Literal[8]]:
    return t * 2.0  # a tile annotation with Literal extents (Warp's subscript form)


@wp.func
def cos_plus(t: wp.tile[float]) -> wp.tile[float]:
    return wp.tile_map(wp.cos, t) + t  # a tile of any shape (Warp's `wp.tile[float]`)


@wp.kernel
def row_scaled(a: wp.array[float, Literal[2]], b: wp.array[wp.float32, typing.Literal[2]], n: wp.array[int]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(ROWS, COLS), offset=(i * ROWS, 0))
    w = wp.tile_ones(shape=(wp.static(len(t)), COLS), dtype=float) * float(wp.static(len(t)))
    v = wp.vec3(1.0, 2.0, 3.0)
    wp.tile_store(b, cos_plus(doubled_rows(wp.tile_map(wp.sin, t))) * w * float(wp.static(len(v))), offset=(i * ROWS, 0))
    if i == 0:
        n[0] = wp.static(len(t)) * 10 + wp.static(len(v))
