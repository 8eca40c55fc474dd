"""numpy behaviour of every op, keyed like the op table: the interpreter's oracle.

Each entry is `impl(ctx, call, args) -> value` where args are the evaluated
operands (numpy arrays for tiles and arrays, numpy scalars otherwise) and
`call` gives the attributes and result type. Semantics follow the C++ runtime:
out-of-bounds loads read 0, out-of-bounds writes are dropped, integer `/`
truncates, `%` is C's remainder, reductions fold left to right.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .. import ir
from ..ir.types import ArrayT, Dim, MatT, Scalar, StackT, TileT, TupleT, Type, VecT
from . import (reference_decompositions, reference_random, reference_spatial, reference_textures, reference_values,
               reference_volumes)
from .core import registrar
from .reference_values import Context, Impl, Value, make_value
from .random import SAMPLERS
from .reference_random import pcg as _pcg, unit as _unit

IMPL: dict[str, Impl] = {}


impl = registrar(IMPL)


def npdtype(scalar: Type) -> type[np.generic]:
    scalar = getattr(scalar, "dtype", scalar) if isinstance(scalar, (VecT, MatT)) else scalar  # a component
    assert isinstance(scalar, Scalar), scalar
    return {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int32": np.int32,
            "int64": np.int64, "uint32": np.uint32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
            "int16": np.int16, "uint16": np.uint16, "uint64": np.uint64,
            "bfloat16": np.float32}[scalar.name]  # bfloat16: the interpreter computes in float32


def _tile_shape(call: ir.OpCall) -> tuple[int, ...]:
    """The shape of the tile call makes: concrete extents (the interpreter runs checked kernels)."""
    assert isinstance(call.type, TileT), call
    dims = [d for d in call.type.shape if isinstance(d, int)]
    assert len(dims) == len(call.type.shape), call
    return tuple(dims)


def _held_shape(call: ir.OpCall) -> tuple[int, ...]:
    """The numpy shape of the tile call makes: a tile of vectors/matrices has its components as
    trailing axes, as arrays of them do."""
    held = call.type.dtype if isinstance(call.type, TileT) else None
    return _tile_shape(call) + (reference_values.value_shape(held) if isinstance(held, (VecT, MatT)) else ())


def _lanes(ctx: Context) -> int:
    """The block's lane count (every kernel the interpreter runs has its block_dim set)."""
    assert ctx.block_dim is not None
    return ctx.block_dim


def result_dtype(call: ir.OpCall) -> type[np.generic]:
    t = call.type
    return npdtype(t.dtype if isinstance(t, TileT) else t)


def cast(value: Value, call: ir.OpCall) -> Value:
    dt = result_dtype(call)
    with np.errstate(all="ignore"):
        if isinstance(call.type, (VecT, MatT)):
            return make_value(call.type, np.asarray(value).astype(dt))
        if isinstance(call.type, TileT):
            return np.broadcast_to(np.asarray(value), _held_shape(call)).astype(dt)
        return dt(value)


def _offsets(call: ir.OpCall, args: Sequence[Value], ndim: int) -> tuple[list[int], Sequence[Value]]:
    n = call.attr("offset_count") or 0
    offs = [int(v) for v in args[len(args) - n:]] if n else []
    return (offs + [0] * ndim)[:ndim], args[: len(args) - n] if n else args


# ---------------------------------------------------------------- elementwise


def _div(a: Value, b: Value) -> Value:
    if np.issubdtype(np.asarray(a).dtype, np.integer) and np.issubdtype(np.asarray(b).dtype, np.integer):
        a, b = np.asarray(a), np.asarray(b)
        safe = np.where(b == 0, 1, b)
        q = np.trunc(a / safe).astype(np.result_type(a, b))
        return np.where(b == 0, 0, q)
    return np.asarray(a) / np.asarray(b)


def _mod(a: Value, b: Value) -> Value:
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return np.fmod(a, b)
    return np.fmod(a, b)


def _floordiv(a: Value, b: Value) -> Value:
    return np.floor_divide(a, b)


