import warp as wp


@wp.func
def reads(grid: wp.uint64, p: wp.vec3):
    n = int(0)
    for j in wp.hash_grid_query(grid, p, 1.0):
        n += 1
    return n


@wp.kernel
def query_errors(grid: wp.uint64, other: int, x: wp.array(dtype=wp.vec3), xd: wp.array(dtype=wp.vec3d),
                 out: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, x[i], 1.0)
    g = grid
    r = wp.hash_grid_query(x[i][0], x[i], 1.0)  # ERROR TC0201: a hash grid's id must be a uint64 (`HashGrid.id`), got a float32 scalar
    s = wp.hash_grid_query(other, x[i], 1.0)  # ERROR TC0201: `other` must be a hash grid's id, a uint64
    t = wp.hash_grid_query(grid, xd[i], 1.0)  # ERROR TC0201: `grid` is queried with float32 points elsewhere
    u = wp.hash_grid_query(grid, x[i], 1.0, 2.5)  # ERROR TC0201: `group` must be an int32, got a float32
    v = wp.hash_grid_query(grid, 1.0, 1.0)  # ERROR TC0201: `point` must be a vec3 of float32 or float64
    n = reads(q, x[i])  # ERROR TC0201: reads: parameter `grid` expects a uint64 scalar, got a hash-grid query
    z = q  # ERROR TC0401: the query `q` used as a value
    ok = wp.hash_grid_query_next(q, i)  # ERROR TC0401: is taken only as a while loop's condition
    out[i] = reads(g, x[i])  # a copy of the id: checked where it is read (runtime live_ids.h)
    wp.hash_grid_query(grid, x[i], 1.0)  # ERROR TC0401: bind `wp.hash_grid_query(...)` to a name
    j = int(0)
    while wp.hash_grid_query_next(q, x[i]):  # ERROR TC0401: hash_grid_query_next writes the index to a variable
        j += 1
    q = 1  # ERROR TC0405: `q` is a hash-grid query and cannot become


@wp.kernel
def reassigned(grid: wp.uint64, out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.hash_grid_point_id(grid, i)  # ERROR TC0401: `grid` is a hash grid's id and is assigned
    grid = grid + wp.uint64(1)


@wp.kernel
def mesh_errors(mesh: wp.uint64, grid: wp.uint64, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, out[i], 1.0)
    m = mesh
    out[i] = wp.mesh_eval_position(m, i, 0.5, 0.5)  # a copy of the id: checked where it is read
    out[i] = wp.mesh_eval_position(1.5, i, 0.5, 0.5)  # ERROR TC0201: a mesh's id must be a uint64 (`Mesh.id`), got a float32 scalar
    out[i] = wp.mesh_get_point(grid, i)  # ERROR TC0201: `grid` is read as a hash grid's id elsewhere and as a mesh's
    out[i] = wp.mesh_eval_velocity(mesh, i, out[i], 0.5)  # ERROR TC0201: `bary_u` must be a float32


@wp.func
def takes_query(q: wp.HashGridQuery[wp.float16], p: wp.vec3):  # ERROR TC0409: a hash-grid query's dtype must be wp.float32 or wp.float64
    return 1.0


@wp.kernel
def query_param(q: wp.HashGridQuery[wp.float32], out: wp.array(dtype=float)):  # ERROR TC0409: kernel parameter `q` must be an array
    out[0] = 1.0


@wp.kernel
def mesh_query_errors(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), xd: wp.array(dtype=wp.vec3d),
                      out: wp.array(dtype=float)):
    i = wp.tid()
    a = wp.mesh_query_point(mesh, xd[i], 1.0)  # ERROR TC0201: mesh_query_point: `point` must be a vec3f
    b = wp.mesh_query_ray(mesh, x[i], x[i], 1.0, x[i])  # ERROR TC0201: mesh_query_ray: `root` must be
    c = wp.mesh_query_point_no_sign(mesh, x[i])  # ERROR TC0408: mesh_query_point_no_sign: no value for `max_dist`
    d = wp.mesh_query_point_sign_normal(mesh, x[i], 1.0, eps=0.1)  # ERROR TC0303: unknown argument `eps`
    out[i] = wp.mesh_query_point(mesh, x[i], 1.0).distance  # ERROR TC0311: has no field `distance`
    box = wp.mesh_query_aabb(mesh, x[i], 1.0)  # ERROR TC0201: mesh_query_aabb: `high` must be a vec3f
    q = wp.mesh_query_aabb(mesh, x[i], x[i])
    f = int(0)
    while wp.hash_grid_query_next(q, f):  # ERROR TC0401: hash_grid_query_next takes the name a `wp.hash_grid_query(...)`
        f += 1
    wp.mesh_query_next(q, f)  # ERROR TC0401: `wp.mesh_query_next` is taken only as a while loop's condition
    q = 2.0  # ERROR TC0405: `q` is a mesh box query and cannot become
    hit = wp.mesh_query_ray_anyhit(mesh, x[i], x[i], 1.0, 2.5)  # ERROR TC0201: mesh_query_ray_anyhit: `root` must be an int
    s = wp.mesh_query_sphere(mesh, x[i], x[i])  # ERROR TC0201: mesh_query_sphere: `radius` must be a float32
    g = wp.mesh_get_group_root(mesh, 0.5)  # ERROR TC0201: mesh_get_group_root: `group` must be an int
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    wp.mesh_query_point_no_sign(mesh, x[i], 1.0, face, u, w)  # ERROR TC0401: `bary_v` is written to: it must be a variable
    out[i] = float(wp.mesh_query_point_no_sign(mesh, x[i], 1.0, face, u, v)) + 1.0
    while wp.mesh_query_point_no_sign(mesh, x[i], 1.0, face, u, v):  # ERROR TC0401: in a while loop's condition
        u += 1.0


