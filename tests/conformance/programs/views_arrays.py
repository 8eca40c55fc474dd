import warp as wp

N = 8
H = 4


@wp.func
def load_row(r: wp.array(dtype=float)):
    return wp.tile_load(r, shape=N)


@wp.func
def store_scaled(r: wp.array(dtype=float), t: wp.tile(dtype=float, shape=(N,)), s: float):
    wp.tile_store(r, t * s)


@wp.func
def plane_sum(p: wp.array2d(dtype=float)):
    return wp.tile_sum(wp.tile_load(p, shape=(H, N)), axis=0)


@wp.kernel
def row_copy(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=N)
    wp.tile_store(B[i], wp.tile_map(wp.sin, t))


@wp.kernel
def plane_load(A: wp.array3d(dtype=float), B: wp.array3d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=(H, N))
    wp.tile_store(B[i], t * t)


@wp.kernel
def nested_index_store(A: wp.array2d(dtype=float), B: wp.array3d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=N)
    wp.tile_store(B[i, 1], t * 2.0)
    wp.tile_store(B[i, 0], wp.tile_map(wp.exp, t))


@wp.kernel
def slice_start(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i, 2:], shape=N)
    wp.tile_store(B[i], t * 3.0)


@wp.kernel
def slice_step(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i, ::2], shape=H)
    wp.tile_store(B[i, 1::2], t * t)


@wp.kernel
def slice_negative_start(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i, -H:], shape=H)
    wp.tile_store(B[i, :H], wp.tile_map(wp.tanh, t))


@wp.kernel
def slice_clamped(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i, 5:100], shape=N)
    wp.tile_store(B[i], t + t)


@wp.kernel
def column_view(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    j = wp.tid()
    t = wp.tile_load(A[:, j], shape=N)
    wp.tile_store(B[j], t * 0.5)


@wp.kernel
def view_to_func(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = load_row(A[i])
    store_scaled(B[i], t * t, 1.5)


@wp.kernel
def plane_to_func(A: wp.array3d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    wp.tile_store(B[i], plane_sum(A[i]))


@wp.kernel
def view_of_view(A: wp.array3d(dtype=float), B: wp.array3d(dtype=float)):
    i = wp.tid()
    plane = A[i]
    for k in range(H):
        t = wp.tile_load(plane[k], shape=N)
        wp.tile_store(B[i][k], wp.tile_map(wp.cos, t))


@wp.kernel
def view_with_offset(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i, j = wp.tid()
    t = wp.tile_load(A[i], shape=H, offset=j * H)
    wp.tile_store(B[i], t * t, offset=j * H)


@wp.kernel
def atomic_into_view(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=N)
    wp.tile_atomic_add(B[0], t)


@wp.kernel
def rows_in_loop(A: wp.array2d(dtype=float), B: wp.array(dtype=float)):
    acc = wp.tile_zeros(shape=N, dtype=float)
    for k in range(H):
        acc += wp.tile_load(A[k], shape=N) * float(k + 1)
    wp.tile_store(B, acc)


@wp.kernel
def leading_slice(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    t = wp.tile_load(A[1:3], shape=(2, N))
    wp.tile_store(B, t * t)


@wp.kernel
def every_other_row(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    t = wp.tile_load(A[::2], shape=(H, N))
    wp.tile_store(B[1::2], t * 2.0)


@wp.kernel
def partial_store(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=H)
    wp.tile_store(B[i, 3:], t)


@wp.kernel
def simt_row_reads(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    row = A[i]
    s = float(0.0)
    for j in range(N):
        s += row[j] * row[j]
    y[i] = s + A[i][0] * A[i, 1]


@wp.kernel
def simt_view_write(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    out = B[i]
    out[0] = A[i, 0] * A[i, 1]
    out[1] = wp.sin(A[i][2])


@wp.kernel
def simt_slice_shape(A: wp.array2d(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    tail = A[i, 3:]
    y[i] = tail[0] * float(tail.shape[0])


@wp.kernel
def simt_atomic_view(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y[0], i % 2, A[i, 0] * A[i, 1])


@wp.kernel
def tile_view_slices_2d(A: wp.array3d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i, 1:3, ::2], shape=(2, H))
    wp.tile_store(B[i], wp.tile_reshape(t, shape=(N,)))


@wp.kernel
def func_writes_view(A: wp.array2d(dtype=float), B: wp.array3d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(A[i], shape=N)
    store_scaled(B[i][1], t, 2.0)
    store_scaled(B[i, 0], t * t, -1.0)


@wp.kernel
def rows_of_views_in_loop(A: wp.array3d(dtype=float), B: wp.array2d(dtype=float)):
    i = wp.tid()
    acc = wp.tile_zeros(shape=N, dtype=float)
    for k in range(H):
        acc += wp.tile_load(A[i, k], shape=N) * wp.tile_load(A[i][H - 1 - k], shape=N)
    wp.tile_store(B[i], acc)


@wp.kernel
def simt_slice_elements(A: wp.array2d(dtype=float), y: wp.array2d(dtype=float)):
    i, j = wp.tid()
    even = A[i, ::2]
    y[i, j] = even[j] * A[i, 1:][j]
