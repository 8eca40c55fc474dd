import warp as wp

N = 8
ROWS = 4


@wp.kernel
def transpose_grid(a: wp.array2d(dtype=wp.vec2), out: wp.array2d(dtype=wp.vec2)):
    t = wp.tile_load(a, shape=(ROWS, N))
    wp.tile_store(out, wp.tile_transpose(t))


@wp.kernel
def broadcast_rows(a: wp.array(dtype=wp.vec3), b: wp.array2d(dtype=wp.vec3), out: wp.array2d(dtype=wp.vec3)):
    row = wp.tile_load(a, shape=N)
    grid = wp.tile_load(b, shape=(ROWS, N))
    spread = wp.tile_broadcast(wp.tile_reshape(row, shape=(1, N)), shape=(ROWS, N))
    wp.tile_store(out, grid + spread)


@wp.kernel
def gather(a: wp.array(dtype=wp.vec3), idx: wp.array(dtype=int), out: wp.array(dtype=wp.vec3)):
    i = wp.tile_load(idx, shape=N)
    t = wp.tile_load_indexed(a, indices=i, shape=(N,))
    wp.tile_store(out, t)


@wp.kernel
def lengths_builtin(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    t = wp.tile_load(a, shape=N)
    wp.tile_store(out, wp.tile_map(wp.length, t))


@wp.kernel
def map_add(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    x = wp.tile_load(a, shape=N)
    y = wp.tile_load(b, shape=N)
    wp.tile_store(out, wp.tile_map(wp.add, x, y))


@wp.kernel
def rotate(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    a = wp.tile_load(m, shape=N)
    x = wp.tile_load(v, shape=N)
    wp.tile_store(out, wp.tile_map(wp.mul, a, x))


@wp.kernel
def weighted(v: wp.array(dtype=wp.vec3), w: wp.array(dtype=float), out: wp.array(dtype=wp.vec3)):
    x = wp.tile_load(v, shape=N)
    s = wp.tile_load(w, shape=N)
    wp.tile_store(out, x * s - x)


@wp.kernel
def element_update(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    x = wp.tile_load(v, shape=N)
    x[2] = wp.vec3(1.0, 2.0, 3.0)
    wp.tile_store(out, x)


@wp.kernel
def component(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    x = wp.tile_load(v, shape=N)
    out[0] = x[1][2] + x[3].x


@wp.kernel
def component_pairs(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), out: wp.array(dtype=float)):
    x = wp.tile_load(v, shape=N)
    a = wp.tile_load(m, shape=N)
    out[0] = x[1, 2] * a[4, 1, 0] + x[5, 0]


@wp.kernel
def sort_by_key(k: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    keys = wp.tile_load(k, shape=N)
    vals = wp.tile_load(v, shape=N)
    wp.tile_sort(keys, vals)
    wp.tile_store(out, vals)


@wp.kernel
def fill_scalar(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    x = wp.tile_load(v, shape=N)
    wp.tile_store(out, x + wp.tile_full(shape=N, value=0.5, dtype=wp.vec3))


@wp.kernel
def quat_tiles(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    a = wp.tile_load(q, shape=N)
    x = wp.tile_load(v, shape=N)
    wp.tile_store(out, wp.tile_map(wp.quat_rotate, a, x))


@wp.kernel
def lanes_to_tile(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), back: wp.array(dtype=wp.vec3)):
    i, j = wp.tid()
    v = x[i * 32 + j] * 2.0
    t = wp.tile(v, preserve_type=True)
    wp.tile_store(out, t, offset=i * 32)
    back[i * 32 + j] = wp.untile(t) + v
