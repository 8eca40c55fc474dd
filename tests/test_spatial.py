"""The loader's HashGrid and Mesh and the launch's check of their ids (tilec-rt/spatial.py), an
unbuilt grid, ids and faces outside the points, the CUDA emulation running the same query loops,
and the reference interpreter against the compiled code. Warp's own values and gradients:
tests/conformance/cases_hash_grids.py and cases_meshes.py."""
from __future__ import annotations

import gc
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.kernel
def count(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, out: wp.array(dtype=int)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, x[i], h):
        if wp.length(x[j] - x[i]) <= h:
            n += 1
    out[i] = n


@wp.kernel
def count_group(grid: wp.uint64, x: wp.array(dtype=wp.vec3), g: wp.array(dtype=int), h: float,
                out: wp.array(dtype=int)):
    i = wp.tid()
    n = int(0)
    for j in wp.hash_grid_query(grid, x[i], h, g[i]):
        if wp.length(x[j] - x[i]) <= h:
            n += 1
    out[i] = n


@wp.kernel
def ids(grid: wp.uint64, out: wp.array(dtype=int)):
    k = wp.tid()
    out[k] = wp.hash_grid_point_id(grid, k - 2)


@wp.kernel
def surface(mesh: wp.uint64, face: wp.array(dtype=int), u: wp.array(dtype=float), pos: wp.array(dtype=wp.vec3),
            nrm: wp.array(dtype=wp.vec3), idx: wp.array(dtype=int)):
    i = wp.tid()
    pos[i] = wp.mesh_eval_position(mesh, face[i], u[i], 0.25) + wp.mesh_eval_velocity(mesh, face[i], 0.5, u[i])
    nrm[i] = wp.mesh_eval_face_normal(mesh, face[i]) + wp.mesh_get_point(mesh, face[i] * 3 + 2)
    idx[i] = wp.mesh_get_index(mesh, face[i] * 3 + 1)


@wp.kernel
def rebound(grid: wp.uint64, x: wp.array(dtype=wp.vec3), h: float, out: wp.array(dtype=int),
            plain: wp.array(dtype=int)):
    i = wp.tid()
    q = wp.hash_grid_query(grid, x[i], h)
    n = int(0)
    m = int(0)
    for j in q:  # the loop keeps the query it started with (Warp 1.19 does not end here)
        n += j + 1
        q = wp.hash_grid_query(grid, x[i], h * 0.0)
    for j in wp.hash_grid_query(grid, x[i], h):
        m += j + 1
    out[i] = n
    plain[i] = m


@wp.kernel
def bary(mesh: wp.uint64, face: wp.array(dtype=int), u: wp.array(dtype=float), v: wp.array(dtype=float),
         out: wp.array(dtype=float)):
    i = wp.tid()
    p = wp.mesh_eval_position(mesh, face[i], u[i] * u[i], v[i])
    w = wp.mesh_eval_velocity(mesh, face[i], v[i], u[i] + v[i])
    out[i] = wp.dot(p, w) + wp.length(p)
