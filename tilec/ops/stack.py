"""Block stacks (Warp's tile_stack): a stack in the block's shared memory that every thread pushes
to and pops from together.

`tile_stack(capacity, dtype)` makes an empty one; `tile_stack_push(s, value, has_value)` stores
each contributing thread's value and returns its slot (-1 when it did not contribute or the stack
was full: the count saturates at capacity); `tile_stack_pop(s)` gives each thread at most one
element as `(value, slot)` (slot -1: none); `tile_stack_count(s)` reads the count (from any one
thread); `tile_stack_clear(s)` empties it. Slots go to threads in thread order, as Warp's CPU
blocks assign them (on a GPU that order is unspecified). Warp does not differentiate through a
stack, and a float value that passed through one gets no gradient there: tilec refuses the
adjoint of a kernel popping floats (passes/autodiff.py) rather than drop it.
"""
from __future__ import annotations

from ..ir.types import BOOL, INT32, NONE, MatT, Scalar, StackT, TupleT, Type, VecT, describe
from . import rules
from .core import Bound, OpSpec, Param

S = Param("s", "value")


def stack_of(b: Bound) -> StackT:
    t = b.types["s"]
    if not isinstance(t, StackT):
        b.fail("TC0203", f"`s` must be a tile stack (from wp.tile_stack), got {describe(t)}", "s")
    return t


def _make(b: Bound) -> Type:
    capacity = b.attrs["capacity"]
    if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity <= 0:
        b.fail("TC0303", f"`capacity` must be a positive compile-time integer, got {capacity!r}", "capacity")
    dtype = b.attrs["dtype"]
    if not isinstance(dtype, (Scalar, VecT, MatT)):
        b.fail("TC0203", f"a stack holds scalars, vectors or matrices, got {describe(dtype)}", "dtype")
    return StackT(dtype, capacity)


def _push(b: Bound) -> Type:
    s = stack_of(b)
    if isinstance(s.dtype, (VecT, MatT)):  # a value is pushed as it is: of the stack's own type (as Warp)
        if b.types["value"] != s.dtype:
            b.fail("TC0201", f"`value` must be a {s.dtype} for a stack of {s.dtype}, got "
                   f"{describe(b.types['value'])}", "value")
    else:
        v = rules.scalar(b, "value")
        rules.unify_scalars(b, ("s", "value"), (s.dtype, v))
    if b.types["has_value"] != BOOL:
        b.fail("TC0203", f"`has_value` must be a bool, got {describe(b.types['has_value'])}", "has_value")
    return INT32


def _pop(b: Bound) -> Type:
    return TupleT((stack_of(b).dtype, INT32))


def _push_fields(b: Bound) -> Type:
    """The push of a struct into its fields' stacks: the first field's push as tile_stack_push, then
    (stack, value) of every other field, stored at the slot the first one got (one slot per struct
    on every backend, whatever order the push gave the lanes)."""
    slot = _push(b)
    if len(b.variadic) % 2:
        b.fail("TC0303", "takes (stack, value) pairs after has_value", "s")
    for k in range(0, len(b.variadic), 2):
        s, v = b.variadic[k], b.variadic[k + 1]
        if not isinstance(s, StackT) or v != s.dtype:
            b.fail("TC0201", f"field {k // 2 + 1}: {describe(v)} into {describe(s)}", f"arg{k + 1}")
    return slot


def _get(b: Bound) -> Type:
    s = stack_of(b)
    rules.int_index_type(b, "slot")
    return s.dtype


def _count(b: Bound) -> Type:
    stack_of(b)
    return INT32


def _clear(b: Bound) -> Type:
    stack_of(b)
    return NONE


OPS = [
    OpSpec("tile_stack", (Param("capacity", "const"), Param("dtype", "dtype")), _make, "tile_stack",
           "an empty stack of capacity elements in the block's shared memory"),
    OpSpec("tile_stack_push", (S, Param("value", "value"), Param("has_value", "value")), _push, "tile_stack_push",
           "every thread together: each whose has_value holds stores value; its slot, or -1 (full: dropped)",
           effect=True),
    OpSpec("tile_stack_pop", (S,), _pop, "tile_stack_pop",
           "every thread together: (value, slot) of at most one element each, slot -1 when none",
           effect=True),
    OpSpec("tile_stack_push_fields", (S, Param("value", "value"), Param("has_value", "value")), _push_fields,
           "tile_stack_push_fields", "tile_stack_push of a struct's first field, then (stack, value) of each other "
           "field stored at its slot (a stack of structs)", effect=True, api=False, variadic="fields"),
    OpSpec("tile_stack_get", (S, Param("slot", "value")), _get, "tile_stack_get",
           "every thread: the element at slot (from another stack's pop), or zero for slot -1", api=False),
    OpSpec("tile_stack_count", (S,), _count, "tile_stack_count", "the number of elements (from any thread)"),
    OpSpec("tile_stack_clear", (S,), _clear, "tile_stack_clear", "every thread together: empty the stack",
           effect=True),
]
# Ops every lane calls with its own values: the kernel runs as block_dim lanes.
LANE_OPS = frozenset({"tile_stack_push", "tile_stack_pop", "tile_stack_push_fields", "tile_stack_get"})
