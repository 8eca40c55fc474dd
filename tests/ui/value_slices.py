import warp as wp

N = 2


@wp.kernel
def bad(x: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33), k: int, y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    a = v[0:k]  # ERROR TC0305: slice bounds of a vec4f must be compile-time integers
    b = v[k:]  # ERROR TC0305: this one is not a compile-time integer
    c = v[0:2.0]  # ERROR TC0305: this one is a float
    d = v[::0]  # ERROR TC0303: slice step must not be zero
    e = v[3:1]  # ERROR TC0104: the slice is empty on axis 0 of a vec4f
    f = v[0:N, 1]  # ERROR TC0304: 2 indices for a vec4f, which has 1 axis
    g = m[i][0:2, 1:1]  # ERROR TC0104: the slice is empty on axis 1 of a mat33f
    h = m[i][3, 0:2]  # ERROR TC0104: index 3 is out of range for an axis of 3
    y[i] = v[0:N][0]


@wp.kernel
def bad_writes(x: wp.array(dtype=wp.vec4), y: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    v = x[i]
    v[0:2] = wp.vec3(1.0, 2.0, 3.0)  # ERROR TC0201: cannot assign a vec3f to the slice, which is a vec2f
    v[1:3] = 2.0  # ERROR TC0201: cannot assign a float32 scalar to the slice
    y[i][0:2] = wp.vec2(1.0, 2.0)  # ERROR TC0401: a slice write into an array element
    y[i] = v
