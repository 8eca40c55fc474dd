"""Slices of vector and matrix values in SIMT kernels: the pieces a physics or graphics kernel takes
apart (the xy of a position, the rotation rows of a pose, every other component)."""
import warp as wp

HALF = 2


@wp.kernel
def planar(p: wp.array(dtype=wp.vec4), xy: wp.array(dtype=wp.vec2), zw: wp.array(dtype=wp.vec2), e: wp.array(dtype=float)):
    i = wp.tid()
    v = p[i]
    a = v[0:2]
    b = v[HALF:]
    xy[i] = a * 2.0 + v[::2]
    zw[i] = b - v[-1:-3:-1]
    e[i] = wp.dot(v[1:4], v[0:3]) + wp.length_sq(v[::3])


@wp.kernel
def reversed_tail(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = p[i]
    w = v[::-1]
    tail = v[1:]
    head = v[:1]
    q[i] = w * v[2] + wp.vec3d(tail[0], head[0], tail[1] * wp.float64(2.0))


@wp.kernel
def blocks(m: wp.array(dtype=wp.mat33), top: wp.array(dtype=wp.mat22), col: wp.array(dtype=wp.vec3),
           row: wp.array(dtype=wp.vec2), s: wp.array(dtype=float)):
    i = wp.tid()
    a = m[i]
    top[i] = a[0:2, 0:2] * a[1:, 1:]
    col[i] = a[:, 1] + a[::-1, 0]
    row[i] = a[2, 1:] - a[0, :2]
    s[i] = wp.determinant(a[1:3, 0:2]) + wp.trace(a[::2, ::2])


@wp.kernel
def quat_parts(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), w: wp.array(dtype=float)):
    i = wp.tid()
    r = q[i]
    v[i] = r[0:3] * r[3]
    w[i] = wp.length(r[1:])


@wp.kernel
def slice_writes(p: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33), y: wp.array(dtype=wp.vec4),
                 z: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    v = p[i]
    v[1:3] = wp.vec2(v[0] * v[3], wp.sin(v[1]))
    v[::3] += v[1:3] * 2.0
    y[i] = v
    a = m[i]
    a[0:2, 1] = a[1:, 2] * a[0, 0]
    a[2, :] -= wp.vec3(1.0, 2.0, 3.0) * a[1, 1]
    z[i] = a
