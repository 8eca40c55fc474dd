"""Value-type ops: Warp's vectors, matrices, quaternions and transforms in SIMT code.

Type promotion follows Warp exactly: the operands of `+ - *` and the builtins must have the
same component dtype (vec3f + vec3d is an error), and an untyped literal counts as Warp types
it (`2.0` is a float32, `2` an int32): `vec3f * 2.0` is fine, `vec3d * 2.0` and `vec3f * 2` are
not. `quat * quat` is the Hamilton product and `transform * transform` composition: the
frontend lowers them to `quat_mul` / `transform_multiply` (a different IR op, not a different
C++ type). Every op here is `elementwise` so it nests inside expressions and emits as a plain
call `tl::<cpp>(...)` (runtime_headers/tilec/vec.h, quat.h).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, NoReturn, TypeGuard

from ..ir.types import BOOL, NONE, ArrayT, MatT, Scalar, TileT, Type, VecT, describe, fmt_shape
from .core import Bound, OpSpec, Param, RuleError

A = Param("a", "value")
B = Param("b", "value")
VALUE = (VecT, MatT)


def is_value(t: object) -> TypeGuard[VecT | MatT]:
    return isinstance(t, VALUE)


def _name(t: Type) -> str:
    return describe(t)


def _scalar_fits(b: Bound, name: str, comp: Scalar) -> bool:
    """A scalar operand next to a value of component dtype comp: exactly that dtype (an untyped
    literal has Warp's type: float32 or int32)."""
    t = b.types[name]
    return isinstance(t, Scalar) and t == comp


def _value(b: Bound, name: str, what: str = "a vector or matrix") -> VecT | MatT:
    t = b.types[name]
    if not is_value(t):
        b.fail("TC0303", f"`{name}` must be {what}, got {_name(t)}", name)
    return t


def _vec(b: Bound, name: str, length: int | None = None, family: str | None = None, float_only: bool = True) -> VecT:
    t = b.types[name]
    fam_ok = isinstance(t, VecT) and (family is None or t.family == family or
                                      (family == "vec" and t.family in ("vec", "quat", "spatial_vector")))
    if not isinstance(t, VecT) or not fam_ok or (length is not None and t.length != length):  # (fam_ok: a VecT)
        want = {"quat": "a quaternion", "transform": "a transform"}.get(family or "", None)
        want = want or (f"a {length}-component vector" if length else "a vector")
        b.fail("TC0303", f"`{name}` must be {want}, got {_name(t)}", name)
    if float_only and not t.dtype.is_float:
        b.fail("TC0203", f"needs floating-point components, got {_name(t)}", name)
    return t


def _mat(b: Bound, name: str, square: bool = False, float_only: bool = True) -> MatT:
    t = b.types[name]
    if not isinstance(t, MatT):
        b.fail("TC0303", f"`{name}` must be a matrix, got {_name(t)}", name)
    if square and t.rows != t.cols:
        b.fail("TC0303", f"`{name}` must be a square matrix, got {_name(t)}", name)
    if float_only and not t.dtype.is_float:
        b.fail("TC0203", f"needs floating-point components, got {_name(t)}", name)
    return t


def _same(b: Bound, names: tuple[str, str] = ("a", "b")) -> Type:
    ta, tb = (b.types[n] for n in names)
    if ta != tb:
        b.fail("TC0201", f"operands differ: {_name(ta)} and {_name(tb)}", names[1])
    return ta


# ---------------------------------------------------------------- operators on values

SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "eq": "==", "ne": "!="}


