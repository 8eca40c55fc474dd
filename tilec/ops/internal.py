"""Internal ops made by passes (the tape, lanes, gradient helpers); never written in source.

Their result types are set by the pass that builds them, so their rules only
echo a type passed as the `type` attribute or derived from the first operand.
"""
from __future__ import annotations

from ..ir.types import INT32, ArrayT, Element, TileT, Type
from .core import Bound, OpSpec, Param

A = Param("a", "value")
G = Param("g", "value")


def _like_first(b: Bound) -> Type:
    return b.types["a"]


def _given(b: Bound) -> Type:
    t: Type = b.attrs["type"]
    return t


def _step_rule(b: Bound) -> Type:
    ta, tb = b.types["left"], b.types["right"]
    t = ta if isinstance(ta, TileT) else tb
    return t


def _given_ret(b: Bound) -> Type:
    raise TypeError("custom_call, native_call and native_adjoint are built with their types")


def _lane(b: Bound) -> Type:
    return INT32


def _element(b: Bound, name: str) -> Element:
    """The element type of operand `name`, an array or a tile (the passes build these ops so)."""
    t = b.types[name]
    assert isinstance(t, (ArrayT, TileT)), t
    return t.dtype


def _diag_rule(b: Bound) -> Type:
    g = b.types["g"]
    assert isinstance(g, TileT), g
    return TileT(g.dtype, (g.shape[0],))


OPS = [
    OpSpec("tape_push", (A,), lambda b: None, "tape_push", "save a value for the reverse sweep",
           api=False, effect=True),
    OpSpec("tape_pop", (Param("type", "const"),), _given, "tape_pop", "restore the last saved value",
           api=False),
    OpSpec("tape_ready", (), lambda b: None, "tape_ready",
           "between an adjoint's replay and its reverse sweep: the GPU checks the tape fit", api=False,
           effect=True),
    OpSpec("lane", (), _lane, "lane", "this lane's index in the block", api=False),
    OpSpec("array_take", (A,), lambda b: _element(b, "a"), "array_take",
           "adjoint of a shared element store: a[i] for the first thread to arrive, which zeroes it",
           variadic="indices", api=False, effect=True),
    OpSpec("extreme_take", (Param("final", "value"), G), lambda b: _element(b, "final"), "extreme_take",
           "adjoint of atomic_min/max: g[i] for the first thread whose value equals final[i], which "
           "zeroes it", variadic="args", api=False, effect=True),
    OpSpec("leader_only", (A,), _like_first, "leader_only", "a in the leader lane, 0 in the others",
           api=False),
    OpSpec("lane_sum", (A,), _like_first, "lane_sum",
           "the sum over the block's lanes of their copies of a tile (partial adjoints)", api=False),
    OpSpec("tile_add_at", (A, Param("value", "value")), _like_first, "tile_add_at",
           "a[i, j] += value in this lane's copy only", variadic="indices", api=False),
    OpSpec("step_ge", (Param("left", "value"), Param("right", "value")), _step_rule, "step_ge",
           "1 where left >= right else 0, in left's dtype", api=False, elementwise=True),
    OpSpec("tile_extreme_grad", (A, G, Param("axis", "const", None), Param("is_max", "const", True)),
           _like_first, "tile_extreme_grad", "g at the first arg-max/min of each reduced group", api=False),
    OpSpec("tile_reduce_grad", (A, G, Param("axis", "const", None), Param("op", "const", "add")),
           _like_first, "tile_reduce_grad", "gradient of a left fold with a builtin op", api=False),
    OpSpec("tile_scan_grad", (G, Param("exclusive", "const", False)), lambda b: b.types["g"],
           "tile_scan_grad", "reverse running sum (adjoint of a scan)", api=False),
    OpSpec("tile_scan_extreme_grad", (A, G, Param("is_max", "const", True)), _like_first,
           "tile_scan_extreme_grad", "g at the element holding each running max/min", api=False),
    OpSpec("tile_unsort_grad", (Param("keys", "value"), G), lambda b: b.types["g"], "tile_unsort_grad",
           "g moved back to the positions the sort took each element from", api=False),
    OpSpec("tile_cholesky_grad", (Param("L", "value"), G), lambda b: b.types["L"], "tile_cholesky_grad",
           "adjoint of the Cholesky factor w.r.t. the lower triangle of A", api=False),
    OpSpec("tile_cholesky_solve_grad", (Param("L", "value"), Param("x", "value"), Param("ybar", "value")),
           lambda b: b.types["L"], "tile_cholesky_solve_grad", "adjoint of L in L L^T x = y", api=False),
    OpSpec("tile_tri_outer_grad", (Param("u", "value"), Param("v", "value"), Param("type", "const"),
                                   Param("lower", "const", True)), _given, "tile_tri_outer_grad",
           "-tril(u v^T) or -triu(u v^T): adjoint of a triangular matrix in a solve", api=False),
    OpSpec("tile_unbroadcast", (G, Param("type", "const")), _given, "tile_unbroadcast",
           "g summed over broadcast axes back to a shape", api=False),
    OpSpec("tile_view_add", (A, G), _like_first, "tile_view_add", "a with g added at a view's place",
           api=False),
    OpSpec("tile_slice_add", (A, G), _like_first, "tile_slice_add", "a with g added where a slice reads",
           variadic="spec", api=False),
    OpSpec("tile_gather_add", (A, G, Param("indices", "value"), Param("axis", "const", 0)), _like_first,
           "tile_gather_add", "a with g added where a gather along axis read", api=False),
    OpSpec("replay_value", (Param("body", "value"), Param("replayed", "value")), lambda b: b.types["body"],
           "replay_value", "@wp.func_replay: the replay func's value; the adjoint flows to the body's", api=False),
    OpSpec("custom_call", (), _given_ret, "custom_call",
           "a func with a @wp.func_grad: its value, and in the adjoint the user's rule", adj_cpp="custom_call",
           variadic="args", api=False),
    OpSpec("native_call", (), _given_ret, "native_call",
           "a @wp.func_native's snippet called with scalars and arrays (attr func: its C-level name); may have "
           "effects", adj_cpp="native_call", variadic="args", effect=True, api=False),
    OpSpec("native_adjoint", (), _given_ret, "native_adjoint",
           "a @wp.func_native's adj_snippet, run by the reverse sweep: the call's values, the float arrays' "
           "adjoints and the result's; its value is the float scalars' adjoints", variadic="args", effect=True,
           api=False),
    OpSpec("tile_diag", (G,), _diag_rule, "tile_diag",
           "the diagonal of a square tile", api=False),
]
MUTATES = {"tile_view_add": ("a",), "tile_add_at": ("a",), "tile_slice_add": ("a",), "tile_gather_add": ("a",)}
