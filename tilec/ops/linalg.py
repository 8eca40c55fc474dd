"""Linear algebra on tiles: matmul, transpose, Cholesky and triangular solves."""
from __future__ import annotations

from typing import Callable

from ..ir.types import Scalar, TileT, Type, fmt_shape
from . import rules
from .core import Bound, OpSpec, Param


def _matmul(b: Bound) -> Type:
    a, bb = rules.tile(b, "a"), rules.tile(b, "b")
    rules.rank(b, "a", a, (2,))
    rules.rank(b, "b", bb, (2,))
    if a.shape[1] != bb.shape[0]:
        b.fail("TC0102", f"inner dimensions differ: a is {fmt_shape(a.shape)}, b is "
               f"{fmt_shape(bb.shape)}")
    # Warp's mixed precision: a, b and out may each be float16, float32 or float64; the product
    # accumulates in out's dtype (a's for the two-argument form).
    for name, t in (("a", a), ("b", bb)):
        if not rules.scalar_element(t).is_float:
            b.fail("TC0203", f"needs float tiles, got {t.dtype} for `{name}`", name)
    if b.attrs.get("precision", "default") not in ("default", "tf32"):
        b.fail("TC0303", f"precision must be \"default\" or \"tf32\", got {b.attrs['precision']!r}",
               "precision")
    shape = (a.shape[0], bb.shape[1])
    out = b.types.get("out")
    if out is not None:
        out = rules.tile(b, "out")
        if out.shape != shape:
            b.fail("TC0102", f"out is {fmt_shape(out.shape)} but a @ b is {fmt_shape(shape)}", "out")
        if not rules.scalar_element(out).is_float:
            b.fail("TC0203", f"needs a float tile for `out`, got {out.dtype}", "out")
        _accumulator(b, rules.scalar_element(out), "out")
        return out
    _accumulator(b, rules.scalar_element(a), "a")
    return TileT(a.dtype, shape)


def _accumulator(b: Bound, dtype: Scalar, name: str) -> None:
    """Warp accumulates a product in float16, float32 or float64, never bfloat16."""
    if dtype.name == "bfloat16":
        where = "`out`" if name == "out" else "the result (a's dtype, with no `out`)"
        b.fail("TC0203", f"cannot accumulate in bfloat16 ({where}); as in Warp, pass an `out` tile of float16, "
               "float32 or float64", name)


def _transpose(b: Bound) -> Type:
    t = rules.tile(b, "a")
    rules.rank(b, "a", t, (2,))
    return TileT(t.dtype, (t.shape[1], t.shape[0]))


def _square(b: Bound, name: str) -> TileT:
    t = rules.tile(b, name)
    rules.rank(b, name, t, (2,))
    if t.shape[0] != t.shape[1]:
        b.fail("TC0101", f"`{name}` must be square, got {fmt_shape(t.shape)}", name)
    if not rules.scalar_element(t).is_float:
        b.fail("TC0203", f"needs a float tile, got {t.dtype}", name)
    return t


def _fill_mode(b: Bound) -> None:
    if b.attrs.get("fill_mode", "lower") not in ("lower", "upper"):
        b.fail("TC0303", f"fill_mode must be \"lower\" or \"upper\", got {b.attrs['fill_mode']!r}", "fill_mode")


def _cholesky(b: Bound) -> Type:
    _fill_mode(b)
    return _square(b, "a")


def _solve(matrix: str, rhs: str = "y") -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        _fill_mode(b)
        m = _square(b, matrix)
        y = rules.tile(b, rhs)
        rules.rank(b, rhs, y, (1, 2))
        if y.shape[0] != m.shape[0]:
            b.fail("TC0101", f"`{rhs}` has {y.shape[0]} rows but `{matrix}` is {fmt_shape(m.shape)}", rhs)
        rules.same_dtype(b, (matrix, rhs), (m.dtype, y.dtype))
        return y

    return rule


def _cholesky_inplace(b: Bound) -> Type:
    _fill_mode(b)
    return _square(b, "A")


FILL = Param("fill_mode", "const", "lower")


