import warp as wp

N = 16
ROWS = 4


@wp.kernel
def mat_accumulate(a: wp.array(dtype=wp.mat22), out: wp.array(dtype=wp.mat22)):
    acc = wp.tile_zeros(shape=N, dtype=wp.mat22)
    for k in range(3):
        t = wp.tile_load(a, shape=N, offset=k * N)
        acc += t
    wp.tile_store(out, acc)


@wp.kernel
def vec_dot(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    y = wp.tile_load(b, shape=N, offset=i * N)
    wp.tile_store(out, wp.tile_dot(x, y), offset=i)


@wp.kernel
def mat_ddot(a: wp.array(dtype=wp.mat22), b: wp.array(dtype=wp.mat22), out: wp.array(dtype=float)):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    y = wp.tile_load(b, shape=N, offset=i * N)
    wp.tile_store(out, wp.tile_dot(x, y), offset=i)


@wp.kernel
def vec_axpy(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), alpha: float):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    y = wp.tile_load(b, shape=N, offset=i * N)
    wp.tile_axpy(alpha, x, y)
    wp.tile_store(out, y, offset=i * N)


@wp.kernel
def vec_reduce_add(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    wp.tile_store(out, wp.tile_reduce(wp.add, x), offset=i)


@wp.kernel
def row_sums(a: wp.array2d(dtype=wp.vec2), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    x = wp.tile_load(a, shape=(ROWS, N), offset=(i * ROWS, 0))
    wp.tile_store(out, wp.tile_sum(x, axis=1), offset=i * ROWS)


@wp.kernel
def vec_atomic(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    wp.tile_atomic_add(out, x)


@wp.kernel
def vec_double(a: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    s = wp.tile_sum(x * wp.float64(2.0))
    wp.tile_store(out, s, offset=i)


@wp.kernel
def mat_scatter_masked(a: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.mat33)):
    # Newton's midphase: one lane's matrix put in a shared tile, every lane reading it back
    i, lane = wp.tid()
    t = wp.tile_zeros(shape=(2,), dtype=wp.mat33, storage="shared")
    wp.tile_scatter_masked(t, lane % 2, a[i * wp.block_dim() + lane] * 2.0, lane < 2)
    out[i * wp.block_dim() + lane] = wp.tile_extract(t, lane % 2)
