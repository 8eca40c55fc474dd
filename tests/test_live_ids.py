"""Hash-grid, mesh and BVH ids read from values (Newton's `mesh = shape_source_ptr[shape]`): each is
checked where it is read against the objects alive at the launch (runtime live_ids.h), and one that is no
live object of the kind read (0, a small index, a hash grid's id read as a mesh's, a dead mesh's id)
reads as that kind's empty object. Live ids give what the same kernels give through checked parameters."""
from __future__ import annotations

import ctypes
import gc
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from gradcheck import check_gradients
from test_mesh_queries import interior_targets, sphere
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.func
def nearest_face(mesh: wp.uint64, p: wp.vec3) -> int:
    q = wp.mesh_query_point(mesh, p, 10.0)
    return wp.where(q.result, q.face, -1)


@wp.kernel
def probe(mesh: wp.uint64, x: wp.array(dtype=wp.vec3), lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3),
          pos: wp.array(dtype=wp.vec3), face: wp.array(dtype=int), hits: wp.array(dtype=int),
          corner: wp.array(dtype=wp.vec3), points: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.mesh_query_point(mesh, x[i], 10.0)
    if q.result:
        pos[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    face[i] = nearest_face(mesh, x[i])
    for f in wp.mesh_query_aabb(mesh, lo[i], hi[i]):
        hits[i] += f + 1
    ray = wp.mesh_query_ray(mesh, x[i], wp.normalize(-x[i]), 50.0)
    if ray.result:
        hits[i] += 1000 * (ray.face + 1)
    corner[i] = wp.mesh_get_point(mesh, 3 * i)
    points[i] = wp.mesh_get(mesh).points.shape[0] + 100 * wp.mesh_get_index(mesh, 3 * i + 1)


@wp.kernel
def probe_from(ids: wp.array(dtype=wp.uint64), pick: wp.array(dtype=int), x: wp.array(dtype=wp.vec3),
               lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), pos: wp.array(dtype=wp.vec3),
               face: wp.array(dtype=int), hits: wp.array(dtype=int), corner: wp.array(dtype=wp.vec3),
               points: wp.array(dtype=int)):
    i = wp.tid()
    mesh = ids[pick[i]]
    q = wp.mesh_query_point(mesh, x[i], 10.0)
    if q.result:
        pos[i] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    face[i] = nearest_face(ids[pick[i]], x[i])
    query = wp.mesh_query_aabb(mesh, lo[i], hi[i])
    f = int(0)
    while wp.mesh_query_aabb_next(query, f):
        hits[i] += f + 1
    ray = wp.mesh_query_ray(ids[pick[i]], x[i], wp.normalize(-x[i]), 50.0)
    if ray.result:
        hits[i] += 1000 * (ray.face + 1)
    corner[i] = wp.mesh_get_point(mesh, 3 * i)
    points[i] = wp.mesh_get(mesh).points.shape[0] + 100 * wp.mesh_get_index(mesh, 3 * i + 1)


