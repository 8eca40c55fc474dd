"""Warp's builtins that Warp itself writes as Python functions, and a few of its C++ ones that are
compositions of others, in the language tilec compiles.

tilec parses this file (it never imports it) the first time a kernel calls one of them, and checks,
specialises and differentiates each like a @wp.func of the user's: `wp.norm_huber(v)` in a kernel
is a call of `norm_huber` below. Each follows the definition in Warp 1.19's documentation of the
builtin of that name; tests/conformance/cases_warp_builtins.py compares them with Warp. A name
starting with `_` is a helper, callable only from this file. Calls between these funcs are spelled
`wp.<name>`.
"""
from typing import Any

import warp as wp

# ---------------------------------------------------------------- vector norms


@wp.func
def norm_l1(v: Any):
    # the sum of the components' magnitudes, first to last
    total = wp.abs(v[0])
    for i in range(1, len(v)):
        total += wp.abs(v[i])
    return total


@wp.func
def norm_l2(v: Any):
    return wp.length(v)


@wp.func
def norm_huber(v: Any, delta: float = 1.0):
    # quadratic up to |v| = delta, linear beyond, with matching value and slope there
    squared = wp.dot(v, v)
    if squared <= delta * delta:
        return 0.5 * squared
    return delta * (wp.sqrt(squared) - 0.5 * delta)


@wp.func
def norm_pseudo_huber(v: Any, delta: float = 1.0):
    return delta * wp.sqrt(1.0 + wp.dot(v, v) / (delta * delta))


@wp.func
def smooth_normalize(v: Any, delta: float = 1.0):
    return v / wp.norm_pseudo_huber(v, delta)


# ---------------------------------------------------------------- spatial vectors (angular part first)


@wp.func
def spatial_top(a: wp.spatial_vector):
    return wp.vec3(a[0], a[1], a[2])


@wp.func
def spatial_bottom(a: wp.spatial_vector):
    return wp.vec3(a[3], a[4], a[5])


@wp.func
def spatial_dot(a: wp.spatial_vector, b: wp.spatial_vector):
    return wp.dot(wp.spatial_top(a), wp.spatial_top(b)) + wp.dot(wp.spatial_bottom(a), wp.spatial_bottom(b))


@wp.func
def spatial_cross(a: wp.spatial_vector, b: wp.spatial_vector):
    # motion-vector cross product: (w_a x w_b, w_a x v_b + v_a x w_b)
    wa = wp.spatial_top(a)
    va = wp.spatial_bottom(a)
    wb = wp.spatial_top(b)
    vb = wp.spatial_bottom(b)
    return wp.spatial_vector(wp.cross(wa, wb), wp.cross(wa, vb) + wp.cross(va, wb))


@wp.func
def spatial_cross_dual(a: wp.spatial_vector, b: wp.spatial_vector):
    # force-vector cross product: (w_a x w_b + v_a x v_b, w_a x v_b)
    wa = wp.spatial_top(a)
    va = wp.spatial_bottom(a)
    wb = wp.spatial_top(b)
    vb = wp.spatial_bottom(b)
    return wp.spatial_vector(wp.cross(wa, wb) + wp.cross(va, vb), wp.cross(wa, vb))


@wp.func
def velocity_at_point(qd: wp.spatial_vector, r: wp.vec3):
    return wp.spatial_bottom(qd) + wp.cross(wp.spatial_top(qd), r)


@wp.func
def transform_twist(t: wp.transform, x: wp.spatial_vector):
    rotation = wp.transform_get_rotation(t)
    w = wp.quat_rotate(rotation, wp.spatial_top(x))
    v = wp.quat_rotate(rotation, wp.spatial_bottom(x)) + wp.cross(wp.transform_get_translation(t), w)
    return wp.spatial_vector(w, v)


@wp.func
def transform_wrench(t: wp.transform, x: wp.spatial_vector):
    rotation = wp.transform_get_rotation(t)
    f = wp.quat_rotate(rotation, wp.spatial_bottom(x))
    tau = wp.quat_rotate(rotation, wp.spatial_top(x)) + wp.cross(wp.transform_get_translation(t), f)
    return wp.spatial_vector(tau, f)


# ---------------------------------------------------------------- quaternions


@wp.func
def quat_twist(axis: wp.vec3, q: wp.quat):
    # the rotation's part about axis (a unit vector): its vector part projected on the axis
    along = wp.dot(wp.vec3(q[0], q[1], q[2]), axis) * axis
    return wp.normalize(wp.quat(along[0], along[1], along[2], q[3]))


