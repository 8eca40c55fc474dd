"""Hash grids and meshes as Warp's users write them: a density sum over a query bound to a name, the
while-next form with continue and break, a query straight in the loop header inside a func taking the
grid's id, nested queries, float64 points, and a mesh's reads with the barycentric coordinates' gradients."""
import warp as wp


@wp.func
def kernel_weight(d: wp.vec3, h: float):
    q = h * h - wp.dot(d, d)
    return wp.max(q, 0.0) * q


@wp.func
def neighbours_of(grid: wp.uint64, x: wp.array(dtype=wp.vec3), p: wp.vec3, h: float):
    s = float(0.0)
    for j in wp.hash_grid_query(grid, p, h):
        s += kernel_weight(p - x[j], h)
    return s


@wp.kernel
def density(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, rho: wp.array(dtype=float)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = x[i]
    rho[i] = neighbours_of(grid, x, p, h)


@wp.kernel
def pairs(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, count: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, x[i], h)
    j = int(0)
    n = int(0)
    while wp.hash_grid_query_next(q, j):
        if j == i:
            continue
        for k in wp.hash_grid_query(grid, x[j], h * 0.5):
            if k == i:
                n += 10
        if n > 100:
            break
        n += 1
    count[i] = n


@wp.kernel
def wide(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), h: wp.float64, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = wp.float64(0.0)
    for j in wp.hash_grid_query(grid, x[i], h):
        s += wp.length(x[j] - x[i])
    out[i] = s


@wp.kernel
def surface(mesh: wp.uint64, face: wp.array(dtype=int), u: wp.array(dtype=float), v: wp.array(dtype=float),
            out: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.mesh_eval_position(mesh, face[i], u[i], v[i])
    w = wp.mesh_eval_velocity(mesh, face[i], v[i], u[i])
    n = wp.mesh_eval_face_normal(mesh, face[i]) + wp.mesh_get_point(mesh, face[i] * 3)
    out[i] = wp.dot(p, w) + wp.dot(n, p) + float(wp.mesh_get_index(mesh, face[i] * 3 + 1))
