"""A triangle mesh read by kernels (wp.Mesh): points and velocities of triangles at barycentric
coordinates (the coordinates' gradients), face normals, face-vertex points, velocities and indices,
a func taking the mesh's id; and its queries: the closest point (three ways of signing it), the
first hit of a ray, and the faces whose boxes overlap a box; and whether two triangles intersect. A query's face is compared through what
it evaluates to (two faces can tie: tilec's tree is not Warp's)."""
import warp as wp


@wp.func
def blend(mesh: wp.uint64, f: int, u: float, v: float):
    return wp.mesh_eval_position(mesh, f, u, v) + wp.mesh_eval_velocity(mesh, f, v, u) * 0.25


@wp.kernel
def evals(mesh: wp.uint64, face: wp.array(dtype=int), u: wp.array(dtype=float), v: wp.array(dtype=float),
          pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    f = face[i]
    p = wp.mesh_eval_position(mesh, f, u[i], v[i])
    w = wp.mesh_eval_velocity(mesh, f, u[i] * 0.5, v[i])
    pos[i] = p
    vel[i] = w
    out[i] = wp.length(p) + wp.dot(w, p) + wp.length(blend(mesh, f, v[i], u[i]))


@wp.kernel
def corners(mesh: wp.uint64, face: wp.array(dtype=int), nrm: wp.array(dtype=wp.vec3), pts: wp.array(dtype=wp.vec3),
            idx: wp.array(dtype=int)):
    i = wp.tid()
    f = face[i]
    nrm[i] = wp.mesh_eval_face_normal(mesh, f)
    pts[i] = wp.mesh_get_point(mesh, f * 3 + 1) + wp.mesh_get_velocity(mesh, f * 3 + 2)
    idx[i] = wp.mesh_get_index(mesh, f * 3) * 10 + wp.mesh_get_index(mesh, f * 3 + 2)


@wp.func
def nearest(mesh: wp.uint64, x: wp.vec3):
    q = wp.mesh_query_point_no_sign(mesh, x, 4.0)
    p = wp.vec3()
    if q.result:
        p = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    return p


@wp.kernel
def closest(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), pos: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    i = wp.tid()
    p = nearest(mesh, x[i])
    pos[i] = p
    dist[i] = wp.length(p - x[i]) + wp.dot(p, wp.vec3(0.25, -0.5, 1.0))


@wp.func
def side(q: wp.MeshQueryPoint, scale: float):
    return q.sign * scale


@wp.kernel
def signs(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), by_rays: wp.array(dtype=float),
          by_normal: wp.array(dtype=float), found: wp.array(dtype=int)):
    i = wp.tid()
    a = wp.mesh_query_point(mesh, x[i], 1.5)
    b = wp.mesh_query_point_sign_normal(mesh, x[i], 1.5)
    c = wp.mesh_query_point_sign_winding_number(mesh, x[i], 1.5)
    by_rays[i] = a.sign + side(c, 10.0)
    by_normal[i] = b.sign
    if a.result:
        found[i] = 1
    if b.result:
        found[i] += 2


@wp.kernel
def rays(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
         hit: wp.array(dtype=float), nrm: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, start[i], direction[i], 20.0)
    if q.result:
        hit[i] = q.t * 2.0 + q.u - q.v * 0.5
        nrm[i] = q.normal + wp.mesh_eval_position(mesh, q.face, q.u, q.v)


@wp.kernel
def ray_signs(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
              sign: wp.array(dtype=float), face: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_ray(mesh, start[i], direction[i], 20.0, -1)
    sign[i] = q.sign
    face[i] = q.face


@wp.kernel
def boxes(mesh: wp.uint64, lo: wp.array(dtype=wp.vec3), count: wp.array(dtype=int), area: wp.array(dtype=int)):
    i = wp.tid()
    query = wp.mesh_query_aabb(mesh, lo[i], lo[i] + wp.vec3(0.75))
    face = int(0)
    while wp.mesh_query_next(query, face):
        count[i] += 1
        if face % 7 == 3:
            continue
        area[i] += face * face
    for f in wp.mesh_query_aabb(mesh, lo[i] * 0.5, lo[i] * 0.5 + wp.vec3(1.0)):
        if f < 5:  # whichever such face comes first (tilec's order of faces is not Warp's)
            count[i] += 1000
            break
    ball = wp.mesh_query_sphere(mesh, lo[i], 0.8)
    g = int(0)
    while wp.mesh_query_next(ball, g):
        count[i] += 100000
        area[i] += g * 7


@wp.kernel
def more_queries(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), far: wp.array(dtype=wp.vec3),
                 sign: wp.array(dtype=float), hits: wp.array(dtype=int)):
    i = wp.tid()
    f = wp.mesh_query_furthest_point_no_sign(mesh, x[i], 0.5)
    if f.result:
        far[i] = wp.mesh_eval_position(mesh, f.face, f.u, f.v)
    sign[i] = wp.mesh_query_point_sign_parity(mesh, x[i], 1.5, 3, 0.2).sign
    hits[i] = wp.mesh_query_ray_count_intersections(mesh, x[i], d[i]) * 10 + wp.where(
        wp.mesh_query_ray_anyhit(mesh, x[i], d[i], 1.0), 1, 0)