@wp.func
def walk(q: wp.BvhQuery) -> int:  # ERROR TC0409: parameter `q`: unsupported type annotation
    return 0


@wp.kernel
def bvh_query_errors(bvh: wp.uint64, mesh: wp.uint64, x: wp.array(dtype=wp.vec3), r: int, out: wp.array(dtype=int)):
    i = wp.tid()
    a = wp.bvh_query_aabb(bvh, x[i], x[i], x[i])  # ERROR TC0201: bvh_query_aabb: `root` must be an int32
    b = wp.bvh_query_ray(bvh, x[i], 1.0)  # ERROR TC0201: bvh_query_ray: `dir` must be a vec3f
    q = wp.bvh_query_sphere(bvh, x[i], 0.5)
    item = int(0)
    while wp.bvh_query_next(q, item, x[i]):  # ERROR TC0201: bvh_query_next: `max_dist` must be a float32
        out[i] += item
    while wp.mesh_query_next(q, item):  # ERROR TC0401: mesh_query_next takes the name a
        out[i] += item
    m = wp.mesh_query_aabb(mesh, x[i], x[i])
    while wp.bvh_query_next(m, item):  # ERROR TC0401: bvh_query_next takes the name a
        out[i] += item
    c = wp.bvh_query_aabb(mesh, x[i], x[i])  # ERROR TC0201: `mesh` is read as a mesh's id elsewhere and as a BVH's here
    out[i] = walk(q)  # ERROR TC0401: a BVH's query passed to a func
    wp.bvh_query_next(q, item)  # ERROR TC0401: `wp.bvh_query_next` is taken only as a while loop's condition
    while item < r and wp.bvh_query_next(q, item):  # ERROR TC0401: takes a guard that calls nothing and does not read the index
        out[i] += 1
    while wp.abs(r) > 2 and wp.bvh_query_next(q, item):  # ERROR TC0401: takes a guard that calls nothing
        out[i] += 1
    while out[i] < r and wp.bvh_query_next(q, item):  # a guard the body changes: accepted
        out[i] += 1


@wp.kernel
def tiled_query_errors(bvh: wp.uint64, mesh: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
    i, lane = wp.tid()
    q = wp.tile_bvh_query_aabb(bvh, x[i], x[i])
    for item in q:  # ERROR TC0401: a loop over the tiled query `q`
        out[i] += item
    t = wp.tile_mesh_query_aabb_next(q)  # ERROR TC0401: tile_mesh_query_aabb_next takes the name a tiled mesh query
    p = wp.bvh_query_aabb(bvh, x[i], x[i])
    ok = wp.tile_query_valid(p)  # ERROR TC0401: tile_query_valid takes the name a tiled mesh or BVH query
    r = wp.tile_bvh_query_ray(bvh, x[i], 1.0)  # ERROR TC0201: tile_bvh_query_ray: `dir` must be a vec3f
    q = 1  # ERROR TC0405: `q` is a tiled BVH box query and cannot become


@wp.kernel
def tiled_step_errors(bvh: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
    i, lane = wp.tid()
    q = wp.tile_bvh_query_aabb(bvh, x[i], x[i])
    while wp.tile_query_valid(q):
        if wp.untile(wp.tile_bvh_query_next(q)) >= 0:  # ERROR TC0401: tile_bvh_query_next in the header of an `if`
            out[i] += 1
        both = wp.untile(wp.tile_bvh_query_next(q)) + wp.untile(wp.tile_bvh_query_next(q))  # ERROR TC0401: a second step of the query `q`


@wp.kernel
def rebound_shape_queries(bvh: wp.uint64, mesh: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.bvh_query_aabb(bvh, x[i], x[i])
    q = wp.bvh_query_aabb(bvh, x[i], x[i] * 2.0)  # the same kind again: accepted
    q = wp.bvh_query_ray(bvh, x[i], x[i])  # ERROR TC0405: `q` was a BVH box query of `bvh` and cannot become a BVH ray query of `bvh`
    t = wp.tile_bvh_query_aabb(bvh, x[i], x[i])
    t = wp.tile_mesh_query_aabb(mesh, x[i], x[i])  # ERROR TC0405: `t` was a tiled BVH box query of `bvh` and cannot become a tiled mesh box query of `mesh`
