"""Kernels defined below module level: factories, closures over loops, classes, test functions."""
import warp as wp

ROWS = 4


def make_scale(TILE: int):
    @wp.kernel
    def scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=TILE, offset=i * TILE)
        wp.tile_store(y, t * 3.0, offset=i * TILE)

    return scale


scale8 = make_scale(8)
scale16 = make_scale(16)
scale32 = make_scale(TILE=32)


def make_softplus(TILE: int):
    @wp.func
    def softplus(v: float):
        return wp.log(1.0 + wp.exp(v))

    @wp.kernel
    def apply(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=TILE, offset=i * TILE)
        wp.tile_store(y, wp.tile_map(softplus, t), offset=i * TILE)

    return apply


softplus4 = make_softplus(4)
softplus12 = make_softplus(12)


def make_rownorm(COLS: int):
    HALF = COLS // 2

    @wp.kernel
    def rownorm(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a, shape=(ROWS, COLS), offset=(i * ROWS, 0))
        left = wp.tile_load(a, shape=(ROWS, HALF), offset=(i * ROWS, 0))
        s = wp.tile_sum(t * t, axis=1) + wp.tile_sum(left, axis=1)
        wp.tile_store(out, s, offset=i * ROWS)

    return rownorm


rownorm8 = make_rownorm(8)
rownorm6 = make_rownorm(6)


def make_gemm(M: int, N: int, K: int = 8):
    @wp.kernel
    def gemm(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
        i, j = wp.tid()
        a = wp.tile_load(A, shape=(M, K), offset=(i * M, 0))
        b = wp.tile_load(B, shape=(K, N), offset=(0, j * N))
        wp.tile_store(C, wp.tile_matmul(a, b), offset=(i * M, j * N))

    return gemm


gemm_4x8 = make_gemm(4, 8)
gemm_8x4 = make_gemm(8, 4, K=4)


def make_affine(S: float, B: float):
    @wp.kernel
    def affine(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=16, offset=i * 16)
        wp.tile_store(y, t * S + wp.tile_ones(shape=16, dtype=float) * B, offset=i * 16)

    return affine


affine_half = make_affine(0.5, 1.0)
affine_neg = make_affine(-2.0, 0.25)


def make_typed(dtype):
    @wp.kernel
    def typed_square(x: wp.array(dtype=dtype), y: wp.array(dtype=dtype)):
        i = wp.tid()
        t = wp.tile_load(x, shape=8, offset=i * 8)
        wp.tile_store(y, t * t, offset=i * 8)

    return typed_square


typed_f32 = make_typed(wp.float32)
typed_f64 = make_typed(wp.float64)


def make_default(TILE: int = 8, REPEAT: int = 2):
    @wp.kernel
    def repeat_add(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        acc = wp.tile_zeros(shape=TILE, dtype=float)
        for _r in range(REPEAT):
            acc += wp.tile_load(x, shape=TILE, offset=i * TILE)
        wp.tile_store(y, acc, offset=i * TILE)

    return repeat_add


repeat_default = make_default()
repeat_three = make_default(REPEAT=3)

def make_cumsum(WIDTH: int):
    @wp.kernel
    def cumsum(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=WIDTH, offset=i * WIDTH)
        wp.tile_store(y, wp.tile_scan_inclusive(t * t), offset=i * WIDTH)

    return cumsum


cumulative = {}
for width in [4, 8, 16]:
    cumulative[width] = make_cumsum(width)

# Python binds a loop variable late: Warp compiles each of these with the last value (the
# kernels are launched after the loop); tilec compiles one per value and warns.
looped = []
for COUNT in [2, 5]:

    @wp.kernel
    def sum_first(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        t = wp.tile_load(x, shape=COUNT)
        wp.tile_store(y, wp.tile_sum(t))

    looped.append(sum_first)


class Ops:
    @wp.kernel
    def negate_sum(x: wp.array2d(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=(2, 8), offset=(i * 2, 0))
        wp.tile_store(y, -wp.tile_sum(t, axis=0), offset=i * 8)


def case_kernels():
    N = 8

    @wp.kernel
    def local_const(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=N, offset=i * N)
        wp.tile_store(y, wp.tile_map(wp.sin, t), offset=i * N)

    return local_const


local_const = case_kernels()


@wp.func
def softsign(x: float):
    return x / (1.0 + wp.abs(x))


def make_map(op, TILE: int = 8):
    @wp.kernel
    def mapped(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(x, shape=TILE, offset=i * TILE)
        wp.tile_store(y, wp.tile_map(op, t), offset=i * TILE)

    return mapped


def make_call(f):
    @wp.kernel
    def called(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = f(x[i]) * 2.0

    return called


map_sin = make_map(wp.sin)
map_softsign = make_map(softsign, TILE=4)
call_softsign = make_call(softsign)
call_tanh = make_call(wp.tanh)


class Factory:
    @staticmethod
    def build(ROWS2: int):
        @wp.kernel
        def col_max_sum(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            t = wp.tile_load(a, shape=(ROWS2, 8), offset=(i * ROWS2, 0))
            wp.tile_store(out, wp.tile_sum(t, axis=0) * 0.5, offset=i * 8)

        return col_max_sum


built = Factory.build(3)


def outer(T: int):
    def inner(S: int):
        @wp.kernel
        def two_level(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            t = wp.tile_load(x, shape=T, offset=i * T)
            wp.tile_store(y, t * float(S), offset=i * T)

        return two_level

    return inner(4)


two_level = outer(8)


def make_local_types(scale: float):
    # vector and matrix types declared in the factory beside its kernel (Warp's tests do this)
    vec3f = wp.types.vector(length=3, dtype=wp.float32)
    mat22f = wp.types.matrix((2, 2), wp.float32)

    @wp.kernel
    def local_types(a: wp.array(dtype=vec3f), y: wp.array(dtype=vec3f), d: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = a[i] * scale + vec3f(1.0)
        m = mat22f(a[i][0], a[i][1], a[i][2], scale)
        d[i] = wp.determinant(m)

    return local_types


local_types_half = make_local_types(0.5)
