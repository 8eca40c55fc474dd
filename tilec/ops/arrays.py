"""Array element access, atomics, shapes and thread indices."""
from __future__ import annotations

from ..ir.types import BOOL, INT32, ArrayT, Element, MatT, Scalar, TupleT, Type, VecT, article, describe
from . import rules
from .core import Bound, OpSpec, Param

A = Param("a", "value")
# Warp's atomic builtins that are an augmented element store (`wp.atomic_sub(a, i, v)` is `a[i] -= v`,
# returning the old value): lowered as the store's op, whose arguments put the value before the indices.
ATOMIC_UPDATES = {"atomic_sub": "array_atomic_sub", "atomic_and": "array_atomic_and",
                  "atomic_or": "array_atomic_or", "atomic_xor": "array_atomic_xor"}


def _index_count(b: Bound, ndim: int, got: int, what: str) -> None:
    if got != ndim:
        b.fail("TC0304", f"{what} needs {ndim} index(es) for a {ndim}-d array, got {got}", "a")


def _indices_int(b: Bound, types: list[Type]) -> None:
    for t in types:
        if not (hasattr(t, "is_integral") and t.is_integral):
            b.fail("TC0203", f"array indices must be integers, got {describe(t)}")


def _load(b: Bound) -> Type:
    a = rules.array(b, "a")
    _index_count(b, a.ndim, len(b.variadic), "array read")
    _indices_int(b, b.variadic)
    return a.dtype


def _store(b: Bound) -> Element | None:
    a = rules.array(b, "a")
    _index_count(b, a.ndim, len(b.variadic), "array write")
    _indices_int(b, b.variadic)
    if isinstance(a.dtype, ArrayT):  # an array field of an array of structs: its descriptors are read-only
        b.fail("TC0401", "an array field of an element of an array of structs is not assigned in a kernel; "
               "write its elements (`a[i].field[j] = v`)", "a")
    if isinstance(a.dtype, (VecT, MatT)):  # arrays of vectors and matrices take exactly their type
        if b.types["value"] != a.dtype:
            b.fail("TC0202", f"cannot store {describe(b.types['value'])} into a {a.dtype} array", "value")
        return a.dtype if b.op.startswith("atomic") or b.op.startswith("array_atomic") else None
    v = rules.scalar(b, "value")
    if "value" not in b.weak and v != a.dtype:
        b.fail("TC0202", f"cannot store {v} into {article(a.dtype.name)} {a.dtype} array", "value")
    if "value" in b.weak and v.is_float and not rules.scalar_element(a).is_float:
        b.fail("TC0202", f"cannot store a float into {article(a.dtype.name)} {a.dtype} array", "value")
    return a.dtype if b.op.startswith("atomic") or b.op.startswith("array_atomic") else None


def _bit_store(b: Bound) -> Element | None:
    """a[i] &= v, |=, ^=: arrays of integers, integer vectors and integer matrices (Warp lowers them to
    atomic and/or/xor, a vector's or matrix's component by component)."""
    dt = _store(b)
    if not getattr(dt.dtype if isinstance(dt, (VecT, MatT)) else dt, "is_integral", False):
        b.fail("TC0203", f"bitwise update of {article(str(dt))} {dt} array; it needs an integer array", "a")
    return dt


def _atomic_api(b: Bound) -> Type:
    """wp.atomic_add(a, i[, j...], value): the last argument is the value; wp.atomic_cas(a, i[, j...],
    compare, value): the last two."""
    a = rules.array(b, "a")
    values = 2 if b.op == "atomic_cas" else 1
    if len(b.variadic) != a.ndim + values:
        what = "compare and value" if values == 2 else "a value"
        b.fail("TC0304", f"needs {a.ndim} index(es) and {what} for a {a.ndim}-d array, got "
               f"{len(b.variadic)} argument(s) after the array", "a")
    _indices_int(b, b.variadic[:-values])
    bitwise = b.op in ("atomic_and", "atomic_or", "atomic_xor") and a.dtype.dtype.is_integral \
        if isinstance(a.dtype, (VecT, MatT)) else False  # component by component, as Warp
    if isinstance(a.dtype, (VecT, MatT)) and b.op not in ("atomic_add", "atomic_min", "atomic_max") and not bitwise:
        b.fail("TC0430", f"is not supported on arrays of {a.dtype} yet (wp.atomic_add, atomic_min and atomic_max "
               "are, and wp.atomic_and / atomic_or / atomic_xor of integer ones)", "a")
    _element_values(b, a, ("compare", "value") if values == 2 else ("value",))
    return a.dtype


