import enum
from typing import Any

import warp as wp


@wp.kernel
def rebound_views(x: wp.array2d(dtype=float), w: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    row = x[i]
    y[i] = row[0] * w[0]
    row = row[1:]  # a view of the view: another symbol, so the adjoint follows both
    y[i] += row[0] * row[2]
    x = x[:, 1]  # a parameter rebound to a 1-d column
    y[i] += x[i] * 3.0 + w[x.shape[0] - 1]


@wp.kernel
def rebound_tiles(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float), total: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=(4, 8))
    t = wp.tile_transpose(t)  # (8, 4): Warp's tiles compare by dtype, not shape
    t = t * 2.0 + wp.tile_ones(shape=(8, 4), dtype=float)
    wp.tile_store(out, t)
    t = wp.tile_sum(t)  # (1,)
    wp.tile_atomic_add(total, t)



@wp.func
def scaled(x: float):
    return x * 2.5


@wp.func
def cubed(x: float):
    return x * x * x


@wp.func
def blend(x: float, y: float):
    return x * 0.25 + y


@wp.func
def apply(g: wp.Function, x: float):
    return g(x)


@wp.func
def apply_any(g: wp.Function, x: Any):
    return g(x)


@wp.func
def apply_default(x: float, g: wp.Function = wp.sin):
    return g(x) + 1.0


@wp.func
def apply_two(g: wp.Function, x: float, y: float):
    return g(x, y)


@wp.func
def apply_via_local(g: wp.Function, x: float):
    h = g
    return apply(h, x) * 0.5


@wp.kernel
def function_values(a: wp.array(dtype=float), b: wp.array(dtype=float), o0: wp.array(dtype=float),
                    o1: wp.array(dtype=float), o2: wp.array(dtype=float), o3: wp.array(dtype=float),
                    o4: wp.array(dtype=float)):
    i = wp.tid()
    f = cubed
    s = wp.exp
    o0[i] = apply(scaled, a[i]) + f(b[i])
    o1[i] = apply(g=cubed, x=a[i]) + apply_any(scaled, b[i])
    o2[i] = apply_default(a[i]) + apply_default(b[i], wp.cos)
    o3[i] = apply_two(blend, a[i], b[i]) + apply_two(wp.atan2, a[i], b[i])
    o4[i] = apply_via_local(f, a[i]) + s(b[i] * 0.5) + apply(wp.abs, b[i])


