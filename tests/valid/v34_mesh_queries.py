"""Mesh queries as Warp's users write them: a closest point signed three ways and a furthest point, a
query read in place, a ray's hit and Warp's older form writing to variables, any-hit and crossing
counts, box and sphere loops with continue, break and a return, a triangle pair test, and a func
taking the mesh's id."""
import warp as wp


@wp.func
def distance_to(mesh: wp.uint64, p: wp.vec3):
    q = wp.mesh_query_point(mesh, p, 1.0e6)
    d = float(0.0)
    if q.result:
        d = wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p) * q.sign
    return d


@wp.kernel
def sdf(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float), far: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = distance_to(mesh, x[i]) + wp.mesh_query_point_sign_normal(mesh, x[i], 2.0).sign
    out[i] += wp.mesh_query_point_sign_parity(mesh, x[i], 2.0, 3, 0.05).sign
    f = wp.mesh_query_furthest_point_no_sign(mesh, x[i], 0.0)
    if f.result:
        far[i] = wp.mesh_eval_position(mesh, f.face, f.u, f.v)


@wp.kernel
def rays(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
         t_out: wp.array(dtype=float), counts: wp.array(dtype=int)):
    i = wp.tid()
    hit = wp.mesh_query_ray(mesh, start[i], direction[i], 100.0)
    if hit.result:
        t_out[i] = hit.t + wp.dot(hit.normal, direction[i]) * hit.sign
    t = float(0.0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    n = wp.vec3()
    face = int(-1)
    if wp.mesh_query_ray(mesh, start[i], -direction[i], 100.0, t, u, v, sign, n, face):
        t_out[i] -= t * u
    counts[i] = wp.mesh_query_ray_count_intersections(mesh, start[i], direction[i]) + wp.where(
        wp.mesh_query_ray_anyhit(mesh, start[i], direction[i], 1.0), 100, 0)


@wp.kernel
def overlaps(mesh: wp.uint64, other: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
             found: wp.array(dtype=int)):
    i = wp.tid()
    query = wp.mesh_query_aabb(mesh, lo[i], hi[i])
    f = int(0)
    n = int(0)
    while wp.mesh_query_next(query, f):
        if f % 3 == 0:
            continue
        n += 1
        if n > 50:
            break
    found[i] = n
    for g in wp.mesh_query_sphere(other, lo[i], 0.5):
        a = wp.mesh_eval_position(other, g, 1.0, 0.0)
        b = wp.mesh_eval_position(other, g, 0.0, 1.0)
        c = wp.mesh_eval_position(other, g, 0.0, 0.0)
        if wp.intersect_tri_tri(a, b, c, lo[i], hi[i], lo[i] + wp.vec3(0.0, 0.0, 1.0)) > 0:
            found[i] += 1000
            return