@wp.func
def quat_twist_angle(axis: wp.vec3, q: wp.quat):
    return 2.0 * wp.atan2(wp.abs(wp.dot(axis, wp.vec3(q[0], q[1], q[2]))), q[3])


@wp.func
def quat_twist_angle_signed(axis: wp.vec3, q: wp.quat):
    return 2.0 * wp.atan2(wp.dot(axis, wp.vec3(q[0], q[1], q[2])), q[3])


@wp.func
def quat_between_vectors(a: wp.vec3, b: wp.vec3):
    # the shortest arc from a's direction to b's: axis a x b, half the angle folded into w = 1 + a.b
    # before normalizing (opposite directions give no rotation axis: undefined, as Warp documents)
    u = wp.normalize(a)
    v = wp.normalize(b)
    axis = wp.cross(u, v)
    return wp.normalize(wp.quat(axis[0], axis[1], axis[2], 1.0 + wp.dot(u, v)))


@wp.func
def quat_to_rpy(q: wp.quat):
    # roll about x, pitch about y, yaw about z (fixed axes, in that order); pitch clamped at +-pi/2
    x = q[0]
    y = q[1]
    z = q[2]
    w = q[3]
    roll = wp.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = wp.asin(wp.clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = wp.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return wp.vec3(roll, pitch, yaw)


@wp.func
def quat_rpy(roll: float, pitch: float, yaw: float):
    # the product q_yaw * q_pitch * q_roll of the three rotations about the fixed axes
    return wp.mul(wp._axis_rotation(2, yaw), wp.mul(wp._axis_rotation(1, pitch), wp._axis_rotation(0, roll)))


@wp.func
def quat_from_euler(e: wp.vec3, i: int, j: int, k: int):
    # rotations about the fixed axes i, then j, then k: q_k * q_j * q_i
    return wp.mul(wp._axis_rotation(k, e[k]), wp.mul(wp._axis_rotation(j, e[j]), wp._axis_rotation(i, e[i])))


@wp.func
def _axis_rotation(axis: int, angle: float):
    s = wp.sin(0.5 * angle)
    c = wp.cos(0.5 * angle)
    if axis == 0:
        return wp.quat(s, 0.0, 0.0, c)
    if axis == 1:
        return wp.quat(0.0, s, 0.0, c)
    return wp.quat(0.0, 0.0, s, c)


# ---------------------------------------------------------------- transforms as 4x4 matrices


@wp.func
def transform_to_matrix(t: Any):
    # in t's float type (a transform of float32 or float64)
    p = wp.transform_get_translation(t)
    r = wp.quat_to_matrix(wp.transform_get_rotation(t))
    zero = type(p[0])(0.0)
    return wp.matrix(r[0, 0], r[0, 1], r[0, 2], p[0],
                     r[1, 0], r[1, 1], r[1, 2], p[1],
                     r[2, 0], r[2, 1], r[2, 2], p[2],
                     zero, zero, zero, type(p[0])(1.0), shape=(4, 4))


@wp.func
def transform_compose(position: Any, rotation: Any, scale: Any):
    # the rotation's columns scaled by scale, then the translation, in position's float type
    r = wp.quat_to_matrix(rotation)
    zero = type(position[0])(0.0)
    return wp.matrix(scale[0] * r[0, 0], scale[1] * r[0, 1], scale[2] * r[0, 2], position[0],
                     scale[0] * r[1, 0], scale[1] * r[1, 1], scale[2] * r[1, 2], position[1],
                     scale[0] * r[2, 0], scale[1] * r[2, 1], scale[2] * r[2, 2], position[2],
                     zero, zero, zero, type(position[0])(1.0), shape=(4, 4))


@wp.func
def spatial_adjoint(r: wp.mat33, s: wp.mat33):
    # the block matrix [[r, 0], [s, r]]
    return wp.spatial_matrix(r[0, 0], r[0, 1], r[0, 2], 0.0, 0.0, 0.0,
                             r[1, 0], r[1, 1], r[1, 2], 0.0, 0.0, 0.0,
                             r[2, 0], r[2, 1], r[2, 2], 0.0, 0.0, 0.0,
                             s[0, 0], s[0, 1], s[0, 2], r[0, 0], r[0, 1], r[0, 2],
                             s[1, 0], s[1, 1], s[1, 2], r[1, 0], r[1, 1], r[1, 2],
                             s[2, 0], s[2, 1], s[2, 2], r[2, 0], r[2, 1], r[2, 2])


@wp.func
def quat_to_axis_angle(q: wp.quat):
    # angle in [0, pi] from the vector part's length and |w|; the axis points so that the rotation
    # is q or -q (the zero vector when the vector part is zero)
    v = wp.vec3(q[0], q[1], q[2])
    length = wp.length(v)
    axis = v * wp.copysign(0.0, q[3])
    if length > 0.0:
        axis = v / wp.copysign(length, q[3])
    return axis, 2.0 * wp.atan2(length, wp.abs(q[3]))


@wp.func
def quat_from_matrix(m: Any):
    # Shepperd's method on the upper-left 3x3 block: the largest of w, x, y, z from the trace or the
    # largest diagonal entry (the first of equal ones), the other three from the off-diagonal pairs
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace >= 0.0:
        h = wp.sqrt(trace + 1.0)
        f = 0.5 / h
        return wp.normalize(wp.quaternion((m[2, 1] - m[1, 2]) * f, (m[0, 2] - m[2, 0]) * f, (m[1, 0] - m[0, 1]) * f,
                                    0.5 * h))
    if m[0, 0] >= m[1, 1] and m[0, 0] >= m[2, 2]:
        h = wp.sqrt((m[0, 0] - (m[1, 1] + m[2, 2])) + 1.0)
        f = 0.5 / h
        return wp.normalize(wp.quaternion(0.5 * h, (m[0, 1] + m[1, 0]) * f, (m[2, 0] + m[0, 2]) * f,
                                    (m[2, 1] - m[1, 2]) * f))
    if m[1, 1] > m[0, 0] and m[1, 1] >= m[2, 2]:
        h = wp.sqrt((m[1, 1] - (m[2, 2] + m[0, 0])) + 1.0)
        f = 0.5 / h
        return wp.normalize(wp.quaternion((m[0, 1] + m[1, 0]) * f, 0.5 * h, (m[1, 2] + m[2, 1]) * f,
                                    (m[0, 2] - m[2, 0]) * f))
    h = wp.sqrt((m[2, 2] - (m[0, 0] + m[1, 1])) + 1.0)
    f = 0.5 / h
    return wp.normalize(wp.quaternion((m[2, 0] + m[0, 2]) * f, (m[1, 2] + m[2, 1]) * f, 0.5 * h,
                                (m[1, 0] - m[0, 1]) * f))


@wp.func
def transform_from_matrix(m: Any):
    return wp.transformation(wp.vector(m[0, 3], m[1, 3], m[2, 3]), wp.quat_from_matrix(m))


@wp.func
def transform_decompose(m: Any):
    # position, rotation and per-axis scale of m = [R diag(scale) | position]: the scales are the
    # lengths of the first three columns, the rotation that of the columns divided by them
    sx = wp.sqrt(m[0, 0] * m[0, 0] + m[1, 0] * m[1, 0] + m[2, 0] * m[2, 0])
    sy = wp.sqrt(m[0, 1] * m[0, 1] + m[1, 1] * m[1, 1] + m[2, 1] * m[2, 1])
    sz = wp.sqrt(m[0, 2] * m[0, 2] + m[1, 2] * m[1, 2] + m[2, 2] * m[2, 2])
    cx = wp.vector(m[0, 0], m[1, 0], m[2, 0])
    cy = wp.vector(m[0, 1], m[1, 1], m[2, 1])
    cz = wp.vector(m[0, 2], m[1, 2], m[2, 2])
    if sx != 0.0:
        cx = cx / sx
    if sy != 0.0:
        cy = cy / sy
    if sz != 0.0:
        cz = cz / sz
    rotation = wp.quat_from_matrix(wp.matrix_from_cols(cx, cy, cz))
    return wp.vector(m[0, 3], m[1, 3], m[2, 3]), rotation, wp.vector(sx, sy, sz)


@wp.func
def quat_to_euler(q: wp.quat, i: int, j: int, k: int):
    # Bernardes and Viollet's direct method (2022) for the axis sequence i, j, k (0, 1, 2 for x, y, z):
    # a proper sequence (i == k) takes its third angle about the remaining axis slot, a Tait-Bryan
    # one is the proper method shifted by a quarter turn; near gimbal lock the first angle is 0
    proper = i == k
    third = k
    if proper:
        third = 3 - i - j
    sign = float((i - j) * (j - third) * (third - i)) / 2.0  # the Levi-Civita symbol of (i, j, third)
    a = q[3]
    b = q[i]
    c = q[j]
    d = q[third] * sign
    if not proper:
        a = q[3] - q[j]
        b = q[i] + q[third] * sign
        c = q[j] + q[3]
        d = q[third] * sign - q[i]
    second = wp.acos(2.0 * (a * a + b * b) / (a * a + b * b + c * c + d * d) - 1.0)
    plus = wp.atan2(b, a)
    minus = wp.atan2(d, c)
    first = float(0.0)
    last = float(0.0)
    if wp.abs(second) < 1e-6:
        last = 2.0 * plus
    elif wp.abs(second - wp.pi) < 1e-6:
        last = 2.0 * minus
    else:
        first = plus - minus
        last = plus + minus
    if not proper:
        second -= wp.half_pi
        last *= sign
    e = wp.vec3(0.0)
    e[i] = first
    e[j] = second
    e[third] = last
    return e


@wp.func
def quat_slerp(a: wp.quat, b: wp.quat, t: float):
    # a * (a^-1 b)^t along the shortest arc, as Warp: the relative rotation's axis (turned to the
    # sign of its w) and angle 2 atan2(|v|, |w|), a fraction t of it. Where the angle is below
    # 1e-4 radians the rotation's vector part axis * sin(t * angle / 2) is v * t / w to first
    # order: the same value to float precision, and the gradient stays right at a == b, where the
    # exact form divides 0 by 0
    d = wp.mul(wp.quat_inverse(a), b)
    v = wp.vec3(d[0], d[1], d[2])
    length = wp.length(v)
    w = wp.abs(d[3])
    if length > 1.0e-4 * w:
        return wp.mul(a, wp.quat_from_axis_angle(v / wp.copysign(length, d[3]), t * (2.0 * wp.atan2(length, w))))
    scale = float(0.0)
    if w > 0.0:
        scale = t / d[3]
    return wp.mul(a, wp.quat(v[0] * scale, v[1] * scale, v[2] * scale, wp.cos(t * wp.atan2(length, w))))


@wp.func
def transform_set_translation_copy(t: wp.transform, p: wp.vec3):
    return wp.transform(p, wp.transform_get_rotation(t))


@wp.func
def transform_set_rotation_copy(t: wp.transform, q: wp.quat):
    return wp.transform(wp.transform_get_translation(t), q)


@wp.func
def argmax(v: Any):
    # the index of the first largest component, NaN components skipped (0 when all of them are NaN)
    best = wp.uint32(0)
    for i in range(len(v)):
        if v[best] != v[best] and v[i] == v[i]:  # the first component that is no NaN
            best = wp.uint32(i)
        elif v[i] > v[best]:
            best = wp.uint32(i)
    return best


@wp.func
def argmin(v: Any):
    best = wp.uint32(0)
    for i in range(len(v)):
        if v[best] != v[best] and v[i] == v[i]:
            best = wp.uint32(i)
        elif v[i] < v[best]:
            best = wp.uint32(i)
    return best


@wp.func
def _min_of(v: Any):
    # wp.min(v) of one vector: its smallest component, NaN components skipped as by fmin (NaN when all
    # of them are); the fold's tie goes to the first, so the gradient reaches argmin(v)'s component
    best = v[0]
    for i in range(1, len(v)):
        best = wp.min(best, v[i])
    return best


@wp.func
def _max_of(v: Any):
    best = v[0]
    for i in range(1, len(v)):
        best = wp.max(best, v[i])
    return best


# ---------------------------------------------------------------- geometry


@wp.func
def closest_point_edge_edge(p1: wp.vec3, q1: wp.vec3, p2: wp.vec3, q2: wp.vec3, epsilon: float):
    # (s, t, d): the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2) of two segments, s and t in
    # [0, 1], and their distance. A segment no longer than sqrt(epsilon) is its first point (weight 0);
    # for (nearly) parallel segments s starts at 0 and t corrects it. Its gradient is the exact one of
    # this evaluation (Warp's adjoint damps it where the segments are nearly parallel).
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = wp.dot(d1, d1)
    e = wp.dot(d2, d2)
    f = wp.dot(d2, r)
    s = float(0.0)
    t = float(0.0)
    if a <= epsilon and e <= epsilon:
        s = 0.0
    elif a <= epsilon:
        t = wp.clamp(f / e, 0.0, 1.0)
    elif e <= epsilon:
        s = wp.clamp(-wp.dot(d1, r) / a, 0.0, 1.0)
    else:
        c = wp.dot(d1, r)
        b = wp.dot(d1, d2)
        denom = a * e - b * b
        s0 = float(0.0)
        if denom > 0.0:
            s0 = wp.clamp((b * f - c * e) / denom, 0.0, 1.0)
        t0 = (b * s0 + f) / e
        if t0 < 0.0:
            s = wp.clamp(-c / a, 0.0, 1.0)
        elif t0 > 1.0:
            s = wp.clamp((b - c) / a, 0.0, 1.0)
            t = 1.0
        else:
            s = s0
            t = t0
    gap = (p2 + t * d2) - (p1 + s * d1)
    return wp.vec3(s, t, wp.length(gap))