def arith_rule(op: str, scalar_rule: Callable[[Bound], Type | None]) -> Callable[[Bound], Type | None]:
    """The rule of an operator (`add`, `sub`, `mul`, `div`, `neg`, `eq`, `ne`): value operands
    get Warp's value rules, everything else the scalar/tile rule it had."""
    names = ("a",) if op == "neg" else ("left", "right")

    def rule(b: Bound) -> Type | None:
        ts = [b.types.get(n) for n in names]
        held = [t.dtype if isinstance(t, TileT) else t for t in ts]
        operands = [t for t in held if t is not None]
        if len(operands) != len(held) or not any(is_value(t) for t in operands):
            return scalar_rule(b)  # (an operand missing: the scalar rule reports it)
        tiles = [(n, t) for n, t in zip(names, ts) if isinstance(t, TileT)]
        if tiles:  # tiles of values: the value rule per element, on tiles of one shape (as Warp)
            if op in ("eq", "ne"):
                b.fail("TC0303", f"`{SYMBOL[op]}` is not defined on tiles of {held[0]}", tiles[0][0])
            for n, t in tiles[1:]:
                if t.shape != tiles[0][1].shape:
                    b.fail("TC0101", f"shapes differ: {tiles[0][0]} is {fmt_shape(tiles[0][1].shape)}, "
                           f"{n} is {fmt_shape(t.shape)}", n)
            b = replace(b, types={**b.types, **{n: h for n, h in zip(names, held) if h is not None}})
        out = operands[0] if op == "neg" else _binary(b, op, *operands)
        # out: the value rule's result on tile elements (tiles of eq/ne are refused above), an element type
        return TileT(out, tiles[0][1].shape) if tiles else out  # type: ignore[arg-type]

    return rule


BITWISE = {"bit_and": "&", "bit_or": "|", "bit_xor": "^", "lshift": "<<", "rshift": ">>", "invert": "~"}


def componentwise_rule(op: str, scalar_rule: Callable[[Bound], Type | None]) -> Callable[[Bound], Type | None]:
    """The rule of a builtin Warp applies to each component of a value: the bitwise operators
    (`& | ^ << >> ~`) on vectors and matrices of integers of one type, `abs`, `sign`, `min` and `max` on
    vectors (Warp has no matrix overload of those). A tile of such values takes the same rule per
    element (tile_map, `x & y` of tiles). Anything without a value operand keeps its scalar rule."""
    names = ("left", "right") if (op in BITWISE and op != "invert") or op in ("min", "max") else ("a",)

    def rule(b: Bound) -> Type | None:
        ts = [b.types.get(n) for n in names]
        held = [t.dtype if isinstance(t, TileT) else t for t in ts]
        if any(t is None for t in held) or not any(is_value(t) for t in held):
            return scalar_rule(b)
        tiles = [(n, t) for n, t in zip(names, ts) if isinstance(t, TileT)]
        for n, t in tiles[1:]:
            if t.shape != tiles[0][1].shape:
                b.fail("TC0101", f"shapes differ: {tiles[0][0]} is {fmt_shape(tiles[0][1].shape)}, "
                       f"{n} is {fmt_shape(t.shape)}", n)
        first = held[0]
        if not is_value(first):
            b.fail("TC0201", f"{describe(first)} and {describe(held[1])}: the operands must have the same type",
                   names[0])
        for n, h in zip(names, held):
            if not is_value(h) or _layout(h) != _layout(first):  # (Warp: both operands of one value type)
                b.fail("TC0201", f"{_name(first)} and {describe(h)}: the operands must have the same type", n)
        if op in BITWISE:
            if not first.dtype.is_integral:
                b.fail("TC0203", f"`{BITWISE[op]}` needs integer components, got {_name(first)}", names[0])
        else:
            if not isinstance(first, VecT):
                b.fail("TC0203", f"is defined on scalars and vectors, not on {_name(first)}", names[0])
            if first.dtype.kind == "bool":
                b.fail("TC0203", f"not defined for {_name(first)}", names[0])
        return TileT(first, tiles[0][1].shape) if tiles else first

    return rule


def _layout(t: VecT | MatT) -> tuple[object, ...]:
    return (type(t), t.dtype, (t.rows, t.cols) if isinstance(t, MatT) else t.length)


def _spatial(left: VecT | MatT, right: VecT | MatT, length: int) -> str:
    """A product of spatial types of length 6 is a spatial vector, as in Warp."""
    families = (left.family, right.family)
    return "spatial_vector" if length == 6 and ("spatial_matrix" in families or "spatial_vector" in families) else "vec"


