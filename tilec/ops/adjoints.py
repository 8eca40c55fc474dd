"""Adjoint rules: for each differentiable op, the contribution to each operand's adjoint.

A rule is `rule(ad, call, g) -> [(operand index, contribution), ...]` where `g`
is the adjoint of the call's result. Contributions are IR expressions; the
autodiff driver owns accumulation, zeros and the reduction of a tile
contribution onto a scalar operand. `ad.val(e)` gives a variable holding an
operand's value, `ad.result(call)` the recomputed result, `ad.adj_array(e)` the
adjoint array of an array operand and `ad.emit(stmt)` adds a statement; `ad.accumulate_into` updates an adjoint in place: for
per-lane contributions (element reads, untile), which stay in their lane's partial adjoint, and
outside lane mode (`ad.lanes` false) for updates cheaper in place (matmul accumulation).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

from .. import ir
from ..diagnostics import NotDifferentiable
from ..ir.types import BFLOAT16, FLOAT32, NONE, ArrayT, Dim, Element, MatT, Scalar, StructT, TileT, Type, VecT
from .build import call as C
from .build import const, dtype_of, zeros
from .core import registrar

Contributions = list[tuple[int, ir.Expr]]  # (operand index, its contribution to that operand's adjoint)


class Adjoints(Protocol):
    """What a rule asks of the autodiff driver (passes/autodiff.py's adjoint builder)."""

    lanes: bool  # the adjoint runs as cooperating lanes
    lane_takes: set[ir.Sym]  # array_take results only the cooperating lanes need

    def val(self, e: ir.Expr) -> ir.Var | ir.Const: ...
    def result(self, e: ir.OpCall) -> ir.Var | ir.Const: ...
    def known_result(self, e: ir.Expr) -> ir.Var | None: ...
    def varies(self, e: ir.Expr) -> bool: ...
    def temp(self, t: Type, name: str = "_v") -> ir.Sym: ...
    def fresh_zero(self, t: Type) -> ir.Var: ...
    def emit(self, stmt: ir.Stmt) -> None: ...
    def adj_array(self, e: ir.Expr) -> ir.Expr | None: ...
    def accumulate_into(self, target: ir.Expr, make: Callable[[ir.Var], ir.Expr]) -> None: ...


# rule(ad, call, g): g is the adjoint of the call's result (None for an effect, which has none)
Rule = Callable[[Adjoints, ir.OpCall, Any], Contributions]
RULES: dict[str, Rule] = {}


rule = registrar(RULES)


def _tile_of(e: ir.Expr) -> TileT:
    """e's type, a tile (as the op's shape rule made it)."""
    assert isinstance(e.type, TileT), e
    return e.type


def _array_of(e: ir.Expr) -> ArrayT:
    """e's type, an array (as the op's shape rule made it)."""
    assert isinstance(e.type, ArrayT), e
    return e.type


def _element_of(e: ir.Expr) -> Scalar:
    """The scalar element of tile e (the op's rule takes scalar tiles only)."""
    dtype = _tile_of(e).dtype
    assert isinstance(dtype, Scalar), e
    return dtype


def _held(t: Type) -> Element:
    """What a tile of t's elements holds: a tile's dtype, or t itself (a broadcast scalar)."""
    held = dtype_of(t)
    assert isinstance(held, (Scalar, VecT, MatT, StructT)), t
    return held


def _k(x: ir.Expr, value: float) -> ir.Const:
    """A constant of x's dtype."""
    dtype = dtype_of(x.type)
    assert isinstance(dtype, (Scalar, VecT, MatT)), x  # a number's, a vector's or a matrix's
    return const(value, dtype, x.span)


# ---------------------------------------------------------------- elementwise


@rule("add")
def _add(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, g), (1, g)]


@rule("sub")
def _sub(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, g), (1, C("neg", g))]


