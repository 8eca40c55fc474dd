# Every array annotation spelling Warp accepts, for kernel and func parameters and return types.
import warp as wp

dt = wp.float64
Row = wp.array[dt]
Grid = wp.array2d(dtype=dt)
TILE = 8


@wp.func
def scale(a: wp.array[float], i: int, s: wp.float32) -> float:
    return a[i] * s


@wp.func
def total(g: Grid, r: Row) -> dt:
    return g[0, 0] + r[0]


@wp.func
def as_int(x: float) -> int:
    return 0 if x < 0.0 else 1


@wp.kernel
def spellings(a: wp.array[float], b: wp.array1d[wp.float32], c: wp.array2d[float], d: wp.array3d[dt],
              e: wp.array4d[int], f: wp.array(dtype=float), g: wp.array(dtype=dt, ndim=2), h: Grid,
              r: Row, m: wp.array(dtype=wp.int64, ndim=3)):
    i = wp.tid()
    t = wp.tile_load(c, shape=(TILE, TILE), offset=(i * TILE, 0))
    wp.tile_store(c, t * scale(a, i, 2.0), offset=(i * TILE, 0))
    b[i] = f[i] + float(as_int(a[i]))
    g[0, 0] = total(h, r) + d[0, 0, 0] + dt(e[0, 0, 0, 0]) + dt(m[0, 0, 0])


@wp.kernel
def scalars(a: wp.array[wp.uint64], b: wp.array[wp.int16], c: wp.array[wp.uint16], d: wp.array[wp.bfloat16],
            e: wp.array[wp.int8], f: wp.array[wp.uint8], g: wp.array[wp.uint32], h: wp.array[wp.float16],
            u: wp.uint64, s: wp.int16, v: wp.uint16, w: wp.bfloat16, x: float, n: int, flag: bool):
    i = wp.tid()
    a[i] = a[i] + u
    b[i] = b[i] * s
    c[i] = c[i] + v
    d[i] = d[i] * w
    e[i] = e[i] + wp.int8(1)
    f[i] = f[i] + wp.uint8(n)
    g[i] = g[i] + wp.uint32(n)
    if flag:
        h[i] = h[i] + wp.float16(x)