@wp.kernel
def mapped(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    t = wp.tile_load(a, shape=(4, 8))
    f = cubed
    wp.tile_store(out, wp.tile_map(f, t))


TABLE = {"scale": scaled, "wave": wp.sin, "gain": 2.5, 3: wp.cos, "blend": blend}


@wp.kernel
def static_tables(a: wp.array(dtype=float), b: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    f = wp.static(TABLE["scale"])
    y[i] = f(a[i]) + wp.static(TABLE["wave"])(b[i]) * wp.static(TABLE["gain"])
    y[i] += apply(wp.static(TABLE[3]), a[i]) + apply_two(wp.static(TABLE["blend"]), a[i], b[i])


MODE = 2
ACTIVATION = "gelu"


@wp.kernel
def static_choices(a: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    if wp.static(MODE == 2 and ACTIVATION in ("gelu", "silu")):
        y[i] = x * wp.sin(x)
    elif wp.static(MODE == 3):
        y[i] = wp.cross(x, x)  # never compiled (Warp neither): not valid for a float
    else:
        y[i] = x
    if wp.static(not MODE > 2):
        y[i] += wp.cos(x)


def make_activation(act: str, dtype):
    @wp.kernel
    def activate(a: wp.array(dtype=dtype), y: wp.array(dtype=dtype)):
        i = wp.tid()
        if wp.static(act == "relu"):
            y[i] = wp.max(a[i], dtype(0.0)) * dtype(1.5)
        elif wp.static(act == "tanh" and dtype == wp.float64):
            y[i] = wp.tanh(a[i])
        else:
            y[i] = a[i] * dtype(0.5)

    return activate


activate_relu = make_activation("relu", float)
activate_tanh64 = make_activation("tanh", wp.float64)
activate_half = make_activation("tanh", float)


@wp.func
def halves_and_axis(x: float, y: float):
    return x * 0.5, wp.vec3(y, x, 1.0)


@wp.kernel
def tuple_values(a: wp.array(dtype=float), b: wp.array(dtype=float), y: wp.array(dtype=float),
                 v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    t = (a[i], 2.5, wp.vec3(a[i], b[i], 1.0), i)
    y[i] = t[0] * t[1] + wp.length(t[2]) + float(t[3]) + float(len(t)) + float(wp.static(len(t)))
    p, q, r, s = t
    u = halves_and_axis(a[i], b[i])
    y[i] += u[0] * p * q
    v[i] = u[1] + r * float(s)
    w = t
    axis_angle = wp.quat_to_axis_angle(wp.normalize(wp.quat(a[i], b[i], 0.5, 1.0)))
    axis = axis_angle[0]
    y[i] += w[1] * axis_angle[1] + axis[0]


@wp.func
def weighted_length(values: tuple[wp.vec3, float]) -> float:
    return wp.length(values[0]) * values[1] + float(len(values))


@wp.func
def summed(values: tuple[float, ...]):
    out = float(0.0)
    for k in range(wp.static(len(values))):
        out += values[k] * float(k + 1)
    for k in range(len(values)):
        out += values[k] * values[k]
    return out


@wp.func
def last_and_count(values: Any):  # (Warp 1.19 fails to build `values[-1]` here, or `values` passed on: tests/test_tuples.py)
    return values[2] * values[0] + float(wp.static(len(values)))


@wp.func
def first_plus_length(values: Any):
    return values[0] + wp.length(values[1])


@wp.kernel
def tuple_arguments(a: wp.array(dtype=float), b: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = (wp.vec3(a[i], b[i], 1.0), a[i] * b[i])
    y[i] = weighted_length(t) + weighted_length((wp.vec3(b[i], 2.0, a[i]), 0.5))
    y[i] += summed((a[i], b[i])) + summed((a[i], b[i], a[i] * a[i], 3.0))
    h = halves_and_axis(a[i], b[i])
    y[i] += last_and_count((b[i], a[i], 2.0)) + first_plus_length(h)


@wp.func
def added(a: float, b: float):
    return a + b


@wp.func
def subtracted(a: float, b: float):
    return a - b


def make_combine(func):
    @wp.kernel
    def combine(a: wp.array(dtype=float), b: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = func(a[i], b[i]) + wp.static(func)(b[i], 2.0) * 3.0 + apply_two(func, a[i], 0.5)

    return combine


combine_added = make_combine(added)
combine_subtracted = make_combine(subtracted)


TABLE_TARGET = scaled  # a module-level name for a func, as Warp's globals are read when it builds
SINE = wp.sin


@wp.kernel
def module_function_names(a: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = apply(TABLE_TARGET, a[i]) + TABLE_TARGET(a[i] * 0.5) + apply(SINE, a[i])


@wp.func
def bump(x: wp.ref[wp.float32], v: wp.ref[wp.vec3], s: float):
    # wp.ref (Warp 1.19): the caller's variables take these updates
    x += s * s
    v[1] = v[1] * s + x
    return x * 2.0


@wp.kernel(enable_backward=False)  # (Warp builds no adjoint through a wp.ref call)
def by_reference(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    v = b[i]
    y = bump(x, v, a[i] + 1.0)
    y += bump(x, v, 0.5)
    out[i] = x + y + v[0] + v[1] * 3.0
    b[i] = v


@wp.struct
class Slot:
    value: float
    dir: wp.vec3


@wp.func
def add_to(x: wp.ref[wp.float32], delta: float):
    x += delta


@wp.func
def set_row(r: wp.ref[wp.vec3], v: wp.vec3):
    r = v


@wp.kernel(enable_backward=False)
def places_by_reference(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3), slots: wp.array(dtype=Slot),
                        out: wp.array(dtype=float)):
    # array elements, struct fields of array elements, vector components and matrix rows passed to
    # wp.ref parameters: Warp passes their addresses
    i = wp.tid()
    add_to(a[i], 10.0)
    add_to(b[i][2], a[i])
    add_to(slots[i].value, 0.5)
    add_to(slots[i].dir[-1], slots[i].value)
    v = wp.vec3(1.0, 2.0, 3.0)
    m = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    add_to(v[-1], 0.25)
    set_row(m[2], v)
    y = bump(a[(i + 1) % a.shape[0] - 0], b[i], 2.0)
    out[i] = v[2] + m[2, 1] + m[2, 2] + y


@wp.func
def coulomb(d: wp.vec3):
    return 1.0 / (wp.length(d) + 1.0e-6)


@wp.func
def soft_clip(x: float, y: float):
    if x * y > 1.0:
        return wp.sin(x * y) * x
    return x * x * y


@wp.func
def cube(x: float):
    return x * x * x


@wp.kernel(enable_backward=False)  # (Warp's adjoint treats wp.grad as a constant; tilec's differentiates it)
def grad_calls(d: wp.array(dtype=wp.vec3), x: wp.array(dtype=float), y: wp.array(dtype=float),
               f: wp.array(dtype=wp.vec3), g: wp.array(dtype=float)):
    i = wp.tid()
    force = wp.grad(coulomb)  # a name for the gradient (Warp's GradWrapper)
    f[i] = -force(d[i])
    a, b = wp.grad(soft_clip)(x[i], y[i])
    t = wp.grad(wp.atan2)(y[i], x[i])  # a tuple of the two
    g[i] = a + 2.0 * b + 3.0 * t[0] + 4.0 * t[1]
    rng = wp.rand_init(5, i)
    h = wp.grad(cube)(wp.randf(rng))  # the argument's draw advances the state once
    g[i] += h + 10.0 * wp.randf(rng)


@wp.kernel
def vector_choices(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22),
                   s: wp.array(dtype=float), out: wp.array(dtype=wp.vec3), mo: wp.array(dtype=wp.mat22)):
    # `x if c else y` and wp.where of vectors, matrices and quaternions
    i = wp.tid()
    flag = s[i] > 0.0
    out[i] = a[i] if flag else b[i] * 2.0
    out[i] += wp.where(s[i] > 0.5, a[i] * s[i], b[i])
    mo[i] = wp.where(flag, m[i] * s[i], m[i])
    q = wp.quat_identity() if flag else wp.quat(0.0, 0.0, 1.0, 0.0)
    out[i] += wp.quat_rotate(q, a[i])
    out[i] += wp.types.vector(wp.vec3d(b[i]), dtype=wp.float32) * 0.5  # the generic constructor converts


@wp.struct
class Swizzle:
    x: wp.vec2f
    m: wp.mat22
    y: wp.int32


@wp.kernel
def struct_vector_updates(foos: wp.array(dtype=Swizzle), v: wp.array(dtype=wp.vec2f)):
    # `a[i].x += v` of vector and matrix fields (atomic, as `a[i] += v`), `.shape` of an array of structs
    i = wp.tid()
    foos[i].x += wp.vec2f(1.0, 2.0) * v[i][0]
    foos[i].x -= v[i]
    foos[i].m += wp.outer(v[i], v[i])
    f = Swizzle()
    f.x += v[i]
    f.x *= 2.0
    foos[i].y = wp.int32(3) + len(foos)
    foos[(i + 1) % foos.shape[0]].x += f.x


@wp.kernel(enable_backward=False)
def poisson_draws(lam: wp.array(dtype=float), counts: wp.array(dtype=wp.uint32), after: wp.array(dtype=float)):
    # wp.poisson below 10 (a product of uniforms) and from 10 (transformed rejection), then the state it left
    i = wp.tid()
    rng = wp.rand_init(1234, i)
    counts[i] = wp.poisson(rng, lam[i] * 60.0) + wp.poisson(rng, 3.5) * wp.uint32(1000)
    after[i] = wp.randf(rng)


@wp.kernel
def static_loop_variables(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # wp.static of a constant loop's variable: Warp unrolls the loop, a constant in each copy
    i = wp.tid()
    s = float(0.0)
    for k in range(6):
        if wp.static(k % 2 == 0):
            continue
        s += wp.static(float(k) * 0.1 + 1.0) * x[i]
        for j in range(2):
            s += float(wp.static(k * 10 + j)) * 0.01
    y[i] = s


@wp.func
def wave_energy(x: float, n: int):
    e = float(0.0)
    for k in range(n):
        e += wp.sin(x * float(k + 1)) / float(k + 1)
    return e


@wp.func
def coupled(x: float, y: float):
    s = float(0.0)
    for k in range(3):
        s += x * y * float(k) + wp.exp(x * 0.1 * float(k))
    return s


@wp.kernel(enable_backward=False)  # (Warp's adjoint treats wp.grad as a constant; tilec's differentiates it)
def grad_loops(x: wp.array(dtype=float), y: wp.array(dtype=float), g: wp.array(dtype=float),
               h: wp.array(dtype=float)):
    # wp.grad of funcs with loops (a run-time and a constant trip count)
    i = wp.tid()
    ge, gn = wp.grad(wave_energy)(x[i], 4)
    gx, gy = wp.grad(coupled)(x[i], y[i])
    g[i] = ge + gx
    h[i] = gy + float(gn)


@wp.struct
class Anchor:
    origin: wp.vec3
    scale: float


@wp.func
def anchored(t: Any):
    a = t[1]
    return wp.length(a.origin) * a.scale + t[0]


@wp.kernel
def tuple_structs(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # a tuple holding a struct: indexed, its field read, unpacked, passed to a func
    i = wp.tid()
    s = Anchor(wp.vec3(x[i], 2.0, 3.0), 1.5)
    t = (x[i] * 2.0, s, i)
    a, b, c = t
    y[i] = t[1].origin[0] + b.scale * a + float(c) + anchored((x[i], s)) + float(len(t))


@wp.func
def anchor_and_axis(x: float) -> tuple[Anchor, wp.vec3]:
    a = Anchor()
    a.origin = wp.vec3(x, x * x, 1.0)
    a.scale = wp.sin(x)
    return a, wp.vec3(0.0, x, 2.0)


@wp.func
def made_anchor(x: float):
    return Anchor(wp.vec3(1.0, x, x), 2.0 * x)


@wp.func
def axis_and_anchor(x: float):
    # unannotated: the struct item's type read from its source, a struct-returning func
    if x > 0.0:
        return x * 3.0, made_anchor(x)
    return -x, made_anchor(x * 0.5)


_SIZES = {"small": 2, "large": 5}
KIND = "large"
SIZE = _SIZES[KIND]  # a module constant read from a dict literal the file never changes
SCALED = SIZE * 2 + _SIZES["small"]


@wp.kernel
def tuple_struct_returns(x: wp.array(dtype=float), y: wp.array(dtype=float), v: wp.array(dtype=wp.vec3)):
    # funcs returning a struct among several values, annotated (`-> tuple[Anchor, wp.vec3]`) or not
    i = wp.tid()
    a, axis = anchor_and_axis(x[i])
    k, b = axis_and_anchor(x[i] - 0.2)
    y[i] = a.scale * k + wp.dot(a.origin, b.origin) + b.scale + float(wp.static(SIZE) + SCALED)
    v[i] = axis * a.scale + b.origin


class Splat:
    """A host class holding a struct and an enum (Newton's `Gaussian.Data`, `Gaussian.SortingMode`)."""

    class Mode(enum.IntEnum):
        RADIAL = 0
        DEPTH = 1

    @wp.struct
    class Data:
        center: wp.vec3
        weight: float
        mode: wp.int32

    def __init__(self, count: int):
        self.count = count


@wp.func
def splat_value(d: Splat.Data, p: wp.vec3) -> float:
    if d.mode == Splat.Mode.DEPTH:
        return (p[2] - d.center[2]) * d.weight
    return wp.length(p - d.center) * d.weight


@wp.kernel
def nested_classes(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # a struct and an enum declared inside a class, reached as `Splat.Data` and `Splat.Mode.DEPTH`
    i = wp.tid()
    d = Splat.Data()
    d.center = wp.vec3(x[i], 1.0, x[i] * 0.5)
    d.weight = 2.0 + x[i]
    d.mode = wp.where(i % 2 == 0, int(Splat.Mode.DEPTH), int(Splat.Mode.RADIAL))
    y[i] = splat_value(d, wp.vec3(0.5, x[i], 2.0))


vec1f = wp.types.vector(1, dtype=wp.float32)
vec5i = wp.types.vector(5, dtype=wp.int32)


class Joint(enum.IntEnum):
    """Members with properties a factory reads (Newton's kamino JointDoFType)."""

    FREE = 0
    REVOLUTE = 1
    SPHERICAL = 2

    def __str__(self):
        return f"Joint.{self.name}"

    @property
    def rotates(self) -> bool:
        return self in (Joint.REVOLUTE, Joint.SPHERICAL)

    @property
    def num_coords(self) -> int:
        """The coordinates it stores."""
        if self.value == self.FREE:
            return 7
        elif self.value == self.REVOLUTE:
            return 1
        elif self.value == self.SPHERICAL:
            return 4
        else:
            raise ValueError("unknown joint")

    @property
    def storage(self) -> Any:
        if self.value == self.REVOLUTE:
            return vec1f
        elif self == Joint.SPHERICAL:
            return wp.vec4f
        return None

    @property
    def axes(self) -> Any:
        if self.value == self.REVOLUTE:
            return wp.constant(vec5i(0, 1, 2, 4, 5))
        return wp.constant(wp.vec3i(3, 4, 5))


def make_weighted_sum(joint: Joint):
    n = joint.num_coords
    coords_t = joint.storage

    @wp.func
    def weighted_sum(q: wp.array(dtype=float), offset: int) -> float:
        c = coords_t(0.0)
        for j in range(n):
            c[j] = q[offset + j]
        s = float(0.0)
        for j in range(wp.static(n)):
            s += c[j] * c[j] * float(j + 1)
        return s

    return weighted_sum


def make_picked_sum(axes: Any):
    @wp.func
    def picked_sum(v: wp.array(dtype=float)) -> float:
        s = float(0.0)
        for j in range(wp.static(len(axes))):
            s += v[axes[j]] * float(j + 1)
        return s

    return picked_sum


@wp.kernel
def enum_properties(q: wp.array(dtype=float), y: wp.array(dtype=float)):
    # enum members' properties read when the module is built: counts, a type, a vector constant
    i = wp.tid()
    if i == 0:
        y[0] = wp.static(make_weighted_sum(Joint.REVOLUTE))(q, 1)
        y[1] = wp.static(make_weighted_sum(Joint.SPHERICAL))(q, 2)
        y[2] = wp.static(make_picked_sum(Joint.REVOLUTE.axes))(q)
        y[3] = wp.static(make_picked_sum(Joint.SPHERICAL.axes))(q)
        y[4] = float(wp.static(Joint.SPHERICAL.num_coords + int(Joint.FREE.rotates) * 10 + int(Joint.REVOLUTE.rotates) * 100))
        y[5] = float(wp.static(Joint.SPHERICAL.axes)[1] + wp.static(Joint.REVOLUTE.num_coords))


def make_bitmask(num_bits: int) -> int:
    """All ones in the low bits (Newton's kamino keying.py): plain Python Warp runs when it builds the module."""
    if num_bits <= 0 or num_bits > 64:
        raise ValueError("bad width")
    if num_bits == 64:
        return 0xFFFFFFFFFFFFFFFF
    return (1 << num_bits) - 1


def shifted(x, factor=2.5, *, offset=0.0):
    y = x * factor
    return y + offset


def make_masked(bits: int):
    MASK = make_bitmask(bits)

    @wp.func
    def masked(i: wp.uint32) -> wp.uint32:
        return i & wp.uint32(MASK)

    return masked


MASK5 = make_bitmask(5)


@wp.kernel
def host_functions(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # module-level plain functions called with constants: in wp.static, a module constant, a factory's constant
    i = wp.tid()
    u = wp.uint32(i * 37)
    y[i] = x[i] * float(MASK5) + wp.static(shifted(1.0, offset=0.5)) + float(u & wp.uint32(wp.static(make_bitmask(3))))
    y[i] += float(wp.static(make_masked(4))(u))


class Wrap(enum.IntEnum):
    """A mode with a property another enum's method reads (Newton's kamino JointCorrectionMode)."""

    TURN = 0
    HALF = 1
    NONE = -1

    @property
    def bound(self) -> float:
        if self.value == self.TURN:
            return float(wp.tau)
        elif self.value == self.HALF:
            return float(wp.pi)
        return float(BIG)


BIG = 1.0e6


class Coords(enum.IntEnum):
    """Members whose method, called with a Wrap, gives a list of bounds (kamino's coords_bound)."""

    ANGLE = 0
    PLANAR = 1

    @property
    def storage(self) -> Any:
        if self.value == self.ANGLE:
            return vec1f
        return wp.vec3f

    def bounds(self, wrap: Wrap, scale: float = 1.0) -> list[float]:
        turn = wrap.bound * scale
        if self.value == self.ANGLE:
            return [turn]
        return [BIG] * 2 + [turn]


def make_clamp(coords: Coords, wrap: Wrap = Wrap.TURN):
    coords_t = coords.storage
    limit = coords_t(coords.bounds(wrap)) if coords_t is not None else None
    doubled = coords_t(coords.bounds(wrap, scale=2.0))

    @wp.func
    def clamp_sum(x: wp.array(dtype=float), i: int) -> float:
        s = float(0.0)
        for j in range(wp.static(len(limit))):
            s += wp.min(x[i] * float(j + 1) * 3.0, limit[j]) + doubled[j] * 0.001
        return s

    return clamp_sum


@wp.kernel
def enum_methods(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # an enum member's plain method called with another enum's member (and a keyword), returning lists
    # built with `[a] * n + [b]`, made a vector constant by a type a property gives
    i = wp.tid()
    y[i] = wp.static(make_clamp(Coords.ANGLE))(x, i) + wp.static(make_clamp(Coords.PLANAR, Wrap.HALF))(x, i) * 10.0
    y[i] += wp.static(make_clamp(Coords.PLANAR, Wrap.NONE))(x, i) * 100.0


class Mix(enum.IntEnum):
    AVERAGE = 0
    MULTIPLY = 1
    MAX = 2


@wp.func
def mix_average(a: float, b: float) -> float:
    return 0.5 * (a + b)


@wp.func
def mix_multiply(a: float, b: float) -> float:
    return a * b


@wp.func
def mix_max(a: float, b: float) -> float:
    return wp.max(a, b)


def get_mixing(mode: Mix = Mix.AVERAGE):
    # a selector written with `match` (Newton's kamino materials.py)
    match mode:
        case Mix.AVERAGE:
            mix_func = mix_average
        case Mix.MULTIPLY | Mix.MAX if mode == Mix.MULTIPLY:
            mix_func = mix_multiply
        case Mix.MAX:
            mix_func = mix_max
        case _:
            raise ValueError("unsupported mixing")
    return mix_func


def make_mixed_pair(mode: Mix = Mix.AVERAGE):
    mix = get_mixing(mode)  # a func the selector picks, bound in the factory

    @wp.func
    def mixed_pair(a: float, b: float) -> float:
        return mix(a, b) + 1.0

    return mixed_pair


@wp.kernel
def match_selectors(x: wp.array(dtype=float), y: wp.array(dtype=float), a: wp.array(dtype=float),
                    m: wp.array(dtype=float), h: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.static(make_mixed_pair(Mix.AVERAGE))(x[i], y[i])
    m[i] = wp.static(make_mixed_pair(Mix.MULTIPLY))(x[i], y[i]) + wp.static(get_mixing(Mix.MULTIPLY))(y[i], y[i])
    h[i] = wp.static(make_mixed_pair(Mix.MAX))(x[i], y[i])


vec5f = wp.types.vector(5, dtype=float)


@wp.func
def scaled_first(p: wp.vec3, scale: wp.vec3 = wp.vec3(1.0), m: wp.mat22 = wp.mat22(1.0, 2.0, 3.0, 4.0),
                 v: vec5f = vec5f(0.5)):
    # vector and matrix defaults (Newton's raycast.py `scale: wp.vec3 = wp.vec3(1.0)`)
    return wp.cw_div(p, scale)[0] * m[1, 0] + v[4] * p[1]


@wp.kernel
def vector_defaults(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.vec3(x[i], x[i] * x[i], 3.0)
    y[i] = scaled_first(p) + scaled_first(p, wp.vec3(2.0, 1.0, 1.0))
