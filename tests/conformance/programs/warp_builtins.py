import enum
from typing import Any

import warp as wp


class Mode(enum.IntEnum):
    SLOW = 1
    FAST = 2
    BOTH = SLOW + FAST


class Flags(enum.IntFlag):
    GRAVITY = enum.auto()
    DRAG = enum.auto()
    WIND = enum.auto()


SPEED = Mode.BOTH * 10


@wp.kernel
def int_operators(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array2d(dtype=int)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = wp.mod(x, y) + (x % y) * 1000
    out[i, 1] = wp.floordiv(x, y) + (x // y) * 1000
    out[i, 2] = wp.bit_and(x, y) ^ wp.bit_or(x, 12)
    out[i, 3] = wp.bit_xor(x, y) + wp.lshift(x, 3) + wp.rshift(y, 2)
    out[i, 4] = wp.invert(x) + int(wp.unot(x)) + wp.pos(y)
    out[i, 5] = -7 % 3 + (7 % -3) * 10 + wp.mod(-8, 5) * 100 + (-7 // 2) * 1000


@wp.kernel
def float_operators(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    d = b[i] + 0.3  # divisors 1.8 and 2.8: no quotient within a finite-difference step of an integer
    out[i] = wp.mod(a[i], d) * 2.0 + wp.div_approx(a[i], d) + wp.pos(a[i]) + wp.floordiv(a[i], d)


@wp.kernel
def mod_by_constant(a: wp.array(dtype=float), out: wp.array(dtype=float), folded: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.mod(a[i], 0.7) + a[i] % 1.3 * 3.0
    folded[i] = -7.5 % 2.0 + wp.mod(7.5, -2.0) * 10.0


@wp.kernel
def atomics(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), bits: wp.array(dtype=int),
            total: wp.array(dtype=float), vtotal: wp.array(dtype=wp.vec3), flags: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_sub(total, i % 3, a[i] * a[i])
    wp.atomic_sub(vtotal, 0, v[i] * 2.0)
    wp.atomic_or(flags, 0, bits[i])
    wp.atomic_and(flags, 1, bits[i])
    wp.atomic_xor(flags, 2, bits[i])


@wp.kernel
def erf_family(x: wp.array(dtype=float), y: wp.array(dtype=float), c: wp.array(dtype=float),
               inv: wp.array(dtype=float), cinv: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = wp.erfc(x[i])
    inv[i] = wp.erfinv(y[i] * 0.98)
    cinv[i] = wp.erfcinv(y[i] + 0.5)


@wp.kernel
def norms(v: wp.array(dtype=wp.vec3), l1: wp.array(dtype=float), l2: wp.array(dtype=float),
          huber: wp.array(dtype=float), pseudo: wp.array(dtype=float), smooth: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    l1[i] = wp.norm_l1(v[i])
    l2[i] = wp.norm_l2(v[i])
    huber[i] = wp.norm_huber(v[i]) + wp.norm_huber(v[i], delta=0.5) * 2.0
    pseudo[i] = wp.norm_pseudo_huber(v[i], 2.0)
    smooth[i] = wp.smooth_normalize(v[i]) + wp.smooth_normalize(v[i], 0.3)


@wp.kernel
def spatial(a: wp.array(dtype=wp.spatial_vector), b: wp.array(dtype=wp.spatial_vector), r: wp.array(dtype=wp.vec3),
            dots: wp.array(dtype=float), crosses: wp.array(dtype=wp.spatial_vector),
            duals: wp.array(dtype=wp.spatial_vector), velocities: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    dots[i] = wp.spatial_dot(a[i], b[i])
    crosses[i] = wp.spatial_cross(a[i], b[i])
    duals[i] = wp.spatial_cross_dual(a[i], b[i])
    velocities[i] = wp.velocity_at_point(a[i], r[i]) + wp.spatial_top(b[i]) - wp.spatial_bottom(b[i]) * 0.5


@wp.kernel
def rotations(q: wp.array(dtype=wp.quat), axis: wp.array(dtype=wp.vec3), e: wp.array(dtype=wp.vec3),
              twists: wp.array(dtype=wp.quat), angles: wp.array(dtype=float), signed_angles: wp.array(dtype=float),
              rpy: wp.array(dtype=wp.vec3), from_rpy: wp.array(dtype=wp.quat), from_euler: wp.array(dtype=wp.quat)):
    i = wp.tid()
    unit = wp.normalize(axis[i])
    twists[i] = wp.quat_twist(unit, q[i])
    angles[i] = wp.quat_twist_angle(unit, q[i])
    signed_angles[i] = wp.quat_twist_angle_signed(unit, q[i])
    rpy[i] = wp.quat_to_rpy(wp.normalize(q[i]))
    from_rpy[i] = wp.quat_rpy(e[i][0], e[i][1], e[i][2])
    from_euler[i] = wp.quat_from_euler(e[i], 2, 0, 1) + wp.quat_from_euler(e[i], 1, 0, 1)


@wp.kernel
def transforms(t: wp.array(dtype=wp.transform), x: wp.array(dtype=wp.spatial_vector), p: wp.array(dtype=wp.vec3),
               q: wp.array(dtype=wp.quat), twist: wp.array(dtype=wp.spatial_vector),
               wrench: wp.array(dtype=wp.spatial_vector), matrix: wp.array(dtype=wp.mat44),
               composed: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    twist[i] = wp.transform_twist(t[i], x[i])
    wrench[i] = wp.transform_wrench(t[i], x[i])
    matrix[i] = wp.transform_to_matrix(t[i])
    composed[i] = wp.transform_compose(p[i], wp.normalize(q[i]), wp.vec3(1.0, 2.0, 0.5))


@wp.func
def scaled_length(v: wp.vec3, scale: float = 2.0, offset: float = 0.25):
    n = float(0.0)
    for k in range(len(v)):
        n += v[k] * v[k]
    return wp.sqrt(n) * scale + offset


@wp.kernel
def defaults_and_len(v: wp.array(dtype=wp.vec3), a: wp.array2d(dtype=float), out: wp.array(dtype=float),
                     sizes: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = scaled_length(v[i]) + scaled_length(v[i], 0.5) + scaled_length(v[i], offset=1.0)
    if i == 0:
        sizes[0] = len(a) + wp.len(a[0]) * 100 + len(wp.mat22()) * 10000 + len(v[0]) * 100000


@wp.kernel
def spatial_matrices(r: wp.array(dtype=wp.mat33), s: wp.array(dtype=wp.mat33), x: wp.array(dtype=wp.spatial_vector),
                     out: wp.array(dtype=wp.spatial_vector)):
    i = wp.tid()
    out[i] = wp.spatial_adjoint(r[i], s[i]) @ x[i]


@wp.kernel
def generic_constructors(a: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d),
                         n: wp.array(dtype=wp.vec2i), f: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    x = a[i]
    v[i] = wp.vector(x, x * x, wp.sin(x)) + wp.vector(length=3, dtype=wp.float64)
    m[i] = wp.matrix(x, x * wp.float64(2.0), wp.cos(x), x * x, shape=(2, 2))
    n[i] = wp.vector(i, 2 * i)
    f[i] = wp.vector(1.0, 2, dtype=float) * float(x)


@wp.kernel
def axis_angles(q: wp.array(dtype=wp.quat), axes: wp.array(dtype=wp.vec3), angles: wp.array(dtype=float)):
    i = wp.tid()
    axis, angle = wp.quat_to_axis_angle(q[i])
    axes[i] = axis
    angles[i] = angle


@wp.kernel
def from_matrices(q: wp.array(dtype=wp.quat), p: wp.array(dtype=wp.vec3),
                  rotations: wp.array(dtype=wp.quat), transforms: wp.array(dtype=wp.transform),
                  positions: wp.array(dtype=wp.vec3), scales: wp.array(dtype=wp.vec3), turned: wp.array(dtype=wp.quat)):
    i = wp.tid()
    # a rotation matrix per element, from a unit quaternion: all four branches of the method are met
    r = wp.quat_to_matrix(wp.normalize(q[i]))
    rotations[i] = wp.quat_from_matrix(r)
    full = wp.transform_compose(p[i], wp.normalize(q[i]), wp.vec3(1.5, 0.5, 2.0))
    transforms[i] = wp.transform_from_matrix(wp.transform_to_matrix(wp.transform(p[i], wp.normalize(q[i]))))
    position, turn, scale = wp.transform_decompose(full)
    positions[i] = position
    scales[i] = scale
    turned[i] = turn


@wp.kernel
def transforms64(t: wp.array(dtype=wp.transformd), p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd),
                 matrix: wp.array(dtype=wp.mat44d), composed: wp.array(dtype=wp.mat44d),
                 back: wp.array(dtype=wp.transformd), positions: wp.array(dtype=wp.vec3d),
                 turned: wp.array(dtype=wp.quatd), scales: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    # Warp's transform helpers in float64, as written (Newton's viewer composes in float64)
    m = wp.transform_to_matrix(wp.transformd(wp.transform_get_translation(t[i]),
                                             wp.normalize(wp.transform_get_rotation(t[i]))))
    matrix[i] = m
    full = wp.transform_compose(p[i], wp.normalize(q[i]), wp.vec3d(wp.float64(1.5), wp.float64(0.5), wp.float64(2.0)))
    composed[i] = full
    back[i] = wp.transform_from_matrix(m)
    position, turn, scale = wp.transform_decompose(full)
    positions[i] = position
    turned[i] = turn
    scales[i] = scale


@wp.kernel
def samplers(seed: int, cdf: wp.array(dtype=float), flat: wp.array2d(dtype=wp.vec2), solid: wp.array2d(dtype=wp.vec3),
             picks: wp.array(dtype=int), tail: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)
    flat[i, 0] = wp.sample_triangle(state)
    flat[i, 1] = wp.sample_unit_ring(state)
    flat[i, 2] = wp.sample_unit_disk(state)
    flat[i, 3] = wp.sample_unit_square(state)
    solid[i, 0] = wp.sample_unit_sphere_surface(state)
    solid[i, 1] = wp.sample_unit_sphere(state)
    solid[i, 2] = wp.sample_unit_hemisphere_surface(state)
    solid[i, 3] = wp.sample_unit_hemisphere(state)
    solid[i, 4] = wp.sample_unit_cube(state)
    picks[i] = wp.sample_cdf(state, cdf) + wp.sample_cdf(state, cdf) * 10
    tail[i] = wp.randf(state)  # the state advanced by every draw above


@wp.kernel
def euler_angles(q: wp.array(dtype=wp.quat), xyz: wp.array(dtype=wp.vec3), zyx: wp.array(dtype=wp.vec3),
                 zxz: wp.array(dtype=wp.vec3), yxy: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    unit = wp.normalize(q[i])
    xyz[i] = wp.quat_to_euler(unit, 0, 1, 2)
    zyx[i] = wp.quat_to_euler(unit, 2, 1, 0)
    zxz[i] = wp.quat_to_euler(unit, 2, 0, 2)
    yxy[i] = wp.quat_to_euler(unit, 1, 0, 1)


@wp.kernel
def slerps(a: wp.array(dtype=wp.quat), b: wp.array(dtype=wp.quat), t: wp.array(dtype=float), out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    out[i] = wp.quat_slerp(wp.normalize(a[i]), b[i], t[i])


@wp.kernel
def set_parts(t: wp.array(dtype=wp.transform), p: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat),
              moved: wp.array(dtype=wp.transform), turned: wp.array(dtype=wp.transform)):
    i = wp.tid()
    x = t[i]
    wp.transform_set_translation(x, p[i] * 2.0)
    y = x
    wp.transform_set_rotation(x, q[i])
    moved[i] = x
    wp.transform_set_rotation(y, q[i] * 0.5)
    turned[i] = y


@wp.func
def doubled(a: Any):
    # Warp's generic spellings: type(x)(...) and x.dtype(...) construct or convert to x's types
    b = type(a)(a)
    one = type(a[0])(1)
    return b * (one + one) + type(a)(type(a[0])(0))


@wp.func
def scaled(a: Any):
    return type(a)(a) * a.dtype(2.0)


@wp.kernel
def generic_types(v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22), out: wp.array(dtype=wp.vec3d),
                  mo: wp.array(dtype=wp.mat22), f: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = doubled(v[i])
    mo[i] = scaled(m[i])
    f[i] = float(v.dtype(1.0, 2.0, 3.0)[1]) * float(v[i][0]) + float(v.dtype.dtype(2.5)) + f.dtype(0.5) * float(v.ndim)


@wp.kernel
def enum_members(flags: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    v = int(0)
    if flags[i] & Flags.GRAVITY:
        v += Flags.GRAVITY
    if flags[i] & Flags.WIND.value:
        v += int(Flags.WIND) * 10
    out[i] = v + Mode.BOTH * 100 + wp.static(Mode.FAST) * 1000 + SPEED * 10000


@wp.kernel
def assign_parts(t: wp.array(dtype=wp.transform), p: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat),
                 out: wp.array(dtype=wp.transform)):
    i = wp.tid()
    x = t[i]
    x.p = p[i]
    x.p += p[i] * 2.0
    x.q = q[i] * x.p[0]
    out[i] = x


@wp.kernel
def rotation_constructors(a: wp.array(dtype=float), m: wp.array(dtype=wp.mat33), q: wp.array(dtype=wp.quat),
                          t: wp.array(dtype=wp.transform), inv: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    x = a[i]
    q[i] = wp.quaternion(x, 2.0, 3.0, 4.0) + wp.quaternion(wp.vec3(1.0, x, 0.5), x * 2.0) + wp.quaternion()
    q[i] += wp.quat(wp.vec3(x, x, 1.0), 0.5)
    t[i] = wp.transformation(wp.vec3(x, 2.0, 3.0), wp.quat(x, 1.0, 0.0, 1.0)) + wp.transformation(
        1.0, 2.0, x, 0.0, 0.0, 0.0, 1.0, dtype=float)
    inv[i] = wp.inverse_approx(m[i] + wp.identity(3, dtype=float) * 4.0)


@wp.kernel
def edge_edge(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
              q2: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], 1.0e-6)



@wp.kernel
def decompositions(a: wp.array(dtype=wp.mat33), b: wp.array(dtype=wp.mat22), q: wp.array(dtype=wp.mat33),
                   r: wp.array(dtype=wp.mat33), sym: wp.array(dtype=wp.mat33), ext: wp.array(dtype=wp.vec2),
                   sigma2: wp.array(dtype=wp.vec2), polar2: wp.array(dtype=wp.mat22)):
    # what the conventions fix: qr3's Q and R, svd2's sigma and U V^T; eig3 leaves its order and signs free, so
    # its reconstruction and extreme eigenvalues (both forms: factors unpacked, output arguments)
    i = wp.tid()
    Q = wp.mat33()
    R = wp.mat33()
    wp.qr3(a[i], Q, R)
    q[i] = Q
    r[i] = R
    E, d = wp.eig3(a[i] + wp.transpose(a[i]))
    sym[i] = E * wp.diag(d) * wp.transpose(E)
    ext[i] = wp.vec2(wp.min(d), wp.max(d))
    U2 = wp.mat22()
    s2 = wp.vec2()
    V2 = wp.mat22()
    wp.svd2(b[i], U2, s2, V2)
    sigma2[i] = s2
    polar2[i] = U2 * wp.transpose(V2)


@wp.kernel
def svd3_factors(a: wp.array(dtype=wp.mat33d), sigma: wp.array(dtype=wp.vec3d), polar: wp.array(dtype=wp.mat33d)):
    # sigma and U V^T: fixed by the conventions (signed sigma; distinct magnitudes), U V^T the rotation closest to a[i]
    i = wp.tid()
    U, s, V = wp.svd3(a[i])
    sigma[i] = s
    polar[i] = U * wp.transpose(V)


@wp.kernel
def arcs(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat),
         turned: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    r = wp.quat_between_vectors(a[i], b[i])  # a @wp.func of Warp's, exported as wp.<name>
    q[i] = r
    turned[i] = wp.quat_rotate(r, wp.normalize(a[i]))
