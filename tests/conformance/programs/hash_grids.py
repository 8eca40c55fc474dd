"""Neighbour queries over Warp's hash grid: the two loop forms, a query straight in the loop header,
`continue` and `break` in the query's body, a func taking the grid's id, float64 points, and
hash_grid_point_id's sorted order. The weights are smooth at the radius (zero value and slope), so
finite differences see no jump where a neighbour leaves the ball."""
import warp as wp


@wp.func
def smooth(d: wp.vec3, h: float):
    q = h * h - wp.dot(d, d)
    if q > 0.0:
        return q * q * q
    return 0.0


@wp.kernel
def density(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, rho: wp.array(dtype=float)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = x[i]
    s = float(0.0)
    neighbors = wp.hash_grid_query(grid, p, h)
    for j in neighbors:
        s += smooth(p - x[j], h)
    rho[i] = s


@wp.kernel
def relative(grid: wp.uint64, x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), h: float,
             f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = x[i]
    query = wp.hash_grid_query(grid, p, h)
    j = int(0)
    acc = wp.vec3()
    while wp.hash_grid_query_next(query, j):
        if j == i:
            continue
        d = p - x[j]
        w = smooth(d, h)
        acc += w * (v[j] - v[i]) + d * w
    f[i] = acc


@wp.kernel
def first_neighbors(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, count: wp.array(dtype=int),
                    last: wp.array(dtype=int), total: wp.array(dtype=float)):
    i = wp.tid()
    n = int(0)
    k = int(-1)
    s = float(0.0)
    for j in wp.hash_grid_query(grid, x[i], h):
        if n == 4:
            break
        if j != i:
            n += 1
            k = j
            s += wp.length(x[j] - x[i])
    count[i] = n
    last[i] = k
    total[i] = s


@wp.func
def gathered(grid: wp.uint64, x: wp.array(dtype=wp.vec3), p: wp.vec3, h: float):
    s = float(0.0)
    for j in wp.hash_grid_query(grid, p, h):
        s += smooth(p - x[j], h) * x[j][0]
    return s


@wp.kernel
def through_func(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = gathered(grid, x, x[i], h)


@wp.kernel
def density64(grid: wp.uint64, x: wp.array(dtype=wp.vec3d), h: wp.float64, rho: wp.array(dtype=wp.float64)):
    i = wp.tid()
    p = x[i]
    s = wp.float64(0.0)
    for j in wp.hash_grid_query(grid, p, h):
        d = p - x[j]
        q = h * h - wp.dot(d, d)
        if q > wp.float64(0.0):
            s += q * q
    rho[i] = s


@wp.kernel
def sorted_order(grid: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
                 ids: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    ids[tid] = i
    out[tid] = x[i] * 2.0


@wp.kernel
def grouped(grid: wp.uint64, x: wp.array(dtype=wp.vec3), g: wp.array(dtype=int), h: float,
            rho: wp.array(dtype=float), ids: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = x[i]
    s = float(0.0)
    for j in wp.hash_grid_query(grid, p, h, g[i]):  # only i's group
        s += smooth(p - x[j], h) * float(g[j] + 1)
    q = wp.hash_grid_query(grid, p, h)  # every group
    k = int(0)
    n = int(0)
    while wp.hash_grid_query_next(q, k):
        n = n * 3 + k
    rho[i] = s
    ids[i] = n


@wp.func
def weighted(query: wp.HashGridQuery[wp.float32], center: wp.vec3, points: wp.array(dtype=wp.vec3), h: float):
    s = float(0.0)
    for j in query:
        s += smooth(points[j] - center, h) * points[j][1]
    return s


@wp.func
def weighted_twice(q: wp.HashGridQuery[wp.float32], center: wp.vec3, points: wp.array(dtype=wp.vec3), h: float):
    return weighted(q, center, points, h) * 2.0


@wp.kernel
def query_args(grid: wp.uint64, x: wp.array(dtype=wp.vec3), g: wp.array(dtype=int), h: float,
               out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, x[i], h)
    mine = wp.hash_grid_query(grid, x[i], h, g[i])
    out[i] = weighted(q, x[i], x, h) + weighted_twice(q, x[i], x, h) + weighted(mine, x[i], x, h)
