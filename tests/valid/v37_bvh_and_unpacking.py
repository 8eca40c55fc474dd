"""Warp's BVH queries and `*` arguments as its users write them: box, sphere, ray and capsule loops over a
Bvh (grouped, and a mesh's own tree), a block's shared walk, and vectors, matrices, quaternions, slices
and a computed value unpacked into calls."""
import warp as wp


@wp.func
def weighted(a: float, b: float, c: float) -> float:
    return a + 2.0 * b + 3.0 * c


@wp.kernel
def broad_phase(bvh: wp.uint64, mesh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
                group: wp.array(dtype=int), counts: wp.array(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_aabb(bvh, lo[i], hi[i], wp.bvh_get_group_root(bvh, group[i]))
    item = int(0)
    n = int(0)
    while wp.bvh_query_next(query, item):
        if item % 2 == 0:
            continue
        n += 1
    for other in wp.bvh_query_sphere(bvh, lo[i], 0.5):
        n += other
    ray = wp.bvh_query_ray(wp.mesh_get_bvh(mesh), lo[i], hi[i] - lo[i])
    while wp.bvh_query_next(ray, item, 2.0):
        n += 1
        if n > 100:
            break
    sweep = wp.bvh_query_capsule(bvh, lo[i], hi[i] - lo[i], 0.1)
    while wp.bvh_query_next(sweep, item, 1.0):
        n -= 1
    counts[i] = n


@wp.kernel
def shared_walk(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), hits: wp.array(dtype=int)):
    i, _lane = wp.tid()
    query = wp.tile_bvh_query_aabb(bvh, lo[i], hi[i])
    while wp.tile_query_valid(query):
        item = wp.untile(wp.tile_bvh_query_next(query))
        if item >= 0:
            wp.atomic_add(hits, item, 1)


@wp.kernel
def unpacked(a: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    p = v[i]
    q = wp.quat(*p, a[i])
    m = wp.mat33(*p, *(p * 2.0), 1.0, a[i], 3.0)
    s = wp.max(*q[2:]) + weighted(*m[1]) + weighted(*a[0:3]) + weighted(*(a[i], *p[:2]))
    y[i] = wp.vec4(*wp.normalize(p), s)