def _binary(b: Bound, op: str, left: Type, right: Type) -> Type:
    sym = SYMBOL[op]
    both = f"`{sym}` of {_name(left)} and {_name(right)}"
    if is_value(left) and is_value(right):
        if op in ("add", "sub", "eq", "ne"):
            if _layout(left) != _layout(right):  # Warp compares length/shape and dtype, not the family
                b.fail("TC0201", f"{both}: the operands must have the same type", "right")
            return BOOL if op in ("eq", "ne") else left
        if left.dtype != right.dtype:
            b.fail("TC0201", f"{both}: component dtypes differ", "right")
        if op == "mul":
            if isinstance(left, MatT) and isinstance(right, VecT):
                if left.cols != right.length:
                    b.fail("TC0102", f"{both}: the matrix has {left.cols} columns, the vector {right.length} "
                           "components", "right")
                return VecT(left.dtype, left.rows, _spatial(left, right, left.rows))
            if isinstance(left, VecT) and isinstance(right, MatT):
                if left.length != right.rows:
                    b.fail("TC0102", f"{both}: the vector has {left.length} components, the matrix {right.rows} "
                           "rows", "right")
                return VecT(left.dtype, right.cols, _spatial(left, right, right.cols))
            if isinstance(left, MatT) and isinstance(right, MatT):
                if left.cols != right.rows:
                    b.fail("TC0102", f"{both}: inner dimensions differ ({left.cols} and {right.rows})", "right")
                family = "spatial_matrix" if left.rows == right.cols == 6 and "spatial_matrix" in (
                    left.family, right.family) else "mat"
                return MatT(left.dtype, left.rows, right.cols, family)
            if left == right and left.family in ("quat", "transform"):
                return left  # the frontend lowers these to quat_mul / transform_multiply
        b.fail("TC0201", f"{both} is not defined" + (" (use wp.cw_mul / wp.cw_div for component-wise "
                                                    "products)" if isinstance(left, VecT) else ""), "right")
    if is_value(left):
        value, scalar, sname = left, right, "right"
    elif is_value(right):
        value, scalar, sname = right, left, "left"
    else:  # (arith_rule calls this with a value operand)
        b.fail("TC0201", f"{both} is not defined", "right")
    if op in ("add", "sub", "eq", "ne") or not _scalar_fits(b, sname, value.dtype):
        if isinstance(scalar, Scalar) and op in ("mul", "div"):
            b.fail("TC0201", f"{both}: the scalar must be {value.dtype} like the components", sname)
        b.fail("TC0201", f"{both} is not defined", sname)
    return value


# ---------------------------------------------------------------- constructors and components


def _plain(b: Bound) -> Bound:
    def fail(code: str, message: str, arg: str | None = None) -> NoReturn:
        raise RuleError(code, message, arg)

    b.fail = fail  # type: ignore[method-assign]
    return b


