import warp as wp

BITS = 32
N = 16

mat22ui = wp.types.matrix(shape=(2, 2), dtype=wp.uint32)
vec5 = wp.types.vector(5, dtype=wp.float32)


@wp.kernel
def lane_masks(a: wp.array[wp.vec3ui], b: wp.array[wp.vec3ui], both: wp.array[wp.vec3ui],
               differ: wp.array[wp.vec3ui]):
    # every lane owns one bit of each component; the lanes' updates of one element combine
    word, lane = wp.tid()
    t = wp.tile_zeros(shape=2, dtype=wp.vec3ui)
    t[0] = a[word]
    mask = wp.vec3ui(wp.uint32(1)) << wp.vec3ui(wp.uint32(lane))
    t[0] &= (b[word] & mask) | ~mask
    t[1] |= b[word] & mask
    t[1] ^= a[word] & mask
    both[word] = t[0]
    differ[word] = t[1] >> wp.vec3ui(wp.uint32(0), wp.uint32(1), wp.uint32(4))


@wp.kernel
def mat_bit_tiles(a: wp.array[mat22ui], b: wp.array[mat22ui], only_a: wp.array[mat22ui],
                  common: wp.array[mat22ui]):
    i = wp.tid()
    x = wp.tile_load(a, shape=N, offset=i * N)
    y = wp.tile_load(b, shape=N, offset=i * N)
    x |= y
    wp.tile_store(only_a, x ^ y, offset=i * N)
    wp.tile_store(common, wp.tile_map(wp.bit_and, x, wp.tile_load(a, shape=N, offset=i * N)), offset=i * N)


@wp.kernel
def vec_bit_map(a: wp.array[wp.vec3i], b: wp.array[wp.vec3i], c: wp.array[wp.vec3i], d: wp.array[wp.vec3i]):
    x = wp.tile_load(a, shape=N)
    y = wp.tile_load(b, shape=N)
    wp.tile_store(c, wp.tile_map(wp.bit_xor, x, y) & x)
    wp.tile_store(d, wp.tile_map(wp.lshift, x, wp.tile_map(wp.bit_and, y, wp.tile_full(N, wp.vec3i(7), dtype=wp.vec3i))))


@wp.func
def folded(v: vec5, w: vec5) -> vec5:
    centred = w - vec5(0.25)
    return wp.abs(v) - w * 0.5 + wp.cw_mul(wp.sign(centred), wp.abs(centred))


@wp.kernel
def vec_abs(a: wp.array[wp.vec3], b: wp.array[vec5], c: wp.array[vec5], out3: wp.array[wp.vec3],
            out5: wp.array[vec5]):
    x = wp.tile_load(a, shape=N)
    y = wp.tile_load(b, shape=N)
    z = wp.tile_load(c, shape=N)
    wp.tile_store(out3, wp.tile_map(wp.abs, x) * 2.0)
    wp.tile_store(out5, wp.tile_map(folded, y, z) + wp.tile_map(wp.abs, z))


mat33 = wp.types.matrix(shape=(3, 3), dtype=wp.float32)


@wp.kernel
def operator_builtins_mapped(a: wp.array[mat33], b: wp.array[wp.vec3], c: wp.array[float], out_m: wp.array[mat33],
                             out_v: wp.array[wp.vec3], out_f: wp.array[float]):
    # Warp's operator builtins as the mapped function: wp.neg is `-a`, wp.mod `a % b`
    x = wp.tile_load(a, shape=N)
    y = wp.tile_load(b, shape=N)
    z = wp.tile_load(c, shape=N)
    wp.tile_store(out_m, wp.tile_map(wp.neg, x))
    wp.tile_store(out_v, wp.tile_map(wp.neg, y) * 3.0)
    # (a constant divisor: Warp 1.19 gives wp.mod's divisor no gradient, cases_warp_builtins.py)
    wp.tile_store(out_f, wp.tile_map(wp.mod, z * 5.0, wp.tile_ones(shape=N, dtype=float) * 2.5) + wp.tile_map(wp.neg, z))
