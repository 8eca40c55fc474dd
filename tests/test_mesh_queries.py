"""Mesh queries (wp.mesh_query_point and its signed variants, wp.mesh_query_ray, a wp.mesh_query_aabb
loop) against brute force in numpy on a closed mesh, wp.intersect_tri_tri against separating axes, the loader's tree and its refit, the reference
interpreter against the compiled code, and the gradients of the closest point and of a ray's hit by
finite differences. Warp's own values and gradients: tests/conformance/cases_meshes.py."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.kernel
def closest(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), max_dist: float, pos: wp.array(dtype=wp.vec3),
            sign: wp.array(dtype=float), sign_normal: wp.array(dtype=float), found: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_point(mesh, x[i], max_dist)
    if q.result:
        pos[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        found[i] = 1
    sign[i] = q.sign
    sign_normal[i] = wp.mesh_query_point_sign_normal(mesh, x[i], max_dist, epsilon=1.0e-3).sign


@wp.kernel
def cast(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
         t: wp.array(dtype=float), face: wp.array(dtype=int), normal: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    hit = wp.mesh_query_ray(mesh, start[i], direction[i], 50.0)
    t[i] = hit.t
    face[i] = wp.where(hit.result, hit.face, -1)
    normal[i] = hit.normal


@wp.kernel
def overlaps(mesh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), total: wp.array(dtype=int),
             first_small: wp.array(dtype=int)):
    i = wp.tid()
    query = wp.mesh_query_aabb(mesh, lo[i], hi[i])
    f = int(0)
    while wp.mesh_query_aabb_next(query, f):
        total[i] += f + 1
    first_small[i] = -1
    for g in wp.mesh_query_aabb(mesh, lo[i], hi[i]):
        if g % 2 == 1:
            continue
        first_small[i] = g
        break
    ball = wp.mesh_query_sphere(mesh, lo[i], hi[i][0] - lo[i][0])
    for g in ball:
        total[i] += 100000 * (g + 1)


@wp.kernel
def others(mesh: wp.handle, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), far: wp.array(dtype=wp.vec3),
           sign: wp.array(dtype=float), count: wp.array(dtype=int), any_hit: wp.array(dtype=int)):
    i = wp.tid()
    f = wp.mesh_query_furthest_point_no_sign(mesh, x[i], 1.0)
    if f.result:
        far[i] = wp.mesh_eval_position(mesh, f.face, f.u, f.v)
    sign[i] = wp.mesh_query_point_sign_parity(mesh, x[i], 2.0, 5, 0.1).sign
    count[i] = wp.mesh_query_ray_count_intersections(mesh, x[i], d[i])
    any_hit[i] = wp.where(wp.mesh_query_ray_anyhit(mesh, x[i], d[i], 1.0), 1, 0)


@wp.kernel
def triangle_pairs(t: wp.array(dtype=wp.vec3d), out: wp.array(dtype=int)):
    i = wp.tid()
    k = 6 * i
    out[i] = wp.intersect_tri_tri(t[k], t[k + 1], t[k + 2], t[k + 3], t[k + 4], t[k + 5])


@wp.kernel
def closest_loss(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, x[i], 10.0)
    p = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    out[i] = wp.length(p - x[i]) + wp.dot(p, wp.vec3(0.3, -0.5, 0.7)) + q.u * q.v


@wp.kernel
def older_loss(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), start: wp.array(dtype=wp.vec3),
               direction: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    face = int(0)
    u = float(0.0)
    v = float(0.0)
    sign = float(0.0)
    if wp.mesh_query_point(mesh, x[i], 10.0, sign, face, u, v):
        out[i] = wp.length(wp.mesh_eval_position(mesh, face, u, v) - x[i]) * sign
    t = float(0.0)
    n = wp.vec3()
    hit = wp.mesh_query_ray(mesh, start[i], direction[i], 50.0, t, u, v, sign, n, face)
    if hit:
        out[i] += t * t + u - v * 2.0
    wp.mesh_query_point_no_sign(mesh, x[i], 0.0, face, u, v)  # misses: u and v stay the ray's
    out[i] += u * v


@wp.struct
class Scene:
    mesh: wp.uint64
    scale: float


@wp.kernel
def cast_in_scene(scene: Scene, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
                  t: wp.array(dtype=float)):
    i = wp.tid()
    hit = wp.mesh_query_ray(scene.mesh, start[i], direction[i], 50.0)  # the id a struct's field holds
    t[i] = hit.t * scene.scale


@wp.kernel
def ray_loss(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), direction: wp.array(dtype=wp.vec3),
             out: wp.array(dtype=float)):
    i = wp.tid()
    hit = wp.mesh_query_ray(mesh, start[i], direction[i], 50.0)
    out[i] = hit.t * hit.t + hit.u * 2.0 - hit.v + hit.sign * 0.25
'''


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "mesh_queries")


def sphere(rings=8, segments=10, seed=0):
    """A closed, outward-wound triangle mesh around the origin: a sphere of radius 1 to 1.2."""
    rng = np.random.default_rng(seed)
    points = [(0.0, 0.0, 1.0)]
    for i in range(1, rings):
        th = np.pi * i / rings
        points += [(np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th))
                   for ph in 2 * np.pi * np.arange(segments) / segments]
    points.append((0.0, 0.0, -1.0))
    points = np.array(points) * (1 + 0.2 * rng.random((len(points), 1)))
    tris = [(0, 1 + j, 1 + (j + 1) % segments) for j in range(segments)]
    for i in range(rings - 2):
        for j in range(segments):
            a, b = 1 + i * segments + j, 1 + i * segments + (j + 1) % segments
            tris += [(a, a + segments, b + segments), (a, b + segments, b)]
    last, base = len(points) - 1, 1 + (rings - 2) * segments
    tris += [(last, base + (j + 1) % segments, base + j) for j in range(segments)]
    return points.astype(np.float32), np.array(tris, np.int32).reshape(-1)


def closed_mesh(module):
    """The sphere's points and indices, its triangles in float64 and the loader's Mesh of it."""
    points, indices = sphere()
    return points, indices, points.astype(np.float64)[indices.reshape(-1, 3)], module.Mesh(points, indices)


def closest_on_triangle(t, p):
    """Brute force: the projection onto the plane if inside, else the closest of the three edges (float64)."""
    a, b, c = t
    n = np.cross(b - a, c - a)
    q = p - np.dot(p - a, n) / np.dot(n, n) * n
    if all(np.dot(np.cross(y - x, q - x), n) >= 0 for x, y in ((a, b), (b, c), (c, a))):
        return q
    best = None
    for x, y in ((a, b), (b, c), (c, a)):
        s = np.clip(np.dot(p - x, y - x) / np.dot(y - x, y - x), 0, 1)
        e = x + s * (y - x)
        if best is None or np.linalg.norm(e - p) < np.linalg.norm(best - p):
            best = e
    return best


def ray_hits(tris, start, direction):
    """[(t, face)] of the faces the ray start + t direction meets at t >= 0 (Moller and Trumbore, float64)."""
    s, d = np.asarray(start, np.float64), np.asarray(direction, np.float64)
    hits = []
    for f, (a, b, c) in enumerate(tris):
        e1, e2 = b - a, c - a
        h = np.cross(d, e2)
        det = e1 @ h
        r = s - a
        v, q = (r @ h) / det, np.cross(r, e1)
        w, t = (d @ q) / det, (e2 @ q) / det
        if v >= 0 and w >= 0 and v + w <= 1 and t >= 0:
            hits.append((t, f))
    return hits


def inside_by_parity(tris, p):
    """Whether p is inside the closed mesh: the parity of a ray's crossings (a skewed direction)."""
    return len(ray_hits(tris, p, [0.31, 0.47, 0.83])) % 2 == 1


