# Array annotations in Warp's spellings (subscript, keyword, aliases) on tile kernels.
import warp as wp

TILE = 64
R = 4
C = 16
T = 16
RC = R * C
dt = wp.float64
Vec = wp.array[float]
Grid = wp.array2d[dt]
Rows = wp.array2d(dtype=wp.float32)


@wp.func
def softplus(x: float) -> float:
    return wp.log(1.0 + wp.exp(x))


@wp.func
def cube64(x: dt) -> dt:
    return x * x * x


@wp.kernel
def sub1d(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, t * t * 2.0, offset=i * TILE)


@wp.kernel
def sub1d_f32(x: wp.array[wp.float32], y: wp.array[wp.float32]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.sin, t), offset=i * TILE)


@wp.kernel
def array1d_sub(x: wp.array1d[float], y: wp.array1d[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.exp, t) * 0.5, offset=i * TILE)


@wp.kernel
def array2d_rowsum(a: wp.array2d[float], r: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    wp.tile_store(r, wp.tile_sum(t * t, axis=1), offset=i * R)


@wp.kernel
def array2d_colsum(a: wp.array2d[float], r: wp.array2d[float]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    s = wp.tile_sum(t, axis=0)
    wp.tile_store(r, wp.tile_reshape(s, shape=(1, C)), offset=(i, 0))


@wp.kernel
def array3d_sub(a: wp.array3d[float], b: wp.array3d[float]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(2, 4, 8), offset=(i * 2, 0, 0))
    wp.tile_store(b, t * 3.0, offset=(i * 2, 0, 0))


@wp.kernel
def array4d_sub(a: wp.array4d[float], b: wp.array4d[float]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(1, 2, 4, 8), offset=(i, 0, 0, 0))
    wp.tile_store(b, wp.tile_map(wp.tanh, t), offset=(i, 0, 0, 0))


@wp.kernel
def call_ndim2(a: wp.array(dtype=float, ndim=2), b: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    wp.tile_store(b, t * t - t, offset=(i * R, 0))


@wp.kernel
def call_ndim3(a: wp.array(dtype=wp.float32, ndim=3), b: wp.array(dtype=wp.float32, ndim=1)):
    i = wp.tid()
    t = wp.tile_load(a, shape=(1, R, C), offset=(i, 0, 0))
    wp.tile_store(b, wp.tile_reshape(t, shape=(RC,)), offset=i * RC)


@wp.kernel
def call_dtype(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(softplus, t), offset=i * TILE)


@wp.kernel
def mixed_spellings(a: wp.array2d(dtype=float), b: wp.array2d[float], c: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    ta = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    tb = wp.tile_load(b, shape=(R, C), offset=(i * R, 0))
    wp.tile_store(c, ta * tb, offset=(i * R, 0))


@wp.kernel
def alias_f64(x: wp.array[dt], y: wp.array[dt]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.cos, t) * t, offset=i * TILE)


@wp.kernel
def alias_vec(x: Vec, y: Vec):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, t / 4.0, offset=i * TILE)


@wp.kernel
def alias_rows(a: Rows, r: Vec):
    i = wp.tid()
    t = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    wp.tile_store(r, wp.tile_sum(wp.tile_map(wp.sin, t), axis=1), offset=i * R)


@wp.kernel
def alias_grid_gemm(A: Grid, B: Grid, Cm: Grid):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(T, T), offset=(i * T, 0))
    b = wp.tile_load(B, shape=(T, T), offset=(0, j * T))
    c = wp.tile_matmul(a, b)
    wp.tile_store(Cm, c, offset=(i * T, j * T))


@wp.kernel
def gemm_sub(A: wp.array2d[float], B: wp.array2d[float], Cm: wp.array2d[float]):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(T, T), dtype=float)
    for k in range(2):
        a = wp.tile_load(A, shape=(T, T), offset=(i * T, k * T))
        b = wp.tile_load(B, shape=(T, T), offset=(k * T, j * T))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(Cm, acc, offset=(i * T, j * T))


@wp.kernel
def map_func_f64(x: wp.array[dt], y: wp.array[dt]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(cube64, t), offset=i * TILE)


@wp.kernel
def atomic_tile(x: wp.array[float], total: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    s = wp.tile_sum(t * t)
    wp.tile_atomic_add(total, s)


@wp.kernel
def scale_by_element(x: wp.array[float], s: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, t * s[0], offset=i * TILE)


@wp.kernel
def f64_rowsum(a: wp.array2d[wp.float64], r: wp.array[wp.float64]):
    i = wp.tid()
    t = wp.tile_load(a, shape=(R, C), offset=(i * R, 0))
    wp.tile_store(r, wp.tile_sum(t * t, axis=1), offset=i * R)


@wp.kernel
def partial_tiles(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.exp, t * 0.5), offset=i * TILE)