def _new(b: Bound) -> Type:
    """wp.vec3(x, y, z), wp.vec3(s), wp.vec3(), wp.vec3d(v3f), wp.mat22(a, b, c, d), wp.transform(p, q),
    wp.quat(x, y, z, w), wp.spatial_vector(w, v): the type is the attribute `type`."""
    b = _plain(b)
    t: VecT | MatT = b.attrs["type"]  # the constructor's type (a "type" attribute: a vector or matrix)
    args = b.variadic
    n = t.length
    if not args:
        return t
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Scalar):
            if not (a == t.dtype or (0 in b.variadic_weak and a.kind != "bool" and (t.dtype.is_float or not a.is_float))):
                b.fail("TC0201", f"cannot make a {t} from {_name(a)}", "arg0")
            return t
        if (isinstance(a, VALUE) and type(a) is type(t) and a.length == n
                and (not isinstance(t, MatT) or (isinstance(a, MatT) and a.rows == t.rows))):  # (a MatT: same type as t)
            return t
        b.fail("TC0201", f"cannot make a {t} from {_name(a)}", "arg0")
    scalars = [a for a in args if isinstance(a, Scalar)]
    if len(scalars) == len(args):  # every argument a scalar
        if len(args) != n:
            b.fail("TC0303", f"{t} takes {n} components, got {len(args)}", "arg0")
        for i, a in enumerate(scalars):  # typed components exactly the dtype (Warp's rule); literals adapt
            literal_ok = i in b.variadic_weak and a.kind != "bool" and (t.dtype.is_float or not a.is_float)
            if a != t.dtype and not literal_ok:
                b.fail("TC0201", f"component {i} of a {t} is {_name(a)}; all components must be "
                       f"{t.dtype}", f"arg{i}")
        return t
    if isinstance(t, VecT) and t.family == "transform" and len(args) == 2:  # transform(p, q)
        p, q = args
        if p == VecT(t.dtype, 3) and q == VecT(t.dtype, 4, "quat"):
            return t
        b.fail("TC0201", f"{_name(t)} takes a vec3{str(t)[9:]} and a quat{str(t)[9:]}, got {_name(p)} and "
               f"{_name(q)}", "arg0")
    if isinstance(t, VecT) and t.family == "quat" and len(args) == 2:  # quat(ijk, real), as Warp's quaternion
        ijk, real = args
        if ijk == VecT(t.dtype, 3) and (real == t.dtype or (1 in b.variadic_weak and isinstance(real, Scalar)
                                                            and real.kind != "bool")):
            return t
        b.fail("TC0201", f"{_name(t)} takes a vec3{str(t)[4:]} (its vector part) and a {t.dtype} (its real part), "
               f"got {_name(ijk)} and {_name(real)}", "arg0")
    if isinstance(t, VecT) and t.family == "spatial_vector" and len(args) == 2:  # spatial_vector(w, v)
        if all(a == VecT(t.dtype, 3) for a in args):
            return t
        b.fail("TC0201", f"{_name(t)} takes two vec3{str(t)[14:]} (its angular and its linear part), got "
               f"{_name(args[0])} and {_name(args[1])}", "arg0")
    if isinstance(t, MatT) and all(isinstance(a, VecT) for a in args):
        b.fail("TC0303", f"{t}: building a matrix from vectors is ambiguous; use "
               "wp.matrix_from_rows(...) or wp.matrix_from_cols(...)", "arg0")
    b.fail("TC0303", f"cannot make a {t} from " + ", ".join(_name(a) for a in args), "arg0")


def _from_vectors(b: Bound) -> Type:
    """matrix_from_rows / matrix_from_cols(v0, v1, ...): same-typed vectors."""
    vectors = [a for a in b.variadic if isinstance(a, VecT)]
    if not b.variadic or len(vectors) != len(b.variadic):  # every argument a vector
        b.fail("TC0303", "takes vectors", "arg0")
    first = vectors[0]
    for i, a in enumerate(vectors):
        if a.dtype != first.dtype or a.length != first.length:
            b.fail("TC0201", f"vector {i} is {_name(a)}, the first {_name(first)}", f"arg{i}")
    k = len(vectors)
    return MatT(first.dtype, k, first.length) if b.op == "matrix_from_rows" else MatT(first.dtype, first.length, k)


def _component_count(t: VecT | MatT) -> int:
    return t.rows if isinstance(t, MatT) else t.length


def _extract(b: Bound) -> Type:
    """v[i] (a scalar), m[i, j] (a scalar), m[i] (a row vector)."""
    b = _plain(b)
    t = _value(b, "a")
    idx = b.variadic
    for i, it in enumerate(idx):
        if not (isinstance(it, Scalar) and it.is_integral):
            b.fail("TC0203", f"indices must be integers, got {_name(it)}", f"arg{i}")
    limit = (t.rows, t.cols) if isinstance(t, MatT) else (t.length,)
    if len(idx) > len(limit):
        b.fail("TC0304", f"{_name(t)} takes at most {len(limit)} index(es), got {len(idx)}", "a")
    for i, (value, bound) in enumerate(zip(b.variadic_consts, limit)):
        if value is not None and not -bound <= value < bound:
            b.fail("TC0106", f"index {value} is out of range for {_name(t)} (size {bound})", f"arg{i}")
    if isinstance(t, MatT) and len(idx) == 1:
        return VecT(t.dtype, t.cols)
    if not idx:
        b.fail("TC0304", "needs an index", "a")
    return t.dtype