@rule("mul")
def _mul(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    return [(0, C("mul", g, b)), (1, C("mul", g, a))]


@rule("div")
def _div(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    b = ad.val(e.args[1])
    q = ad.val(C("div", g, b))  # d/da; d/db = -(g / b) * (a / b), the quotient reused
    return [(0, q), (1, C("neg", C("mul", q, ad.result(e))))]


@rule("neg")
def _neg(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("neg", g))]


@rule("pow")
def _pow(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    da = C("mul", g, C("mul", b, C("pow", a, C("sub", b, _k(b, 1)))))
    positive = C("sub", _k(a, 1), C("step_ge", _k(a, 0), a))  # 1 where a > 0
    db = C("mul", C("mul", g, C("pow", a, b)), C("log", C("max", a, _k(a, 1e-300))))
    return [(0, da), (1, C("mul", db, positive))]


@rule("max", "min")
def _max_min(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    first = C("step_ge", a, b) if e.op == "max" else C("step_ge", b, a)  # ties go to the first operand
    ones = _ones(b)
    if _may_be_nan(b):  # as the forward's fmax / fmin, a NaN `b` leaves `a` the result: its gradient goes to `a`
        first = C("max", first, C("sub", ones, C("step_ge", b, b)))
    times = "cw_mul" if isinstance(dtype_of(e.type), VecT) else "mul"  # vectors: component by component
    return [(0, C(times, g, first)), (1, C(times, g, C("sub", ones, first)))]


def _ones(x: ir.Expr) -> ir.Expr:
    """1 of x's dtype: a vector of ones for a vector (a value constant is only ever zero)."""
    t = dtype_of(x.type)
    if not isinstance(t, VecT):
        return _k(x, 1)
    return ir.OpCall("value_new", tuple(const(1, t.dtype, x.span) for _ in range(t.length)), (("type", t),), t, x.span)


def _may_be_nan(x: ir.Expr) -> bool:
    """Whether x's value can be NaN: of a float type, and no constant other than NaN."""
    dtype = dtype_of(x.type)
    scalar = dtype.dtype if isinstance(dtype, (VecT, MatT)) else dtype
    if not (isinstance(scalar, Scalar) and scalar.is_float):
        return False
    return not isinstance(x, ir.Const) or x.value != x.value


@rule("mod")
def _mod(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """r = a - n * b with n = trunc(a / b): d/da 1, d/db -n almost everywhere (Warp's mod gives b none).
    n is read back from the result, (a - r) / b rounded, so that it is the quotient the remainder used."""
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    n = C("rint", C("div", C("sub", a, ad.result(e)), b))
    return [(0, g), (1, C("neg", C("mul", g, n)))]


@rule("copysign")
def _copysign(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """d/da is +1 where a and b have the same sign bit, -1 elsewhere; b only through its sign (Warp's)."""
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    agree = C("mul", C("copysign", _k(a, 1), a), C("copysign", _k(b, 1), b))
    return [(0, C("mul", g, agree))]


@rule("atan2")
def _atan2(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    d = C("add", C("mul", a, a), C("mul", b, b))
    return [(0, C("div", C("mul", g, b), d)), (1, C("neg", C("div", C("mul", g, a), d)))]


def _unary(name: str, derivative: Callable[[ir.Expr], ir.Expr]) -> Rule:
    def fn(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
        r = ad.known_result(e) if name in _FROM_RESULT else None
        if r is not None:  # the forward value at hand: no second transcendental
            return [(0, C("mul", g, _FROM_RESULT[name](r)))]
        a = ad.val(e.args[0])
        return [(0, C("mul", g, derivative(a)))]

    return fn


LN2, LN10 = math.log(2.0), math.log(10.0)
_DERIVATIVES: dict[str, Callable[[ir.Expr], ir.Expr]] = {
    "exp": lambda a: C("exp", a),
    "exp2": lambda a: C("mul", C("exp2", a), _k(a, LN2)),
    "log": lambda a: C("div", _k(a, 1), a),
    "log2": lambda a: C("div", _k(a, 1), C("mul", a, _k(a, LN2))),
    "log10": lambda a: C("div", _k(a, 1), C("mul", a, _k(a, LN10))),
    "sin": lambda a: C("cos", a),
    "cos": lambda a: C("neg", C("sin", a)),
    "tan": lambda a: C("div", _k(a, 1), C("mul", C("cos", a), C("cos", a))),
    "asin": lambda a: C("div", _k(a, 1), C("sqrt", C("sub", _k(a, 1), C("mul", a, a)))),
    "acos": lambda a: C("neg", C("div", _k(a, 1), C("sqrt", C("sub", _k(a, 1), C("mul", a, a))))),
    "atan": lambda a: C("div", _k(a, 1), C("add", _k(a, 1), C("mul", a, a))),
    "sinh": lambda a: C("cosh", a),
    "cosh": lambda a: C("sinh", a),
    "tanh": lambda a: C("sub", _k(a, 1), C("mul", C("tanh", a), C("tanh", a))),
    "sqrt": lambda a: C("div", _k(a, 0.5), C("sqrt", a)),
    "cbrt": lambda a: C("div", _k(a, 1.0 / 3.0), C("mul", C("cbrt", a), C("cbrt", a))),
    "erf": lambda a: C("mul", _k(a, 1.1283791670955126), C("exp", C("neg", C("mul", a, a)))),
    "erfc": lambda a: C("mul", _k(a, -1.1283791670955126), C("exp", C("neg", C("mul", a, a)))),
    "erfinv": lambda a: C("mul", _k(a, 0.886226925452758), C("exp", C("mul", C("erfinv", a), C("erfinv", a)))),
    "erfcinv": lambda a: C("mul", _k(a, -0.886226925452758), C("exp", C("mul", C("erfcinv", a), C("erfcinv", a)))),
    "abs": lambda a: C("sign", a),
    "frac": lambda a: _k(a, 1),  # x - trunc(x): 1 almost everywhere (Warp's frac has no gradient: 0)
}
# Derivatives in terms of the result r, used where the forward value is still held.
_FROM_RESULT: dict[str, Callable[[ir.Expr], ir.Expr]] = {
    "exp": lambda r: r,
    "exp2": lambda r: C("mul", r, _k(r, LN2)),
    "tanh": lambda r: C("sub", _k(r, 1), C("mul", r, r)),
    "sqrt": lambda r: C("div", _k(r, 0.5), r),
    "erfinv": lambda r: C("mul", _k(r, 0.886226925452758), C("exp", C("mul", r, r))),  # sqrt(pi) / 2 e^(r^2)
    "erfcinv": lambda r: C("mul", _k(r, -0.886226925452758), C("exp", C("mul", r, r))),
}
for _name, _d in _DERIVATIVES.items():
    RULES[_name] = _unary(_name, _d)


@rule("sign", "floor", "ceil", "round", "trunc", "rint", "bit_count")
def _flat(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return []


@rule("clamp")
def _clamp(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    x, lo, hi = (ad.val(a) for a in e.args)
    above_lo, below_hi = C("step_ge", x, lo), C("step_ge", hi, x)
    inside = C("mul", above_lo, below_hi)
    return [(0, C("mul", g, inside)), (1, C("mul", g, C("sub", _k(above_lo, 1), above_lo))),
            (2, C("mul", g, C("mul", above_lo, C("sub", _k(below_hi, 1), below_hi))))]


@rule("select")
def _select(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    cond = ad.val(e.args[0])
    zero = _k(g, 0)
    return [(1, C("where", cond, zero, g)), (2, C("where", cond, g, zero))]


@rule("where")
def _where(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    cond = ad.val(e.args[0])
    zero = _k(g, 0)
    if isinstance(cond.type, TileT):  # a func's where lifted over tile_map's elements (passes/structure):
        # per element, as the lifted forward (wp.where itself takes a scalar condition only)
        def pick(a: ir.Expr, b: ir.Expr) -> ir.Expr:
            return ir.OpCall("where", (cond, a, b), (), g.type, e.span)
        return [(1, pick(g, zero)), (2, pick(zero, g))]
    return [(1, C("where", cond, g, zero)), (2, C("where", cond, zero, g))]


@rule("cast")
def _cast(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    src = e.args[0].type
    assert isinstance(src, Scalar) and isinstance(e.type, Scalar), e  # a scalar conversion (elementwise.py)
    if not (src.is_float and e.type.is_float):
        return []
    return [(0, C("cast", g, dtype=src))]


# ---------------------------------------------------------------- creation and lanes


@rule("tile_full")
def _full(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_extract", C("tile_sum", g, axis=None), const(0, _int(), e.span)))]


@rule("tile")
def _tile(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("untile", ad.val(g), block_dim=e.attr("block_dim")))]


@rule("untile")
def _untile(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t = e.args[0]
    ad.accumulate_into(t, lambda adj: C("tile_add_at", adj, g, C("lane")))
    return []


@rule("tile_extract")
def _extract(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t, idx = e.args[0], [ad.val(i) for i in e.args[1:]]
    ad.accumulate_into(t, lambda adj: C("tile_add_at", adj, g, *idx))
    return []


def _int() -> Scalar:
    from ..ir.types import INT32

    return INT32


# ---------------------------------------------------------------- memory


def _offsets(e: ir.OpCall) -> list[ir.Expr]:
    n = e.attr("offset_count") or 0
    return list(e.args[len(e.args) - n:]) if n else []


@rule("tile_load")
def _load(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    adj_a = ad.adj_array(e.args[0])
    if adj_a is not None:
        ad.emit(ir.ExprStmt(ir.OpCall("tile_atomic_add", (adj_a, ad.val(g), *_offsets(e)),
                                      (("offset_count", len(_offsets(e))), ("bounds_check", True)), g.type, e.span),
                            e.span))
    return []


@rule("tile_load_indexed")
def _load_indexed(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    adj_a = ad.adj_array(e.args[0])
    if adj_a is not None:
        attrs = (("offset_count", len(_offsets(e))), ("axis", e.attr("axis")))
        ad.emit(ir.ExprStmt(ir.OpCall("tile_atomic_add_indexed", (adj_a, e.args[1], ad.val(g), *_offsets(e)),
                                      attrs, g.type, e.span), e.span))
    return []


def _read_back(ad: Adjoints, e: ir.OpCall, tile_index: int, indexed: bool) -> Contributions:
    """Adjoint of a store: the stored tile's adjoint is read from the adjoint array."""
    adj_a = ad.adj_array(e.args[0])
    if adj_a is None:
        return []
    t = e.args[tile_index]
    offs = _offsets(e)
    attrs: tuple[tuple[str, Any], ...]
    if indexed:
        attrs = (("shape", _tile_of(t).shape), ("offset_count", len(offs)), ("axis", e.attr("axis")),
                 ("storage", "register"))
        load = ir.OpCall("tile_load_indexed", (adj_a, e.args[1], *offs), attrs, t.type, e.span)
    else:
        attrs = (("shape", _tile_of(t).shape), ("offset_count", len(offs)), ("storage", "register"),
                 ("bounds_check", True))
        load = ir.OpCall("tile_load", (adj_a, *offs), attrs, t.type, e.span)
    return [(tile_index, load)]


def _consumed(ad: Adjoints, e: ir.OpCall, contributions: Contributions) -> Contributions:
    """An overwrite's adjoint: the stored value takes the element's adjoint, which is then zeroed
    (the value the element held before was overwritten: it reaches no output through it)."""
    adj_a = ad.adj_array(e.args[0])
    if adj_a is None:
        return contributions
    taken: Contributions = [(index, ad.val(c)) for index, c in contributions]  # read before the zeroing below
    stored = e.args[taken[0][0]] if taken else None
    if stored is None:
        return taken
    zero = zeros(stored.type, e.span)
    args = (adj_a,) + tuple(zero if a is stored else a for a in e.args[1:])
    ad.emit(ir.ExprStmt(ir.OpCall(e.op, args, e.attrs, e.type, e.span), e.span))
    return taken


@rule("tile_store", "tile_atomic_add")
def _store(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    if e.op == "tile_store":
        return _consumed(ad, e, _read_back(ad, e, 1, False))
    return _read_back(ad, e, 1, False)


@rule("tile_store_indexed", "tile_atomic_add_indexed")
def _store_indexed(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    if e.op == "tile_store_indexed":
        return _last_duplicate_only(ad, e, _consumed(ad, e, _read_back(ad, e, 2, True)))
    return _read_back(ad, e, 2, True)


def _last_duplicate_only(ad: Adjoints, e: ir.OpCall, taken: Contributions) -> Contributions:
    """A scatter with repeated indices keeps the last duplicate's value (the runtime writes in
    order): only it may take the element's adjoint. Each position's number (1, 2, ...) is scattered
    into the already-consumed adjoint array the same way, read back to learn which position won,
    and the array is zeroed again: g *= 1 - min(|winner - position|, 1)."""
    adj_a = ad.adj_array(e.args[0])
    if adj_a is None or not taken:
        return taken
    index, g = taken[0]
    t = _tile_of(e.args[2])
    if not isinstance(t.dtype, Scalar):  # the winner positions are scattered as values of the tile's dtype
        raise NotDifferentiable(f"tile_store_indexed of a {t.dtype} tile: the adjoint (only the last of repeated "
                                "indices keeps its value) is computed for scalar tiles only; store the "
                                "components as scalar tiles", e.span)
    axis = e.attr("axis") % t.ndim
    n = t.shape[axis]
    arange = (("dtype", t.dtype), ("storage", "register"), ("args", (1, n + 1)))
    positions: ir.Expr = ir.OpCall("tile_arange", (), arange, TileT(t.dtype, (n,)), e.span)
    kept = tuple(n if k == axis else 1 for k in range(t.ndim))
    positions = ad.val(C("tile_broadcast", C("tile_reshape", positions, shape=kept), shape=t.shape))
    offs = _offsets(e)

    def store(value: ir.Expr) -> None:
        scatter = ir.OpCall(e.op, (adj_a, e.args[1], value, *offs), e.attrs, e.type, e.span)
        ad.emit(ir.ExprStmt(scatter, e.span))

    store(positions)
    attrs = (("shape", t.shape), ("offset_count", len(offs)), ("axis", e.attr("axis")),
             ("storage", "register"))
    won = ad.temp(t, "_won")  # not ad.val: that would reuse the identical load made before the stores
    gather = ir.OpCall("tile_load_indexed", (adj_a, e.args[1], *offs), attrs, t, e.span)
    ad.emit(ir.Assign(won, gather, e.span))
    winner = ir.Var(won, e.span)
    store(ad.val(zeros(t, e.span)))
    ones = C("tile_ones", shape=t.shape, dtype=t.dtype, storage="register")
    mask = C("sub", ones, C("min", C("abs", C("sub", winner, positions)), ones))
    return [(index, ad.val(C("mul", g, mask)))]


@rule("array_load")
def _array_load(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    adj_a = ad.adj_array(e.args[0])
    if adj_a is not None:
        idx = [ad.val(i) for i in e.args[1:]]
        ad.emit(ir.ExprStmt(ir.OpCall("array_atomic_add", (adj_a, ad.val(g), *idx), (), e.type, e.span), e.span))
    return []


@rule("array_store", "array_atomic_add", "array_atomic_sub")
def _array_store(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    adj_a = ad.adj_array(e.args[0])
    if adj_a is None:
        return []
    idx = list(e.args[2:])
    read = ir.OpCall("array_load", (adj_a, *idx), (), _array_of(e.args[0]).dtype, e.span)
    if e.op == "array_store" and (ad.lanes or not any(ad.varies(i) for i in idx)):
        # other threads (or the block's other lanes) may store this element alike: taken atomically
        taken = ad.temp(_array_of(e.args[0]).dtype, "_taken")
        ad.emit(ir.Assign(taken, ir.OpCall("array_take", (adj_a, *idx), (), _array_of(e.args[0]).dtype, e.span), e.span))
        if any(ad.varies(i) for i in idx):
            ad.lane_takes.add(taken)  # taken only because lanes share it: one lane reads and zeroes it
        return [(1, ir.Var(taken, e.span))]
    if e.op == "array_store":
        return _consumed(ad, e, [(1, read)])
    return [(1, C("neg", read) if e.op == "array_atomic_sub" else read)]


@rule("atomic_add")
def _atomic_add(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    adj_a = ad.adj_array(e.args[0])
    if adj_a is None:
        return []
    idx = list(e.args[1:-1])
    return [(len(e.args) - 1, ir.OpCall("array_load", (adj_a, *idx), (), _array_of(e.args[0]).dtype, e.span))]


@rule("atomic_min", "atomic_max")
def _atomic_extreme(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The winner takes the element's adjoint: the loader passes, in place of the array, its values
    after the launch (effects.py allows nothing else to touch it), and the first thread whose value
    equals its element's takes and zeroes the element's adjoint (runtime extreme_take)."""
    adj_a = ad.adj_array(e.args[0])
    dtype = _array_of(e.args[0]).dtype  # a vector's or matrix's components each take theirs
    assert isinstance(dtype, (Scalar, VecT, MatT)), e  # atomic_min/max: arrays of scalars, vectors, matrices (arrays.py)
    if adj_a is None or not (dtype.dtype if isinstance(dtype, (VecT, MatT)) else dtype).is_float:
        return []
    taken = ad.temp(dtype, "_won")  # a statement of its own: it consumes the seed even if unused
    take = ir.OpCall("extreme_take", (e.args[0], adj_a, *e.args[1:]), (), dtype, e.span)
    ad.emit(ir.Assign(taken, take, e.span))
    return [(len(e.args) - 1, ir.Var(taken, e.span))]


# ---------------------------------------------------------------- reductions


def _expand(g: ir.Expr, axis: int | None, shape: tuple[Dim, ...]) -> ir.Expr:
    """g of a reduction, broadcast back to the reduced tile's shape."""
    if axis is None:
        return C("tile_broadcast", g, shape=shape)
    axis %= len(shape)
    kept = shape[:axis] + (1,) + shape[axis + 1:]
    return C("tile_broadcast", C("tile_reshape", g, shape=kept), shape=shape)


@rule("tile_sum")
def _sum(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, _expand(ad.val(g), e.attr("axis"), _tile_of(e.args[0]).shape))]


@rule("tile_max", "tile_min")
def _extreme(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a = ad.val(e.args[0])
    return [(0, C("tile_extreme_grad", a, ad.val(g), axis=e.attr("axis"), is_max=e.op == "tile_max"))]


@rule("tile_reduce")
def _reduce(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    op = e.attr("op")
    if op not in ("add", "mul", "max", "min"):
        raise NotDifferentiable(f"tile_reduce with `{op}`: only wp.add, wp.mul, wp.max and wp.min are "
                                "differentiated", e.span)
    if op != "add" and not isinstance(_tile_of(e.args[0]).dtype, Scalar):
        raise NotDifferentiable(f"tile_reduce with `{op}` over {_tile_of(e.args[0]).dtype} tiles: only wp.add is "
                                "differentiated for vectors and matrices", e.span)
    a = ad.val(e.args[0])
    return [(0, C("tile_reduce_grad", a, ad.val(g), axis=e.attr("axis"), op=op))]


@rule("tile_scan_inclusive", "tile_scan_exclusive")
def _scan(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_scan_grad", ad.val(g), exclusive=e.op == "tile_scan_exclusive"))]


@rule("tile_scan_max_inclusive", "tile_scan_min_inclusive")
def _scan_extreme(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a = ad.val(e.args[0])
    return [(0, C("tile_scan_extreme_grad", a, ad.val(g), is_max=e.op == "tile_scan_max_inclusive"))]


@rule("tile_dot")
def _dot(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    spread = ad.val(C("tile_broadcast", ad.val(g), shape=_tile_of(a).shape))
    return [(0, C("mul", spread, b)), (1, C("mul", spread, a))]


@rule("tile_axpy")
def _axpy(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    alpha, src = ad.val(e.args[0]), ad.val(e.args[1])
    g = ad.val(g)
    return [(0, C("tile_extract", C("tile_dot", g, src), const(0, _int(), e.span))), (1, C("mul", g, alpha)),
            (2, g)]


# ---------------------------------------------------------------- linear algebra


@rule("tile_matmul")
def _matmul(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    alpha, beta = e.attr("alpha"), e.attr("beta")
    g = ad.val(g)
    out: Contributions = []
    products: tuple[tuple[int, Callable[[ir.Expr], ir.Expr], ir.Expr], ...] = ((0, lambda adj: C("tile_matmul", g, C("tile_transpose", b), adj, alpha=alpha, beta=1.0), a),
                (1, lambda adj: C("tile_matmul", C("tile_transpose", a), g, adj, alpha=alpha, beta=1.0), b))
    for index, accumulate, operand in products:
        bf16 = _tile_of(operand).dtype == BFLOAT16  # no bfloat16 accumulator (Warp's rule): float32, rounded once
        if not ad.lanes and isinstance(e.args[index], ir.Var) and not bf16:
            ad.accumulate_into(e.args[index], accumulate)  # straight into the adjoint: no temporary
        else:
            partial = ad.fresh_zero(TileT(FLOAT32, _tile_of(operand).shape) if bf16 else operand.type)
            ad.emit(ir.Assign(partial.sym, accumulate(partial), e.span))
            out.append((index, C("tile_astype", partial, dtype=BFLOAT16) if bf16 else partial))
    if len(e.args) > 2:
        out.append((2, g if beta == 1.0 else C("mul", g, const(beta, _element_of(g), e.span))))
    return out


@rule("tile_transpose")
def _transpose(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_transpose", ad.val(g)))]


def _upper(e: ir.OpCall) -> bool:
    fill_mode: str = e.attr("fill_mode")
    return fill_mode == "upper"


# The in-place forms are `y = op(L, y)` in the IR: the out-of-place rules apply as they are.
@rule("tile_cholesky", "tile_cholesky_inplace")
def _cholesky(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    if _upper(e):  # U = L^T with L the factor of A^T: transpose into and out of the lower rule
        L = ad.val(C("tile_transpose", ad.result(e)))
        grad = C("tile_cholesky_grad", L, ad.val(C("tile_transpose", ad.val(g))))
        return [(0, C("tile_transpose", ad.val(grad)))]
    return [(0, C("tile_cholesky_grad", ad.result(e), ad.val(g)))]


@rule("tile_cholesky_solve", "tile_cholesky_solve_inplace")
def _cholesky_solve(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    m = ad.val(e.args[0])
    x = ad.result(e)
    ybar = ad.val(C("tile_cholesky_solve", m, ad.val(g), fill_mode=e.attr("fill_mode") or "lower"))
    if _upper(e):  # A = U^T U is L L^T with L = U^T
        grad = C("tile_cholesky_solve_grad", ad.val(C("tile_transpose", m)), x, ybar)
        return [(0, C("tile_transpose", ad.val(grad))), (1, ybar)]
    return [(0, C("tile_cholesky_solve_grad", m, x, ybar)), (1, ybar)]


@rule("tile_lower_solve", "tile_upper_solve", "tile_lower_solve_inplace", "tile_upper_solve_inplace")
def _tri_solve(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    m = ad.val(e.args[0])
    x = ad.result(e)
    lower = e.op.startswith("tile_lower_solve")
    transposed = ad.val(C("tile_transpose", m))
    ybar = ad.val(C("tile_upper_solve" if lower else "tile_lower_solve", transposed, ad.val(g)))
    dm = C("tile_tri_outer_grad", ybar, x, type=m.type, lower=lower)
    return [(0, dm), (1, ybar)]


# Unnormalised DFTs (ops/fft.py): the adjoint of each is the other, on the incoming gradient.
@rule("tile_fft", "tile_ifft")
def _fft(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_ifft" if e.op == "tile_fft" else "tile_fft", ad.val(g)))]


@rule("tile_diag_add")
def _diag_add(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    d = e.args[1]
    diag = C("tile_diag", g)
    if isinstance(d.type, TileT):
        return [(0, g), (1, diag)]
    return [(0, g), (1, C("tile_extract", C("tile_sum", diag, axis=None), const(0, _int(), e.span)))]


# ---------------------------------------------------------------- views


@rule("tile_broadcast")
def _broadcast(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_unbroadcast", ad.val(g), type=e.args[0].type))]


@rule("tile_view")
def _view(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t = e.args[0]
    offs = _offsets(e)
    attrs = (("offset_count", len(offs)),)
    if not ad.lanes and isinstance(t, ir.Var):  # g added where the view reads from, in place
        ad.accumulate_into(t, lambda adj: ir.OpCall("tile_view_add", (adj, ad.val(g), *offs), attrs, t.type, e.span))
        return []
    spread = ad.fresh_zero(t.type)  # g placed where the view reads from
    ad.emit(ir.Assign(spread.sym, ir.OpCall("tile_view_add", (spread, ad.val(g), *offs),
                                            (("offset_count", len(offs)),), t.type, e.span), e.span))
    return [(0, spread)]


@rule("tile_slice", "tile_gather")
def _slice(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t = e.args[0]
    spread = ad.fresh_zero(t.type)  # g placed where the slice / gather reads from
    op = "tile_slice_add" if e.op == "tile_slice" else "tile_gather_add"
    ad.emit(ir.Assign(spread.sym, ir.OpCall(op, (spread, ad.val(g), *e.args[1:]), e.attrs, t.type, e.span),
                      e.span))
    return [(0, spread)]


@rule("randf")
def _randf(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """(high - low) * u + low: u = randf(state) is a constant of the draw."""
    if len(e.args) < 3:
        return []
    u = C("randf", ad.val(e.args[0]))
    return [(1, C("mul", g, C("sub", _k(u, 1), u))), (2, C("mul", g, u))]


@rule("noise", "pnoise")
def _noise(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The noise's gradient at x times g, as Warp's adj_noise (noise.h computes the gradient as Warp's
    noise_Nd_gradient does); the state and the periods take none."""
    gradient = C(f"{e.op}_gradient", *(ad.val(a) for a in e.args))
    return [(1, C("mul", gradient, ad.val(g)))]


@rule("curlnoise")
def _curlnoise(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The point's gradient (noise.h curlnoise_adjoint); lacunarity and gain must be constants."""
    varying = [name for name, a in zip(("lacunarity", "gain"), e.args[3:5]) if not isinstance(a, ir.Const)]
    if varying:
        raise NotDifferentiable(f"curlnoise: tilec derives its gradient for the point only, and `{varying[0]}` "
                                "is not a constant here", e.span)
    return [(1, C("curlnoise_adjoint", *(ad.val(a) for a in e.args), ad.val(g)))]


@rule("mesh_eval_position", "mesh_eval_velocity")
def _mesh_eval(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """u and v, as Warp's adj_mesh_eval_position: (corner - third corner) . g (runtime mesh.h); the
    mesh's points are constants of the kernel."""
    field = const(0 if e.op == "mesh_eval_position" else 1, _int(), e.span)
    mesh, face, adj = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    return [(2 + k, C("mesh_eval_adjoint", mesh, face, adj, field, const(k, _int(), e.span))) for k in (0, 1)]


@rule("texture_sample_f", "texture_sample_v2", "texture_sample_v4")
def _texture_sample(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The coordinates: the interpolation's slope in each dotted with g; the lod: the difference of the
    mip levels it blends (runtime texture.h). The texels are constants of the kernel, as in Warp."""
    tex, uvw, lod = (ad.val(a) for a in e.args)
    return [(1, C("texture_sample_gradient", tex, uvw, lod, ad.val(g))),
            (2, C("texture_sample_lod_gradient", tex, uvw, lod, ad.val(g)))]


@rule("volume_sample_f", "volume_sample_v", "volume_sample_grad4")
def _volume_sample(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The coordinates: the trilinear interpolation's slope dotted with g (for the sample's gradient, the
    weights' mixed second derivatives; runtime volume.h). The voxels are constants of the kernel, as in Warp."""
    volume, uvw, mode = (ad.val(a) for a in e.args)
    return [(1, C(f"{e.op}_gradient", volume, uvw, mode, ad.val(g)))]


@rule("volume_index_to_world", "volume_world_to_index", "volume_index_to_world_dir", "volume_world_to_index_dir")
def _volume_map(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The point: the transposed linear part of the map times g."""
    return [(1, C(f"{e.op.removesuffix('_dir')}_gradient", ad.val(e.args[0]), ad.val(g)))]


@rule("volume_store_f", "volume_store_v", "volume_store_i")
def _volume_store(ad: Adjoints, e: ir.OpCall, g: ir.Expr | None) -> Contributions:
    raise NotDifferentiable("wp.volume_store writes a volume, which Warp's adjoint "
                            "does not differentiate and tilec's replay would write again; no adjoint is built", e.span)


@rule("mesh_closest_weight")
def _mesh_closest_weight(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The query point: g times the weight's gradient in it (runtime mesh_query.h), the face fixed."""
    mesh, face, point, which = (ad.val(a) for a in e.args)
    return [(2, C("mul", ad.val(g), C("mesh_closest_weight_gradient", mesh, face, point, which)))]


@rule("mesh_ray_hit")
def _mesh_ray_hit(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The ray's start and direction: g times the hit value's gradient in each (runtime mesh_query.h,
    with the face fixed, as Warp's adj_mesh_query_ray); the mesh's points are constants."""
    mesh, face, start, direction, which = (ad.val(a) for a in e.args)
    return [(2 + wrt, C("mul", ad.val(g), C("mesh_ray_hit_gradient", mesh, face, start, direction, which,
                                            const(wrt, _int(), e.span)))) for wrt in (0, 1)]


@rule("replay_value")
def _replay_value(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, ad.val(g))]  # the replayed value takes no adjoint: the func's own derivative is the body's


@rule("native_call")
def _native_call(ad: Adjoints, e: ir.OpCall, g: ir.Expr | None) -> Contributions:
    """A snippet's adj_snippet (codegen/natives.py), given the call's values, its float arrays'
    adjoint arrays and its result's adjoint (0 where the sweep brings none); its value holds the
    float scalars' adjoints. Without one, a call with no float result and writing no float array
    (frontend/native_funcs.py: those it reads are const) needs none; others are refused."""
    scalars = [(k, a.type) for k, a in enumerate(e.args) if isinstance(a.type, Scalar) and a.type.is_float]
    arrays = [k for k, a in enumerate(e.args) if isinstance(a.type, ArrayT) and ir.float_elements(a.type)]
    float_result = e.type if isinstance(e.type, Scalar) and e.type.is_float else None
    float_value = isinstance(e.type, (VecT, MatT)) and e.type.dtype.is_float
    if not e.attr("adjoint"):  # floats reach only the result and the arrays written: floats there need one
        if any(k in e.attr("written", ()) for k in arrays) or float_result is not None or float_value:
            what = "returns floats" if float_result is not None or float_value else "may write an array of floats"
            raise NotDifferentiable(f"`{e.attr('source')}` is a @wp.func_native snippet that {what} and has no "
                                    "adj_snippet: tilec does not differentiate C++ snippets", e.span)
        return []
    if float_value or any(isinstance(a.type, (VecT, MatT)) and a.type.dtype.is_float for a in e.args):
        raise NotDifferentiable(f"`{e.attr('source')}` has an adj_snippet over a vector or matrix of floats: tilec "
                                "hands on the adjoints of a snippet's float scalars and arrays only", e.span)
    adj = [ad.adj_array(e.args[k]) for k in arrays]
    if any(a is None for a in adj):
        raise NotDifferentiable(f"`{e.attr('source')}` takes an array whose adjoint tilec cannot name here; its "
                                "adj_snippet cannot run", e.span)
    args: list[ir.Expr] = [ad.val(a) for a in e.args] + [a for a in adj if a is not None]
    if float_result is not None:
        args.append(ad.val(g) if g is not None else const(0.0, float_result, e.span))
    result = ir.native_adjoint_type([t for _, t in scalars])
    call = ir.OpCall("native_adjoint", tuple(args), (("func", e.attr("func")), ("source", e.attr("source"))),
                     result if result is not None else NONE, e.span)
    if result is None:
        ad.emit(ir.ExprStmt(call, e.span))
        return []
    totals = ad.temp(result)  # not ad.val: two calls with equal operands are two runs of the snippet
    ad.emit(ir.Assign(totals, call, e.span))
    if len(scalars) == 1:
        return [(scalars[0][0], ir.Var(totals, e.span))]
    return [(k, C("value_extract", ir.Var(totals, e.span), const(i, _int(), e.span))) for i, (k, _) in enumerate(scalars)]


@rule("custom_call")
def _custom_call(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """@wp.func_grad: each float argument's contribution is the user's adjoint func of (args, g)."""
    args: tuple[ir.Expr, ...] = tuple(ad.val(a) for a in e.args) + (ad.val(g),)
    arrays = [k for k, a in enumerate(e.args) if isinstance(a.type, ArrayT) and e.attr("grads")[k] is not None]
    if arrays:  # the array adjoints' func adds into them (frontend check.ARRAY_ADJOINTS)
        adj = [a for a in (ad.adj_array(e.args[k]) for k in arrays) if a is not None]
        if len(adj) < len(arrays):
            raise NotDifferentiable(f"`{e.attr('func')}` has a @wp.func_grad over an array whose adjoint tilec "
                                    "cannot name here; no adjoint is built", e.span)
        ad.emit(ir.ExprStmt(ir.Call(e.attr("grads")[arrays[0]], args + tuple(adj), NONE, e.span), e.span))
    return [(k, ir.Call(name, args, e.args[k].type, e.span)) for k, name in enumerate(e.attr("grads"))
            if name is not None and k not in arrays]


@rule("tile_map")
def _mapped_custom(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """tile_map over a func with a @wp.func_grad (structure._lift_maps keeps only those): each float
    argument's contribution is its adjoint func mapped over (args, g); a broadcast scalar's is summed."""
    args = tuple(ad.val(a) for a in e.args) + (ad.val(g),)
    return [(k, ir.OpCall("tile_map", args, (("op", name),), TileT(_held(e.args[k].type), _tile_of(e).shape), e.span))
            for k, name in enumerate(e.attr("grads")) if name is not None]


@rule("tile_reshape", "tile_squeeze")
def _reshape(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("tile_reshape", ad.val(g), shape=_tile_of(e.args[0]).shape))]


@rule("tile_astype")
def _astype(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    if not (_element_of(e.args[0]).is_float and _element_of(e).is_float):
        return []
    return [(0, C("tile_astype", ad.val(g), dtype=_element_of(e.args[0])))]


@rule("tile_setitem")
def _setitem(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    idx = [ad.val(i) for i in e.args[2:]]
    cleared = C("tile_setitem", g, _k(g, 0), *idx)
    if ad.lanes and any(ad.varies(i) for i in e.args[2:]):
        # Each lane writes its own element; where lanes share one, one value lands (the leader's, else
        # on the CPU the lowest lane's). The same write of each lane's number into an int tile tells
        # every lane whether its value was the one that landed: that lane alone gets the gradient.
        shape = _tile_of(e).shape
        number = C("add", C("lane"), const(1, _int(), e.span))  # 0: no lane wrote the element
        owners = C("tile_setitem", C("tile_zeros", shape=shape, dtype=_int(), storage="register"), number, *idx)
        landed = C("eq", C("tile_extract", ad.val(owners), *idx), number)
        return [(0, cleared), (1, _or_zero(landed, C("tile_extract", g, *idx)))]
    # with several lanes only the leader's value lands (see tile_write_item), so only it gets the gradient
    return [(0, cleared), (1, C("leader_only", C("tile_extract", g, *idx)))]


@rule("tile_additem", "tile_subitem", "tile_add_inplace", "tile_sub_inplace")  # the latter: Warp's names
def _additem(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    idx = [ad.val(i) for i in e.args[2:]]
    item = C("tile_extract", g, *idx)
    return [(0, g), (1, item if e.op in ("tile_additem", "tile_add_inplace") else C("neg", item))]


@rule("tile_assign")
def _assign(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    src = _tile_of(e.args[1])
    offs = _offsets(e)
    n = len(offs)
    view = ir.OpCall("tile_view", (g, *offs), (("offset_count", n), ("shape", src.shape)), src, e.span)
    if n == 0:
        zero = ir.Const(0, _int(), e.span)
        view = ir.OpCall("tile_view", (g,) + (zero,) * src.ndim,
                         (("offset_count", src.ndim), ("shape", src.shape)), src, e.span)
    cleared = ir.OpCall("tile_assign", (g, C("tile_zeros", shape=src.shape, dtype=src.dtype,
                                                storage="register"), *offs),
                        (("offset_count", n),), g.type, e.span)
    return [(0, cleared), (1, view)]


# ---------------------------------------------------------------- per-lane cooperative ops


@rule("tile_scatter_add", "tile_scatter_masked")
def _scatter(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """Each lane's value gets the tile's adjoint at its index; a masked write also clears the
    adjoint where any lane wrote (a cooperative call, as the forward's)."""
    g = ad.val(g)
    has, idx = ad.val(e.args[2]), [ad.val(i) for i in e.args[3:]]
    item = _or_zero(has, C("tile_extract", g, *idx))
    if e.op == "tile_scatter_add":
        return [(0, g), (1, item)]
    return [(0, C("tile_scatter_masked", g, _k(g, 0), has, *idx)), (1, item)]


@rule("tile_from_thread")
def _from_thread(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    total = C("tile_extract", C("tile_sum", g, axis=None), const(0, _int(), e.span))
    mine = C("eq", C("lane"), ad.val(e.args[1]))
    return [(0, _or_zero(mine, total))]


def _or_zero(cond: ir.Expr, value: ir.Expr) -> ir.Expr:
    """value where cond holds, else 0; a vector or matrix value (wp.where takes scalars) is scaled
    by cond as 1 or 0 of its components' dtype."""
    if isinstance(value.type, Scalar):
        return C("where", cond, value, _k(value, 0))
    assert isinstance(value.type, (VecT, MatT)), value
    held = value.type.dtype
    return C("mul", value, C("where", cond, const(1, held, value.span), const(0, held, value.span)))


# The rules of vectors, matrices, quaternions and transforms (and of mul / div on them).
from . import adjoints_values  # noqa: E402

adjoints_values.register(RULES)
