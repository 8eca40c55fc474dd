"""Warp programs as their users write them (this session's features): builtins without `wp.`, a
struct's operators from the module's funcs, funcs returning structs without annotations, wp.ref
arguments that are array elements and fields, wp.grad of a func and of a builtin, indexed arrays
written through, a mesh id held in a struct, vector choices and a reversed range of a run-time step."""
import warp as wp


@wp.struct
class Dual:
    re: float
    eps: float


@wp.func
def add(a: Dual, b: Dual) -> Dual:
    return Dual(a.re + b.re, a.eps + b.eps)


@wp.func
def mul(a: Dual, b: Dual):
    return Dual(a.re * b.re, a.re * b.eps + a.eps * b.re)


@wp.func
def lift(x: float):
    d = Dual(x, 1.0)
    return d


@wp.func
def accumulate(total: wp.ref[float], x: float):
    total += x


@wp.func
def potential(d: wp.vec3):
    r = length(d) + 1.0e-6
    if r > 2.0:
        return 0.0
    return 1.0 / r


@wp.struct
class Scene:
    mesh: wp.uint64
    scale: float


@wp.kernel
def duals(x: wp.array(dtype=float), slots: wp.array(dtype=Dual), out: wp.array(dtype=float)):
    i = wp.tid()
    d = lift(x[i])
    e = d * d + d
    e += lift(2.0)
    accumulate(out[i], e.eps)
    accumulate(slots[i].re, e.re)
    out[i] += sqrt(abs(x[i])) + float(x.shape[0])


@wp.kernel
def forces(d: wp.array(dtype=wp.vec3), y: wp.array(dtype=float), f: wp.array(dtype=wp.vec3),
           g: wp.array(dtype=float)):
    i = wp.tid()
    force = wp.grad(potential)
    f[i] = -force(d[i]) if y[i] > 0.0 else wp.vec3(0.0, 0.0, 0.0)
    a, b = wp.grad(wp.atan2)(y[i], d[i][0])
    g[i] = a + b


@wp.kernel
def scatter(a: wp.indexedarray(dtype=float), v: wp.array(dtype=float), n: int, step: int):
    i = wp.tid()
    a[i] += v[i]
    wp.atomic_max(a, i, 0.0)
    for k in reversed(range(0, n, step)):
        a[i] -= v[k % v.shape[0]] * 0.01


@wp.kernel
def trace(scene: Scene, start: wp.array(dtype=wp.vec3), t: wp.array(dtype=float)):
    i = wp.tid()
    hit = wp.mesh_query_ray(scene.mesh, start[i], wp.vec3(0.0, 0.0, 1.0), 100.0)
    t[i] = hit.t * scene.scale
