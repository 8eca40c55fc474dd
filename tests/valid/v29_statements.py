# Statements Warp accepts: assert, bitwise/shift updates, wp.static, print, expect_*.
import warp as wp

N = 4
MASK = wp.constant(0xF0)


@wp.func
def checked_sqrt(x: float) -> float:
    assert x >= 0.0, "negative input"
    return wp.sqrt(x)


@wp.kernel
def statements(x: wp.array[float], y: wp.array[float], flags: wp.array[wp.uint32], small: wp.array[wp.uint16]):
    i = wp.tid()
    t = wp.tile_load(x, shape=wp.static(N * 2), offset=i * wp.static(N * 2))
    assert i >= 0
    for j in range(wp.static(N)):
        t[j] = t[j] * wp.static(N / 2)
    wp.tile_store(y, t, offset=i * wp.static(N * 2))
    flags[i] &= MASK
    flags[i] |= wp.uint32(1)
    flags[i] ^= wp.uint32(wp.static(1 << 3))
    small[i] <<= wp.uint16(1)
    small[i] >>= wp.uint16(2)
    k = i
    k <<= 2
    k >>= 1
    k &= 7
    k |= 16
    k ^= 1
    v = checked_sqrt(wp.abs(x[i]))
    print(v)
    print(k)
    wp.expect_eq(k & 16, 16)
    wp.expect_neq(k, 0)
    wp.expect_near(v * v, wp.abs(x[i]), 1e-3)