def _diag_add(b: Bound) -> Type:
    a = _square(b, "a")
    d = b.types["d"]
    if isinstance(d, TileT):
        rules.rank(b, "d", d, (1,))
        if d.shape[0] != a.shape[0]:
            b.fail("TC0101", f"`d` has {d.shape[0]} entries but `a` is {fmt_shape(a.shape)}", "d")
        rules.same_dtype(b, ("a", "d"), (a.dtype, d.dtype))
    else:
        rules.unify_scalars(b, ("a", "d"), (rules.scalar_element(a), rules.scalar(b, "d")))
    return a


OPS = [
    OpSpec("tile_matmul", (Param("a", "value"), Param("b", "value"), Param("out", "value", None),
                           Param("alpha", "const", 1.0), Param("beta", "const", 1.0),
                           Param("precision", "const", "default")), _matmul,
           "tile_matmul", "alpha * a @ b (+ beta * out, updating out when given); operands of any float "
           "widths, accumulated in out's (tilec always computes at full precision, also for \"tf32\")",
           adj_cpp="adj_tile_matmul"),
    OpSpec("tile_transpose", (Param("a", "value"),), _transpose, "tile_transpose",
           "rows and columns swapped", adj_cpp="adj_tile_transpose"),
    OpSpec("tile_cholesky", (Param("a", "value"), FILL), _cholesky, "tile_cholesky",
           "Cholesky factor of a symmetric positive definite a: lower L with L L^T = a, or (fill_mode="
           "\"upper\") upper U with U^T U = a; reads only that triangle of a", adj_cpp="adj_tile_cholesky"),
    OpSpec("tile_cholesky_solve", (Param("L", "value"), Param("y", "value"), FILL), _solve("L"),
           "tile_cholesky_solve", "x with L L^T x = y (U^T U x = y for fill_mode=\"upper\")",
           adj_cpp="adj_tile_cholesky_solve"),
    OpSpec("tile_lower_solve", (Param("L", "value"), Param("y", "value")), _solve("L"),
           "tile_lower_solve", "x with L x = y, L lower triangular", adj_cpp="adj_tile_lower_solve"),
    OpSpec("tile_upper_solve", (Param("U", "value"), Param("y", "value")), _solve("U"),
           "tile_upper_solve", "x with U x = y, U upper triangular", adj_cpp="adj_tile_upper_solve"),
    OpSpec("tile_cholesky_inplace", (Param("A", "value"), FILL), _cholesky_inplace, "tile_cholesky_inplace",
           "A overwritten by its Cholesky factor (as tile_cholesky)", adj_cpp="adj_tile_cholesky_inplace"),
    OpSpec("tile_cholesky_solve_inplace", (Param("L", "value"), Param("y", "value"), FILL), _solve("L"),
           "tile_cholesky_solve_inplace", "y overwritten by the solution of tile_cholesky_solve",
           adj_cpp="adj_tile_cholesky_solve_inplace"),
    OpSpec("tile_lower_solve_inplace", (Param("L", "value"), Param("y", "value")), _solve("L"),
           "tile_lower_solve_inplace", "y overwritten by x with L x = y", adj_cpp="adj_tile_lower_solve_inplace"),
    OpSpec("tile_upper_solve_inplace", (Param("U", "value"), Param("z", "value")), _solve("U", "z"),
           "tile_upper_solve_inplace", "z overwritten by x with U x = z", adj_cpp="adj_tile_upper_solve_inplace"),
    OpSpec("tile_diag_add", (Param("a", "value"), Param("d", "value")), _diag_add, "tile_diag_add",
           "a with d (a 1-d tile or a scalar) added to its diagonal", adj_cpp="adj_tile_diag_add"),
]
# The in-place forms rebind their tile argument to the result: their adjoints are those of the
# out-of-place forms, through the overwrite.
MUTATES = {"tile_matmul": ("out",), "tile_cholesky_inplace": ("A",), "tile_cholesky_solve_inplace": ("y",),
           "tile_lower_solve_inplace": ("y",), "tile_upper_solve_inplace": ("z",)}