def _element_values(b: Bound, a: ArrayT, names: tuple[str, ...]) -> None:
    """The trailing arguments `names` (the value, or compare and value) are of the array's dtype: a
    typed one exactly, an untyped literal converted to it, but never a float literal into an
    integer array (Warp refuses it; it would be silently truncated)."""
    first = len(b.variadic) - len(names)
    for k, what in enumerate(names, first):
        v = b.variadic[k]
        if v != a.dtype and k not in b.variadic_weak:
            b.fail("TC0202", f"{what} is {describe(v)} but the array holds {a.dtype}", "args")
        if k in b.variadic_weak and getattr(v, "is_float", False) and isinstance(a.dtype, Scalar) \
                and not a.dtype.is_float:
            b.fail("TC0202", f"{what} is a float literal but the array holds {a.dtype}", "args")


def _lower_bound(b: Bound) -> Type:
    """wp.lower_bound(a, value) / wp.lower_bound(a, begin, end, value) of a sorted 1-d array of scalars."""
    a = rules.array(b, "a")
    if a.ndim != 1 or not isinstance(a.dtype, Scalar):
        b.fail("TC0203", f"searches a 1-d array of scalars, got {describe(a)}", "a")
    if len(b.variadic) not in (1, 3):
        b.fail("TC0304", f"takes (a, value) or (a, begin, end, value), got {len(b.variadic)} argument(s) after "
               "the array", "a")
    _indices_int(b, b.variadic[:-1])
    _element_values(b, a, ("value",))
    return INT32


def _shape(b: Bound) -> Type:
    a = rules.array(b, "a")
    rules.norm_axis(b, "axis", b.attrs["axis"], a.ndim, "array")
    return INT32


LOCAL_ARRAY_BYTES = 1 << 16  # a thread's local array lives on its stack (registers or local memory on a GPU)


def _local_zeros(b: Bound) -> Type:
    """wp.zeros(shape=..., dtype=T) in a kernel or func: a fixed-size array of the thread's own,
    zero-filled (Warp's fixedarray), of a constant shape."""
    shape = rules.check_shape_value(b, "shape", b.attrs["shape"])
    dtype = b.attrs["dtype"]
    if not isinstance(dtype, (Scalar, VecT, MatT)):
        b.fail("TC0303", f"a local array holds scalars, vectors or matrices, not {describe(dtype)}", "dtype")
    count = 1
    for d in shape:
        count *= int(d)
    if count * dtype.nbytes > LOCAL_ARRAY_BYTES:
        b.fail("TC0111", f"a local array of {count} {dtype} takes {count * dtype.nbytes} bytes of the thread's stack; "
               f"tilec allows {LOCAL_ARRAY_BYTES}", "shape")
    return ArrayT(dtype, len(shape))


def _valid(b: Bound) -> Type:
    rules.array(b, "a")
    return BOOL


def _view(b: Bound) -> Type:
    """attrs["axes"]: per leading axis, ("i",) an index or ("s", has_start, has_stop, step) a slice
    (step None: a run-time step, an arg after that slice's bounds); the *args are the indices, the
    given slice bounds and run-time steps, in order."""
    a = rules.array(b, "a")
    axes = b.attrs["axes"]
    if len(axes) > a.ndim:
        b.fail("TC0304", f"{len(axes)} indices for a {a.ndim}-d array", "a")
    _indices_int(b, b.variadic)
    for ax in axes:
        if ax[0] == "s" and ax[3] == 0:
            b.fail("TC0303", "slice step must not be zero", "a")
    ndim = a.ndim - sum(1 for ax in axes if ax[0] == "i")
    return ArrayT(a.dtype, ndim)


