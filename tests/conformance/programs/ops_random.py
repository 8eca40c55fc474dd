"""Scalar random draws (wp.randf / randi / randu / randn), each advancing its state as Warp's do."""
import warp as wp


@wp.kernel
def every_draw(seed: int, f: wp.array(dtype=float), g: wp.array(dtype=float), i: wp.array(dtype=int),
               j: wp.array(dtype=int), n: wp.array(dtype=float), u: wp.array(dtype=wp.uint32)):
    k = wp.tid()
    rng = wp.rand_init(seed, k)
    f[k] = wp.randf(rng)
    g[k] = wp.randf(rng, -2.0, 3.0)
    i[k] = wp.randi(rng)
    j[k] = wp.randi(rng, -5, 9)
    n[k] = wp.randn(rng)
    u[k] = wp.randu(rng, wp.uint32(3), wp.uint32(70000))


@wp.func
def jitter(x: float, rng: wp.uint32):
    # the func draws from its own copy of the state (Warp passes scalars by value)
    return x + 0.1 * wp.randn(rng)


@wp.kernel
def walk(x: wp.array(dtype=float), y: wp.array(dtype=float), steps: wp.array(dtype=int)):
    k = wp.tid()
    rng = wp.rand_init(17)
    v = x[k]
    count = int(0)
    for s in range(6):
        if wp.randf(rng) < 0.5:
            v = v + wp.randf(rng) * v
            count += 1
        else:
            v = jitter(v, rng) - wp.randf(rng, 0.0, 0.5)
    # two draws in one expression: left to right
    y[k] = v * (wp.randf(rng) - wp.randf(rng))
    steps[k] = count


@wp.kernel
def scaled_draws(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    k = wp.tid()
    rng = wp.rand_init(5, k)
    lo = x[k]
    # a draw between two values depends on both: (hi - lo) * u + lo
    y[k] = wp.randf(rng, lo, lo * lo + 2.0) * x[k]


@wp.kernel
def lanes_draw(seed: int, out: wp.array2d(dtype=float)):
    b, lane = wp.tid()
    rng = wp.rand_init(seed, b * wp.block_dim() + lane)
    t = wp.tile(wp.randf(rng) + wp.randn(rng))
    noise = wp.tile_randf(shape=8, rng=rng)
    wp.tile_store(out[b], t)
    wp.tile_store(out[b], noise, offset=(wp.block_dim(),))
