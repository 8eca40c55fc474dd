import warp as wp

DRAG = 0.01
GRAVITY = wp.constant(wp.vec3(0.0, -9.8, 0.0))


@wp.func
def damped(v: wp.vec3, k: float):
    return v * (1.0 - k)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
              inv_mass: wp.array(dtype=float), dt: float, x_new: wp.array(dtype=wp.vec3),
              v_new: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    v1 = damped(v[tid] + (f[tid] * inv_mass[tid] + GRAVITY) * dt, DRAG)
    x_new[tid] = x[tid] + v1 * dt
    v_new[tid] = v1


@wp.kernel
def spring_forces(x: wp.array(dtype=wp.vec3), other: wp.array(dtype=int), rest: wp.array(dtype=float), ke: float,
                  f: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    n = x.shape[0]
    i = tid % n
    j = (i + 1 + other[tid]) % n
    d = x[j] - x[i]
    l = wp.length(d)
    fs = wp.normalize(d) * (ke * (l - rest[tid]))
    wp.atomic_add(f, i, fs)
    f[j] -= fs


@wp.kernel
def energy_momentum(v: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float), energy: wp.array(dtype=float),
                    momentum: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    p = v[tid] * mass[tid]
    wp.atomic_add(energy, 0, 0.5 * wp.dot(p, v[tid]))
    wp.atomic_add(momentum, 0, p)
    momentum[1] += wp.cross(v[tid], p) + wp.vec3(wp.length_sq(p), 0.0, 0.0)
