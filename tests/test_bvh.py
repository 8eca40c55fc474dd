"""The loader's Bvh (tilec-rt/spatial.py: wp.Bvh on the CPU) and its queries in kernels
(wp.bvh_query_aabb / _sphere / _ray, bvh_query_next with max_dist): every item a query finds against
numpy's brute force over all boxes (Warp's overlap, sphere and slab tests, in float32), after a refit
and a rebuild, an empty Bvh, the reference interpreter against the compiled code, and bad arguments as
Python errors. Warp's own values: tests/conformance/cases_bvhs.py."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.kernel
def boxes(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), found: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_aabb(bvh, lo[i], hi[i])
    item = int(0)
    while wp.bvh_query_next(query, item):
        found[i, item] += 1


@wp.kernel
def spheres(bvh: wp.uint64, c: wp.array(dtype=wp.vec3), r: wp.array(dtype=float), found: wp.array2d(dtype=int)):
    i = wp.tid()
    for item in wp.bvh_query_sphere(bvh, c[i], r[i]):
        found[i, item] += 1


@wp.kernel
def rays(bvh: wp.uint64, start: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), reach: wp.array(dtype=float),
         found: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_ray(bvh, start[i], d[i])
    item = int(0)
    while wp.bvh_query_next(query, item, reach[i]):
        found[i, item] += 1


@wp.kernel
def capsules(bvh: wp.uint64, start: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3), r: wp.array(dtype=float),
             found: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_capsule(bvh, start[i], d[i], r[i])
    item = int(0)
    while wp.bvh_query_next(query, item, 1.0):
        found[i, item] += 1


@wp.kernel
def grouped(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), group: wp.array(dtype=int),
            found: wp.array2d(dtype=int)):
    i = wp.tid()
    query = wp.bvh_query_aabb(bvh, lo[i], hi[i], wp.bvh_get_group_root(bvh, group[i]))
    item = int(0)
    while wp.bvh_query_next(query, item):
        found[i, item] += 1


@wp.kernel
def mesh_group_rays(mesh: wp.uint64, start: wp.array(dtype=wp.vec3), d: wp.array(dtype=wp.vec3),
                    group: wp.array(dtype=int), crossings: wp.array2d(dtype=int)):
    i = wp.tid()
    root = wp.mesh_get_group_root(mesh, group[i])
    crossings[i, 0] = wp.mesh_query_ray_count_intersections(mesh, start[i], d[i], root)
    hit = wp.mesh_query_ray(mesh, start[i], d[i], 1.0e6, root)
    crossings[i, 1] = wp.where(hit.result, hit.face, -1)


@wp.kernel
def tiled(bvh: wp.uint64, lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), found: wp.array2d(dtype=int),
          steps: wp.array(dtype=int)):
    i, _lane = wp.tid()
    query = wp.tile_bvh_query_aabb(bvh, lo[i], hi[i])
    while wp.tile_query_valid(query):
        item = wp.untile(wp.tile_bvh_query_next(query))
        if item >= 0:
            wp.atomic_add(found, i, item, 1)
        if _lane == 0:
            steps[i] += 1
'''
ITEMS, QUERIES = 300, 96


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "bvh_loader")


def boxes_of(seed=0, n=ITEMS):
    rng = np.random.default_rng(seed)
    lowers = (rng.random((n, 3)) * 8.0).astype(np.float32)
    return lowers, (lowers + rng.random((n, 3)) * 1.5).astype(np.float32)


def queries(seed=1):
    rng = np.random.default_rng(seed)
    lo = (rng.random((QUERIES, 3)) * 9.0 - 0.5).astype(np.float32)
    direction = rng.standard_normal((QUERIES, 3)).astype(np.float32)
    direction[::5, 1] = 0.0  # along a slab: 1 / 0 = inf in the slab test
    return lo, (lo + rng.random((QUERIES, 3)) * 2.0).astype(np.float32), direction


def overlaps(lowers, uppers, lo, hi):
    return ~((lo[:, None] > uppers[None]) | (hi[:, None] < lowers[None])).any(axis=-1)


def sphere_reaches(lowers, uppers, c, r):
    gap = np.maximum(np.maximum(lowers[None] - c[:, None], c[:, None] - uppers[None]), np.float32(0))
    return (gap * gap).sum(axis=-1, dtype=np.float32) <= (np.maximum(r, 0) ** 2)[:, None]


def ray_reaches(lowers, uppers, start, direction, reach):
    """Warp's slab test (fmin / fmax: a NaN of 0 * inf dropped), in float32, before `reach`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rcp = np.float32(1) / direction
        a, b = (lowers[None] - start[:, None]) * rcp[:, None], (uppers[None] - start[:, None]) * rcp[:, None]
    near, far = np.fmin(a[..., 0], b[..., 0]), np.fmax(a[..., 0], b[..., 0])
    for k in (1, 2):
        near, far = np.fmax(np.fmin(a[..., k], b[..., k]), near), np.fmin(np.fmax(a[..., k], b[..., k]), far)
    return (far >= 0) & (far >= near) & ~(near >= reach[:, None])


