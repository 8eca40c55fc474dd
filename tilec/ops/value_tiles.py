"""Which tile ops take tiles of Warp's value types (vec3, mat22, quat, ...), as data.

Warp 1.19 lets tiles hold vectors and matrices: loads, stores and atomic adds, fills, maps, sums,
folds with tile_reduce, dot products (dot for vectors, ddot for matrices), axpy, the layout ops
and element access. Every other tile op (matmul, scans, min/max and arg-reductions, sorting by
vector keys, casts, the factorisations, ...) is scalar-only there, and so here: `refuse` turns a
value-type tile (or a value-type `dtype=`) given to one of them into a diagnostic naming the op,
the argument and the dtype, before the op's own rule sees a dtype it does not model.
"""
from __future__ import annotations

from ..ir.types import MatT, TileT, VecT, describe
from .core import Bound

ANY = None  # every tile operand of the op may hold a value type

# op -> the operands that may be tiles of a value type (ANY: all of them).
VALUE_TILE_OPS = {
    # creation and lanes
    "zeros": ANY, "tile_zeros": ANY, "tile_ones": ANY, "tile_empty": ANY, "tile_full": ANY, "tile": ANY, "untile": ANY,
    # memory
    "tile_load": ANY, "tile_store": ANY, "tile_atomic_add": ANY, "tile_load_indexed": frozenset({"a"}),
    "tile_store_indexed": frozenset({"a", "t"}), "tile_atomic_add_indexed": frozenset({"a", "t"}),
    # maps, folds, BLAS-1
    "tile_map": ANY, "tile_sum": ANY, "tile_reduce": ANY, "tile_dot": ANY, "tile_axpy": ANY,
    "tile_sort": frozenset({"values"}),
    "tile_scatter_add": ANY, "tile_scatter_masked": ANY, "tile_from_thread": ANY,  # per-lane values
    "tile_fft": ANY, "tile_ifft": ANY,  # complex values (vec2f/vec2d): their own rule (ops/fft.py) says which
    # layout and element access
    "tile_stack": ANY,  # a block stack of vectors or matrices (ops/stack.py)
    "tile_broadcast": ANY, "tile_view": ANY, "tile_squeeze": ANY, "tile_reshape": ANY, "tile_transpose": ANY,
    "tile_extract": ANY, "tile_setitem": ANY, "tile_additem": ANY, "tile_subitem": ANY, "tile_assign": ANY,
    # tile arithmetic: the elementwise rules say which value-type operands combine
    "add": ANY, "sub": ANY, "mul": ANY, "div": ANY, "neg": ANY,
    # component-wise builtins (ops/values.py componentwise_rule says which value types each takes)
    "bit_and": ANY, "bit_or": ANY, "bit_xor": ANY, "lshift": ANY, "rshift": ANY, "invert": ANY, "abs": ANY,
    "sign": ANY, "tile_bit_and_inplace": ANY, "tile_bit_or_inplace": ANY, "tile_bit_xor_inplace": ANY,
}


def is_value_type(t: object) -> bool:
    return isinstance(t, (VecT, MatT))


def refuse(b: Bound) -> None:
    """Fail (TC0203) when a tile operand, or the `dtype=` attribute, of op b.op holds a value type
    the op does not take."""
    allowed = VALUE_TILE_OPS.get(b.op, frozenset())
    if allowed is ANY:
        return
    operands = list(b.types.items()) + [(f"arg{i}", t) for i, t in enumerate(b.variadic)]
    for name, t in operands:
        if isinstance(t, TileT) and is_value_type(t.dtype) and name not in allowed:
            if b.op == "tile_matmul" and isinstance(t.dtype, VecT) and t.dtype.length == 2:
                b.fail("TC0203", f"does not take tiles of {t.dtype} (`{name}` is {describe(t)}): a vec2 tile "
                       "stands for complex numbers, and Warp 1.19 refuses those in tile_matmul too (\"does "
                       "not support complex tiles\")", name)
            b.fail("TC0203", f"does not take tiles of {t.dtype} (`{name}` is {describe(t)}); Warp allows tiles "
                   "of vectors and matrices in loads, stores, fills, tile_map, tile_sum, tile_reduce, tile_dot, "
                   "tile_axpy and the layout ops", name)
    dtype = b.attrs.get("dtype")
    if is_value_type(dtype):
        b.fail("TC0203", f"`dtype` must be a scalar type here, got {dtype}", "dtype")
