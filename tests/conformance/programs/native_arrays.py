"""@wp.func_native snippets over arrays, with adj_snippets (Warp's own saxpy example as its docs write
it), a float result's adjoint through adj_ret, several float scalars' adjoints, an array's shape read
in the snippet, and an integer snippet beside float work that needs no adj_snippet."""
import warp as wp

SAXPY = """
    out[tid] = a * x[tid] + y[tid];
"""
SAXPY_ADJ = """
    adj_a += x[tid] * adj_out[tid];
    adj_x[tid] += a * adj_out[tid];
    adj_y[tid] += adj_out[tid];
"""


@wp.func_native(SAXPY, SAXPY_ADJ)
def saxpy(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
          out: wp.array(dtype=wp.float32), tid: int): ...


@wp.kernel
def saxpy_kernel(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
                 out: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    saxpy(a, x, y, out, tid)


@wp.func_native("float sq = x * x;\nreturn sq;", adj_snippet="adj_x += 2.0f * x * adj_ret;")
def square(x: float) -> float: ...


@wp.func_native("""
    if (t < 0.0f) return a;
    return a + t * (b - a);
""", """
    if (t < 0.0f) { adj_a += adj_ret; return; }
    adj_a += (1.0f - t) * adj_ret;
    adj_b += t * adj_ret;
    adj_t += (b - a) * adj_ret;
""")
def blend(a: float, b: float, t: float) -> float: ...


@wp.kernel
def scalar_adjoints(x: wp.array(dtype=float), y: wp.array(dtype=float), t: wp.array(dtype=float),
                    out: wp.array(dtype=float)):
    i = wp.tid()
    s = square(x[i])
    out[i] = 3.0 * s + blend(x[i], y[i], t[i]) * x[i]


@wp.func_native("""
    int n = x.shape[0];
    out[tid] = x[(tid + 1) % n] * 2.0f;
""", """
    int n = x.shape[0];
    adj_x[(tid + 1) % n] += 2.0f * adj_out[tid];
""")
def rotate_double(x: wp.array(dtype=float), out: wp.array(dtype=float), tid: int): ...


@wp.func_native("""
    counts[tid] = labels[tid] * 2 + 1;
    return labels[tid] % 3;
""")
def relabel(labels: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32), tid: int) -> int: ...


@wp.kernel
def shaped_and_integer(x: wp.array(dtype=float), labels: wp.array(dtype=wp.int32), counts: wp.array(dtype=wp.int32),
                       rotated: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    rotate_double(x, rotated, i)
    k = relabel(labels, counts, i)
    y[i] = x[i] * float(k + 1)


@wp.func_native("return wp::vec_t<3, wp::float32>(x, 2.0f * x, x * x);")
def spread(x: wp.float32) -> wp.vec3: ...


@wp.func_native("""
    wp::mat22 m2 = m * v[2] + wp::mat_t<2, 2, wp::float32>(v[0], 0.0f, 0.0f, v[1]);
    return m2;
""")
def adjust(m: wp.mat22, v: wp.vec3) -> wp.mat22: ...


@wp.kernel
def vectors_and_matrices(x: wp.array(dtype=float), ms: wp.array(dtype=wp.mat22), vs: wp.array(dtype=wp.vec3),
                         out: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    v = spread(x[i])
    vs[i] = v
    out[i] = adjust(ms[i], v)


@wp.func_native("""
    out[tid] = x[tid] * s + wp::vec3(0.0f, 1.0f, 0.0f);
""", """
    adj_x[tid] += adj_out[tid] * s;
    adj_s += x[tid][0] * adj_out[tid][0] + x[tid][1] * adj_out[tid][1] + x[tid][2] * adj_out[tid][2];
""")
def scale_points(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3), tid: int): ...


@wp.kernel
def vector_arrays(x: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), out: wp.array(dtype=wp.vec3),
                  lengths: wp.array(dtype=float)):
    i = wp.tid()
    scale_points(x, w[i] * w[i], out, i)
    lengths[i] = wp.length(x[i]) * w[i]