@wp.kernel
def closest_loss_from(ids: wp.array(dtype=wp.uint64), x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    mesh = ids[i % 2]
    q = wp.mesh_query_point(mesh, x[i], 10.0)
    p = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    out[i] = wp.length_sq(p - x[i]) + wp.where(q.result, 0.0, 1.0)


@wp.kernel
def neighbours_from(grids: wp.array(dtype=wp.uint64), x: wp.array(dtype=wp.vec3), radius: float,
                    count: wp.array(dtype=int)):
    i = wp.tid()
    for j in wp.hash_grid_query(grids[i % 2], x[i], radius):
        count[i] += 1
'''

OUTPUTS = ("pos", "face", "hits", "corner", "points")


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "live_ids")


def inputs(n=12, seed=5):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, 3)) * 1.5).astype(np.float32)
    lo = (x - 0.6).astype(np.float32)
    return x, lo, (lo + 1.2).astype(np.float32)


def outputs(n=12):
    return [np.zeros((n, 3), np.float32), np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros((n, 3), np.float32),
            np.zeros(n, np.int32)]


def through_parameter(module, mesh, n=12):
    out = outputs(n)
    module.probe.launch(dim=n, inputs=[mesh.id, *inputs(n), *out])
    return out


EMPTY = {"pos": 0.0, "face": -1, "hits": 0, "corner": 0.0, "points": -100}  # an empty mesh's answers


@needs_cxx
@pytest.mark.build
def test_live_ids_read_as_their_meshes_and_others_as_empty_meshes(module):
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    other = module.Mesh(points * 2.0, indices[::-1].copy())
    grid = module.HashGrid(4, 4, 4)
    dead = module.Mesh(points, indices)
    dead_id = dead.id
    del dead
    gc.collect()
    ids = np.array([mesh.id, 0, other.id, 7, grid.id, dead_id], np.uint64)
    n = 12
    pick = np.arange(n, dtype=np.int32) % len(ids)
    out = outputs(n)
    module.probe_from.launch(dim=n, inputs=[ids, pick, *inputs(n), *out])
    want = {0: through_parameter(module, mesh), 2: through_parameter(module, other)}
    assert want[0][1].max() >= 0 and want[0][2].any()  # (the checked kernel finds faces: the test can fail)
    for i in range(n):
        for k, name in enumerate(OUTPUTS):
            expected = want[pick[i]][k][i] if pick[i] in want else EMPTY[name]
            np.testing.assert_array_equal(out[k][i], expected, err_msg=f"{name}[{i}] (ids[{pick[i]}])")


@needs_cxx
@pytest.mark.build
def test_a_hash_grid_id_read_from_an_array_and_a_mesh_id_read_as_a_grid(module):
    rng = np.random.default_rng(2)
    pts = rng.random((64, 3)).astype(np.float32)
    grid = module.HashGrid(8, 8, 8)
    grid.build(pts, 0.2)
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    x = rng.random((10, 3)).astype(np.float32)
    count = np.zeros(10, np.int32)
    module.neighbours_from.launch(dim=10, inputs=[np.array([grid.id, mesh.id], np.uint64), x, 0.2, count])
    brute = (np.linalg.norm(x[:, None] - pts[None], axis=2) <= 0.2).sum(axis=1)
    assert (count[0::2] >= brute[0::2]).all() and count[0::2].sum() > 0  # the cells visited hold every neighbour
    np.testing.assert_array_equal(count[1::2], 0)  # a mesh's id read as a grid's: the empty grid


@needs_cxx
@pytest.mark.build
def test_the_interpreter_and_the_cuda_emulation_agree(module):
    emulated = build(SOURCE, "live_ids_emulated", block_dim=32, target="cuda-emu")
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    ids = np.array([0, mesh.id, 3], np.uint64)
    n = 12
    pick = np.arange(n, dtype=np.int32) % 3
    native, emu, ref = outputs(n), outputs(n), outputs(n)
    module.probe_from.launch(dim=n, inputs=[ids, pick, *inputs(n), *native])
    emulated.probe_from.launch(dim=n, inputs=[ids, pick, *inputs(n), *emu], device="cuda-emu", block_dim=32)
    Interpreter(compile_ir(SOURCE, "live_ids")).launch("probe_from", n, [ids, pick, *inputs(n), *ref], tiled=False)
    for k, name in enumerate(OUTPUTS):
        np.testing.assert_array_equal(emu[k], native[k], err_msg=name)
        if name == "face":  # the closest point may be a corner of several faces: each walk keeps one of them
            np.testing.assert_array_equal(ref[k] >= 0, native[k] >= 0, err_msg=name)
        else:
            np.testing.assert_allclose(ref[k], native[k], rtol=1e-6, atol=2e-6, err_msg=name)
    assert (native[1][pick == 1] >= 0).all() and (native[1][pick != 1] == -1).all()


@needs_cxx
@pytest.mark.build
def test_the_manifest_marks_the_kernels_and_a_gpu_launch_is_refused(module):
    manifest = json.loads((Path(module.__file__).parent / "manifest.json").read_text())
    marked = {name for name, k in manifest["kernels"].items() if k.get("live_ids")}
    assert marked == {"probe_from", "closest_loss_from", "neighbours_from"}
    with pytest.raises(ValueError, match=r"probe_from: it reads hash-grid, mesh or BVH ids from values, which tilec "
                                         r"checks on the CPU only; launching it on 'cuda' is not supported yet"):
        module.probe_from.launch(dim=1, inputs=[np.zeros(1, np.uint64), np.zeros(1, np.int32), *inputs(1),
                                                *outputs(1)], device="cuda")


@needs_cxx
@pytest.mark.build
def test_the_table_setter_refuses_ids_out_of_order(module):
    lib = ctypes.CDLL(str(Path(module.__file__).parent / "liblive_ids_cpu.so"))
    setter = lib.live_ids_set_live_ids
    setter.argtypes, setter.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64], ctypes.c_int
    kinds = np.array([3, 3], np.int32)
    assert setter(np.array([8, 8], np.uint64).ctypes.data, kinds.ctypes.data, 2) == 1
    assert setter(np.array([9, 8], np.uint64).ctypes.data, kinds.ctypes.data, 2) == 1
    assert setter(np.array([8, 9], np.uint64).ctypes.data, kinds.ctypes.data, 2) == 0
    assert setter(None, None, 0) == 0


@needs_cxx
@pytest.mark.build
def test_gradients_through_ids_read_from_values_match_finite_differences(module):
    points, indices = sphere()
    mesh = module.Mesh(points, indices)
    n = 16
    above, _, _ = interior_targets(points, indices, n, seed=4)
    args = [np.array([mesh.id, 0], np.uint64), above, np.zeros(n, np.float32)]
    module.closest_loss_from.launch(dim=n, inputs=args)
    np.testing.assert_allclose(args[2][1::2], (above[1::2].astype(np.float64) ** 2).sum(axis=1) + 1, rtol=1e-6)
    assert (args[2][0::2] < 0.01).all()  # a point just off the mesh, its closest point found
    check_gradients(module.closest_loss_from, n, args, outputs=[2], wrt=[1], tiled=False, h=1e-3, rtol=2e-2,
                    atol=2e-3)


@needs_cxx
@pytest.mark.build
def test_the_null_id_passed_as_a_parameter_reads_as_an_empty_mesh(module):
    """0, Warp's unset id, where a kernel takes a mesh's id: the launch takes it (any other number that is
    no live mesh's is a ValueError) and the kernel reads the empty mesh, as an id read from a value does."""
    n = 12
    out = outputs(n)
    module.probe.launch(dim=n, inputs=[0, *inputs(n), *out])
    for k, name in enumerate(OUTPUTS):
        np.testing.assert_array_equal(out[k], np.broadcast_to(EMPTY[name], out[k].shape), err_msg=name)
    with pytest.raises(ValueError, match=r"probe: argument `mesh` = 7 is not the id of a live tilec Mesh"):
        module.probe.launch(dim=n, inputs=[7, *inputs(n), *outputs(n)])
