"""numpy behaviour of the value-type ops (ops/values.py): the interpreter's oracle for vectors,
matrices, quaternions (x, y, z, w) and transforms (p, q).

Values are numpy arrays of shape (n,) or (rows, cols) in the component dtype; each function is
written from Warp's documented semantics, independently of the C++ runtime (vec.h, quat.h).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .. import ir
from ..ir.types import ArrayT, MatT, Scalar, TileT, Type, VecT
from .core import registrar

# A runtime value: a numpy array (tile, array, vector, matrix), a numpy scalar or a Python number.
# numpy's annotations of these are stricter than its runtime (dtype-generic arrays), hence Any.
Value = Any


class Context(Protocol):
    """What an op's behaviour asks of the interpreter (interp.Interpreter) running it."""

    funcs: dict[str, ir.Function]  # the module's funcs by name
    tid: tuple[int, ...]  # the thread's launch coordinates
    lane: int  # this lane of the block
    nlanes: int  # lanes per block
    leader: bool  # the block's leader lane
    block_dim: int | None
    tape: list[Any]  # values saved by tape_push for tape_pop

    def call(self, fn: ir.Function, args: Sequence[Any],
             byref: Sequence[tuple[ir.Sym, ir.Sym, dict[ir.Sym, Any]]] = ()) -> Any: ...
    def gather(self, value: Any, dtype: Any) -> Any: ...
    def scalar_function(self, name: str) -> Callable[..., Any]: ...


Impl = Callable[[Context, ir.OpCall, Sequence[Value]], Value]  # impl(ctx, call, operand values) -> result




IMPL: dict[str, Impl] = {}  # merged into reference.IMPL by reference.py (which imports this module)
impl = registrar(IMPL)


def np_dtype(t: Type) -> type[np.generic]:
    """numpy dtype of a scalar type or of a vector's/matrix's/tile's components."""
    t = t.dtype if isinstance(t, (VecT, MatT, TileT)) else t
    assert isinstance(t, Scalar), t
    return np.dtype("float32" if t.name == "bfloat16" else ("bool" if t.name == "bool" else t.name)).type


def value_shape(t: Type) -> tuple[int, ...]:
    """A vector's or matrix's numpy shape: (n,) or (rows, cols)."""
    if isinstance(t, MatT):
        return (t.rows, t.cols)
    assert isinstance(t, VecT), t
    return (t.length,)


def make_value(t: Type, value: Value) -> Value:
    """A scalar, vector or matrix value of type t from a number or sequence (a fresh array)."""
    if isinstance(t, (VecT, MatT)):
        return np.array(np.broadcast_to(np.asarray(value), value_shape(t)), dtype=np_dtype(t))
    return np_dtype(t)(value)


def cast(value: Value, call: ir.OpCall) -> Value:
    with np.errstate(all="ignore"):
        if isinstance(call.type, (VecT, MatT)):
            return make_value(call.type, np.asarray(value).astype(np_dtype(call.type)))
        return np_dtype(call.type)(value)


def _is_value(t: Type) -> bool:
    return isinstance(t, (VecT, MatT))


def _f(x: Value) -> Value:
    """Computing precision: half components compute in float32, like the runtime."""
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == np.float16 else x


# ---------------------------------------------------------------- operators


OPERATORS: dict[str, Impl] = {}  # operator -> its behaviour on values (wrap_operators puts it before the scalar one)


def wrap_operators(table: dict[str, Impl]) -> None:
    """table[op] dispatches to the value behaviour when an operand is a vector or matrix."""
    for name, values_fn in OPERATORS.items():
        scalar = table[name]

        def run(ctx: Context, call: ir.OpCall, a: Sequence[Value], scalar: Impl = scalar,
                values_fn: Impl = values_fn) -> Value:
            if any(_is_value(x.type) for x in call.args):
                return values_fn(ctx, call, a)
            return scalar(ctx, call, a)

        table[name] = run


def _with_values(name: str, values_fn: Impl) -> None:
    OPERATORS[name] = values_fn