def _solve_decreasing(f: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """The x in [lo, hi] with f(x) = target for a decreasing f, by bisection to the last bit."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if f(mid) > target else (lo, mid)
    return 0.5 * (lo + hi)


def _erfcinv(z: float) -> float:
    if not 0.0 < z < 2.0:
        return math.inf if z == 0.0 else -math.inf if z == 2.0 else math.nan
    if 0.5 <= z <= 1.5:
        return _erfinv(1.0 - z)  # 1 - z is exact here
    if z > 1.0:
        return -_erfcinv(2.0 - z)  # 2 - z is exact for z in [1, 2]
    return _solve_decreasing(math.erfc, z, 0.0, 30.0)


def _erfinv(y: float) -> float:
    if y == 0.0 or not abs(y) <= 1.0:
        return y if y == 0.0 else math.nan  # keeps the sign of a zero; NaN beyond [-1, 1]
    if abs(y) > 0.5:
        return math.copysign(_erfcinv(1.0 - abs(y)), y)
    return _solve_decreasing(lambda x: -math.erf(x), -y, -1.0, 1.0)


BINARY: dict[str, Callable[..., Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div, "floordiv": _floordiv, "mod": _mod,
    "pow": np.power, "min": lambda a, b: np.where((a <= b) | (b != b), a, b),  # fmin / fmax, as Warp's
    "max": lambda a, b: np.where((a >= b) | (b != b), a, b),
    "atan2": np.arctan2, "copysign": np.copysign, "bit_and": np.bitwise_and, "bit_or": np.bitwise_or, "bit_xor": np.bitwise_xor,
    "lshift": np.left_shift, "rshift": np.right_shift, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal, "and_": np.logical_and, "or_": np.logical_or,
    "step_ge": lambda a, b: (np.asarray(a) >= b).astype(np.asarray(a).dtype),
}  # fmt: skip
UNARY: dict[str, Callable[..., Any]] = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "sqrt": np.sqrt, "cbrt": np.cbrt, "floor": np.floor, "ceil": np.ceil,
    "round": lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5), "trunc": np.trunc,
    "erf": np.vectorize(math.erf, otypes=[np.float64]), "erfc": np.vectorize(math.erfc, otypes=[np.float64]),
    "erfinv": np.vectorize(_erfinv, otypes=[np.float64]), "erfcinv": np.vectorize(_erfcinv, otypes=[np.float64]),
    "neg": np.negative, "abs": np.abs, "sign": np.sign,
    "not_": np.logical_not, "invert": np.invert, "rint": np.rint, "frac": lambda a: a - np.trunc(a),
    "bit_count": lambda a: np.bitwise_count(np.asarray(a).view(np.asarray(a).dtype.str.replace("i", "u"))),
}  # fmt: skip
for _n, _f in BINARY.items():
    IMPL[_n] = (lambda f: lambda ctx, call, a: cast(f(*_promote(call, a)), call))(_f)
for _n, _f in UNARY.items():
    IMPL[_n] = (lambda f: lambda ctx, call, a: cast(f(*_promote(call, a)), call))(_f)


def _promote(call: ir.OpCall, args: Sequence[Value]) -> list[Value]:
    """Operands in the op's computing dtype (half computes in float)."""
    out = []
    for a in args:
        a = np.asarray(a)
        if a.dtype == np.float16:
            a = a.astype(np.float32)
        out.append(a)
    return out


@impl("clamp")
def _clamp(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    x, lo, hi = _promote(call, a)
    return cast(BINARY["min"](BINARY["max"](lo, x), hi), call)  # Warp's min(max(lo, x), hi), fmin / fmax


@impl("select")
def _select(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(np.where(a[0], a[2], a[1]), call)


@impl("where")
def _where(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(np.where(a[0], a[1], a[2]), call)


@impl("bitcast")
def _bitcast(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    source = call.args[0].type
    assert isinstance(source, Scalar), call  # (the rule takes scalars)
    return np.asarray(a[0]).astype(np.dtype(source.name if source.name != "bfloat16" else "uint16")).view(
        result_dtype(call))


@impl("cast")
def _cast(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    with np.errstate(all="ignore"):
        return cast(np.asarray(a[0]).astype(result_dtype(call)), call)


# ---------------------------------------------------------------- creation


@impl("tile_zeros", "tile_empty")
def _zeros(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.zeros(_held_shape(call), result_dtype(call))


@impl("zeros")
def _local_array(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """A local array (wp.zeros in a kernel): zeros of its shape, a value type's components as trailing axes."""
    assert isinstance(call.type, ArrayT), call
    shape = call.attr("shape")
    held = call.type.dtype
    axes = reference_values.value_shape(held) if isinstance(held, (VecT, MatT)) else ()
    scalar = held.dtype if isinstance(held, (VecT, MatT)) else held
    assert isinstance(scalar, Scalar), held  # (the op's rule: scalars, vectors and matrices)
    return np.zeros(((shape,) if isinstance(shape, int) else tuple(shape)) + axes, npdtype(scalar))


@impl("tile_ones")
def _ones(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.ones(_held_shape(call), result_dtype(call))


@impl("tile_full")
def _full(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.full(_held_shape(call), a[0], result_dtype(call))


@impl("tile_arange")
def _arange(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    vals = call.attr("args")
    start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) == 3 else 1)
    return (start + step * np.arange(_tile_shape(call)[0])).astype(result_dtype(call))


@impl("tile")
def _tile(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return ctx.gather(a[0], result_dtype(call))


@impl("untile")
def _untile(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return a[0][ctx.lane]


# ---------------------------------------------------------------- memory


def _window(arr: Value, offs: Sequence[int], shape: Sequence[int]) -> tuple[list[Value], Value]:
    """Index arrays selecting the tile window, and the mask of in-bounds elements."""
    grids = np.meshgrid(*[np.arange(o, o + n) for o, n in zip(offs, shape)], indexing="ij")
    ok = np.ones(shape, bool)
    for g, n in zip(grids, arr.shape):
        ok &= (g >= 0) & (g < n)
    return [np.where(ok, g, 0) for g in grids], ok


def _array_ndim(call: ir.OpCall) -> int:
    """The array operand's own ndim: an array of vectors or matrices is a numpy array with its
    components as trailing axes, which tile windows do not index."""
    t = call.args[0].type
    return int(getattr(t, "ndim"))


def _masked(ok: Value, values: Value) -> Value:
    """values where ok (over the leading, element axes), else 0: components follow their element."""
    return np.where(ok.reshape(ok.shape + (1,) * (values.ndim - ok.ndim)), values, 0)


@impl("tile_load")
def _load(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr = a[0]
    offs, _ = _offsets(call, a, _array_ndim(call))
    idx, ok = _window(arr, offs, _tile_shape(call))
    return _masked(ok, arr[tuple(idx)]).astype(arr.dtype)


@impl("tile_store", "tile_atomic_add")
def _store(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, t = a[0], a[1]
    offs, _ = _offsets(call, a, _array_ndim(call))
    idx, ok = _window(arr, offs, t.shape[:len(offs)])  # the tile's element axes
    sel = tuple(i[ok] for i in idx)
    old = _masked(ok, arr[tuple(idx)]).astype(arr.dtype)
    if ctx.leader:
        if call.op == "tile_store":
            arr[sel] = t[ok]
        else:
            np.add.at(arr, sel, t[ok])
    return old if call.op == "tile_atomic_add" else None


def _indexed(arr: Value, indices: Value, offs: Sequence[int], shape: Sequence[int],
             axis: int) -> tuple[list[Value], Value]:
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    coords = [(np.asarray(indices)[g] if k == axis else g) + o for k, (g, o) in enumerate(zip(grids, offs))]
    ok = np.ones(shape, bool)
    for c, n in zip(coords, arr.shape):
        ok &= (c >= 0) & (c < n)
    return [np.where(ok, c, 0) for c in coords], ok


@impl("tile_load_indexed")
def _load_indexed(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, indices = a[0], a[1]
    ndim = _array_ndim(call)
    offs, _ = _offsets(call, a, ndim)
    idx, ok = _indexed(arr, indices, offs, _tile_shape(call), call.attr("axis") % ndim)
    return _masked(ok, arr[tuple(idx)]).astype(arr.dtype)


@impl("tile_store_indexed", "tile_atomic_add_indexed")
def _store_indexed(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, indices, t = a[0], a[1], a[2]
    ndim = _array_ndim(call)
    offs, _ = _offsets(call, a, ndim)
    idx, ok = _indexed(arr, indices, offs, t.shape[:ndim], call.attr("axis") % ndim)
    old = _masked(ok, arr[tuple(idx)]).astype(arr.dtype)
    if ctx.leader:
        for e in zip(*[i[ok] for i in idx], t[ok]):
            if call.op == "tile_store_indexed":
                arr[e[:-1]] = e[-1]
            else:
                arr[e[:-1]] += e[-1]
    return old if call.op == "tile_atomic_add_indexed" else None


def _in_bounds(arr: Value, idx: Sequence[Value]) -> bool:
    return all(0 <= int(i) < n for i, n in zip(idx, arr.shape))


@impl("replay_value")
def _replay_value(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return a[1]


@impl("custom_call")
def _custom_call(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return ctx.call(ctx.funcs[call.attr("func")], a)


@impl("native_adjoint")
def _native_adjoint(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    raise NotImplementedError(f"{call.attr('source')}: a @wp.func_native adj_snippet is C++, not interpreted")


@impl("native_call")
def _native_call(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    raise NotImplementedError(f"{call.attr('source')}: a @wp.func_native snippet is C++, not interpreted")


@impl("array_view")
def _array_view(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """A numpy view, so writes through it reach the parent as in the runtime."""
    arr, rest = a[0], list(a[1:])
    key: list[int | slice] = []
    for ax in call.attr("axes"):
        if ax[0] == "i":
            key.append(int(rest.pop(0)))
        else:
            start = int(rest.pop(0)) if ax[1] else None
            stop = int(rest.pop(0)) if ax[2] else None
            step = int(rest.pop(0)) if ax[3] is None else ax[3]
            key.append(slice(0, 0) if step == 0 else slice(start, stop, step))  # a zero step: empty (array_views.h)
    return arr[tuple(key)]


@impl("array_load")
def _array_load(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, idx = a[0], tuple(int(i) for i in a[1:])
    if len(idx) < arr.ndim:  # an array of vectors/matrices: the element is the trailing axes (a copy)
        return arr[idx].copy() if _in_bounds(arr, idx) else np.zeros(arr.shape[len(idx):], arr.dtype)
    return arr[idx] if _in_bounds(arr, idx) else arr.dtype.type(0)


UPDATES = {"array_store": lambda old, v: v, "array_atomic_add": lambda old, v: old + v,
           "array_atomic_sub": lambda old, v: old - v, "array_atomic_and": lambda old, v: old & v,
           "array_atomic_or": lambda old, v: old | v, "array_atomic_xor": lambda old, v: old ^ v}


@impl(*UPDATES)
def _array_store(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, value, idx = a[0], a[1], tuple(int(i) for i in a[2:])
    if not _in_bounds(arr, idx):
        return arr.dtype.type(0) if len(idx) == arr.ndim else np.zeros(arr.shape[len(idx):], arr.dtype)
    old = np.copy(arr[idx]) if len(idx) < arr.ndim else arr[idx]
    arr[idx] = UPDATES[call.op](old, np.asarray(value).astype(arr.dtype) if len(idx) < arr.ndim else arr.dtype.type(value))
    return old


@impl("lower_bound")
def _lower_bound(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr = a[0]
    begin, end = (int(a[1]), int(a[2])) if len(a) == 4 else (0, len(arr))
    lower, upper = begin, end - 1  # Warp's search: the last index when every element is below
    while lower < upper:
        mid = lower + (upper - lower) // 2
        if (arr[mid] if 0 <= mid < len(arr) else arr.dtype.type(0)) < arr.dtype.type(a[-1]):
            lower = mid + 1
        else:
            upper = mid
    return np.int32(lower)


@impl("atomic_cas", "atomic_exch")
def _swap(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    values = 2 if call.op == "atomic_cas" else 1
    arr, idx = a[0], tuple(int(i) for i in a[1:len(a) - values])
    if not _in_bounds(arr, idx):
        return arr.dtype.type(0)
    old = arr[idx]
    if call.op == "atomic_exch" or old == arr.dtype.type(a[-2]):
        arr[idx] = arr.dtype.type(a[-1])
    return old


@impl("atomic_add", "atomic_min", "atomic_max")
def _atomic(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    arr, idx, value = a[0], tuple(int(i) for i in a[1:-1]), a[-1]
    if not _in_bounds(arr, idx):
        return arr.dtype.type(0)
    old = np.copy(arr[idx]) if len(idx) < arr.ndim else arr[idx]
    if call.op == "atomic_add":  # (min and max are refused on arrays of vectors)
        arr[idx] = old + value
        return old
    arr[idx] = {"atomic_min": min(old, value), "atomic_max": max(old, value)}[call.op]
    return old


@impl("array_shape")
def _shape(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.int32(a[0].shape[call.attr("axis") % a[0].ndim])


@impl("array_valid")
def _valid(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.bool_(a[0] is not None)


@impl("tid")
def _tid(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    n = call.attr("count")
    values = tuple(np.int32(v) for v in ctx.tid[:n])
    return values[0] if n == 1 else values


@impl("block_dim")
def _block_dim(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.int32(_lanes(ctx))


@impl("lane")
def _lane(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.int32(ctx.lane)


# ---------------------------------------------------------------- reductions


def _split(a: Value, axis: int | None) -> Value:
    """(outer, n, inner) view of a for a reduction over axis (None: everything)."""
    if axis is None:
        return a.reshape(1, -1, 1)
    axis %= a.ndim
    return a.reshape(int(np.prod(a.shape[:axis], dtype=int)), a.shape[axis], -1)


def _fold(a: Value, axis: int | None, f: Callable[[Value, Value], Value], shape: Sequence[Dim]) -> Value:
    v = _split(np.asarray(a), axis)
    acc = v[:, 0, :].copy()
    for k in range(1, v.shape[1]):
        acc = f(acc, v[:, k, :])
    return acc.reshape(shape)


@impl("tile_sum")
def _sum(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(_split(_compute(a[0]), call.attr("axis")).sum(axis=1).reshape(_tile_shape(call)), call)


@impl("tile_max", "tile_min")
def _extreme(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _split(a[0], call.attr("axis"))
    r = v.max(axis=1) if call.op == "tile_max" else v.min(axis=1)
    return cast(r.reshape(_tile_shape(call)), call)


@impl("tile_argmax", "tile_argmin")
def _arg(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    v = _split(a[0], call.attr("axis"))
    r = v.argmax(axis=1) if call.op == "tile_argmax" else v.argmin(axis=1)
    return cast(r.reshape(_tile_shape(call)), call)


@impl("tile_reduce")
def _reduce(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    f = ctx.scalar_function(call.attr("op"))
    return cast(_fold(_compute(a[0]), call.attr("axis"), f, _tile_shape(call)), call)


@impl("tile_scan_inclusive", "tile_scan_exclusive")
def _scan(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    c = np.cumsum(_compute(a[0]).reshape(-1))
    if call.op == "tile_scan_exclusive":
        c = np.concatenate([[0], c[:-1]])
    return cast(c.reshape(_tile_shape(call)), call)


@impl("tile_scan_max_inclusive", "tile_scan_min_inclusive")
def _scan_extreme(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    f = np.fmax if call.op == "tile_scan_max_inclusive" else np.fmin
    return cast(f.accumulate(_compute(a[0]).reshape(-1)).reshape(_tile_shape(call)), call)


@impl("tile_dot")
def _dot(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(np.sum(_compute(a[0]) * _compute(a[1])).reshape(1), call)


@impl("tile_axpy")
def _axpy(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(_compute(a[2]) + _compute(a[0]) * _compute(a[1]), call)


def _sort_perm(keys: Value) -> Value:
    return np.argsort(np.asarray(keys), kind="stable")


@impl("tile_sort")
def _sort(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    perm = _sort_perm(a[0])
    return (a[0][perm], a[1][perm])


@impl("tile_map")
def _map(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    f = ctx.scalar_function(call.attr("op"))
    return cast(np.vectorize(f, otypes=[result_dtype(call)])(*a), call)


def _compute(x: Value) -> Value:
    x = np.asarray(x)
    return x.astype(np.float32) if x.dtype == np.float16 else x


# ---------------------------------------------------------------- linear algebra


@impl("tile_matmul")
def _matmul(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    prod = call.attr("alpha") * (_compute(a[0]) @ _compute(a[1]))
    if len(a) > 2:
        prod = prod + call.attr("beta") * _compute(a[2])
    return cast(prod, call)


@impl("tile_fft", "tile_ifft")
def _fft(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """A complex tile is its [re, im] pairs on a trailing axis of 2; numpy's ifft divides by N."""
    x = np.asarray(a[0])
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64)
    n = z.shape[-1]
    y = np.fft.fft(z, axis=-1) if call.op == "tile_fft" else np.fft.ifft(z, axis=-1) * n
    return np.stack([y.real, y.imag], axis=-1).astype(x.dtype)


@impl("tile_transpose")
def _transpose(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return a[0].T.copy()


def _upper(call: ir.OpCall) -> bool:
    fill_mode: str = call.attr("fill_mode")
    return fill_mode == "upper"


@impl("tile_cholesky", "tile_cholesky_inplace")
def _cholesky(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    m = np.asarray(a[0]).T if _upper(call) else np.asarray(a[0])  # the upper triangle, as a lower one
    lower = np.tril(m)
    L = np.linalg.cholesky(lower + np.tril(lower, -1).T)
    return cast(L.T if _upper(call) else L, call)


def _tri(m: Value, y: Value, lower: bool, transpose: bool = False) -> Value:
    m = np.tril(m) if lower else np.triu(m)
    if transpose:
        m = m.T
    return np.linalg.solve(m, y)


@impl("tile_lower_solve", "tile_lower_solve_inplace")
def _lower_solve(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(_tri(a[0], a[1], True), call)


@impl("tile_upper_solve", "tile_upper_solve_inplace")
def _upper_solve(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(_tri(a[0], a[1], False), call)


@impl("tile_cholesky_solve", "tile_cholesky_solve_inplace")
def _cholesky_solve(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    L = np.triu(a[0]).T if _upper(call) else np.tril(a[0])
    return cast(np.linalg.solve(L.T, np.linalg.solve(L, a[1])), call)


@impl("tile_diag_add")
def _diag_add(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    out = np.array(a[0], copy=True)
    out[np.diag_indices(out.shape[0])] += a[1]
    return out


# ---------------------------------------------------------------- views


@impl("tile_broadcast")
def _broadcast(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.broadcast_to(a[0], _tile_shape(call)).copy()


@impl("tile_view")
def _view(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t = a[0]
    offs, _ = _offsets(call, a, t.ndim)
    shape = _tile_shape(call)
    lead = t.ndim - len(shape)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    coords = [np.full(shape, offs[k]) for k in range(lead)] + [g + offs[lead + k] for k, g in enumerate(grids)]
    ok = np.ones(shape, bool)
    for c, n in zip(coords, t.shape):
        ok &= (c >= 0) & (c < n)
    return np.where(ok, t[tuple(np.where(ok, c, 0) for c in coords)], 0).astype(t.dtype)


@impl("tile_reshape", "tile_squeeze")
def _reshape(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return a[0].reshape(_tile_shape(call)).copy()


@impl("tile_astype")
def _astype(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    with np.errstate(all="ignore"):
        return a[0].astype(result_dtype(call))


@impl("tile_extract")
def _extract(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, idx = a[0], tuple(int(i) for i in a[1:])
    return t[idx] if _in_bounds(t, idx) else t.dtype.type(0)


@impl("tile_scatter_add", "tile_scatter_masked")
def _scatter(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """One lane's view (the interpreter refuses kernels of cooperating lanes)."""
    t = np.array(a[0], copy=True)
    idx = tuple(int(i) for i in a[3:])
    if a[2] and _in_bounds(t, idx):
        t[idx] = t[idx] + a[1] if call.op == "tile_scatter_add" else a[1]
    return t


@impl("tile_from_thread")
def _from_thread(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return cast(a[0] if int(a[1]) == ctx.lane else 0, call)


@impl("tile_setitem", "tile_additem", "tile_subitem", "tile_add_at", "tile_add_inplace", "tile_sub_inplace")
def _setitem(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    op = {"tile_add_inplace": "tile_additem", "tile_sub_inplace": "tile_subitem"}.get(call.op, call.op)
    t = np.array(a[0], copy=True)
    idx = tuple(int(i) for i in a[2:])
    if _in_bounds(t, idx):
        scale = ctx.nlanes if op in ("tile_additem", "tile_subitem") else 1
        value = a[1] * scale
        t[idx] = value if op == "tile_setitem" else (t[idx] - value if op == "tile_subitem" else t[idx] + value)
    return t


@impl("tile_bit_and_inplace", "tile_bit_or_inplace", "tile_bit_xor_inplace")
def _bit_update(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """One lane's view (the interpreter refuses kernels of cooperating lanes)."""
    t = np.array(a[0], copy=True)
    idx = tuple(int(i) for i in a[2:])
    if _in_bounds(t, idx):
        f = {"tile_bit_and_inplace": np.bitwise_and, "tile_bit_or_inplace": np.bitwise_or}.get(call.op, np.bitwise_xor)
        t[idx] = f(t[idx], t.dtype.type(a[1]))
    return t


@impl("tile_assign")
def _assign(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    dst = np.array(a[0], copy=True)
    src = a[1]
    offs, _ = _offsets(call, a, dst.ndim)
    for e in np.ndindex(*src.shape):
        target = tuple(o + i for o, i in zip(offs, e))
        if _in_bounds(dst, target):
            dst[target] = src[e]
    return dst


# ---------------------------------------------------------------- adjoint helpers


@impl("tape_ready")
def _tape_ready(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return None  # the host tape grows as needed


@impl("tape_push")
def _push(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    ctx.tape.append(np.array(a[0], copy=True) if isinstance(a[0], np.ndarray) else a[0])


@impl("tape_pop")
def _pop(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return ctx.tape.pop()


@impl("array_take")
def _array_take(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    adj, idx = a[0], tuple(int(i) for i in a[1:])
    if adj is None or not _in_bounds(adj, idx):
        return np.float64(0) if adj is None else adj.dtype.type(0)
    taken = adj[idx]
    adj[idx] = 0
    return taken


@impl("extreme_take")
def _extreme_take(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """The runtime's extreme_take: a[0] holds the final values (the loader's copies)."""
    final, adj, idx, value = a[0], a[1], tuple(int(i) for i in a[2:-1]), a[-1]
    if adj is None or not (_in_bounds(final, idx) and _in_bounds(adj, idx)) or final.dtype.type(value) != final[idx]:
        return final.dtype.type(0)
    taken = adj[idx]
    adj[idx] = 0
    return taken


@impl("leader_only", "lane_sum")
def _identity_one_lane(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return a[0] if ctx.leader else a[0] * 0


@impl("tile_extreme_grad")
def _extreme_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    x, g = a[0], a[1]
    v = _split(x, call.attr("axis"))
    best = v.argmax(axis=1) if call.attr("is_max") else v.argmin(axis=1)
    out = np.zeros_like(v)
    gv = np.asarray(g).reshape(v.shape[0], v.shape[2])
    for o in range(v.shape[0]):
        for i in range(v.shape[2]):
            out[o, best[o, i], i] = gv[o, i]
    return out.reshape(x.shape)


@impl("tile_reduce_grad")
def _reduce_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    x, g, op = a[0], a[1], call.attr("op")
    v = _split(_compute(x), call.attr("axis"))
    gv = np.asarray(g).reshape(v.shape[0], v.shape[2]).astype(v.dtype)
    out = np.zeros_like(v)
    for o in range(v.shape[0]):
        for i in range(v.shape[2]):
            acc = [v[o, 0, i]]
            for k in range(1, v.shape[1]):
                x0, y0 = acc[-1], v[o, k, i]
                acc.append({"add": x0 + y0, "mul": x0 * y0, "max": y0 if x0 < y0 else x0, "min": y0 if y0 < x0 else x0}[op])
            ga = gv[o, i]
            for k in range(v.shape[1] - 1, 0, -1):
                x0, y0 = acc[k - 1], v[o, k, i]
                if op == "add":
                    gx, gy = ga, ga
                elif op == "mul":
                    gx, gy = ga * y0, ga * x0
                elif op == "max":
                    gx, gy = (ga, 0) if not x0 < y0 else (0, ga)
                else:
                    gx, gy = (ga, 0) if not y0 < x0 else (0, ga)
                out[o, k, i] = gy
                ga = gx
            out[o, 0, i] = ga
    return out.reshape(x.shape).astype(np.asarray(x).dtype)


@impl("tile_scan_grad")
def _scan_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g = np.asarray(a[0])
    flat = g.reshape(-1)
    rev = np.cumsum(flat[::-1])[::-1]
    return (rev - flat if call.attr("exclusive") else rev).reshape(g.shape).astype(g.dtype)


@impl("tile_scan_extreme_grad")
def _scan_extreme_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    x, g = np.asarray(a[0]).reshape(-1), np.asarray(a[1]).reshape(-1)
    out, best = np.zeros_like(g), 0
    for e in range(x.size):
        b = x[best]
        if e > 0 and ((b < x[e] if call.attr("is_max") else x[e] < b) or b != b):
            best = e
        out[best] += g[e]
    return out.reshape(np.asarray(a[0]).shape)


@impl("tile_unsort_grad")
def _unsort_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    perm = _sort_perm(a[0])
    out = np.zeros_like(np.asarray(a[1]))
    out[perm] = a[1]
    return out


@impl("tile_cholesky_grad")
def _cholesky_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    L, Lbar = np.asarray(a[0], np.float64), np.asarray(a[1], np.float64)
    P = L.T @ Lbar
    P = np.tril(P) - 0.5 * np.diag(np.diag(P))
    Linv = np.linalg.inv(L)
    S = Linv.T @ P @ Linv
    out = np.tril(S + S.T, -1) + np.diag(np.diag(S))
    return out.astype(np.asarray(a[0]).dtype)


@impl("tile_cholesky_solve_grad")
def _cholesky_solve_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    L, x, ybar = (np.asarray(v, np.float64) for v in a)
    x2, y2 = x.reshape(x.shape[0], -1), ybar.reshape(x.shape[0], -1)
    return np.tril(-(y2 @ x2.T + x2 @ y2.T) @ L).astype(np.asarray(a[0]).dtype)


@impl("tile_tri_outer_grad")
def _tri_outer_grad(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    u, v = (np.asarray(x).reshape(np.asarray(x).shape[0], -1) for x in a)
    m = -(u @ v.T)
    return (np.tril(m) if call.attr("lower") else np.triu(m)).astype(np.asarray(a[0]).dtype)


@impl("tile_unbroadcast")
def _unbroadcast(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    g, shape = np.asarray(a[0]), _tile_shape(call)
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(k for k, n in enumerate(shape) if n == 1 and g.shape[k] != 1)
    return (g.sum(axis=axes, keepdims=True) if axes else g).astype(g.dtype)


def _slice_sources(a_shape: Sequence[int], out_shape: Sequence[int], spec: Sequence[Value]) -> tuple[list[Value], Value]:
    """For each element of a tile_slice result: its parent coordinates, and whether they are inside."""
    keep, spec = int(spec[0]), [int(v) for v in spec[1:]]
    grids = np.meshgrid(*[np.arange(n) for n in out_shape], indexing="ij")
    coords, j = [], 0
    for k in range(len(a_shape)):
        start, step = spec[2 * k], spec[2 * k + 1]
        if (keep >> k) & 1:
            coords.append(start + grids[j] * step)
            j += 1
        else:  # an index: a negative one (run time) counts from the end
            coords.append(np.full(out_shape, start + a_shape[k] if start < 0 else start))
    ok = np.ones(out_shape, bool)
    for c, n in zip(coords, a_shape):
        ok &= (c >= 0) & (c < n)
    return [np.where(ok, c, 0) for c in coords], ok


@impl("tile_slice")
def _slice(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    coords, ok = _slice_sources(a[0].shape, _tile_shape(call), a[1:])
    return np.where(ok, a[0][tuple(coords)], 0).astype(a[0].dtype)


@impl("tile_slice_add")
def _slice_add(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, g = np.array(a[0], copy=True), np.asarray(a[1])
    coords, ok = _slice_sources(t.shape, g.shape, a[2:])
    np.add.at(t, tuple(c[ok] for c in coords), g[ok])
    return t


def _gather_rows(t: Value, idx: Value, axis: int) -> tuple[Value, Value]:
    """Indices along axis with negatives counted from the end, and which are inside."""
    idx = np.asarray(idx).astype(np.int64)
    idx = np.where(idx < 0, idx + t.shape[axis], idx)
    return idx, (idx >= 0) & (idx < t.shape[axis])


@impl("tile_gather")
def _gather(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, axis = np.asarray(a[0]), call.attr("axis") or 0
    idx, ok = _gather_rows(t, a[1], axis)
    out = np.take(t, np.where(ok, idx, 0), axis=axis)
    mask = np.expand_dims(ok, tuple(k for k in range(t.ndim) if k != axis))
    return np.where(mask, out, 0).astype(t.dtype)


@impl("tile_gather_add")
def _gather_add(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, g, axis = np.array(a[0], copy=True), np.asarray(a[1]), call.attr("axis") or 0
    idx, ok = _gather_rows(t, a[2], axis)
    tm, gm = np.moveaxis(t, axis, 0), np.moveaxis(g, axis, 0)
    np.add.at(tm, idx[ok], gm[ok])
    return t


@impl("tile_view_add")
def _view_add(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    t, g = np.array(a[0], copy=True), np.asarray(a[1])
    offs, _ = _offsets(call, a, t.ndim)
    lead = t.ndim - g.ndim
    for e in np.ndindex(*g.shape):
        target = tuple(offs[:lead]) + tuple(o + i for o, i in zip(offs[lead:], e))
        if _in_bounds(t, target):
            t[target] += g[e]
    return t


@impl("tile_diag")
def _diag(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.diag(a[0]).copy()


def _format(value: Value) -> str:
    """A scalar as print() in a kernel writes it (Warp's %g / %d / True)."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    return str(int(value))


@impl("print")
def _print(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    print(_format(a[0]))


@impl("print_tile")
def _print_tile(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    print(tile_text(np.asarray(a[0]), "register"))


def tile_text(t: np.ndarray, storage: str) -> str:
    """Warp 1.19's text of a printed tile (runtime debug.h print_tile): rows in brackets, values
    apart by one space, a 2-d level's rows on new lines indented by ndim - 1, higher levels apart
    by a blank line, then ` = tile(shape=(d0,d1), storage=...)`."""
    def level(x: np.ndarray, depth: int) -> str:
        if x.ndim == 1:
            return "[" + " ".join(_format(v) for v in x) + "]"
        sep = "\n" + " " * (t.ndim - 1) if x.ndim == 2 else "\n\n" + " " * (depth + 1)
        return "[" + sep.join(level(r, depth + 1) for r in x) + "]"

    return level(t, 0) + f" = tile(shape=({','.join(str(d) for d in t.shape)}), storage={storage})"


@impl("print_format")
def _print_format(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    import re

    fmt = re.sub(r"(%[-+ #0]*\d*(?:\.\d*)?)ll([diouxX])", r"\1\2", call.attr("format"))  # Python has no `ll`
    print(fmt % tuple(int(v) if isinstance(v, (bool, np.bool_, np.integer)) else v for v in a), end="")


@impl("expect_eq", "expect_neq", "expect_near")
def _expect(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    actual, expected = a[0], a[1]
    failed = {"expect_eq": actual != expected, "expect_neq": actual == expected,
              "expect_near": abs(actual - expected) > (a[2] if len(a) > 2 else 1e-6)}[call.op]
    if failed:
        print(f"Error, {call.op}() failed:\n\t Expected: {_format(expected)}\n\t Actual: {_format(actual)}")


@impl("assert_")
def _assert(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """The interpreter runs as a release build: asserts are not checked."""


# ---------------------------------------------------------------- random (Warp's PCG streams)


@impl("rand_init")
def _rand_init(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    seed = int(a[0]) & 0xFFFFFFFF
    if len(a) > 1:
        seed = (seed + _pcg(int(a[1]) & 0xFFFFFFFF)) & 0xFFFFFFFF
    return np.uint32(_pcg(seed))


def rand_draws(rng: int, size: int, block_dim: int) -> np.ndarray:
    """The uint32 draw behind each element of a tile of `size` elements (see runtime random.h)."""
    out = np.zeros(size, np.uint32)
    for t in range(min(block_dim, size)):
        state = _pcg((t + rng) & 0xFFFFFFFF)
        for e in range(t, size, block_dim):
            state = _pcg(state)
            out[e] = state
    return out


@impl("tile_randf", "tile_randi")
def _tile_rand(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    draws = rand_draws(int(a[0]), int(np.prod(_tile_shape(call))), max(1, _lanes(ctx)))
    if call.op == "tile_randf":
        unit = (draws >> np.uint32(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
        v = unit if len(a) == 1 else (np.float32(a[2]) - np.float32(a[1])) * unit + np.float32(a[1])
    else:
        v = draws.view(np.int32) if len(a) == 1 else (
            (draws % np.uint32((int(a[2]) - int(a[1])) & 0xFFFFFFFF) + np.uint32(int(a[1]) & 0xFFFFFFFF)).view(np.int32))
    return v.reshape(_tile_shape(call)).astype(result_dtype(call))


@impl("rand_advance")
def _rand_advance(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    state = int(a[0])
    for _ in range(int(a[1])):
        state = _pcg(state)
    return np.uint32(state)


@impl("randf", "randi", "randu", "randn")
def _draw(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """The value Warp's scalar draw returns from state a[0] (see runtime random.h)."""
    draw = _pcg(int(a[0]))
    if call.op == "randf":
        u = _unit(draw)
        return u if len(a) == 1 else np.float32(np.float32(a[2]) - np.float32(a[1])) * u + np.float32(a[1])
    if call.op == "randn":
        first, second = _unit(draw), _unit(_pcg(draw))
        radius = np.sqrt(np.float32(-2.0) * np.log(first + np.float32(5.96e-8)))
        return np.float32(radius * np.cos(np.float32(2.0 * np.pi) * second))
    if len(a) > 1:
        draw = (draw % ((int(a[2]) - int(a[1])) & 0xFFFFFFFF) + int(a[1])) & 0xFFFFFFFF
    return np.uint32(draw).view(np.int32) if call.op == "randi" else np.uint32(draw)


@impl(*SAMPLERS)
def _sample(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    """Warp's point in a shape from `count` draws after state a[0] (see runtime random.h), in float32."""
    state, units = int(a[0]), []
    for _ in range(SAMPLERS[call.op][1]):
        state = _pcg(state)
        units.append(_unit(state))
    f32 = np.float32
    angle = f32(6.2831855) * units[1] + f32(0.0) if len(units) > 1 else f32(6.2831855) * units[0] + f32(0.0)
    with np.errstate(all="ignore"):
        if call.op == "sample_triangle":
            r = np.sqrt(units[0])
            point = [f32(1.0) - r, units[1] * r]
        elif call.op == "sample_unit_ring":
            point = [np.cos(angle), np.sin(angle)]
        elif call.op == "sample_unit_disk":
            r = np.sqrt(units[0])
            point = [r * np.cos(angle), r * np.sin(angle)]
        elif call.op in ("sample_unit_square", "sample_unit_cube"):
            point = [u - f32(0.5) for u in units]
        else:  # spheres and hemispheres, on the surface or (a third draw: the radius) inside
            phi = np.arccos(f32(1.0) - units[0] if "hemisphere" in call.op else f32(1.0) - f32(2.0) * units[0])
            r = units[2] ** (f32(1.0) / f32(3.0)) if len(units) == 3 else f32(1.0)
            point = [r * np.cos(angle) * np.sin(phi), r * np.sin(angle) * np.sin(phi), r * np.cos(phi)]
    return np.array(point, np.float32)


# ---------------------------------------------------------------- block stacks (one lane: the interpreter's)


class _Stack:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Any] = []


@impl("tile_stack")
def _stack(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    assert isinstance(call.type, StackT), call
    return _Stack(call.type.capacity)


@impl("tile_stack_push")
def _stack_push(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    s, value, has = a
    if not has or len(s.items) >= s.capacity:
        return np.int32(-1)
    s.items.append(value)
    return np.int32(len(s.items) - 1)


@impl("tile_stack_pop")
def _stack_pop(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    s = a[0]
    if not s.items:
        assert isinstance(call.type, TupleT), call  # (item, slot)
        return (make_value(call.type.items[0], 0), np.int32(-1))  # a zero scalar, vector or matrix
    slot = len(s.items) - 1
    return (s.items.pop(), np.int32(slot))


@impl("tile_stack_push_fields")
def _stack_push_fields(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    slot = int(_stack_push(ctx, call, a[:3]))
    for s, value in zip(a[3::2], a[4::2]):
        if 0 <= slot < s.capacity:
            s.items.extend([value] * (slot + 1 - len(s.items)))
            s.items[slot] = value
    return np.int32(slot)


@impl("tile_stack_get")
def _stack_get(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    s, slot = a[0], int(a[1])
    return s.items[slot] if 0 <= slot < len(s.items) else make_value(call.type, 0)


@impl("tile_stack_count")
def _stack_count(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    return np.int32(len(a[0].items))


@impl("tile_stack_clear")
def _stack_clear(ctx: Context, call: ir.OpCall, a: Sequence[Value]) -> Value:
    a[0].items.clear()
# The value types' ops (vectors, matrices, quaternions, transforms) and mul/div/eq/ne on them.
IMPL.update(reference_values.IMPL)
IMPL.update(reference_random.IMPL)
IMPL.update(reference_spatial.IMPL)
IMPL.update(reference_textures.IMPL)
IMPL.update(reference_volumes.IMPL)
IMPL.update(reference_decompositions.IMPL)
reference_values.wrap_operators(IMPL)