def _insert(b: Bound) -> Type:
    """a with the component(s) at the indices replaced by value (v[i] = x, m[i, j] = x, m[i] = row)."""
    b = _plain(b)
    t = _value(b, "a")
    b2 = Bound(op=b.op, types={"a": t}, variadic=b.variadic, variadic_consts=b.variadic_consts)
    part = _extract(b2)
    x = b.types["value"]
    if x != part and not ("value" in b.weak and isinstance(x, Scalar) and isinstance(part, Scalar)
                          and x.is_float == part.is_float):
        b.fail("TC0201", f"cannot assign {_name(x)} to a component of {_name(t)} (it holds {_name(part)})", "value")
    return t


# ---------------------------------------------------------------- builtins


def _store_part(b: Bound) -> Type:
    """a[i].x = v, a[i][j, k] = v, a[i][j] = row: one component (or row) of an array element; the
    variadic operands are the element's indices, then the component's."""
    a = b.types["a"]
    if not isinstance(a, ArrayT) or not is_value(a.dtype):
        b.fail("TC0303", f"`a` must be an array of vectors or matrices, got {_name(a)}", "a")
    elem, comp = b.variadic[:a.ndim], b.variadic[a.ndim:]
    for it in elem:
        if not (isinstance(it, Scalar) and it.is_integral):
            b.fail("TC0203", f"array indices must be integers, got {_name(it)}", "a")
    inner = Bound(op=b.op, types={"a": a.dtype, "value": b.types["value"]}, weak=b.weak, variadic=comp,
                  variadic_consts=b.variadic_consts[a.ndim:])
    _insert(inner)
    return NONE


def _dot(b: Bound) -> Type:
    t = _same(b)
    if not isinstance(t, VecT):
        b.fail("TC0303", f"`a` must be a vector, got {_name(t)}", "a")
    return t.dtype


def _ddot(b: Bound) -> Type:
    t = _same(b)
    if not isinstance(t, MatT):
        b.fail("TC0303", f"`a` must be a matrix, got {_name(t)}", "a")
    return t.dtype


def _cross(b: Bound) -> Type:
    _vec(b, "a", 3, float_only=False)
    return _same(b)


def _length(b: Bound) -> Type:
    return _vec(b, "a").dtype


def _normalize(b: Bound) -> Type:
    return _vec(b, "a")


def _outer(b: Bound) -> Type:
    ta, tb = _vec(b, "a", float_only=False), _vec(b, "b", float_only=False)
    if ta.dtype != tb.dtype:
        b.fail("TC0201", f"component dtypes differ: {_name(ta)} and {_name(tb)}", "b")
    return MatT(ta.dtype, ta.length, tb.length)


def _transpose(b: Bound) -> Type:
    t = _mat(b, "a", float_only=False)
    return MatT(t.dtype, t.cols, t.rows, t.family if t.rows == t.cols else "mat")


def _determinant(b: Bound) -> Type:
    t = _mat(b, "a", square=True)
    if t.rows not in (2, 3, 4):
        b.fail("TC0303", f"determinant of {_name(t)}: tilec computes it for 2x2, 3x3 and 4x4 matrices", "a")
    return t.dtype


def _inverse(b: Bound) -> Type:
    t = _mat(b, "a", square=True)
    if t.rows not in (2, 3, 4):
        b.fail("TC0303", f"inverse of {_name(t)}: tilec computes it for 2x2, 3x3 and 4x4 matrices", "a")
    return t


def _diag(b: Bound) -> Type:
    t = _vec(b, "a", float_only=False)
    return MatT(t.dtype, t.length, t.length)


def _get_diag(b: Bound) -> Type:
    t = _mat(b, "a", square=True, float_only=False)
    return VecT(t.dtype, t.rows)


def _trace(b: Bound) -> Type:
    return _mat(b, "a", square=True, float_only=False).dtype


def _skew(b: Bound) -> Type:
    t = _vec(b, "a", 3)
    return MatT(t.dtype, 3, 3)


def _cw(b: Bound) -> Type:
    _value(b, "a")
    return _same(b)


def _applied_to_vec3(b: Bound, length: int, family: str) -> VecT:
    """A quat or transform `a` applied to a vec3 `b` of its component dtype: the vec3."""
    first = _vec(b, "a", length, family)
    v = _vec(b, "b", 3)
    if v.dtype != first.dtype:
        b.fail("TC0201", f"component dtypes differ: {_name(first)} and {_name(v)}", "b")
    return v


