import warp as wp


@wp.kernel
def mixing(a: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    w = a[i] + wp.vec4(1.0)  # ERROR TC0201: `+` of a vec3f and a vec4f
    y = m[i] @ wp.vec4(1.0)  # ERROR TC0102: `*` of a mat33f and a vec4f: the matrix has 3 columns
    z = a[i] + d[i]  # ERROR TC0201: `+` of a vec3f and a vec3d
    s = d[i] * 2.0  # ERROR TC0201: the scalar must be float64 like the components
    t = a[i] * 2  # ERROR TC0201: the scalar must be float32
    u = a[i] * a[i]  # ERROR TC0201: use wp.cw_mul
    r = m[i] @ m[i] @ a[i] + a[i] @ m[i]
    p = a[i] @ a[i]  # ERROR TC0201: one operand must be a matrix
    n = a[i] + 1.0  # ERROR TC0201: `+` of a vec3f and a float32 scalar is not defined


@wp.kernel
def components(a: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat), out: wp.array(dtype=float)):
    i = wp.tid()
    v = a[i]
    x = v.w  # ERROR TC0301: vec3f has no component `.w`; it has .x, .y, .z
    y = v[3]  # ERROR TC0106: index 3 is out of range for a vec3f
    v.p = 1.0  # ERROR TC0301: vec3f has no component `.p`
    v[0] = v  # ERROR TC0201: cannot assign a vec3f to a component of a vec3f
    a[i] = 1.0  # ERROR TC0202: cannot store a float32 scalar into a vec3f array
    (v + v).x = 1.0  # ERROR TC0401: a component write into a temporary value
    out[i] = q[i].w + q[i].x


@wp.kernel
def builtins(a: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat), out: wp.array(dtype=float)):
    i = wp.tid()
    m = wp.mat33(a[i], a[i], a[i])  # ERROR TC0303: use wp.matrix_from_rows(...) or wp.matrix_from_cols(...)
    v = wp.vec3(1.0, 2.0)  # ERROR TC0303: vec3f takes 3 components, got 2
    c = wp.cross(wp.vec2(1.0), wp.vec2(2.0))  # ERROR TC0303: `a` must be a 3-component vector, got a vec2f
    r = wp.quat_rotate(a[i], a[i])  # ERROR TC0303: `a` must be a quaternion, got a vec3f
    n = wp.normalize(wp.vec3i(1, 2, 3))  # ERROR TC0203: needs floating-point components
    d = wp.determinant(wp.outer(a[i], wp.vec2(1.0)))  # ERROR TC0303: `a` must be a square matrix
    e = wp.dot(a[i], wp.vec3d(1.0))  # ERROR TC0201: operands differ: a vec3f and a vec3d
    f = wp.vec3(wp.float64(1.0), 2.0, 3.0)  # ERROR TC0201: all components must be float32
    U, s, V = wp.svd3(wp.mat22())  # ERROR TC0201: svd3: takes a 3x3 matrix of floats, got a mat22f
    h = wp.spatial_dot(a[i], a[i])  # ERROR TC0201: wp.spatial_dot: parameter `a` expects a spatial_vectorf, got a vec3f
    out[i] = wp.length(wp.quat_rotate(q[i], a[i]))