@needs_cxx
@pytest.mark.build
def test_closest_points_and_signs_match_brute_force(module):
    points, indices, tris, mesh = closed_mesh(module)
    n = 300
    x = (np.random.default_rng(1).random((n, 3)) * 3.2 - 1.6).astype(np.float32)
    pos, sign, sign_normal = np.zeros((n, 3), np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    found = np.zeros(n, np.int32)
    module.closest.launch(dim=n, inputs=[mesh.id, x, 0.5, pos, sign, sign_normal, found])
    for i in range(n):
        near = [closest_on_triangle(t, x[i].astype(np.float64)) for t in tris]
        dist = [np.linalg.norm(c - x[i]) for c in near]
        k = int(np.argmin(dist))
        assert found[i] == (dist[k] < 0.5), i  # strictly within max_dist
        if found[i]:
            np.testing.assert_allclose(pos[i], near[k], atol=2e-6)
            expected = -1.0 if inside_by_parity(tris, x[i].astype(np.float64)) else 1.0
            assert sign[i] == expected and sign_normal[i] == expected, i
        else:
            assert sign[i] == 0 and sign_normal[i] == 0 and not pos[i].any()  # a miss: every field zero


@needs_cxx
@pytest.mark.build
def test_rays_and_box_loops_match_brute_force(module):
    points, indices, tris, mesh = closed_mesh(module)
    rng = np.random.default_rng(2)
    n = 200
    start = (rng.random((n, 3)) * 6 - 3).astype(np.float32)
    direction = rng.standard_normal((n, 3)).astype(np.float32)
    direction[:10] = [1, 0, 0]  # axis-aligned rays: zero components
    t, face, normal = np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros((n, 3), np.float32)
    module.cast.launch(dim=n, inputs=[mesh.id, start, direction, t, face, normal])
    for i in range(n):
        hits = [h for h in ray_hits(tris, start[i], direction[i]) if h[0] < 50]
        assert (face[i] >= 0) == bool(hits), i
        if hits:
            tt, f = min(hits)
            assert face[i] == f and abs(t[i] - tt) <= 1e-5 * max(1, tt), i
            n_f = np.cross(tris[f][1] - tris[f][0], tris[f][2] - tris[f][0])
            np.testing.assert_allclose(normal[i], n_f / np.linalg.norm(n_f), atol=1e-6)
        else:
            assert t[i] == 0 and not normal[i].any()
    scaled = np.zeros(n, np.float32)
    module.cast_in_scene.launch(dim=n, inputs=[module.Scene(mesh=mesh.id, scale=2.0), start, direction, scaled])
    np.testing.assert_array_equal(scaled, t * 2.0)
    with pytest.raises(ValueError, match=r"argument `scene.mesh`.* is not the id of a live tilec Mesh"):
        module.cast_in_scene.launch(dim=n, inputs=[module.Scene(mesh=mesh.id + 8, scale=2.0), start, direction,
                                                   scaled])
    lo = (rng.random((n, 3)) * 3 - 1.5).astype(np.float32)
    hi = lo + (rng.random((n, 3)) * 0.8).astype(np.float32)
    total, first = np.zeros(n, np.int32), np.zeros(n, np.int32)
    module.overlaps.launch(dim=n, inputs=[mesh.id, lo, hi, total, first])
    face_lo, face_hi = tris.min(axis=1), tris.max(axis=1)
    hit = np.all((lo[:, None] <= face_hi[None]) & (hi[:, None] >= face_lo[None]), axis=-1)  # (queries, faces)
    radius = (hi - lo)[:, 0].astype(np.float64)
    touched = np.array([[np.linalg.norm(closest_on_triangle(t, lo[i].astype(np.float64)) - lo[i]) <= radius[i]
                         for t in tris] for i in range(n)])
    faces = np.arange(len(tris)) + 1
    np.testing.assert_array_equal(total, (hit * faces).sum(axis=1) + 100000 * (touched * faces).sum(axis=1))
    for i in range(n):
        even = np.flatnonzero(hit[i] & (np.arange(len(tris)) % 2 == 0))
        assert (first[i] in even) if even.size else first[i] == -1, i  # `continue` skips, `break` leaves


@needs_cxx
@pytest.mark.build
def test_the_tree_holds_every_face_once_and_refit_follows_the_points(module):
    for rings, segments in ((2, 3), (3, 4), (8, 10), (30, 40)):
        points, indices = sphere(rings, segments)
        mesh = module.Mesh(points, indices)
        tree = mesh._bvh
        seen = []

        def walk(n):
            assert tree.node_skip[n] > n
            if tree.node_count[n]:
                faces = tree.face_order[tree.node_first[n]:tree.node_first[n] + tree.node_count[n]]
                assert tree.node_skip[n] == n + 1 and len(faces) <= 4
                seen.extend(faces)
                np.testing.assert_array_equal(tree.node_lowers[n], tree.face_lowers[faces].min(axis=0))
                np.testing.assert_array_equal(tree.node_uppers[n], tree.face_uppers[faces].max(axis=0))
                return
            left, right = n + 1, tree.node_skip[n + 1]
            assert tree.node_skip[right] == tree.node_skip[n]
            for child in (left, right):
                assert (tree.node_lowers[child] >= tree.node_lowers[n]).all()
                assert (tree.node_uppers[child] <= tree.node_uppers[n]).all()
                walk(child)

        walk(0)
        assert sorted(seen) == list(range(len(indices) // 3))
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    x = np.array([[0.0, 0.0, 1.9], [2.5, 0.0, 0.0]], np.float32)
    args = [mesh.id, x, 0.5, np.zeros((2, 3), np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32),
            np.zeros(2, np.int32)]
    module.closest.launch(dim=2, inputs=args)
    assert not args[-1].any()  # nothing within 0.5 of either point
    mesh.points[...] *= 2.0  # in place, as Warp's users move a mesh: the queries see it after refit()
    mesh.refit()
    module.closest.launch(dim=2, inputs=args)
    np.testing.assert_array_equal(args[-1], [1, 1])
    tris = mesh.points.astype(np.float64)[indices.reshape(-1, 3)]
    for i in range(2):
        near = min((closest_on_triangle(t, x[i].astype(np.float64)) for t in tris), key=lambda c: np.linalg.norm(c - x[i]))
        np.testing.assert_allclose(args[3][i], near, atol=2e-6)
    with pytest.raises(ValueError, match=r"support_winding_number=True is not supported by tilec yet"):
        module.Mesh(points, indices, support_winding_number=True)
    empty = module.Mesh(points, np.zeros(0, np.int32))  # no faces: every query misses
    args = [empty.id, x, 10.0, *(np.zeros_like(a) for a in args[3:])]
    module.closest.launch(dim=2, inputs=args)
    assert not args[-1].any()


@needs_cxx
@pytest.mark.build
def test_the_interpreter_agrees_with_the_compiled_queries(module):
    interp = Interpreter(compile_ir(SOURCE, "mesh_queries_ref"))
    points, indices = sphere(5, 6)
    mesh = module.Mesh(points, indices)
    rng = np.random.default_rng(3)
    n = 40
    x = (rng.random((n, 3)) * 3 - 1.5).astype(np.float32)
    d = rng.standard_normal((n, 3)).astype(np.float32)

    def run(kernel, make):
        native, ref = make(), make()
        getattr(module, kernel).launch(dim=n, inputs=native)
        interp.launch(kernel, n, ref, tiled=False)
        return native, ref

    native, ref = run("closest", lambda: [mesh.id, x.copy(), np.float32(0.6), np.zeros((n, 3), np.float32),
                                          np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32)])
    for a, b in zip(native[3:], ref[3:]):
        np.testing.assert_allclose(a, b, atol=2e-6)
    native, ref = run("cast", lambda: [mesh.id, x.copy(), d.copy(), np.zeros(n, np.float32), np.zeros(n, np.int32),
                                       np.zeros((n, 3), np.float32)])
    np.testing.assert_array_equal(native[4], ref[4])
    np.testing.assert_allclose(native[3], ref[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(native[5], ref[5], atol=1e-6)
    native, ref = run("overlaps", lambda: [mesh.id, x.copy(), x + np.float32(0.5), np.zeros(n, np.int32),
                                           np.zeros(n, np.int32)])
    np.testing.assert_array_equal(native[3], ref[3])
    np.testing.assert_array_equal(native[4], ref[4])  # the same tree, the same order


def interior_targets(points, indices, n, seed):
    """n points off the faces' interiors (the closest point inside its face, away from edges), and
    rays aimed at face interiors: where the queries' values are smooth in their inputs."""
    rng = np.random.default_rng(seed)
    tris = points[indices.reshape(-1, 3)].astype(np.float64)
    faces = rng.integers(0, len(tris), n)
    w = rng.dirichlet([4, 4, 4], n)
    on = np.einsum("nk,nkd->nd", w, tris[faces])
    normal = np.cross(tris[faces, 1] - tris[faces, 0], tris[faces, 2] - tris[faces, 0])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    above = on + normal * rng.uniform(0.01, 0.04, (n, 1))
    start = on + normal * rng.uniform(0.5, 1.0, (n, 1)) + rng.normal(0, 0.05, (n, 3))
    return above.astype(np.float32), start.astype(np.float32), (on - start).astype(np.float32)


@needs_cxx
@pytest.mark.build
def test_query_gradients_match_finite_differences(module):
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    n = 16
    above, start, direction = interior_targets(points, indices, n, seed=4)
    check_gradients(module.closest_loss, n, [mesh.id, above, np.zeros(n, np.float32)], outputs=[2], wrt=[1],
                    tiled=False, h=1e-3, rtol=2e-2, atol=2e-3)
    check_gradients(module.ray_loss, n, [mesh.id, start, direction, np.zeros(n, np.float32)], outputs=[3],
                    wrt=[1, 2], tiled=False, h=1e-3, rtol=2e-2, atol=2e-3)
    # Warp's older forms (results written to variables, later queries writing them again): Warp's own
    # adjoint misses the first query's gradient there (tests/conformance/cases_meshes.py)
    check_gradients(module.older_loss, n, [mesh.id, above, start, direction, np.zeros(n, np.float32)], outputs=[4],
                    wrt=[1, 2, 3], tiled=False, h=1e-3, rtol=2e-2, atol=2e-3)


@needs_cxx
@pytest.mark.build
def test_the_cuda_emulation_runs_the_same_walks(module):
    emulated = build(SOURCE, "mesh_queries_emulated", block_dim=32, target="cuda-emu")
    points, indices = sphere()
    mesh, native_mesh = emulated.Mesh(points, indices), module.Mesh(points, indices)
    n = 64
    rng = np.random.default_rng(6)
    x = (rng.random((n, 3)) * 3 - 1.5).astype(np.float32)
    d = rng.standard_normal((n, 3)).astype(np.float32)

    def both(kernel, make):
        native, emu = make(), make()
        getattr(module, kernel).launch(dim=n, inputs=[native_mesh.id, *native[1:]])
        getattr(emulated, kernel).launch(dim=n, inputs=emu, device="cuda-emu", block_dim=32)
        for a, b in zip(native[1:], emu[1:]):
            np.testing.assert_array_equal(a, b)

    both("closest", lambda: [mesh.id, x.copy(), 0.6, np.zeros((n, 3), np.float32), np.zeros(n, np.float32),
                             np.zeros(n, np.float32), np.zeros(n, np.int32)])
    both("cast", lambda: [mesh.id, x.copy(), d.copy(), np.zeros(n, np.float32), np.zeros(n, np.int32),
                          np.zeros((n, 3), np.float32)])
    both("overlaps", lambda: [mesh.id, x.copy(), x + np.float32(0.4), np.zeros(n, np.int32), np.zeros(n, np.int32)])


@needs_cxx
@pytest.mark.build
def test_triangle_pairs_match_separating_axes(module):
    interp = Interpreter(compile_ir(SOURCE, "mesh_queries_ref"))
    rng = np.random.default_rng(7)
    n = 400
    t = rng.standard_normal((n, 6, 3))
    t[: n // 4, :, 2] = 0.5  # coplanar pairs
    t[n // 4: n // 2, 3:] = t[n // 4: n // 2, :3] + rng.normal(0, 0.3, (n // 4, 3, 3))  # near each other
    native, ref = np.zeros(n, np.int32), np.zeros(n, np.int32)
    module.triangle_pairs.launch(dim=n, inputs=[t.reshape(-1, 3), native])
    interp.launch("triangle_pairs", n, [t.reshape(-1, 3), ref], tiled=False)
    assert 0.2 * n < native.sum() < 0.8 * n  # both outcomes, many times
    np.testing.assert_array_equal(native, ref)


@needs_cxx
@pytest.mark.build
def test_furthest_point_parity_sign_and_ray_counts_match_brute_force(module):
    points, indices, tris, mesh = closed_mesh(module)
    rng = np.random.default_rng(8)
    n = 60
    x = (rng.random((n, 3)) * 2 - 1).astype(np.float32)
    d = rng.standard_normal((n, 3)).astype(np.float32)
    out = [np.zeros((n, 3), np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.int32)]
    module.others.launch(dim=n, inputs=[mesh.id, x, d, *out])
    far, sign, count, any_hit = out
    corners = points.astype(np.float64)
    for i in range(n):
        dist = np.linalg.norm(corners - x[i], axis=1)
        np.testing.assert_allclose(np.linalg.norm(far[i] - x[i]), dist[np.unique(indices)].max(), rtol=1e-6)
        assert sign[i] == (-1.0 if inside_by_parity(tris, x[i].astype(np.float64)) else 1.0), i
        ts = [t for t, _ in ray_hits(tris, x[i], d[i])]
        assert count[i] == len(ts) and any_hit[i] == any(t < 1.0 for t in ts), i
    interp = Interpreter(compile_ir(SOURCE, "mesh_queries_ref"))
    ref = [np.zeros_like(a) for a in out]
    interp.launch("others", n, [mesh.id, x, d, *ref], tiled=False)
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, atol=1e-6)