def _quat_rotate(b: Bound) -> Type:
    return _applied_to_vec3(b, 4, "quat")


def _quat_unary(b: Bound) -> Type:
    return _vec(b, "a", 4, "quat")


def _quat_mul(b: Bound) -> Type:
    _vec(b, "a", 4, "quat")
    return _same(b)


def _axis_angle(b: Bound) -> Type:
    axis = _vec(b, "a", 3)
    angle = b.types["b"]
    if angle != axis.dtype:
        b.fail("TC0201", f"the angle must be {axis.dtype} like the axis, got {_name(angle)}", "b")
    return VecT(axis.dtype, 4, "quat")


def _transform_apply(b: Bound) -> Type:
    return _applied_to_vec3(b, 7, "transform")


def _transform_unary(b: Bound) -> Type:
    return _vec(b, "a", 7, "transform")


def _transform_mul(b: Bound) -> Type:
    _vec(b, "a", 7, "transform")
    return _same(b)


def _translation(b: Bound) -> Type:
    return VecT(_vec(b, "a", 7, "transform").dtype, 3)


def _rotation(b: Bound) -> Type:
    return VecT(_vec(b, "a", 7, "transform").dtype, 4, "quat")


def _identity_of(family: str) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        dt = b.attrs.get("dtype")
        from ..ir.types import FLOAT32

        dt = dt or FLOAT32
        if not isinstance(dt, Scalar) or not dt.is_float:
            b.fail("TC0303", f"dtype must be a float type, got {dt}")
        return VecT(dt, 4, "quat") if family == "quat" else VecT(dt, 7, "transform")

    return rule


def _spec(name: str, params: tuple[Param, ...], rule: Callable[[Bound], Type | None], doc: str, api: bool = True,
          cpp: str | None = None) -> OpSpec:
    return OpSpec(name, params, rule, cpp or name, doc, adj_cpp=None, api=api, elementwise=True)


UNARY_BUILTINS = [
    ("length", _length, "the Euclidean length of a vector"),
    ("length_sq", _length, "the squared length of a vector"),
    ("normalize", _normalize, "a / length(a), or zero when the length is 0"),
    ("transpose", _transpose, "the transpose of a matrix"),
    ("determinant", _determinant, "the determinant of a 2x2, 3x3 or 4x4 matrix"),
    ("inverse", _inverse, "the inverse of a 2x2, 3x3 or 4x4 matrix"),
    ("diag", _diag, "the square matrix with a vector on its diagonal"),
    ("get_diag", _get_diag, "the diagonal of a square matrix as a vector"),
    ("trace", _trace, "the sum of a square matrix's diagonal"),
    ("skew", _skew, "the 3x3 skew-symmetric matrix of a vector (skew(a) @ b == cross(a, b))"),
    ("quat_inverse", _quat_unary, "the conjugate of a quaternion (the inverse rotation of a unit quaternion)"),
    ("transform_inverse", _transform_unary, "the inverse of a rigid transform"),
    ("transform_get_translation", _translation, "the translation part p of a transform"),
    ("transform_get_rotation", _rotation, "the rotation part q of a transform"),
]
BINARY_BUILTINS = [
    ("dot", _dot, "the dot product of two vectors"),
    ("ddot", _ddot, "the double dot product (sum of component products) of two matrices"),
    ("cross", _cross, "the cross product of two 3-vectors"),
    ("outer", _outer, "the outer product a b^T of two vectors"),
    ("cw_mul", _cw, "the component-wise product of two vectors or matrices"),
    ("cw_div", _cw, "the component-wise quotient of two vectors or matrices"),
    ("quat_rotate", _quat_rotate, "b rotated by the quaternion a"),
    ("quat_rotate_inv", _quat_rotate, "b rotated by the inverse of the quaternion a"),
    ("quat_from_axis_angle", _axis_angle, "the quaternion rotating by angle b about the axis a"),
    ("transform_point", _transform_apply, "the point b transformed by a (rotation, then translation)"),
    ("transform_vector", _transform_apply, "the vector b rotated by a's rotation (no translation)"),
    ("transform_multiply", _transform_mul, "the composition of two transforms (a after b... a * b)"),
    ("quat_mul", _quat_mul, "the Hamilton product of two quaternions (quat * quat)"),
]

