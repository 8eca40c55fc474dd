import warp as wp


@wp.kernel
def transform_points(body_q: wp.array(dtype=wp.transform), body: wp.array(dtype=int), local: wp.array(dtype=wp.vec3),
                     world: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    X = body_q[body[tid]]
    X = wp.transform(wp.transform_get_translation(X), wp.normalize(wp.transform_get_rotation(X)))
    world[tid] = wp.transform_point(X, local[tid])


@wp.kernel
def rotate(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
           back: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    qn = wp.normalize(q[tid])
    r = wp.quat_rotate(qn, v[tid])
    out[tid] = r
    back[tid] = wp.quat_rotate_inv(qn * qn, r)


@wp.kernel
def compose(a: wp.array(dtype=wp.transform), b: wp.array(dtype=wp.transform), angle: wp.array(dtype=float),
            out: wp.array(dtype=wp.transform), p: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    spin = wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), angle[tid])
    T = a[tid] * wp.transform(wp.vec3(1.0, 0.0, 0.0), spin) * b[tid]
    out[tid] = wp.transform_inverse(T)
    p[tid] = wp.transform_vector(T, wp.vec3(0.0, 1.0, 0.0)) + T.p + wp.quat_rotate(wp.quat_inverse(T.q), T.p)


@wp.kernel
def frames(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), R: wp.array(dtype=wp.mat33),
           out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    Rq = wp.quat_to_matrix(q[tid])
    R[tid] = Rq
    out[tid] = wp.transpose(Rq) @ v[tid] + wp.cross(Rq[0], v[tid])
