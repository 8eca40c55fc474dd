"""Warp builtins as Warp's users call them: operators spelled as builtins, the other atomics, the erf
family, a func's default parameters, len(), and the builtins Warp writes in Python."""
import warp as wp


@wp.func
def damped(v: wp.vec3, scale: float = 0.5, floor: float = 0.01):
    n = float(0.0)
    for k in range(len(v)):
        n += wp.abs(v[k])
    return wp.max(n * scale, floor)


@wp.kernel
def particles(x: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat), twist: wp.array(dtype=wp.spatial_vector),
              energy: wp.array(dtype=float), counts: wp.array(dtype=int)):
    i = wp.tid()
    p = x[i]
    e = wp.norm_huber(p, delta=0.5) + wp.norm_pseudo_huber(p) + damped(p) + damped(p, floor=0.1)
    e += wp.erfc(p[0]) + wp.erfinv(wp.tanh(p[1]) * 0.5) + wp.mod(p[2], 1.5)
    rpy = wp.quat_to_rpy(wp.normalize(q[i]))
    v = wp.velocity_at_point(twist[i], p) + wp.smooth_normalize(rpy)
    wp.atomic_sub(energy, 0, e + wp.dot(v, v))
    wp.atomic_or(counts, 0, wp.lshift(1, i % 16))
    wp.atomic_xor(counts, 1, wp.bit_and(i, 7))