OPS = (
    [_spec(n, (A,), r, d) for n, r, d in UNARY_BUILTINS]
    + [_spec("cofactor", (A,), _inverse, "the cofactor matrix (the gradient of the determinant)", api=False)]
    + [_spec(n, (A, B), r, d, api=n != "quat_mul") for n, r, d in BINARY_BUILTINS]
    + [
        OpSpec("value_new", (Param("type", "dtype"),), _new, "vec",  # emitted as the type's constructor
               "wp.vec3(x, y, z), wp.mat22(...), wp.quat(...), wp.transform(p, q): a value from components",
               variadic="args", api=False, elementwise=True),
        OpSpec("value_extract", (A,), _extract, "extract", "v[i], v.x, m[i, j], m[i]: a component or a row",
               variadic="indices", api=False, elementwise=True),
        OpSpec("value_insert", (A, Param("value", "value")), _insert, "insert",
               "a with the component or row at the indices replaced (v[i] = x)", variadic="indices",
               api=False, elementwise=True),
        OpSpec("array_store_part", (A, Param("value", "value")), _store_part, "array_store_part",
               "a[i].x = value: one component (or row) of an array element, the others untouched",
               adj_cpp="array_store_part", variadic="indices", api=False, effect=True),
        OpSpec("matrix_from_rows", (), _from_vectors, "matrix_from_rows", "a matrix whose rows are the vectors",
               variadic="args", elementwise=True),
        OpSpec("matrix_from_cols", (), _from_vectors, "matrix_from_cols",
               "a matrix whose columns are the vectors", variadic="args", elementwise=True),
        OpSpec("quat_identity", (Param("dtype", "dtype", None),), _identity_of("quat"), "quat_identity",
               "the identity rotation (0, 0, 0, 1)", elementwise=True),
        OpSpec("transform_identity", (Param("dtype", "dtype", None),), _identity_of("transform"),
               "transform_identity", "the identity transform (p = 0, q = identity)", elementwise=True),
    ]
)


def over_tiles(rule: Callable[[Bound], Type | None]) -> Callable[[Bound], Type | None]:
    """An elementwise value rule lifted to tiles: tile operands (of one shape) stand for their
    elements and the result is a tile of the element's result. The adjoint of tile_map over a
    func on vec3 tiles applies the func's ops (and their adjoints) to whole tiles this way; from
    source, ops/value_tiles.py still refuses `wp.length(tile)`, as Warp does."""

    def lifted(b: Bound) -> Type | None:
        named = [(n, t) for n, t in b.types.items()] + [(f"arg{i}", t) for i, t in enumerate(b.variadic)]
        tiles = [(n, t) for n, t in named if isinstance(t, TileT)]
        if not tiles:
            return rule(b)
        for n, t in tiles[1:]:
            if t.shape != tiles[0][1].shape:
                b.fail("TC0101", f"shapes differ: {tiles[0][0]} is {fmt_shape(tiles[0][1].shape)}, "
                       f"{n} is {fmt_shape(t.shape)}", n)
        held = replace(b, types={n: t.dtype if isinstance(t, TileT) else t for n, t in b.types.items()},
                       variadic=[t.dtype if isinstance(t, TileT) else t for t in b.variadic])
        return TileT(rule(held), tiles[0][1].shape)  # type: ignore[arg-type]  # an element rule's result: an element type

    return lifted


OPS = [replace(spec, rule=over_tiles(spec.rule)) for spec in OPS]


# Warp's value-type builtins tilec does not compile yet: calling one is a TC0430 diagnostic.
NOT_YET = frozenset({
    "matrix", "transform_add_inplace", "transform_sub_inplace", "vector",
})  # (the Python-written ones tilec provides are frontend/warp_library.py's)

# Which components `.x` / `.w` / `.p` name, per family.
ATTRIBUTES = {"x": 0, "y": 1, "z": 2, "w": 3}
