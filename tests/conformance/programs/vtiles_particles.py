import warp as wp

BODIES = 32


@wp.func
def speed(v: wp.vec3) -> float:
    return wp.length(v)


@wp.func
def direction(v: wp.vec3) -> wp.vec3:
    return wp.normalize(v)


@wp.func
def kinetic(v: wp.vec3, m: float) -> float:
    return 0.5 * m * wp.dot(v, v)


@wp.func
def drift(p: wp.vec3, v: wp.vec3) -> wp.vec3:
    return p + v * 0.1


@wp.kernel
def centroid(pos: wp.array(dtype=wp.vec3), center: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BODIES, offset=i * BODIES)
    c = wp.tile_sum(p) / float(BODIES)
    wp.tile_store(center, c, offset=i)


@wp.kernel
def speeds(vel: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    v = wp.tile_load(vel, shape=BODIES, offset=i * BODIES)
    wp.tile_store(out, wp.tile_map(speed, v), offset=i * BODIES)


@wp.kernel
def directions(vel: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = wp.tile_load(vel, shape=BODIES, offset=i * BODIES)
    wp.tile_store(out, wp.tile_map(direction, v), offset=i * BODIES)


@wp.kernel
def energy(vel: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    v = wp.tile_load(vel, shape=BODIES, offset=i * BODIES)
    m = wp.tile_load(mass, shape=BODIES, offset=i * BODIES)
    e = wp.tile_sum(wp.tile_map(kinetic, v, m))
    wp.tile_atomic_add(total, e)


@wp.kernel
def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BODIES, offset=i * BODIES)
    v = wp.tile_load(vel, shape=BODIES, offset=i * BODIES)
    wp.tile_store(out, wp.tile_map(drift, p, v), offset=i * BODIES)


@wp.kernel
def scaled(pos: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), s: float):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BODIES, offset=i * BODIES)
    q = p * s + p
    wp.tile_store(out, q - wp.tile_ones(shape=BODIES, dtype=wp.vec3), offset=i * BODIES)


@wp.kernel
def shifted(pos: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BODIES, offset=i * BODIES)
    f = wp.tile_full(shape=BODIES, value=wp.vec3(1.0, -2.0, 0.5), dtype=wp.vec3)
    wp.tile_store(out, p + f, offset=i * BODIES)


@wp.kernel
def pick(pos: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.tile_load(pos, shape=BODIES, offset=i * BODIES)
    first = p[0]
    last = p[BODIES - 1]
    out[i] = first * 2.0 + last
