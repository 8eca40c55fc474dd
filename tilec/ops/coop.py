"""Per-thread cooperative tile ops: every lane of the block calls them with its own values.

`tile_scatter_add` / `tile_scatter_masked` write each lane's value into a tile where that lane's
`has_value` holds; `tile_from_thread` fills a tile with one lane's value. Their results depend on
block_dim exactly as Warp's do with `enable_cpu_blocks` (and on CUDA): the kernel runs as
block_dim lanes. The source spells the scatters Warp's way, `(a, i[, j...], value, has_value[,
atomic])`; the frontend binds them in the order of the params below, indices last.
"""
from __future__ import annotations

from ..ir.types import BOOL, MatT, Scalar, TileT, Type, VecT, describe
from . import rules
from .core import Bound, OpSpec, Param

A = Param("a", "value")


def _indexed_value(b: Bound) -> TileT:
    """The tile `a`, checked to take one integer index per dimension and a `value` of its dtype."""
    t = rules.tile(b, "a")
    if len(b.variadic) != t.ndim:
        b.fail("TC0304", f"needs {t.ndim} index(es) for a {t.ndim}-d tile, got {len(b.variadic)}", "a")
    for k, ty in enumerate(b.variadic):
        if not (isinstance(ty, Scalar) and ty.is_integral):
            b.fail("TC0203", f"tile indices must be integers, got {describe(ty)}", f"arg{k}")
    rules.element_value(b, "value", t)
    return t


def _scatter(b: Bound) -> Type:
    t = _indexed_value(b)
    has = b.types["has_value"]
    if has != BOOL:
        b.fail("TC0203", f"`has_value` must be a bool, got {describe(has)}", "has_value")
    if not isinstance(b.attrs.get("atomic", True), bool):
        b.fail("TC0303", f"`atomic` must be True or False, got {b.attrs['atomic']!r}", "atomic")
    return t


def _from_thread(b: Bound) -> Type:
    v = b.types["value"]
    if not isinstance(v, (Scalar, VecT, MatT)):
        b.fail("TC0303", f"`value` must be a per-thread scalar, vector or matrix, got {describe(v)}", "value")
    rules.int_index_type(b, "thread_idx")
    return TileT(v, rules.check_shape_value(b, "shape", b.attrs["shape"]))


def _update(b: Bound) -> Type:
    """t[i, j] op= value, once per lane (Warp's tile_*_inplace and the `t[i] op= v` they implement)."""
    t = _indexed_value(b)
    if b.op.startswith("tile_bit") and not rules.component(t).is_integral:  # vec3ui tiles: per component
        b.fail("TC0203", f"needs an integer tile, got {t.dtype}", "a")
    return t


SCATTER_PARAMS = (A, Param("value", "value"), Param("has_value", "value"), Param("atomic", "const", True))
OPS = [
    OpSpec("tile_scatter_add", SCATTER_PARAMS, _scatter, "tile_scatter_add",
           "a[i, j] += value from each lane whose has_value holds", adj_cpp="adj_tile_scatter_add",
           variadic="indices", nondiff=frozenset({"has_value"})),
    OpSpec("tile_scatter_masked", SCATTER_PARAMS[:3], _scatter, "tile_scatter_masked",
           "a[i, j] = value from each lane whose has_value holds (one lane per index)",
           adj_cpp="adj_tile_scatter_masked", variadic="indices", nondiff=frozenset({"has_value"})),
    OpSpec("tile_from_thread", (Param("shape", "shape"), Param("value", "value"), Param("thread_idx", "value"),
                                Param("storage", "storage", "register")), _from_thread, "tile_from_thread",
           "a tile filled with lane thread_idx's value", adj_cpp="adj_tile_from_thread",
           nondiff=frozenset({"thread_idx"})),
]
for _name, _sym in (("and", "&"), ("or", "|"), ("xor", "^")):
    OPS.append(OpSpec(f"tile_bit_{_name}_inplace", (A, Param("value", "value")), _update, f"tile_bit_{_name}_item",
                      f"t[i, j] {_sym}= value, once per lane", variadic="indices"))
# Warp's names for `t[i, j] += value` and `-= value`: the element updates tilec already has.
ALIASES = {"tile_add_inplace": "tile_additem", "tile_sub_inplace": "tile_subitem"}
for _name, _internal in ALIASES.items():
    OPS.append(OpSpec(_name, (A, Param("value", "value")), _update, _internal,
                      f"t[i, j] {'+' if 'add' in _name else '-'}= value, once per lane (as `t[i, j] "
                      f"{'+' if 'add' in _name else '-'}= value`)", adj_cpp=f"adj_{_internal}", variadic="indices"))
BIT_UPDATES = ("tile_bit_and_inplace", "tile_bit_or_inplace", "tile_bit_xor_inplace")
MUTATES = {"tile_scatter_add": ("a",), "tile_scatter_masked": ("a",),
           **{name: ("a",) for name in BIT_UPDATES + tuple(ALIASES)}}
# Warp's positional order puts the indices before the value (and has_value).
INDICES_FIRST = frozenset({"tile_scatter_add", "tile_scatter_masked", *BIT_UPDATES, *ALIASES})
