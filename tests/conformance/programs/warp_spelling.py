import enum
import math

import numpy as np
import warp as wp

# In the kernels' bodies Warp's names without `wp.` (its builtins, types and constants), as Warp reads a
# name the module does not bind: an attribute of warp.


@wp.struct
class Complex:
    re: float
    im: float

    def describe(self):  # a host method: Python's (Warp and tilec leave it out of kernels)
        return f"{self.re} + {self.im}i"


# Warp calls a module's own @wp.func named like an operator for `a + b` when it takes the operands' types
@wp.func
def add(a: Complex, b: Complex) -> Complex:
    return Complex(a.re + b.re, a.im + b.im)


@wp.func
def mul(a: Complex, b: Complex) -> Complex:
    return Complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)


@wp.func
def mul(a: Complex, s: float) -> Complex:  # noqa: F811  (an overload: Warp picks by the argument types)
    return Complex(a.re * s, a.im * s)


@wp.func
def sub(a: wp.vec3, b: wp.vec3) -> wp.vec3:  # shadows the builtin for vec3 operands only: a cross product
    return cross(a, b)


@wp.kernel
def bare_builtins(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    i = wp.tid()
    m = mat22(x[i], 1.0, 2.0, x[i] * x[i])
    w = vec3(x[i], 2.0, 3.0)
    y[i] = sqrt(abs(x[i]) + 1.0) * wp.pi + length(v[i]) + determinant(m) + round(x[i] * 0.1) + pow(abs(x[i]) + 0.5, 1.5)
    y[i] += dot(w, v[i]) + clamp(x[i], -0.25, 0.25) + float32(tanh(x[i]))
    y[i] += float(x.shape[0] * 10 + x.shape[1])  # 80: Warp's unused extents read 0 (tilec warns)


@wp.kernel
def struct_operators(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = Complex(x[i], 0.5)
    b = Complex(1.5, x[i] * 2.0)
    c = a * b + a * 3.0
    c += b  # `c = c + b`
    for _ in range(2):
        c = c * a
    d = x[i] * 2.0 - 1.0  # floats: the builtin
    y[i] = c.re + 10.0 * c.im + d


@wp.kernel
def vector_operators(v: wp.array(dtype=wp.vec3), u: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = v[i] - u[i] + v[i] * 2.0


# Warp's generic annotations: wp.Float, wp.Int, wp.Scalar, and vectors and matrices of such dtypes
mat22i = wp.types.matrix((2, 2), wp.int32)


@wp.func
def mixed_sum(a: wp.Float, b: wp.Float) -> wp.Float:
    return a * b + a


@wp.func
def int_components(v: wp.types.vector(3, wp.Int)) -> wp.Int:
    return v[0] * v[1] + v[2]


@wp.func
def scalar_trace(m: wp.types.matrix(shape=(2, 2), dtype=wp.Scalar)) -> wp.Scalar:
    return m[0, 0] * m[1, 1] + m[0, 1]


@wp.kernel
def kind_annotations(x: wp.array(dtype=wp.float64), z: wp.array(dtype=float), k: wp.array(dtype=int),
                     y: wp.array(dtype=wp.float64), w: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    y[i] = mixed_sum(x[i], wp.float64(1.5)) + scalar_trace(wp.mat22d(x[i], wp.float64(2.0), x[i], x[i]))
    w[i] = mixed_sum(z[i], z[i]) + scalar_trace(wp.mat22(z[i], 1.0, 2.0, 3.0))
    n[i] = int_components(wp.vec3i(k[i], 2, 3)) + scalar_trace(mat22i(k[i], 1, 2, k[i]))
    n[i] += wp.int32(int_components(wp.vec3s(wp.int16(k[i]), wp.int16(1), wp.int16(2))))


# Warp's type factories at module level, and its generic vector constructor given a vector
transformd = wp.types.transformation(dtype=wp.float64)
quatf = wp.types.quaternion(dtype=wp.float32)


@wp.kernel
def type_factories(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.vec2(x[i], 2.0)
    c = wp.types.vector(a, length=2)  # a copy: `length=` its own
    d = wp.types.vector(x[i], length=3)  # one component fills them
    q = quatf(0.0, 0.0, wp.sin(x[i] * 0.5), wp.cos(x[i] * 0.5))
    t = transformd(wp.vec3d(wp.float64(x[i]), wp.float64(1.0), wp.float64(2.0)), wp.quat_identity(dtype=wp.float64))
    p = wp.transform_point(t, wp.vec3d(wp.float64(1.0), wp.float64(0.0), wp.float64(0.0)))
    y[i] = c[0] * c[1] + d[2] + wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))[1] + float(p[0])


vec3b = wp.types.vector(length=3, dtype=bool)


@wp.kernel
def keyword_and_bool_values(x: wp.array(dtype=float), y: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    t = wp.transform(p=wp.vec3(x[i], 1.0, 2.0), q=wp.quat_rpy(x[i], 0.0, 0.5))
    u = wp.transform(wp.vec3(0.5, x[i], 0.0), q=wp.quat_identity())
    y[i] = wp.transform_point(wp.transform_multiply(t, u), wp.vec3(1.0, 0.0, 0.0))[2]
    b = wp.types.vector(True, x[i] > 0.0, False)  # a vector of bools from its components (Warp's generic form)
    c = vec3b(x[i] < 0.5)
    n[i] = int(b[0]) + 2 * int(b[1]) + 4 * int(b[2]) + 8 * int(c[1])


@wp.kernel
def transform_parts_in_arrays(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.quat), z: wp.array(dtype=wp.transform),
                              w: wp.array(dtype=wp.transform)):
    # a transform's `.p` / `.q` written in an array element (Warp's test_spatial), and added to
    i = wp.tid()
    z[i].p = x[i] * 2.0
    z[i].q = wp.normalize(y[i])
    w[i].p += x[i]


@wp.kernel
def builtin_keywords(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    # Warp's builtins called with its own parameter names
    i = wp.tid()
    a = x[i] * x[i] + 0.5
    y[i] = wp.pow(x=a, y=1.5) + wp.pow(a, y=2.0) + wp.clamp(x[i], low=-10.0, high=10.0)
    y[i] += wp.atan2(y=x[i], x=2.0) + wp.sqrt(x=a)
    q = wp.quat_from_axis_angle(axis=wp.vec3(0.0, 0.0, 1.0), angle=x[i])
    y[i] += wp.quat_rotate(quat=q, vec=v[i])[0] + wp.where(x[i] > 0.0, value_if_true=x[i], value_if_false=x[i] * 0.5)
    t = wp.transformation(p=v[i], q=q)
    y[i] += wp.transform_point(t, wp.vec3(1.0, 2.0, 0.0))[1]


@wp.kernel
def literal_locals(a: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), z: wp.array(dtype=float)):
    # a local assigned once from a literal, in a typed constructor: at the constructor's precision (Warp 1.19)
    i = wp.tid()
    x = 0.1
    n = 3
    d = wp.vec3d(x, wp.float64(n), a[i])
    y[i] = (d[0] - wp.float64(0.1)) * wp.float64(1.0e12) + d[1] + d[2]  # 0 where d[0] holds 0.1, 1490 for 0.1f
    z[i] = x * 3.0


@wp.func
def weighted(a: float, b: float, c: float) -> float:
    return a + 2.0 * b + 3.0 * c


@wp.kernel
def starred_arguments(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=float),
                      w: wp.array(dtype=wp.vec4)):
    # `*` in a call's arguments: a vector's components, a matrix's rows, a quaternion's, slices of them and of
    # a 1-d array with constant bounds; a computed value is evaluated once
    i = wp.tid()
    p = v[i]
    q = wp.quat(p[0], p[1], p[2], a[i])
    m = wp.mat33(*p, *(p * 2.0), 1.0, a[i], 3.0)
    rows = wp.matrix_from_rows(*m[1:])
    head = wp.vec3(*q[:3])
    tail = wp.vec2(*q[-2:])
    s = wp.max(*p[1:]) + wp.min(*tail) + weighted(*head) + rows[1, 1] * rows[0, 2]
    s += weighted(*a[0:3]) + wp.max(*a[1:7:3])
    u = wp.vec4(*wp.normalize(p), s)
    w[i] = wp.vec4(1.0, *u[1:3], *q[3:])
    y[i] = s + wp.length(u)


# Module constants of Python's forms: a vector or matrix type of a sequence, a transform of constants
vec3bool = wp.types.vector(length=3, dtype=wp.bool)
BOOL_SELECTOR = wp.constant(vec3bool([True, False, True]))
mat22bool = wp.types.matrix((2, 2), dtype=wp.bool)
BOOL_DIAGONAL = wp.constant(mat22bool([True, False, False, True]))
OFFSET = wp.vec3(1.0, 2.0, 3.0)
XFORM = wp.constant(wp.transform(OFFSET, wp.quat(0.1, 0.2, 0.3, 0.9)))
TRIPLE = wp.vec3((0.5, 0.25, 0.125))


@wp.kernel
def sequence_constants(x: wp.array(dtype=float), y: wp.array(dtype=float), n: wp.array(dtype=wp.int32),
                       p: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    count = int(0)
    if BOOL_SELECTOR[0]:
        count += 1
    if BOOL_SELECTOR[1]:
        count += 2
    if BOOL_DIAGONAL[1, 1] and not BOOL_DIAGONAL[0, 1]:
        count += 8
    n[i] = count
    p[i] = wp.transform_point(XFORM, wp.vec3(x[i], 0.0, 1.0)) + TRIPLE * x[i]
    y[i] = XFORM.p[1] * x[i] + XFORM.q[3] + wp.transform_get_rotation(XFORM)[0]


mat22ui = wp.types.matrix(shape=(2, 2), dtype=wp.uint32)


@wp.kernel
def vector_bit_atomics(a_and: wp.array(dtype=wp.vec3ui), a_or: wp.array(dtype=wp.vec3ui),
                       a_xor: wp.array(dtype=wp.vec3ui), b: wp.array(dtype=wp.vec3ui), m_and: wp.array(dtype=mat22ui),
                       m_xor: wp.array(dtype=mat22ui), c: wp.array(dtype=mat22ui)):
    # bitwise updates of integer vector and matrix elements, component by component, from 32 threads each
    i = wp.tid()
    word = i // 32
    mask = wp.vec3ui(wp.uint32(1)) << wp.vec3ui(wp.uint32(i % 32))
    a_and[word] &= (b[word] & mask) | ~mask
    wp.atomic_or(a_or, word, b[word] & mask)
    a_xor[word] ^= b[word] & mask
    square = mat22ui(wp.uint32(1)) << mat22ui(wp.uint32(i % 32))
    wp.atomic_and(m_and, word, (c[word] & square) | ~square)
    m_xor[word] ^= c[word] & square


@wp.kernel
def vector_reductions(a: wp.array(dtype=wp.vec3), x: wp.array(dtype=float), y: wp.array(dtype=float),
                      n: wp.array(dtype=wp.int32), t: wp.array(dtype=wp.transform)):
    # wp.min / wp.max of one vector (its smallest / largest component; NaN components skipped, as fmin),
    # Python's min / max on a vector, and a transform given only its translation (identity rotation)
    i = wp.tid()
    p = a[i]
    q = wp.vec4(p[0], wp.nan, x[i], p[2])
    y[i] = wp.min(p) + max(p * 3.0) + wp.max(q) * wp.min(wp.vec2(x[i], -x[i]))
    n[i] = wp.min(wp.vec3i(3, int(p[1] * 4.0), -2)) + max(wp.vec2i(i, 5))
    pose = wp.transform(p=p)
    t[i] = wp.transform_multiply(pose, wp.transformation(p * x[i], dtype=float))


@wp.kernel
def truth_and_host_constants(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), flags: wp.array(dtype=wp.int32),
                             y: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    # `and` / `or` of a bool and an int (each one's truth), `assert` of an array, math's and numpy's constants,
    # wp.min / wp.max of two vectors (component by component, a NaN component skipped)
    i = wp.tid()
    assert a
    s = float(0.0)
    if i >= 2 and flags[i] & 2:
        s += 1.0
    if flags[i] or i == 0:
        s += 10.0
    y[i] = s + math.pi * a[i][0] + np.e * math.tau
    v[i] = wp.min(a[i], b[i]) * 2.0 + wp.max(a[i], wp.vec3(wp.nan, b[i][1], 0.5)) + max(b[i] * 3.0, a[i])


class Settings:
    """A plain class as a namespace of constants (Warp reads `Settings.GAIN` as the value Python gives it)."""

    GAIN = 1.5
    STEPS = wp.constant(3)
    ENABLED = False
    TWICE = GAIN * 2.0
    EPS = wp.constant(wp.float32(np.finfo(np.float32).eps))  # numpy's float limits, as Python computes them


ParticlePair = Complex  # a struct under a second name: a type and a constructor
clamp_to = wp.clamp  # a builtin under a module name
product = mul  # a func (with its overloads) under a second name


@wp.kernel
def module_aliases_of_names(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=ParticlePair)):
    i = wp.tid()
    s = float(0.0)
    for _k in range(Settings.STEPS):
        s += x[i] * Settings.GAIN + Settings.EPS * 1.0e6
    if Settings.ENABLED:
        s = -s
    y[i] = clamp_to(s, -Settings.TWICE, Settings.TWICE)
    c = ParticlePair(x[i], 1.0)
    z[i] = product(product(c, c), 0.5)


@wp.kernel
def vector_extremes(x: wp.array(dtype=wp.vec3), lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
                    m: wp.array(dtype=wp.mat22)):
    # wp.atomic_min / atomic_max of vectors and matrices: component by component, each component's
    # winner takes that component's adjoint
    i = wp.tid()
    wp.atomic_min(lo, i % 2, x[i] * 2.0)
    wp.atomic_max(hi, 0, x[i])
    wp.atomic_max(m, 0, wp.mat22(x[i][0], x[i][1], x[i][2], x[i][0] * x[i][1]))


class Mode(enum.IntEnum):
    SLOW = 1
    FAST = 2

    @staticmethod
    @wp.func
    def scale(mode: int) -> float:
        if mode == Mode.FAST:
            return 3.0
        return 1.0


SOLREF = (0.02, 1.5)
SOLREF_RATIO = SOLREF[-1]  # an item of a constant tuple: a constant


class vec6(wp.types.vector(length=6, dtype=wp.float32)):
    """A subclass of a vector type: Warp matches it by length and dtype (a spatial_vector is one too)."""

    @staticmethod
    @wp.func
    def from_pair(a: float, b: float):  # a class's func, called `vec6.from_pair(...)`
        return vec6(a, b, a, b, a + b, a * b)


class mat62(wp.types.matrix(shape=(6, 2), dtype=wp.float32)):
    pass


@wp.kernel
def value_subclasses(x: wp.array(dtype=float), v: wp.array(dtype=vec6), y: wp.array(dtype=float),
                     w: wp.array(dtype=wp.spatial_vector)):
    i = wp.tid()
    s = wp.spatial_vector(x[i], 1.0, 2.0, 3.0, 4.0, 5.0)
    a = vec6(x[i]) + v[i] + vec6.from_pair(x[i], 0.5) * Mode.scale(2)
    m = mat62(0.0)
    m[0, 1] = x[i]
    y[i] = wp.dot(a, s) + wp.dot(wp.spatial_top(a), wp.vec3(1.0)) + m[0, 1] * SOLREF_RATIO
    w[i] = a * 2.0


def make_shift(use_scale: bool, offset: float = 0.5, dtype=wp.float32):
    # a factory of funcs called at module level (Newton's raycast.py): one func per call
    K = 3

    @wp.func
    def helper(x: dtype):
        return x * dtype(K)

    @wp.func
    def shift(x: dtype) -> dtype:
        y = helper(x) + dtype(offset)
        if wp.static(use_scale):
            y = y * dtype(SOLREF_RATIO)
        return y

    return shift


shift_scaled = make_shift(True)
shift_plain = make_shift(False, offset=1.0)


def make_pair(scale: float):
    @wp.func
    def pair(x: float):
        return x * scale, x + scale

    return pair


@wp.kernel
def factory_funcs(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = shift_scaled(x[i]) + shift_plain(x[i] * x[i]) * 10.0 + wp.static(make_shift(True, 0.25))(x[i]) * 100.0
    p, q = wp.static(make_pair(3.0))(x[i])  # unpacking the several values of a factory's func
    y[i] += p * q


@wp.func
def bounds_of(p: wp.vec3, r: float) -> tuple[wp.vec3, wp.vec3]:
    return p - wp.vec3(r), p + wp.vec3(r)


@wp.func
def scaled_bounds(p: wp.vec3, r: float):
    # a func returning another's several values as they are (Newton's compute_capsule_bounds)
    return bounds_of(p * 2.0, r)


@wp.kernel
def tuple_forwarding(p: wp.array(dtype=wp.vec3), r: wp.array(dtype=float), lo: wp.array(dtype=wp.vec3),
                     hi: wp.array(dtype=float)):
    i = wp.tid()
    a, b = scaled_bounds(p[i], r[i])
    lo[i] = a * 3.0 + b
    c, d = bounds_of(p[i], r[i])
    hi[i] = c[2] + d[0] * r[i]


@wp.func
def mix_average(a: float, b: float):
    return 0.5 * (a + b)


@wp.func
def mix_max(a: float, b: float):
    return wp.max(a, b)


def get_mixing_function(mode: int):
    # a selector (Newton's kamino get_material_mixing_function): its if/elif chain picks a func
    if mode == Mode.SLOW:
        return mix_average
    elif mode == Mode.FAST:
        return mix_max
    else:
        raise ValueError(mode)


mix_fast = get_mixing_function(Mode.FAST)


@wp.kernel
def selected_funcs(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.static(get_mixing_function(Mode.SLOW))(x[i], 1.0) + mix_fast(x[i], 0.0) * 10.0


@wp.func
def motion(axis: wp.array(dtype=wp.vec3), qd: wp.array(dtype=float), S: wp.array(dtype=wp.vec3), i: int):
    # several values and an array write (Newton's featherstone jcalc_motion): the write is made once
    s = axis[i] * 2.0
    S[i] = s
    return s * qd[i], wp.length(s)


@wp.func
def motion_forwarded(axis: wp.array(dtype=wp.vec3), qd: wp.array(dtype=float), S: wp.array(dtype=wp.vec3), i: int):
    return motion(axis, qd, S, i)


@wp.func
def motion_combined(axis: wp.array(dtype=wp.vec3), qd: wp.array(dtype=float), S: wp.array(dtype=wp.vec3), i: int):
    # unpacks a func with effects and returns two values of its own: its twin without effects calls motion's
    v, length = motion(axis, qd, S, i)
    return v * length, length * 2.0


@wp.struct
class Reach:
    length: float
    tip: wp.vec3


@wp.func
def reach(p: wp.vec3, total: wp.array(dtype=float)) -> Reach:
    # a struct returned (one instance per field) and an atomic add, made once
    r = Reach()
    r.length = wp.length(p)
    r.tip = p * 0.5
    wp.atomic_add(total, 0, r.length)
    return r


@wp.kernel
def effect_returns(axis: wp.array(dtype=wp.vec3), qd: wp.array(dtype=float), S: wp.array(dtype=wp.vec3),
                   S2: wp.array(dtype=wp.vec3), S3: wp.array(dtype=wp.vec3), total: wp.array(dtype=float),
                   y: wp.array(dtype=float), tips: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v, length = motion(axis, qd, S, i)
    w, _ = motion_forwarded(axis, qd, S2, i)
    c, d = motion_combined(axis, qd, S3, i)
    r = reach(v, total)
    y[i] = length * r.length + wp.dot(w, v) + wp.dot(c, v) * d
    tips[i] = r.tip


@wp.func
def support_map(x: float) -> float:
    return x * 2.0


@wp.func
def other_map(x: float) -> float:
    return x * 3.0


def make_inner(support_func):
    @wp.func
    def inner(x: float) -> float:
        return support_func(x) + 1.0

    return inner


def make_support(support_func=None, gain=None):
    # Newton's collision_core: a func defaulted to None, chosen by `if ... is None:` in the factory's body,
    # then passed on to another factory inside the made func
    if support_func is None:
        support_func = support_map
    if gain is None:
        gain = 10.0
    else:
        gain = gain * 2.0

    @wp.func
    def outer(x: float) -> float:
        return wp.static(make_inner(support_func))(x) * gain

    return outer


@wp.kernel
def defaulted_factories(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.static(make_support())(x[i]) + wp.static(make_support(other_map, 50.0))(x[i]) * x[i]
