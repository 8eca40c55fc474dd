"""Adjoint rules of the value-type ops (ops/values.py) and of `mul` / `div` on values.

Each rule returns, like those in adjoints.py, the contribution to each operand as IR built
from forward ops whose behaviour is the runtime's and the interpreter's own; no separate
adjoint kernels exist for them. Guards follow Warp: the gradient of `length` and `normalize`
at the zero vector is zero.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import ir
from ..ir.types import INT32, ArrayT, MatT, Scalar, TileT, Type, VecT
from .build import call as C
from .build import const, zeros
from .core import registrar

if TYPE_CHECKING:  # adjoints.py imports this module at its end; only the types are needed here
    from .adjoints import Adjoints, Contributions, Rule

RULES: dict[str, Rule] = {}  # merged into adjoints.RULES by register()
_SCALAR: dict[str, Rule] = {}  # the scalar rules of mul and div, which these extend


rule = registrar(RULES)


def register(table: dict[str, Rule]) -> None:
    """Adds these rules to adjoints.RULES; mul and div keep their scalar rule for scalar operands."""
    _SCALAR.update(mul=table["mul"], div=table["div"], abs=table["abs"])
    table.update(RULES)


def _elem(t: Type) -> Type:
    """The element type of a tile (the rules here also run on tiles of values: tile_map's adjoint
    applies them to whole tiles, ops/values.py over_tiles), else t."""
    return t.dtype if isinstance(t, TileT) else t


def _value_of(t: Type) -> VecT | MatT:
    """The vector or matrix type of t or of t's elements (a value operand's)."""
    held = _elem(t)
    assert isinstance(held, (VecT, MatT)), t
    return held


def _component(t: Type) -> Scalar:
    """The scalar of t or of t's elements: a value's component dtype, or the scalar itself."""
    held = _elem(t)
    scalar = held.dtype if isinstance(held, (VecT, MatT)) else held
    assert isinstance(scalar, Scalar), t
    return scalar


def _zero(t: Type) -> ir.Const:
    """The zero of a scalar, vector or matrix type."""
    assert isinstance(t, (Scalar, VecT, MatT)), t
    return const(0, t)


def _is_value(t: Type) -> bool:
    return isinstance(_elem(t), (VecT, MatT))


def _k(t: Type, value: float) -> ir.Const:
    """A scalar constant of t's component dtype."""
    return const(value, _component(t))


def _i(k: int) -> ir.Const:
    return const(k, INT32)


def _inner(x: ir.Expr, y: ir.Expr) -> ir.Expr:
    """dot for vectors, ddot for matrices, the product for scalars."""
    if isinstance(_elem(x.type), VecT):
        return C("dot", x, y)
    if isinstance(_elem(x.type), MatT):
        return C("ddot", x, y)
    return C("mul", x, y)


def _part(v: ir.Expr, k: int) -> ir.Expr:
    return C("value_extract", v, _i(k))


def _pack(t: Type, scalars: Sequence[ir.Expr]) -> ir.Expr:
    return C("value_new", *scalars, type=t)


def _vec3(v: ir.Expr, start: int = 0) -> ir.Expr:
    """Components start..start+2 of v as a vec3 (the xyz of a quaternion, p of a transform)."""
    return _pack(VecT(_value_of(v.type).dtype, 3), [_part(v, start + k) for k in range(3)])


def _conj(q: ir.Expr) -> ir.Expr:
    return C("quat_inverse", q)


# ---------------------------------------------------------------- operators


