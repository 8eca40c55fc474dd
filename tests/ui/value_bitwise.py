import warp as wp

mat22ui = wp.types.matrix(shape=(2, 2), dtype=wp.uint32)


@wp.kernel
def values(a: wp.array[wp.vec3ui], b: wp.array[wp.vec2ui], f: wp.array[wp.vec3], m: wp.array[wp.mat22],
           u: wp.array[mat22ui], out: wp.array[wp.vec3ui]):
    i = wp.tid()
    out[i] = a[i] & b[i]  # ERROR TC0201: the operands must have the same type
    out[i] = a[i] << wp.uint32(2)  # ERROR TC0201: the operands must have the same type
    g = f[i] | f[i]  # ERROR TC0203: needs integer components
    n = wp.abs(m[i])  # ERROR TC0203: is defined on scalars and vectors, not on a mat22f
    s = wp.sign(u[i])  # ERROR TC0203: is defined on scalars and vectors, not on
    out[i] = ~a[i]


@wp.kernel
def tiles(a: wp.array[wp.vec3], m: wp.array[wp.mat22], c: wp.array2d[wp.vec2f], out: wp.array[wp.vec3]):
    x = wp.tile_load(a, shape=8)
    y = x & x  # ERROR TC0203: needs integer components
    z = wp.tile_map(wp.abs, wp.tile_load(m, shape=8))  # ERROR TC0407: is defined on scalars and vectors
    t = wp.tile_load(c, shape=(4, 4))
    p = wp.tile_matmul(t, t)  # ERROR TC0203: Warp 1.19 refuses those in tile_matmul too
    x[0] &= x[1]  # ERROR TC0203: needs an integer tile
    wp.tile_store(out, x)


@wp.kernel
def scalar_left(a: wp.array[wp.vec3ui], out: wp.array[wp.vec3ui]):
    i = wp.tid()
    out[i] = wp.uint32(1) & a[i]  # ERROR TC0201: a uint32 scalar and a vec3ui: the operands must have the same type