'''
N = 200
H = 0.3


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "hash_grid_loader")


def points(n=N, seed=0):
    return (np.random.default_rng(seed).random((n, 3)) * 3.0 - 1.5).astype(np.float32)


def brute_force_counts(x, h):
    d = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1)
    return (d <= np.float32(h)).sum(axis=1)


@needs_cxx
@pytest.mark.build
def test_counts_match_brute_force_for_any_grid_shape(module):
    x = points()
    for dims in ((1, 1, 1), (4, 4, 4), (7, 3, 5), (64, 64, 64)):
        grid = module.HashGrid(*dims)
        grid.build(x, H)
        out = np.zeros(N, np.int32)
        module.count.launch(dim=N, inputs=[grid.id, x, H, out])
        np.testing.assert_array_equal(out, brute_force_counts(x, H), err_msg=str(dims))


@needs_cxx
@pytest.mark.build
def test_a_grid_is_accepted_by_any_module_and_refused_when_dead(module):
    other = build(SOURCE.replace("count(", "count_again("), "hash_grid_other")
    x = points()
    grid = other.HashGrid(8, 8, 8)
    grid.build(x, H)
    out = np.zeros(N, np.int32)
    module.count.launch(dim=N, inputs=[grid.id, x, H, out])  # made by another module's loader
    np.testing.assert_array_equal(out, brute_force_counts(x, H))
    module.count.launch(dim=N, inputs=[grid, x, H, out])  # the grid itself
    dead = grid.id
    del grid
    gc.collect()
    with pytest.raises(ValueError, match=r"count: argument `grid` = \d+ is not the id of a live tilec HashGrid"):
        module.count.launch(dim=N, inputs=[dead, x, H, out])


@needs_cxx
@pytest.mark.build
def test_bad_grid_arguments_are_python_errors(module):
    x = points()
    out = np.zeros(N, np.int32)
    with pytest.raises(ValueError, match=r"argument `grid` = 12345 is not the id of a live tilec HashGrid"):
        module.count.launch(dim=N, inputs=[12345, x, H, out])
    with pytest.raises(TypeError, match=r"argument `grid` must be a HashGrid's id \(HashGrid.id\), got float"):
        module.count.launch(dim=N, inputs=[1.5, x, H, out])
    wide = module.HashGrid(8, 8, 8, dtype="float64")
    wide.build(x.astype(np.float64), H)
    with pytest.raises(ValueError, match=r"argument `grid`: the kernel reads float32 points, and this HashGrid holds "
                                         r"float64 ones"):
        module.count.launch(dim=N, inputs=[wide.id, x, H, out])
    grid = module.HashGrid(8, 8, 8)
    with pytest.raises(TypeError, match=r"`points` must be float32 \(the grid's dtype\), got float64"):
        grid.build(x.astype(np.float64), H)
    with pytest.raises(ValueError, match=r"`points` must have shape \(n, 3\), got \(200, 2\)"):
        grid.build(x[:, :2], H)
    with pytest.raises(ValueError, match=r"`dim_y` must be at least 1, got 0"):
        module.HashGrid(4, 0, 4)
    with pytest.raises(ValueError, match=r"device 'cuda': tilec's hash grids live on the CPU"):
        module.HashGrid(4, 4, 4, device="cuda")


@needs_cxx
@pytest.mark.build
def test_an_unbuilt_grid_has_no_points_and_ids_outside_are_minus_one(module):
    grid = module.HashGrid(4, 4, 4)
    x = points(8)
    out = np.full(8, 7, np.int32)
    module.count.launch(dim=8, inputs=[grid.id, x, H, out])
    np.testing.assert_array_equal(out, 0)  # Warp's too: an unbuilt grid's query finds nothing
    module.ids.launch(dim=8, inputs=[grid.id, out])
    np.testing.assert_array_equal(out, -1)
    grid.build(x, H)
    module.ids.launch(dim=8, inputs=[grid.id, out])
    assert out[0] == out[1] == -1  # positions -2 and -1: outside (Warp reads past its buffer there)
    assert sorted(out[2:]) == sorted(set(out[2:])) and set(out[2:]) <= set(range(8))


@needs_cxx
@pytest.mark.build
def test_the_cuda_emulation_runs_the_same_loops(module):
    emulated = build(SOURCE, "hash_grid_emulated", block_dim=32, target="cuda-emu")
    x = points()
    grid = emulated.HashGrid(5, 5, 5)
    grid.build(x, H)
    out = np.zeros(N, np.int32)
    emulated.count.launch(dim=N, inputs=[grid.id, x, H, out], device="cuda-emu", block_dim=32)
    np.testing.assert_array_equal(out, brute_force_counts(x, H))


def mesh_arrays(seed=3):
    rng = np.random.default_rng(seed)
    points = rng.standard_normal((12, 3)).astype(np.float32)
    return points, rng.integers(0, 12, 3 * 10).astype(np.int32), rng.standard_normal((12, 3)).astype(np.float32)


def surface_args(n=16, seed=4):
    rng = np.random.default_rng(seed)
    face = rng.integers(-1, 11, n).astype(np.int32)  # -1 and 10: outside the 10 triangles
    return [face, rng.random(n).astype(np.float32), np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32),
            np.zeros(n, np.int32)]


@needs_cxx
@pytest.mark.build
def test_the_interpreter_agrees_with_the_compiled_queries_and_mesh_reads(module):
    interp = Interpreter(compile_ir(SOURCE, "spatial_ref"))
    x = points(60)
    grid = module.HashGrid(3, 4, 2)
    grid.build(x, H)
    native, ref = np.zeros(60, np.int32), np.zeros(60, np.int32)
    module.count.launch(dim=60, inputs=[grid.id, x, H, native])
    interp.launch("count", 60, [grid.id, x, np.float32(H), ref], tiled=False)
    np.testing.assert_array_equal(ref, native)
    groups = np.random.default_rng(6).integers(-2, 2, 60).astype(np.int32)
    grid.build(x, H, groups=groups)
    native, ref = np.zeros(60, np.int32), np.zeros(60, np.int32)
    module.count_group.launch(dim=60, inputs=[grid.id, x, groups, H, native])
    interp.launch("count_group", 60, [grid.id, x, groups, np.float32(H), ref], tiled=False)
    np.testing.assert_array_equal(ref, native)
    same_group = groups[:, None] == groups[None, :]
    near = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=-1) <= np.float32(H)
    np.testing.assert_array_equal(native, (near & same_group).sum(axis=1))  # only the point's own group
    with pytest.raises(ValueError, match=r"`groups` must be 60 int32 values \(one per point\), got int64"):
        grid.build(x, H, groups=groups.astype(np.int64))
    mesh = module.Mesh(*mesh_arrays()[:2], velocities=mesh_arrays()[2])
    native, ref = [mesh.id, *surface_args()], [mesh.id, *surface_args()]
    module.surface.launch(dim=16, inputs=native)
    interp.launch("surface", 16, ref, tiled=False)
    for a, b in zip(ref[3:], native[3:]):
        np.testing.assert_array_equal(a, b)


@needs_cxx
@pytest.mark.build
def test_mesh_reads_outside_the_mesh_are_zero_and_bad_meshes_python_errors(module):
    points, indices, velocities = mesh_arrays()
    mesh = module.Mesh(points, indices)  # no velocities: they read zero
    args = [mesh.id, *surface_args()]
    module.surface.launch(dim=16, inputs=args)
    face, u, pos, nrm, idx = args[1:]
    outside = (face < 0) | (face >= 10)
    assert outside.any() and (~outside).any()
    np.testing.assert_array_equal(pos[outside], 0)
    np.testing.assert_array_equal(nrm[outside], 0)
    np.testing.assert_array_equal(idx[outside], -1)
    corners = points[indices.reshape(-1, 3)[face[~outside]]]
    expected = corners[:, 0] * u[~outside, None] + corners[:, 1] * np.float32(0.25) + corners[:, 2] * (
        np.float32(1) - u[~outside, None] - np.float32(0.25))
    np.testing.assert_array_equal(pos[~outside], expected)  # no velocities: the velocity term is zero
    np.testing.assert_array_equal(idx[~outside], indices.reshape(-1, 3)[face[~outside], 1])
    with pytest.raises(ValueError, match=r"Mesh: `indices` must index the 12 points, got values in \[0, 12\]"):
        module.Mesh(points, np.append(indices[:-1], 12))
    with pytest.raises(ValueError, match=r"Mesh: `indices` must be integers, three per triangle; got 29 of int32"):
        module.Mesh(points, indices[:-1])
    with pytest.raises(ValueError, match=r"Mesh: `points` must be an \(n, 3\) float32 array .* got float64"):
        module.Mesh(points.astype(np.float64), indices)
    with pytest.raises(ValueError, match=r"Mesh: `velocities` must match the points' shape"):
        module.Mesh(points, indices, velocities=velocities[:5])
    grid = module.HashGrid(2, 2, 2)
    with pytest.raises(ValueError, match=r"surface: argument `mesh` = \d+ is not the id of a live tilec Mesh"):
        module.surface.launch(dim=16, inputs=[grid.id, *surface_args()])  # a grid's id where a mesh's goes
    mesh.points[...] += 1.0  # read in place by the next launch, as in Warp: each position moves by 1
    moved = [mesh.id, *surface_args()]
    module.surface.launch(dim=16, inputs=moved)
    np.testing.assert_allclose(moved[3][~outside], pos[~outside] + 1.0, rtol=1e-5, atol=1e-5)


@needs_cxx
@pytest.mark.build
def test_barycentric_gradients_match_finite_differences(module):
    points, indices, velocities = mesh_arrays()
    mesh = module.Mesh(points, indices, velocities=velocities)
    rng = np.random.default_rng(5)
    n = 12
    args = [mesh.id, rng.integers(0, 10, n).astype(np.int32), rng.random(n).astype(np.float32),
            rng.random(n).astype(np.float32), np.zeros(n, np.float32)]
    check_gradients(module.bary, n, args, outputs=[4], wrt=[2, 3], tiled=False, h=1e-2, rtol=2e-2, atol=2e-3)


MAIN = r'''
#include <cstdio>
#include <vector>
#include "hash_grid_loader.h"
#include "tilec-rt/hash_grid.h"