@rule("mul")
def _mul(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    ta, tb = _elem(a.type), _elem(b.type)
    if not (_is_value(ta) or _is_value(tb)):
        return _SCALAR["mul"](ad, e, g)
    g = ad.val(g)
    if isinstance(ta, Scalar):  # s * value
        return [(0, _inner(g, b)), (1, C("mul", g, a))]
    if isinstance(tb, Scalar):  # value * s
        return [(0, C("mul", g, b)), (1, _inner(g, a))]
    if isinstance(ta, MatT) and isinstance(tb, VecT):  # M v
        return [(0, C("outer", g, b)), (1, C("mul", g, a))]
    if isinstance(ta, VecT) and isinstance(tb, MatT):  # v M
        return [(0, C("mul", b, g)), (1, C("outer", a, g))]
    return [(0, C("mul", g, C("transpose", b))), (1, C("mul", C("transpose", a), g))]  # A B


@rule("div")
def _div(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    if not (_is_value(a.type) or _is_value(b.type)):
        return _SCALAR["div"](ad, e, g)
    g = ad.val(g)
    if isinstance(_elem(b.type), Scalar):  # value / s
        return [(0, C("div", g, b)), (1, C("neg", C("div", _inner(g, a), C("mul", b, b))))]
    r = ad.result(e)  # s / value: r_k = s / a_k
    return [(0, _inner(g, C("div", _k(b.type, 1), b))), (1, C("neg", C("cw_div", C("cw_mul", g, r), b)))]


@rule("abs")
def _abs(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """abs of a vector is component-wise: each component's gradient is g's times its sign."""
    a = ad.val(e.args[0])
    if not _is_value(a.type):
        return _SCALAR["abs"](ad, e, g)
    return [(0, C("cw_mul", ad.val(g), C("sign", a)))]


# ---------------------------------------------------------------- constructors and components


@rule("value_new")
def _new(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t, args = _elem(e.type), e.args  # the value type (of each element, inside tile_map's adjoint)
    g = ad.val(g)
    if not args:
        return []
    if len(args) == 1 and _is_value(args[0].type):  # a conversion: back to the source's dtype
        return [(0, C("value_new", g, type=_elem(args[0].type)))]
    if len(args) == 1:  # a broadcast scalar: the sum of the components' adjoints
        total = _inner(g, C("value_new", _k(t, 1), type=t))
        return [(0, _cast(total, args[0].type))]
    if any(isinstance(_elem(a.type), VecT) for a in args):  # concatenated parts: transform(p, q), quat(ijk, w)
        out, start = [], 0
        for i, a in enumerate(args):
            piece = _elem(a.type)
            if isinstance(piece, VecT):
                out.append((i, _pack(piece, [_part(g, start + k) for k in range(piece.length)])))
                start += piece.length
            else:
                out.append((i, _cast(_part(g, start), a.type)))
                start += 1
        return out
    out = []
    for i, a in enumerate(args):
        part = C("value_extract", g, _i(i // t.cols), _i(i % t.cols)) if isinstance(t, MatT) else _part(g, i)
        out.append((i, _cast(part, a.type)))
    return out


def _cast(x: ir.Expr, t: Type) -> ir.Expr:
    return x if x.type == t else C("cast", x, dtype=t)


@rule("value_extract")
def _extract(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a = e.args[0]
    idx = [ad.val(i) for i in e.args[1:]]
    return [(0, C("value_insert", zeros(a.type), ad.val(g), *idx))]  # a tile of values inside tile_map


@rule("value_insert")
def _insert(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    idx = [ad.val(i) for i in e.args[2:]]
    x = e.args[1]
    zero = zeros(x.type)  # x: a component, or a tile of them (tile_map's adjoint)
    return [(0, C("value_insert", g, zero, *idx)), (1, C("value_extract", g, *idx))]


@rule("array_store_part")
def _store_part(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    """The stored component takes that component's adjoint, which is then zeroed (overwritten)."""
    import dataclasses

    from .. import ir

    adj_a = ad.adj_array(e.args[0])
    if adj_a is None:
        return []
    array = e.args[0].type
    assert isinstance(array, ArrayT), e
    nd = array.ndim
    elem, comp = [ad.val(i) for i in e.args[2:2 + nd]], [ad.val(i) for i in e.args[2 + nd:]]
    element = ir.OpCall("array_load", (adj_a, *elem), (), array.dtype, e.span)
    taken = ad.val(C("value_extract", element, *comp))
    zero = _zero(e.args[1].type)
    ad.emit(ir.ExprStmt(dataclasses.replace(e, args=(adj_a, zero, *elem, *comp)), e.span))
    return [(1, taken)]


@rule("matrix_from_rows", "matrix_from_cols")
def _from_vectors(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)
    rows = g if e.op == "matrix_from_rows" else ad.val(C("transpose", g))
    return [(i, _part(rows, i)) for i in range(len(e.args))]


# ---------------------------------------------------------------- vector and matrix builtins


@rule("dot", "ddot")
def _dot(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b = ad.val(e.args[0]), ad.val(e.args[1])
    return [(0, C("mul", b, g)), (1, C("mul", a, g))]


@rule("cross")
def _cross(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    return [(0, C("cross", b, g)), (1, C("cross", g, a))]


def _inv_or_zero(r: ir.Expr) -> ir.Expr:
    """1 / r where r > 0, else 0 (Warp's zero-vector convention; r is a length, never negative):
    with s = 1 where r <= 0, (1 - s) / (r + s). No comparison, so it also runs on whole tiles."""
    s = C("step_ge", _k(r.type, 0), r)
    return C("div", C("sub", _k(r.type, 1), s), C("add", r, s))


@rule("length")
def _length(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a = ad.val(e.args[0])
    r = ad.result(e)
    return [(0, C("mul", a, C("mul", g, _inv_or_zero(r))))]


@rule("length_sq")
def _length_sq(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a = ad.val(e.args[0])
    return [(0, C("mul", a, C("mul", g, _k(a.type, 2))))]


@rule("normalize")
def _normalize(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, g = ad.val(e.args[0]), ad.val(g)
    n = ad.result(e)
    inv = ad.val(_inv_or_zero(C("length", a)))
    return [(0, C("mul", C("sub", g, C("mul", n, C("dot", n, g))), inv))]


@rule("outer")
def _outer(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    return [(0, C("mul", g, b)), (1, C("mul", a, g))]


@rule("transpose")
def _transpose(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("transpose", g))]


@rule("determinant")
def _determinant(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("mul", C("cofactor", ad.val(e.args[0])), g))]


@rule("inverse")
def _inverse(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    bt = ad.val(C("transpose", ad.result(e)))
    return [(0, C("neg", C("mul", C("mul", bt, g), bt)))]


@rule("diag")
def _diag(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("get_diag", g))]


@rule("get_diag")
def _get_diag(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, C("diag", g))]


@rule("trace")
def _trace(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t = _value_of(e.args[0].type)  # a matrix, or a tile of them (tile_map's adjoint)
    assert isinstance(t, MatT), e
    return [(0, C("diag", C("value_new", ad.val(g), type=VecT(t.dtype, t.rows))))]


@rule("skew")
def _skew(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    g = ad.val(g)

    def at(i: int, j: int) -> ir.Expr:
        return C("value_extract", g, _i(i), _i(j))

    parts = [C("sub", at(2, 1), at(1, 2)), C("sub", at(0, 2), at(2, 0)), C("sub", at(1, 0), at(0, 1))]
    return [(0, _pack(_elem(e.args[0].type), parts))]  # a vec3 (of each element, inside tile_map's adjoint)


@rule("cw_mul")
def _cw_mul(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    return [(0, C("cw_mul", g, b)), (1, C("cw_mul", g, a))]


@rule("cw_div")
def _cw_div(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    b, g = ad.val(e.args[1]), ad.val(g)
    r = ad.result(e)
    return [(0, C("cw_div", g, b)), (1, C("neg", C("cw_div", C("cw_mul", g, r), b)))]


# ---------------------------------------------------------------- quaternions and transforms


def _rotate_adjoint(ad: Adjoints, u: ir.Expr, w: ir.Expr, v: ir.Expr,
                    g: ir.Expr) -> tuple[ir.Expr, ir.Expr, ir.Expr]:
    """Adjoints of r = v (2w^2 - 1) + 2u (u . v) + 2w (u x v) (Warp's quat_rotate with q = (u, w)):
    (adjoint of u as a vec3, adjoint of w, adjoint of v)."""
    two = _k(w.type, 2)
    c = C("sub", C("mul", two, C("mul", w, w)), _k(w.type, 1))
    u_dot_g = ad.val(C("dot", u, g))
    adj_v = C("add", C("add", C("mul", g, c), C("mul", C("cross", g, u), C("mul", two, w))),
              C("mul", u, C("mul", two, u_dot_g)))
    adj_w = C("add", C("mul", C("mul", _k(w.type, 4), w), C("dot", g, v)), C("mul", two, C("dot", g, C("cross", u, v))))
    adj_u = C("add", C("add", C("mul", g, C("mul", two, C("dot", u, v))), C("mul", v, C("mul", two, u_dot_g))),
              C("mul", C("cross", v, g), C("mul", two, w)))
    return ad.val(adj_u), ad.val(adj_w), adj_v


def _quat_of(u: ir.Expr, w: ir.Expr) -> ir.Expr:
    return _pack(VecT(_component(w.type), 4, "quat"), [_part(u, 0), _part(u, 1), _part(u, 2), w])


def _rotation_adjoints(ad: Adjoints, q: ir.Expr, v: ir.Expr, g: ir.Expr,
                       inverse: bool = False) -> tuple[ir.Expr, ir.Expr]:
    """(adjoint of the quaternion q, adjoint of v) of quat_rotate(q, v) (or quat_rotate_inv)."""
    u = ad.val(_vec3(q))
    if inverse:
        u = ad.val(C("neg", u))
    w = ad.val(_part(q, 3))
    adj_u, adj_w, adj_v = _rotate_adjoint(ad, u, w, v, g)
    adj_q = _quat_of(C("neg", adj_u) if inverse else adj_u, adj_w)
    return adj_q, adj_v


@rule("quat_rotate", "quat_rotate_inv")
def _quat_rotate(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    q, v, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    adj_q, adj_v = _rotation_adjoints(ad, q, v, g, e.op == "quat_rotate_inv")
    return [(0, adj_q), (1, adj_v)]


@rule("quat_mul")
def _quat_mul(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    return [(0, C("quat_mul", g, _conj(b))), (1, C("quat_mul", _conj(a), g))]


@rule("quat_inverse")
def _quat_inverse(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, _conj(g))]


@rule("quat_from_axis_angle")
def _axis_angle(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    axis, angle, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    half = ad.val(C("mul", angle, _k(angle.type, 0.5)))
    s, c = ad.val(C("sin", half)), ad.val(C("cos", half))
    gu = ad.val(_vec3(g))
    d_angle = C("mul", _k(angle.type, 0.5), C("sub", C("mul", C("dot", gu, axis), c), C("mul", _part(g, 3), s)))
    return [(0, C("mul", gu, s)), (1, d_angle)]


def _transform_of(p: ir.Expr, q: ir.Expr) -> ir.Expr:
    return C("value_new", p, q, type=VecT(_value_of(p.type).dtype, 7, "transform"))


def _quat_part(t: ir.Expr) -> ir.Expr:
    return _pack(VecT(_value_of(t.type).dtype, 4, "quat"), [_part(t, 3 + k) for k in range(4)])


@rule("transform_point", "transform_vector")
def _transform_apply(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t, v, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    adj_q, adj_v = _rotation_adjoints(ad, ad.val(_quat_part(t)), v, g)
    adj_p = g if e.op == "transform_point" else zeros(g.type)  # g: a vec3, or a tile of them (tile_map)
    return [(0, _transform_of(adj_p, adj_q)), (1, adj_v)]


@rule("transform_get_translation")
def _get_translation(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    # the zero rotation of g's components (g: a vec3, or a tile of them in tile_map's adjoint)
    return [(0, _transform_of(ad.val(g), const(0, VecT(_component(g.type), 4, "quat"))))]


@rule("transform_get_rotation")
def _get_rotation(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    return [(0, _transform_of(const(0, VecT(_component(g.type), 3)), ad.val(g)))]


@rule("transform_multiply")
def _transform_multiply(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    a, b, g = ad.val(e.args[0]), ad.val(e.args[1]), ad.val(g)
    qa, qb = ad.val(_quat_part(a)), ad.val(_quat_part(b))
    gp, gq = ad.val(_vec3(g)), ad.val(_quat_part(g))
    adj_qa, adj_pb = _rotation_adjoints(ad, qa, ad.val(_vec3(b)), gp)
    adj_qa = C("add", adj_qa, C("quat_mul", gq, _conj(qb)))
    adj_qb = C("quat_mul", _conj(qa), gq)
    return [(0, _transform_of(gp, adj_qa)), (1, _transform_of(adj_pb, adj_qb))]


@rule("transform_inverse")
def _transform_inverse(ad: Adjoints, e: ir.OpCall, g: ir.Expr) -> Contributions:
    t, g = ad.val(e.args[0]), ad.val(g)
    qi = ad.val(_conj(_quat_part(t)))
    gp, gq = ad.val(_vec3(g)), ad.val(_quat_part(g))
    adj_qi, adj_p = _rotation_adjoints(ad, qi, ad.val(_vec3(t)), ad.val(C("neg", gp)))
    adj_q = _conj(C("add", adj_qi, gq))
    return [(0, _transform_of(adj_p, adj_q))]