@wp.kernel
def older_forms(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), pos: wp.array(dtype=wp.vec3),
                hit_t: wp.array(dtype=float), kept: wp.array(dtype=wp.vec3), ray_face: wp.array(dtype=int)):
    # Warp's older query forms: results written to variables (only on a hit), the call a bool
    i = wp.tid()
    face = int(-1)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    hit = wp.mesh_query_point(mesh, x[i], 1.5, sign, face, u, v)
    if hit:
        pos[i] = wp.mesh_eval_position(mesh, face, u, v) * sign
    t = float(0.0)
    n = wp.vec3()
    f = int(-1)
    if wp.mesh_query_ray(mesh, x[i], d[i], 20.0, t, u, v, sign, n, f):
        hit_t[i] = t + u * 2.0 + n[0]
    wp.mesh_query_point_no_sign(mesh, x[i], 0.25, face, u, v)  # a miss leaves face, u and v as they were
    if face >= 0:
        kept[i] = wp.mesh_eval_position(mesh, face, u, v)  # (a point: two faces may tie, not their point)
    ray_face[i] = f


@wp.kernel
def triangle_pairs(t: wp.array(dtype=wp.vec3), td: wp.array(dtype=wp.vec3d), out: wp.array(dtype=int)):
    i = wp.tid()
    k = 6 * i
    out[i] = wp.intersect_tri_tri(t[k], t[k + 1], t[k + 2], t[k + 3], t[k + 4], t[k + 5]) + 2 * wp.intersect_tri_tri(
        td[k], td[k + 1], td[k + 2], td[k + 3], td[k + 4], td[k + 5])


@wp.kernel
def tiled_faces(mesh: wp.uint64, lo: wp.array(dtype=wp.vec3), hits: wp.array2d(dtype=int)):
    # a block's shared walk of the faces whose boxes overlap the query box (Warp's broad phase)
    i, _lane = wp.tid()
    query = wp.tile_mesh_query_aabb(mesh, lo[i], lo[i] + wp.vec3(0.5, 0.5, 0.5))
    while wp.tile_query_valid(query):
        face = wp.untile(wp.tile_mesh_query_aabb_next(query))
        if face >= 0:
            wp.atomic_add(hits, i, face, 1)


@wp.kernel
def mesh_trees(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), near: wp.array(dtype=int),
               crossed: wp.array(dtype=int)):
    # a mesh's tree queried as a Bvh's (wp.mesh_get_bvh): its faces' boxes are the items
    i = wp.tid()
    bvh = wp.mesh_get_bvh(mesh)
    query = wp.bvh_query_sphere(bvh, x[i], 0.5)
    face = int(0)
    n = int(0)
    while wp.bvh_query_next(query, face):
        n += face + 1
    near[i] = n
    m = int(0)
    ray = wp.bvh_query_ray(wp.mesh_get_bvh(mesh), x[i], d[i])
    while wp.bvh_query_next(ray, face):
        m += face + 1
    crossed[i] = m


@wp.kernel
def grouped_rays(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), group: wp.array(dtype=int),
                 faces: wp.array(dtype=int), ts: wp.array(dtype=float), crossings: wp.array(dtype=int)):
    # a grouped mesh: a ray from wp.mesh_get_group_root's node meets that group's faces only (a group the
    # mesh lacks gives -1: the whole mesh)
    i = wp.tid()
    root = wp.mesh_get_group_root(mesh, group[i])
    hit = wp.mesh_query_ray(mesh, x[i], d[i], 1.0e6, root)
    faces[i] = wp.where(hit.result, hit.face, -1)
    ts[i] = wp.where(hit.result, hit.t, -1.0)
    crossings[i] = wp.mesh_query_ray_count_intersections(mesh, x[i], d[i], root) * 10 + int(
        wp.mesh_query_ray_anyhit(mesh, x[i], d[i], 2.0, root))


@wp.func
def query_either(mesh: wp.uint64, x: wp.vec3, by_parity: int):
    # no return annotation: the struct is the builtin's (Warp infers it; Newton's mesh_query_point_sign)
    if by_parity == 1:
        return wp.mesh_query_point_sign_parity(mesh, x, 4.0)
    return wp.mesh_query_point_no_sign(mesh, x, 4.0)


@wp.kernel
def unannotated_query(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), pos: wp.array(dtype=wp.vec3),
                      sign: wp.array(dtype=float)):
    i = wp.tid()
    q = query_either(mesh, x[i], i % 2)
    pos[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)  # the point found (faces tie on shared edges)
    sign[i] = q.sign


@wp.func
def triangle_area(mesh: wp.uint64, f: int):
    m = wp.mesh_get(mesh)
    a = m.points[m.indices[3 * f]]
    b = m.points[m.indices[3 * f + 1]]
    c = m.points[m.indices[3 * f + 2]]
    return 0.5 * wp.length(wp.cross(b - a, c - a))


@wp.kernel
def mesh_arrays(mesh: wp.uint64, face: wp.array(dtype=int), w: wp.array(dtype=float), area: wp.array(dtype=float),
                vel: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    # wp.mesh_get(id): the mesh's points, velocities and indices as arrays
    i = wp.tid()
    f = face[i]
    area[i] = triangle_area(mesh, f) * w[i]
    m = wp.mesh_get(mesh)
    vel[i] = m.velocities[m.indices[3 * f + 2]] * w[i]
    counts[i] = wp.mesh_get(mesh).indices.shape[0] // 3 + m.points.shape[0] * 100
