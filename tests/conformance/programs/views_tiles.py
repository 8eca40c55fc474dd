import warp as wp

R = 4
C = 6


@wp.kernel
def row_const(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[1] * t[2])


@wp.kernel
def row_dynamic(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y[i], wp.tile_map(wp.sin, t[i]))


@wp.kernel
def last_row(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[-1, :] * 2.0)


@wp.kernel
def column(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    c = t[:, 2]
    wp.tile_store(y, c * c)


@wp.kernel
def block_strided(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    s = t[1:3, ::2]
    wp.tile_store(y, wp.tile_map(wp.exp, s))


@wp.kernel
def reversed_rows(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[::-1] * t)


@wp.kernel
def reversed_both(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[::-1, ::-1])


@wp.kernel
def view_slice_offset(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    v = wp.tile_view(t, offset=(1, slice(0, C, 2)))
    wp.tile_store(y, v * 3.0)


@wp.kernel
def gather_row(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    idx = wp.tile_arange(0, C, 2, dtype=int)
    r = t[1]
    g = r[idx]
    wp.tile_store(y, g * g)


@wp.kernel
def gather_rows(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    idx = wp.tile_arange(1, 4, 2, dtype=int)
    wp.tile_store(y, t[idx] * 2.0)


@wp.kernel
def gather_loaded(A: wp.array(dtype=float), I: wp.array(dtype=int), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=8)
    idx = wp.tile_load(I, shape=4)
    wp.tile_store(y, wp.tile_map(wp.tanh, t[idx]))


@wp.kernel
def assign_row(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    r = t[0] * t[3]
    t[2] = r
    wp.tile_store(y, t)


@wp.kernel
def assign_partial_row(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    t[0, 1:3] = t[3, 4:] * 2.0
    wp.tile_store(y, t)


@wp.kernel
def assign_block(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    u = wp.tile_ones(shape=(R, C), dtype=float)
    u[1:3] = t[0:2] * t[2:4]
    wp.tile_store(y, u)


@wp.kernel
def scale_by_element(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t * t[-1, -2])


@wp.kernel
def row_sums(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    s = wp.tile_sum(t[1]) + wp.tile_sum(t[-1])
    wp.tile_store(y, s)


@wp.kernel
def rows_added(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[1] + t[2] - t[0])


@wp.kernel
def matmul_of_slices(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    a = wp.tile_load(A, shape=(R, C))
    b = wp.tile_load(B, shape=(C, C))
    c = wp.tile_matmul(a[:, 0:4], b[0:4, ::2])
    wp.tile_store(y, c)


@wp.kernel
def reversed_1d(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    wp.tile_store(y, t[::-1] * t)


@wp.kernel
def strided_1d(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    wp.tile_store(y, t[1::2] * t[::2])


@wp.kernel
def chained_slices(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[1:][::-1][:, 2:5])


@wp.kernel
def plane_of_3d(A: wp.array3d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(2, R, C))
    wp.tile_store(y, t[1] * t[0])


@wp.kernel
def middle_axis(A: wp.array3d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(2, R, C))
    wp.tile_store(y, t[:, 1, :])


@wp.kernel
def rows_in_loop(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    acc = wp.tile_zeros(shape=C, dtype=float)
    for k in range(R):
        acc += t[k] * float(k + 1)
    wp.tile_store(y, acc)


@wp.kernel
def rows_rewritten_in_loop(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    for k in range(1, R):
        t[k] = t[k] + t[k - 1]
    wp.tile_store(y, t)


@wp.kernel
def cols_reversed(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[:, ::-1] - t)


@wp.kernel
def overlapping_rows(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    wp.tile_store(y, t[1:3] * t[0:2])


@wp.kernel
def window_1d(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=8)
    wp.tile_store(y, t[2:6] + t[-4:])


@wp.kernel
def row_of_3d(A: wp.array3d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(2, R, C))
    wp.tile_store(y, wp.tile_map(wp.sin, t[1, 2]))


@wp.kernel
def gather_then_reduce(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    idx = wp.tile_arange(0, 4, 3, dtype=int)
    wp.tile_store(y, wp.tile_sum(t[idx] * t[idx], axis=0))


@wp.kernel
def rows_swapped(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    first = t[0] * 1.0
    t[0] = t[3]
    t[3] = first
    wp.tile_store(y, t * t)


@wp.func
def add_one(t: wp.tile(dtype=float, shape=(C,))):
    t += wp.tile_ones(shape=C, dtype=float)


@wp.kernel
def views_alias_parent(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float), v: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    r = t[1]
    r[0] = 2.0 * r[1]
    s = wp.tile_view(t, offset=(2,))
    t[2, 0] = t[0, 3] * t[0, 4]
    wp.tile_store(v[0], s * s)
    q = t[3]
    add_one(q)
    c = t[:, 1]
    c += t[:, 2] * t[:, 0]
    wp.tile_store(v[1], r)
    wp.tile_store(y, t * t)


# tile_assign of a tile of another dtype converts its elements as a scalar assignment does (Warp
# 1.19); the gradient is converted back to the source's dtype
@wp.kernel
def assign_f64_into_f32(A: wp.array2d(dtype=wp.float64), y: wp.array2d(dtype=float)):
    row = wp.tile_load(A, shape=(1, C))
    dest = wp.tile_zeros(shape=(R, C), dtype=float)
    wp.tile_assign(dest, wp.tile_broadcast(row * row, shape=(R, C)))
    wp.tile_store(y, dest * dest)


@wp.kernel
def assign_f32_into_f64(A: wp.array2d(dtype=float), y: wp.array2d(dtype=wp.float64)):
    t = wp.tile_load(A, shape=(2, 3))
    dest = wp.tile_ones(shape=(R, C), dtype=wp.float64)
    wp.tile_assign(dest, wp.tile_map(wp.sin, t), offset=(1, 2))
    wp.tile_store(y, dest * dest)


@wp.kernel
def assign_int_into_f32(A: wp.array2d(dtype=wp.int32), y: wp.array2d(dtype=float)):
    t = wp.tile_load(A, shape=(R, C))
    dest = wp.tile_zeros(shape=(R, C), dtype=float)
    wp.tile_assign(dest, t)
    wp.tile_store(y, dest)