def capsule_reaches(lowers, uppers, start, direction, radius):
    """Warp's capsule sweep over [0, 1] of direction: boxes grown by the radius (at least 0), an axis of
    direction 0 a slab the start must lie in, the slab test on the others, the far end closed."""
    r = np.maximum(radius, np.float32(0))[:, None, None]
    lo, hi = lowers[None] - r, uppers[None] + r
    with np.errstate(divide="ignore", invalid="ignore"):
        rcp = np.float32(1) / direction
        a, b = (lo - start[:, None]) * rcp[:, None], (hi - start[:, None]) * rcp[:, None]
    parallel = (np.float32(1) / rcp == 0)[:, None, :]
    inside = (start[:, None] >= lo) & (start[:, None] <= hi)
    near = np.where(parallel, np.float32(np.finfo(np.float32).min), np.fmin(a, b)).max(axis=-1)
    far = np.where(parallel, np.float32(np.finfo(np.float32).max), np.fmax(a, b)).min(axis=-1)
    return (inside | ~parallel).all(axis=-1) & (far >= 0) & (far >= near) & ~(near > 1)


def launch(module, kernel, bvh, *args):
    found = np.zeros((QUERIES, bvh.lowers.shape[0]), np.int32)
    getattr(module, kernel).launch(dim=QUERIES, inputs=[bvh.id, *args, found])
    return found


