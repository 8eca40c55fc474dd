# Statements Warp accepts inside kernels and funcs: assert, bitwise and shift updates,
# wp.static, wp.constant, the expect_* checks.
import warp as wp

TILE = 64
N = 8
MASK = 0x0F
SCALE = wp.constant(1.5)
STEPS = 4


@wp.func
def checked_log(x: float) -> float:
    assert x > 0.0, "log of a non-positive value"
    return wp.log(x)


@wp.func
def parity_scale(k: int) -> float:
    k ^= 1
    k &= 1
    return float(k) + 0.5


@wp.kernel
def assert_simt(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    assert i >= 0
    assert x[i] == x[i], "NaN input"
    y[i] = x[i] * x[i] * 3.0


@wp.kernel
def assert_tile(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    assert i < 1000
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, wp.tile_map(wp.sin, t) * t, offset=i * TILE)


@wp.kernel
def assert_in_func(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = checked_log(x[i] * x[i] + 1.0)


# The updated arrays are compared after the forward launch; the outputs do not read them back
# (a kernel that reads an element it updated in place needs the memory as the forward left it,
# which an adjoint launched on the original inputs does not see).
@wp.kernel
def and_update(flags: wp.array[int], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    flags[i] &= MASK
    y[i] = x[i] * float(i & MASK)


@wp.kernel
def or_update(flags: wp.array[int], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    flags[i] |= 0x10
    y[i] = x[i] * float((i | 0x10) & 0x1F)


@wp.kernel
def xor_update(flags: wp.array[int], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    flags[i] ^= 5
    y[i] = x[i] + float(flags[i])


@wp.kernel
def shl_update(k: wp.array[int], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k[i] <<= 2
    y[i] = x[i] * float(i << 2)


@wp.kernel
def shr_update(k: wp.array[int], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k[i] >>= 1
    y[i] = x[i] * float((i + 7) >> 1)


@wp.kernel
def uint64_xor(h: wp.array[wp.uint64], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    h[i] ^= wp.uint64(0xFF)
    h[i] |= wp.uint64(1) << wp.uint64(40)
    y[i] = x[i] * float((wp.uint64(i) ^ wp.uint64(0xFF)) & wp.uint64(3))


@wp.kernel
def int16_shift(k: wp.array[wp.int16], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k[i] <<= wp.int16(3)
    k[i] >>= wp.int16(2)
    k[i] &= wp.int16(0x7F)
    y[i] = x[i] * float((wp.int16(i) << wp.int16(3)) >> wp.int16(2))


@wp.kernel
def uint32_bits(k: wp.array[wp.uint32], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k[i] |= wp.uint32(3)
    k[i] ^= wp.uint32(1)
    y[i] = x[i] - float(k[i] & wp.uint32(7))


@wp.kernel
def scalar_bits(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    k = i
    k &= 3
    k |= 4
    k ^= 1
    k <<= 1
    k >>= 1
    y[i] = x[i] * float(k)


@wp.kernel
def func_bits(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * parity_scale(i)


@wp.kernel
def static_shape(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=wp.static(TILE), offset=i * wp.static(TILE))
    wp.tile_store(y, t * t, offset=i * wp.static(TILE))


@wp.kernel
def static_range(x: wp.array2d[float], y: wp.array[float]):
    i = wp.tid()
    acc = float(0.0)
    for j in range(wp.static(STEPS)):
        acc += x[i, j] * float(j + 1)
    y[i] = acc


@wp.kernel
def static_value(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i] * wp.static(2.0 * 1.5) + float(wp.static(STEPS // 2)) * x[i] * x[i]


@wp.kernel
def static_matmul(A: wp.array2d[float], B: wp.array2d[float], Cm: wp.array2d[float]):
    i = wp.tid()
    a = wp.tile_load(A, shape=(wp.static(N), wp.static(N)), offset=(i * N, 0))
    b = wp.tile_load(B, shape=(N, N), offset=(0, 0))
    wp.tile_store(Cm, wp.tile_matmul(a, b), offset=(i * N, 0))


@wp.kernel
def constant_scale(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    wp.tile_store(y, t * SCALE, offset=i * TILE)


@wp.kernel
def expect_shape(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    wp.expect_eq(x.shape[0], 32)
    wp.expect_neq(i, -1)
    y[i] = wp.cos(x[i]) * x[i]


@wp.kernel
def expect_identity(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    s = wp.sin(x[i])
    c = wp.cos(x[i])
    wp.expect_near(s * s + c * c, 1.0, 1e-5)
    y[i] = s * c


@wp.kernel
def expect_tile(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    s = wp.tile_sum(t * t)
    wp.expect_eq(s[0] >= 0.0, True)
    wp.tile_store(y, t * 2.0, offset=i * TILE)


@wp.kernel(enable_backward=False)
def forward_only_mul(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = x[i]
    y[i] *= 3.0
    y[i] /= 2.0


@wp.kernel
def flag_mask(x: wp.array[float], y: wp.array[float], mask: wp.uint32):
    i = wp.tid()
    bit = wp.uint32(1) << wp.uint32(i & 31)
    if (mask & bit) != wp.uint32(0):
        y[i] = x[i] * x[i]
    else:
        y[i] = x[i]
