import warp as wp

# Warp's wp.Bvh read by kernels: box, sphere and ray queries over a tree of boxes (the items' indices a
# query finds, counted and summed: order-free, so tilec's tree, not Warp's, gives the same numbers)


@wp.kernel
def boxes(bvh: wp.uint64, first: wp.array(dtype=wp.vec3), second: wp.array(dtype=wp.vec3),
          corners: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int), sums: wp.array(dtype=float),
          widest: wp.array(dtype=float)):
    i = wp.tid()
    lo = corners[i]
    query = wp.bvh_query_aabb(bvh, lo, lo + wp.vec3(0.75, 0.5, 1.0))
    item = int(0)
    n = int(0)
    s = float(0.0)
    w = float(0.0)
    while wp.bvh_query_next(query, item):
        n += 1
        s += float(item)
        w = wp.max(w, second[item][0] - first[item][0])  # per-item values of the caller's
    counts[i] = n
    sums[i] = s
    widest[i] = w


@wp.kernel
def spheres(bvh: wp.uint64, centers: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
            counts: wp.array(dtype=int), sums: wp.array(dtype=float)):
    i = wp.tid()
    query = wp.bvh_query_sphere(bvh, centers[i], radii[i], -1)
    item = int(0)
    n = int(0)
    s = float(0.0)
    while wp.bvh_query_next(query, item):
        n += 1
        s += float(item)
    counts[i] = n
    sums[i] = s


@wp.kernel
def rays(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
         reach: wp.array(dtype=float), counts: wp.array(dtype=int), all_counts: wp.array(dtype=int),
         firsts: wp.array(dtype=int)):
    i = wp.tid()
    d = dirs[i]
    if i % 4 == 0:
        d = wp.vec3(d[0], 0.0, d[2])  # a direction along a slab: 1 / 0 = inf in the slab test
    query = wp.bvh_query_ray(bvh, starts[i], d)
    item = int(0)
    n = int(0)
    first = int(-1)
    while wp.bvh_query_next(query, item, reach[i]):
        n += 1
        if first < 0 or item < first:
            first = item
    counts[i] = n
    firsts[i] = first
    everything = wp.bvh_query_ray(bvh, starts[i], d)
    m = int(0)
    while wp.bvh_query_next(everything, item):
        m += 1
    all_counts[i] = m


@wp.kernel
def capsules(bvh: wp.uint64, p0: wp.array(dtype=wp.vec3), p1: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
             counts: wp.array(dtype=int), sums: wp.array(dtype=float)):
    i = wp.tid()
    d = p1[i] - p0[i]
    if i % 3 == 0:
        d = wp.vec3(0.0, d[1], d[2])  # parallel to a slab: its start must lie in the grown box's
    query = wp.bvh_query_capsule(bvh, p0[i], d, radii[i] - 0.25)  # some radii negative: a segment's sweep
    item = int(0)
    n = int(0)
    s = float(0.0)
    while wp.bvh_query_next(query, item, 1.0):  # the closed segment from p0 to p1
        n += 1
        s += float(item)
    counts[i] = n
    sums[i] = s


@wp.kernel
def tiled_boxes(bvh: wp.uint64, corners: wp.array(dtype=wp.vec3), hits: wp.array2d(dtype=int)):
    # a block's shared walk: each step hands every lane one item (or -1); every item once per query
    i, _lane = wp.tid()
    lo = corners[i]
    query = wp.tile_bvh_query_aabb(bvh, lo, lo + wp.vec3(1.0, 0.5, 0.75))
    while wp.tile_query_valid(query):
        item = wp.untile(wp.tile_bvh_query_next(query))
        if item >= 0:
            wp.atomic_add(hits, i, item, 1)


@wp.kernel
def tiled_rays(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
               hits: wp.array2d(dtype=int)):
    i, _lane = wp.tid()
    query = wp.bvh_query_ray_tiled(bvh, starts[i], dirs[i])  # the older name
    while wp.tile_query_valid(query):
        items = wp.bvh_query_next_tiled(query)
        item = wp.untile(items)
        if item >= 0:
            wp.atomic_add(hits, i, item, 1)


@wp.kernel
def grouped(bvh: wp.uint64, corners: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
            group: wp.array(dtype=int), boxes: wp.array(dtype=int), rays: wp.array(dtype=int)):
    # a grouped Bvh: a query from wp.bvh_get_group_root walks that group's items only (a group the Bvh
    # lacks gives -1: the whole tree)
    i = wp.tid()
    root = wp.bvh_get_group_root(bvh, group[i])
    query = wp.bvh_query_aabb(bvh, corners[i], corners[i] + wp.vec3(1.5, 1.0, 1.5), root)
    item = int(0)
    n = int(0)
    while wp.bvh_query_next(query, item):
        n += item + 1
    boxes[i] = n
    ray = wp.bvh_query_ray(bvh, corners[i], dirs[i], root)
    m = int(0)
    while wp.bvh_query_next(ray, item):
        m += item + 1
    rays[i] = m


@wp.kernel
def capped_boxes(bvh: wp.uint64, corners: wp.array(dtype=wp.vec3), cap: int, counts: wp.array(dtype=int),
                 totals: wp.array(dtype=int)):
    # Newton's style3d BVH queries: `while n < cap and wp.bvh_query_next(...)` stops at cap items (which
    # ones is the walk's order, so only how many is compared)
    i = wp.tid()
    lo = corners[i]
    query = wp.bvh_query_aabb(bvh, lo, lo + wp.vec3(0.75, 0.5, 1.0))
    item = int(-1)
    n = int(0)
    while (n < cap) and wp.bvh_query_next(query, item):
        n += 1
    counts[i] = n
    everything = wp.bvh_query_aabb(bvh, lo, lo + wp.vec3(0.75, 0.5, 1.0))
    total = int(0)
    while wp.bvh_query_next(everything, item):
        total += 1
    totals[i] = total