def _tid(b: Bound) -> Type:
    n = b.attrs["count"]
    return INT32 if n == 1 else TupleT((INT32,) * n)


def _block_dim(b: Bound) -> Type:
    return INT32


OPS = [
    OpSpec("array_load", (A,), _load, "array_load", "a[i, j]", adj_cpp="adj_array_load",
           variadic="indices", api=False),
    OpSpec("array_store", (A, Param("value", "value")), _store, "array_store", "a[i, j] = value",
           adj_cpp="adj_array_store", variadic="indices", api=False, effect=True),
    OpSpec("array_atomic_add", (A, Param("value", "value")), _store, "array_atomic_add",
           "a[i, j] += value, atomically", adj_cpp="adj_array_atomic_add", variadic="indices",
           api=False, effect=True),
    OpSpec("array_atomic_sub", (A, Param("value", "value")), _store, "array_atomic_sub",
           "a[i, j] -= value, atomically", adj_cpp="adj_array_atomic_sub", variadic="indices",
           api=False, effect=True),
    OpSpec("array_atomic_and", (A, Param("value", "value")), _bit_store, "array_atomic_and",
           "a[i, j] &= value, atomically", variadic="indices", api=False, effect=True),
    OpSpec("array_atomic_or", (A, Param("value", "value")), _bit_store, "array_atomic_or",
           "a[i, j] |= value, atomically", variadic="indices", api=False, effect=True),
    OpSpec("array_atomic_xor", (A, Param("value", "value")), _bit_store, "array_atomic_xor",
           "a[i, j] ^= value, atomically", variadic="indices", api=False, effect=True),
    OpSpec("atomic_add", (A,), _atomic_api, "atomic_add", "atomically add; returns the old value",
           adj_cpp="adj_atomic_add", variadic="args", effect=True),
    OpSpec("atomic_min", (A,), _atomic_api, "atomic_min", "atomically take the minimum",
           adj_cpp="extreme_take", variadic="args", effect=True),
    OpSpec("atomic_max", (A,), _atomic_api, "atomic_max", "atomically take the maximum",
           adj_cpp="extreme_take", variadic="args", effect=True),
    OpSpec("atomic_cas", (A,), _atomic_api, "atomic_cas",
           "atomically store value where the element equals compare; returns the old value", variadic="args",
           effect=True),
    OpSpec("atomic_exch", (A,), _atomic_api, "atomic_exch", "atomically store value; returns the old value",
           variadic="args", effect=True),
    OpSpec("lower_bound", (A,), _lower_bound, "lower_bound",
           "the first index in [begin, end) whose element is not below value, as Warp (the last one when "
           "every element is below)", variadic="args"),
    OpSpec("array_shape", (A, Param("axis", "const")), _shape, "array_shape", "a.shape[axis]",
           api=False),
    OpSpec("zeros", (Param("shape", "shape"), Param("dtype", "dtype")), _local_zeros, "local_array",
           "a zero-filled array of a constant shape local to the thread (Warp's fixed-size array); bound to a name"),
    OpSpec("array_valid", (A,), _valid, "array_valid",
           "`if a:` on a kernel's array parameter: whether the launch passed an array (Warp's null test)", api=False),
    OpSpec("array_view", (A, Param("axes", "const")), _view, "array_view",
           "A[i] / A[a:b:s]: a view sharing the array's memory", variadic="indices", api=False),
    OpSpec("tid", (Param("count", "const", 1),), _tid, "tid",
           "thread index: block coordinates in a tiled launch, plus the lane when one more is unpacked"),
    OpSpec("block_dim", (), _block_dim, "block_dim", "threads per block"),
]