def _mul(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    ta, tb = (x.type for x in call.args)
    x, y = _f(a[0]), _f(a[1])
    if _is_value(ta) and _is_value(tb):  # matrix products: M v, v M, A B
        return cast(x @ y, call)
    return cast(x * y, call)


def _div(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    x, y = _f(a[0]), _f(a[1])
    if np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer):
        safe = np.where(y == 0, 1, y)
        return cast(np.where(y == 0, 0, np.trunc(x / safe)), call)
    with np.errstate(all="ignore"):
        return cast(x / y, call)


_with_values("mul", _mul)
_with_values("div", _div)
_with_values("eq", lambda ctx, call, a: np.bool_(np.array_equal(a[0], a[1])))
_with_values("ne", lambda ctx, call, a: np.bool_(not np.array_equal(a[0], a[1])))


# ---------------------------------------------------------------- constructors and components


@impl("value_new")
def _new(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t = call.type
    if not a:
        return make_value(t, 0)
    if len(a) == 1:  # a broadcast scalar, or a value converted to this dtype
        x = np.asarray(a[0])
        return make_value(t, x if x.ndim == 0 else x.reshape(value_shape(t)))
    flat = np.concatenate([np.asarray(x, np.float64).reshape(-1) for x in a])
    return make_value(t, flat.reshape(value_shape(t)))


def _index(call: ir.OpCall, a: Sequence[Value]) -> tuple[int, ...]:
    return tuple(int(i) for i in a)


@impl("value_extract")
def _extract(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v, idx = np.asarray(a[0]), _index(call, a[1:])
    if not all(0 <= i < n for i, n in zip(idx, v.shape)):
        return make_value(call.type, 0)
    out = v[idx]
    return out.copy() if isinstance(out, np.ndarray) else out


@impl("value_insert")
def _insert(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v, idx = np.array(a[0], copy=True), _index(call, a[2:])
    if all(0 <= i < n for i, n in zip(idx, v.shape)):
        v[idx] = a[1]
    return v


@impl("array_store_part")
def _store_part(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, value = a[0], a[1]
    array = call.args[0].type
    assert isinstance(array, ArrayT), call
    nd = array.ndim
    elem, comp = tuple(int(i) for i in a[2:2 + nd]), tuple(int(i) for i in a[2 + nd:])
    if all(0 <= i < n for i, n in zip(elem + comp, arr.shape)):
        arr[elem + comp] = value
    return None


@impl("matrix_from_rows")
def _from_rows(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return make_value(call.type, np.stack([np.asarray(x) for x in a]))


@impl("matrix_from_cols")
def _from_cols(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return make_value(call.type, np.stack([np.asarray(x) for x in a], axis=1))


@impl("quat_identity")
def _quat_identity(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return make_value(call.type, [0, 0, 0, 1])


@impl("transform_identity")
def _transform_identity(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return make_value(call.type, [0, 0, 0, 0, 0, 0, 1])


# ---------------------------------------------------------------- vector and matrix builtins


def _unary(name: str, fn: Callable[[Value], Value]) -> None:
    IMPL[name] = lambda ctx, call, a: cast(fn(_f(a[0])), call)


def _binary(name: str, fn: Callable[[Value, Value], Value]) -> None:
    IMPL[name] = lambda ctx, call, a: cast(fn(_f(a[0]), _f(a[1])), call)


def _normalize(v: Value) -> Value:
    n = np.sqrt(np.sum(v * v))
    return v / n if n > 0 else np.zeros_like(v)


def _cofactor(m: Value) -> Value:
    n = m.shape[0]
    out = np.zeros_like(m, dtype=np.float64)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(m, i, 0), j, 1).astype(np.float64)
            out[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if minor.size else 1.0)
    return out


def _inverse(m: Value) -> Value:
    d = np.linalg.det(m.astype(np.float64))
    return np.zeros_like(m) if d == 0 else _cofactor(m).T / d


def _skew(v: Value) -> Value:
    x, y, z = v
    return np.array([[0, -z, y], [z, 0, -x], [-y, x, 0]], dtype=v.dtype)


_binary("dot", lambda x, y: np.sum(x * y))
_binary("ddot", lambda x, y: np.sum(x * y))
_binary("cross", np.cross)
_binary("outer", np.outer)
_binary("cw_mul", lambda x, y: x * y)
_binary("cw_div", lambda x, y: x / y)
_unary("length", lambda v: np.sqrt(np.sum(v * v)))
_unary("length_sq", lambda v: np.sum(v * v))
_unary("normalize", _normalize)
_unary("transpose", np.transpose)
_unary("determinant", lambda m: np.linalg.det(m.astype(np.float64)))
_unary("cofactor", _cofactor)
_unary("inverse", _inverse)
_unary("diag", np.diag)
_unary("get_diag", np.diag)
_unary("trace", np.trace)
_unary("skew", _skew)


# ---------------------------------------------------------------- quaternions and transforms


def quat_mul(a: Value, b: Value) -> Value:
    """The Hamilton product of (x, y, z, w) quaternions."""
    u, w = a[:3], a[3]
    v, s = b[:3], b[3]
    return np.concatenate([w * v + s * u + np.cross(u, v), [w * s - np.dot(u, v)]])


def quat_conj(q: Value) -> Value:
    return np.concatenate([-q[:3], q[3:]])


def quat_rotate(q: Value, v: Value) -> Value:
    """q v q* for a unit q, written as Warp evaluates it for any q."""
    u, w = q[:3], q[3]
    return v * (2 * w * w - 1) + u * (2 * np.dot(u, v)) + np.cross(u, v) * (2 * w)


def _axis_angle(axis: Value, angle: Value) -> Value:
    half = angle * 0.5
    return np.concatenate([axis * np.sin(half), [np.cos(half)]])


def _transform_point(t: Value, p: Value) -> Value:
    return quat_rotate(t[3:], p) + t[:3]


def _transform_multiply(a: Value, b: Value) -> Value:
    return np.concatenate([_transform_point(a, b[:3]), quat_mul(a[3:], b[3:])])


def _transform_inverse(t: Value) -> Value:
    qi = quat_conj(t[3:])
    return np.concatenate([-quat_rotate(qi, t[:3]), qi])


_binary("quat_mul", quat_mul)
_unary("quat_inverse", quat_conj)
_binary("quat_rotate", quat_rotate)
_binary("quat_rotate_inv", lambda q, v: quat_rotate(quat_conj(q), v))
_binary("quat_from_axis_angle", _axis_angle)
_binary("transform_point", _transform_point)
_binary("transform_vector", lambda t, v: quat_rotate(t[3:], v))
_binary("transform_multiply", _transform_multiply)
_unary("transform_inverse", _transform_inverse)
_unary("transform_get_translation", lambda t: t[:3])
_unary("transform_get_rotation", lambda t: t[3:])