@needs_cxx
@pytest.mark.build
def test_every_query_finds_each_touched_item_once(module):
    lowers, uppers = boxes_of()
    bvh = module.Bvh(lowers, uppers)
    lo, hi, direction = queries()
    np.testing.assert_array_equal(launch(module, "boxes", bvh, lo, hi), overlaps(lowers, uppers, lo, hi))
    r = np.linspace(-0.5, 2.0, QUERIES).astype(np.float32)  # a negative radius is a point's
    np.testing.assert_array_equal(launch(module, "spheres", bvh, lo, r), sphere_reaches(lowers, uppers, lo, r))
    reach = np.tile(np.array([0.0, 1.5, 4.0, np.inf], np.float32), QUERIES // 4)
    found = launch(module, "rays", bvh, lo, direction, reach)
    expected = ray_reaches(lowers, uppers, lo, direction, reach)
    np.testing.assert_array_equal(found, expected)
    assert 0 < expected[reach == 1.5].sum() < expected[reach == np.inf].sum()  # max_dist cuts some off
    sweep = launch(module, "capsules", bvh, lo, hi - lo, r)
    np.testing.assert_array_equal(sweep, capsule_reaches(lowers, uppers, lo, hi - lo, r))
    parallel = hi - lo
    parallel[:, 0] = 0.0
    np.testing.assert_array_equal(launch(module, "capsules", bvh, lo, parallel, r),
                                  capsule_reaches(lowers, uppers, lo, parallel, r))
    bvh.lowers[...] += 0.25  # moved in place: items are read live, the tree's boxes after refit()
    bvh.uppers[...] += 0.25
    bvh.refit()
    np.testing.assert_array_equal(launch(module, "boxes", bvh, lo, hi), overlaps(lowers, uppers, lo, hi))
    bvh.lowers[...] = np.flip(bvh.lowers, 0)  # shuffled: a new tree
    bvh.uppers[...] = np.flip(bvh.uppers, 0)
    bvh.rebuild()
    np.testing.assert_array_equal(launch(module, "boxes", bvh, lo, hi), overlaps(lowers, uppers, lo, hi))
    empty = module.Bvh(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32))
    assert not launch(module, "boxes", empty, lo, hi).any()


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_blocks_shared_walk_hands_out_each_item_once(device):
    module = build(SOURCE, "bvh_tiled", block_dim=16, target=device)
    lowers, uppers = boxes_of(5)
    bvh = module.Bvh(lowers, uppers)
    lo, hi, _ = queries(6)
    hi = lo + (hi - lo) * np.float32(2)  # up to ~60 items a query: several steps of 16
    found, steps = np.zeros((QUERIES, ITEMS), np.int32), np.zeros(QUERIES, np.int32)
    module.tiled.launch_tiled(dim=QUERIES, inputs=[bvh.id, lo, hi, found, steps], block_dim=16, device=device)
    expected = overlaps(lowers, uppers, lo, hi)
    np.testing.assert_array_equal(found, expected)
    counts = expected.sum(axis=1)
    assert counts.max() > 32 and (counts == 0).any()
    np.testing.assert_array_equal(steps, -(-counts // 16) + 1)  # full steps, the last short one, then none


@needs_cxx
@pytest.mark.build
def test_a_group_roots_query_finds_its_groups_items_only(module):
    lowers, uppers = boxes_of(8)
    groups = (np.arange(ITEMS) * 7 % 5 * 10).astype(np.int32)  # ids 0, 10, ..., 40, interleaved over the boxes
    bvh = module.Bvh(lowers, uppers, groups=groups)
    lo, hi, _ = queries(9)
    hi = lo + (hi - lo) * np.float32(2)
    asked = np.resize(np.array([0, 10, 40, 7, -1], np.int32), QUERIES)  # 7 and -1: no such group, the whole tree
    found = launch(module, "grouped", bvh, lo, hi, asked)
    touched = overlaps(lowers, uppers, lo, hi)
    in_group = (groups[None, :] == asked[:, None]) | ~np.isin(asked, groups)[:, None]
    np.testing.assert_array_equal(found, touched & in_group)
    assert found[asked == 10].any() and found[asked == 7].sum() > found[asked == 10].sum()
    bvh.rebuild()  # the groups kept
    np.testing.assert_array_equal(launch(module, "grouped", bvh, lo, hi, asked), touched & in_group)


@needs_cxx
@pytest.mark.build
def test_a_grouped_meshs_rays_meet_their_groups_faces_only(module):
    rng = np.random.default_rng(12)
    centres = rng.random((300, 3)).astype(np.float32) * 6
    points = (centres[:, None, :] + (rng.random((300, 3, 3)) - 0.5).astype(np.float32) * 1.5).reshape(-1, 3)
    groups = rng.integers(0, 4, 300).astype(np.int32)
    mesh = module.Mesh(points, np.arange(900, dtype=np.int32), groups=groups)
    start = (rng.random((QUERIES, 3)) * 6).astype(np.float32)
    d = rng.standard_normal((QUERIES, 3)).astype(np.float32)
    asked = np.resize(np.array([0, 1, 3, 9], np.int32), QUERIES)  # 9: no such group, the whole mesh
    native = np.zeros((QUERIES, 2), np.int32)
    module.mesh_group_rays.launch(dim=QUERIES, inputs=[mesh.id, start, d, asked, native])
    interp = Interpreter(compile_ir(SOURCE, "bvh_ref"))
    ref = np.zeros_like(native)
    interp.launch("mesh_group_rays", QUERIES, [mesh.id, start, d, asked, ref], tiled=False)
    np.testing.assert_array_equal(ref, native)  # the interpreter's brute force over the group's faces
    hit = native[:, 1] >= 0
    assert hit.sum() > 10 and (native[asked == 9, 0] > native[asked == 0, 0].mean()).any()
    np.testing.assert_array_equal(groups[native[hit & (asked != 9), 1]], asked[hit & (asked != 9)])
    with pytest.raises(ValueError, match=r"Mesh: `groups` must hold one group per triangle \(300\), got 3"):
        module.Mesh(points, np.arange(900, dtype=np.int32), groups=groups[:3])


@needs_cxx
@pytest.mark.build
def test_the_interpreter_agrees_with_the_compiled_walks(module):
    interp = Interpreter(compile_ir(SOURCE, "bvh_ref"))
    lowers, uppers = boxes_of(3, 60)
    bvh = module.Bvh(lowers, uppers)
    lo, _, direction = queries(4)
    reach = np.full(QUERIES, 3.0, np.float32)
    native = launch(module, "rays", bvh, lo, direction, reach)
    ref = np.zeros_like(native)
    interp.launch("rays", QUERIES, [bvh.id, lo, direction, reach, ref], tiled=False)
    np.testing.assert_array_equal(ref, native)
    assert native.any()
    grouped = module.Bvh(lowers, uppers, groups=np.arange(60, dtype=np.int32) % 3)
    asked = np.resize(np.array([0, 2, 5], np.int32), QUERIES)
    native = launch(module, "grouped", grouped, lo, lo + 3.0, asked)
    ref = np.zeros_like(native)
    interp.launch("grouped", QUERIES, [grouped.id, lo, lo + np.float32(3.0), asked, ref], tiled=False)
    np.testing.assert_array_equal(ref, native)
    assert native.any()


@needs_cxx
@pytest.mark.build
def test_bad_bvhs_and_ids_are_python_errors(module):
    lowers, uppers = boxes_of()
    lo, hi, _ = queries()
    found = np.zeros((QUERIES, ITEMS), np.int32)
    with pytest.raises(ValueError, match=r"Bvh: `lowers` must be an \(n, 3\) float32 array .* got float64"):
        module.Bvh(lowers.astype(np.float64), uppers)
    with pytest.raises(ValueError, match=r"Bvh: `uppers` must match the lowers' shape \(300, 3\), got \(299, 3\)"):
        module.Bvh(lowers, uppers[1:])
    with pytest.raises(ValueError, match=r"Bvh: `groups` must hold one group per box \(300\), got 299"):
        module.Bvh(lowers, uppers, groups=np.zeros(ITEMS - 1, np.int32))
    with pytest.raises(ValueError, match=r"Bvh: `groups` must be one integer per box, got float32"):
        module.Bvh(lowers, uppers, groups=np.zeros(ITEMS, np.float32))
    with pytest.raises(ValueError, match=r"Bvh: device 'cuda'"):
        module.Bvh(lowers, uppers, device="cuda")
    points = np.eye(3, dtype=np.float32)
    mesh = module.Mesh(points, np.array([0, 1, 2], np.int32))
    with pytest.raises(ValueError, match=r"boxes: argument `bvh` = \d+ is not the id of a live tilec Bvh"):
        module.boxes.launch(dim=QUERIES, inputs=[mesh.id, lo, hi, found])  # a mesh's id where a Bvh's goes
    bvh = module.Bvh(lowers, uppers)
    dead = bvh.id
    del bvh
    gc.collect()
    with pytest.raises(ValueError, match=r"boxes: argument `bvh` = \d+ is not the id of a live tilec Bvh"):
        module.boxes.launch(dim=QUERIES, inputs=[dead, lo, hi, found])