int main(int argc, char** argv) {
    std::vector<float> x(3 * @N@);
    std::FILE* f = std::fopen(argv[1], "rb");
    if (!f || std::fread(x.data(), sizeof(float), x.size(), f) != x.size()) return 2;
    std::fclose(f);
    tl::HashGridStorage grid(7, 3, 5);
    grid.build(x.data(), @N@, @H@);
    std::vector<int32_t> out(@N@, -1);
    tilec_array xs = {x.data(), {@N@, 3}, {12, 4}}, counts = {out.data(), {@N@}, {4}};
    tilec_launch launch = {{@N@}, 1, 0, 1, 1};
    if (hash_grid_loader_count_cpu_forward(&launch, grid.id(), xs, @H@, counts) != 0) return 3;
    for (int i = 0; i < @N@; ++i) std::printf("%d\n", out[i]);
    tilec_array order = {out.data(), {@N@}, {4}};
    if (hash_grid_loader_ids_cpu_forward(&launch, grid.id(), order) != 0) return 4;
    for (int i = 0; i < @N@; ++i) std::printf("%d\n", out[i]);
    std::vector<int32_t> groups(@N@);
    for (int i = 0; i < @N@; ++i) groups[i] = (i * 7) % 3 - 1;
    grid.build(x.data(), @N@, @H@, 3, groups.data());
    tilec_array gs = {groups.data(), {@N@}, {4}};
    if (hash_grid_loader_count_group_cpu_forward(&launch, grid.id(), xs, gs, @H@, counts) != 0) return 5;
    for (int i = 0; i < @N@; ++i) std::printf("%d\n", out[i]);
    if (hash_grid_loader_ids_cpu_forward(&launch, grid.id(), order) != 0) return 6;
    for (int i = 0; i < @N@; ++i) std::printf("%d\n", out[i]);
}
'''


@needs_cxx
@pytest.mark.build
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_cpp_caller_builds_the_grid_with_the_runtime_helper(module, tmp_path):
    """tl::HashGridStorage (runtime hash_grid.h) gives the C API the grid the loader would."""
    folder = Path(module.__file__).parent
    x = points()
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    (tmp_path / "main.cpp").write_text(MAIN.replace("@N@", str(N)).replace("@H@", repr(H) + "f"))
    exe = tmp_path / "main"
    subprocess.run(["g++", "-std=c++17", "-O1", f"-I{folder}", str(tmp_path / "main.cpp"), f"-L{folder}",
                    "-lhash_grid_loader_cpu", f"-Wl,-rpath,{folder}", "-o", str(exe)], check=True)
    run = subprocess.run([str(exe), str(tmp_path / "x.bin")], capture_output=True, text=True, check=True)
    counts, order, grouped_counts, grouped_order = np.array(run.stdout.split(), np.int32).reshape(4, N)
    np.testing.assert_array_equal(counts, brute_force_counts(x, H))
    grid = module.HashGrid(7, 3, 5)
    grid.build(x, H)
    expected = np.zeros(N, np.int32)
    module.ids.launch(dim=N, inputs=[grid.id, expected])
    np.testing.assert_array_equal(order, expected)  # the same cells, the same stable order
    groups = ((np.arange(N) * 7) % 3 - 1).astype(np.int32)
    grid.build(x, H, groups=groups)
    module.ids.launch(dim=N, inputs=[grid.id, expected])
    np.testing.assert_array_equal(grouped_order, expected)  # grouped: the same keys' order
    module.count_group.launch(dim=N, inputs=[grid.id, x, groups, H, expected])
    np.testing.assert_array_equal(grouped_counts, expected)


@needs_cxx
@pytest.mark.build
def test_rebinding_a_query_in_its_loop_leaves_the_running_loop_alone(module):
    """Python's rule (the loop iterates what `q` was when it started); Warp 1.19's loop does not end."""
    x = points()
    grid = module.HashGrid(8, 8, 8)
    grid.build(x, H)
    out, plain = np.zeros(N, np.int32), np.zeros(N, np.int32)
    module.rebound.launch(dim=N, inputs=[grid.id, x, H, out, plain])
    np.testing.assert_array_equal(out, plain)
    assert (plain > 0).all()
