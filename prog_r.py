
import warp as wp

@wp.func
def jitter(x: float, rng: wp.uint32):
    return x + 0.1 * wp.randn(rng)

@wp.kernel
def k1(y: wp.array(dtype=float)):
    rng = wp.rand_init(17)
    v = float(1.0)
    for s in range(3):
        if wp.randf(rng) < 0.5:
            v = v + wp.randf(rng) * v
            y[s * 3] = v
        else:
            v = jitter(v, rng) - wp.randf(rng, 0.0, 0.5)
            y[s * 3 + 1] = v
    y[9] = v * (wp.randf(rng) - wp.randf(rng))
    y[10] = wp.randn(rng)
