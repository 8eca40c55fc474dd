"""Warp's sparse volumes (wp.Volume on the CPU, ops/volumes.py, runtime volume.h): samples against a
float64 trilinear interpolation of the dense array the volume was made from, voxel reads and stores,
the map between world and index space, the gradients of samples (and of volume_sample_grad_f's
gradient) against float64 finite differences, ids read from struct fields checked as a mesh's, and the
reference interpreter and the CUDA emulation against the compiled code."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir, first_error
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.struct
class Sdf:
    volume: wp.uint64
    scale: float


@wp.kernel
def sample(volume: wp.uint64, points: wp.array(dtype=wp.vec3), mode: int, out: wp.array(dtype=float),
           grads: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    uvw = wp.volume_world_to_index(volume, points[i])
    out[i] = wp.volume_sample_f(volume, uvw, mode)
    g = wp.vec3()
    d = wp.volume_sample_grad_f(volume, uvw, wp.Volume.LINEAR, g)
    grads[i] = g + wp.vec3(d - wp.volume_sample(volume, uvw, wp.Volume.LINEAR, dtype=float))


@wp.kernel
def loss(volume: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    g = wp.vec3()
    d = wp.volume_sample_grad_f(volume, wp.volume_world_to_index(volume, points[i]), wp.Volume.LINEAR, g)
    w = wp.volume_index_to_world(volume, wp.vec3(d, g[0], g[1]))
    r = wp.volume_index_to_world_dir(volume, g) + wp.volume_world_to_index_dir(volume, points[i] * d)
    out[i] = d * d + 0.1 * wp.dot(g, g) + 0.01 * wp.dot(w, w) + 0.01 * wp.dot(r, r)


@wp.kernel
def vectors(volume: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    uvw = wp.volume_world_to_index(volume, points[i])
    out[i] = wp.volume_sample(volume, uvw, wp.Volume.LINEAR, dtype=wp.vec3) + wp.volume_sample_v(
        volume, uvw, wp.Volume.CLOSEST)


@wp.kernel
def vector_loss(volume: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    v = wp.volume_sample_v(volume, wp.volume_world_to_index(volume, points[i]), wp.Volume.LINEAR)
    out[i] = wp.dot(v, v)


@wp.kernel
def voxels(volume: wp.uint64, ijk: wp.array(dtype=wp.vec3i), uvw: wp.array(dtype=wp.vec3), out: wp.array(dtype=int),
           as_float: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.volume_lookup_i(volume, ijk[i][0], ijk[i][1], ijk[i][2]) + 1000 * wp.volume_sample_i(volume, uvw[i])
    as_float[i] = wp.volume_lookup_f(volume, ijk[i][0], ijk[i][1], ijk[i][2])


@wp.kernel(enable_backward=False)
def fill(volume: wp.uint64, world: wp.array3d(dtype=wp.vec3)):
    i, j, k = wp.tid()
    wp.volume_store(volume, i - 1, j, k, float(i + 2 * j) - 0.5 * float(k))
    world[i, j, k] = wp.volume_index_to_world(volume, wp.vec3(float(i), float(j), float(k)))


@wp.kernel
def from_structs(sdfs: wp.array(dtype=Sdf), points: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    sdf = sdfs[i % 3]
    uvw = wp.volume_world_to_index(sdf.volume, points[i])
    out[i] = sdf.scale * wp.volume_sample_f(sdf.volume, uvw, wp.Volume.LINEAR)
'''

MIN_WORLD, VOXEL = np.array([1.0, -2.0, 0.5]), np.array([0.5, 0.25, 0.75])


@pytest.fixture(scope="module")
def module():
    return build(SOURCE, "volumes")


def dense(seed=0, shape=(10, 9, 11), channels=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape + ((channels,) if channels else ())).astype(np.float32)


def trilinear(data, background, uvw):
    """float64: the dense array's trilinear sample at index-space uvw, voxels outside it the background."""
    base = np.floor(uvw).astype(int)
    f = uvw - base
    total = 0.0
    for o in np.ndindex(2, 2, 2):
        ijk = base + o
        inside = all(0 <= ijk[a] < data.shape[a] for a in range(3))
        value = data[tuple(ijk)].astype(np.float64) if inside else np.float64(background)
        total = total + np.prod([f[a] if o[a] else 1 - f[a] for a in range(3)]) * value
    return total


def world_points(n, seed, interior=False):
    """World points over the volume and around it; `interior`: away from voxel faces (where a trilinear
    sample is smooth)."""
    rng = np.random.default_rng(seed)
    uvw = rng.uniform(-2.0, 12.0, (n, 3))
    if interior:
        uvw = np.floor(uvw) + rng.uniform(0.15, 0.85, (n, 3))
    return (uvw * VOXEL + MIN_WORLD).astype(np.float32)


@needs_cxx
@pytest.mark.build
def test_samples_match_a_trilinear_interpolation_of_the_dense_array(module):
    data = dense()
    volume = module.Volume.load_from_numpy(data, min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL), bg_value=7.0)
    assert volume.dtype == "float32" and volume.get_voxel_size() == tuple(float(np.float32(v)) for v in VOXEL)
    n = 64
    points = world_points(n, 1)
    out, grads = np.zeros(n, np.float32), np.zeros((n, 3), np.float32)
    module.sample.launch(dim=n, inputs=[volume.id, points, 1, out, grads])
    uvw = (points.astype(np.float64) - MIN_WORLD) / VOXEL
    want = np.array([trilinear(data, 7.0, p) for p in uvw])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    eps = 1e-4  # the gradient in index space by central differences of the float64 interpolation
    fd = np.array([[(trilinear(data, 7.0, p + eps * e) - trilinear(data, 7.0, p - eps * e)) / (2 * eps)
                    for e in np.eye(3)] for p in uvw])
    smooth = (np.abs(uvw - np.round(uvw)) > 1e-3).all(axis=1)  # (off the voxel faces, where it is continuous)
    np.testing.assert_allclose(grads[smooth], fd[smooth], rtol=1e-4, atol=1e-4)  # and the value d equal to the sample
    module.sample.launch(dim=n, inputs=[volume.id, points, 0, out, grads])
    nearest = [np.sign(p) * np.floor(np.abs(p) + 0.5) for p in uvw]  # C's roundf: halves away from zero
    want = [data[tuple(c.astype(int))] if ((c >= 0) & (c < data.shape)).all() else 7.0 for c in nearest]
    np.testing.assert_array_equal(out, np.float32(want))


@needs_cxx
@pytest.mark.build
def test_gradients_match_finite_differences(module):
    data = dense(seed=2)
    volume = module.Volume.load_from_numpy(data, min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL), bg_value=-1.0)
    n = 24
    check_gradients(module.loss, n, [volume.id, world_points(n, 3, interior=True), np.zeros(n, np.float32)],
                    outputs=[2], wrt=[1], tiled=False, h=1e-3, rtol=2e-2, atol=2e-3)
    vec = module.Volume.load_from_numpy(dense(seed=4, channels=3), min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL),
                                        bg_value=(0.5, -0.5, 1.0))
    check_gradients(module.vector_loss, n, [vec.id, world_points(n, 5, interior=True), np.zeros(n, np.float32)],
                    outputs=[2], wrt=[1], tiled=False, h=1e-3, rtol=2e-2, atol=2e-3)


@needs_cxx
@pytest.mark.build
def test_vector_and_int_volumes_and_reads_of_another_type(module):
    data = dense(seed=6, channels=3)
    vec = module.Volume.load_from_numpy(data, min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL),
                                        bg_value=(0.5, -0.5, 1.0))
    assert vec.dtype == "vec3f"
    n = 32
    points = world_points(n, 7)
    out = np.zeros((n, 3), np.float32)
    module.vectors.launch(dim=n, inputs=[vec.id, points, out])
    uvw = (points.astype(np.float64) - MIN_WORLD) / VOXEL
    linear = np.array([[trilinear(data[..., c], (0.5, -0.5, 1.0)[c], p) for c in range(3)] for p in uvw])
    nearest = [np.sign(p) * np.floor(np.abs(p) + 0.5) for p in uvw]
    closest = np.array([data[tuple(c.astype(int))] if ((c >= 0) & (c < data.shape[:3])).all() else (0.5, -0.5, 1.0)
                        for c in nearest])
    np.testing.assert_allclose(out, linear + closest, rtol=1e-5, atol=1e-5)
    labels = np.random.default_rng(8).integers(-50, 50, (9, 8, 10)).astype(np.int32)
    ints = module.Volume.load_from_numpy(labels, voxel_size=1.0, bg_value=-7)
    assert ints.dtype == "int32"
    ijk = np.array([[0, 0, 0], [8, 7, 9], [3, -1, 2], [9, 0, 0], [15, 15, 15], [16, 0, 0]], np.int32)
    uvw = np.array([[1.5, 0.0, 0.0], [-0.5, 0.0, 0.0], [2.49, 3.5, 4.5], [0.0, 0.0, 0.0], [-0.4, 0.4, 0.0],
                    [8.6, 7.4, 9.5]], np.float32)
    got, as_float = np.zeros(6, np.int32), np.ones(6, np.float32)
    module.voxels.launch(dim=6, inputs=[ints.id, ijk, uvw, got, as_float])

    def label(c):  # (a voxel of the tiles past the array holds the background, as load_from_numpy pads it)
        return labels[tuple(c)] if ((c >= 0) & (c < labels.shape)).all() else -7

    rounded = [np.sign(p) * np.floor(np.abs(p) + 0.5) for p in uvw.astype(np.float64)]
    np.testing.assert_array_equal(got, [label(c) + 1000 * label(r.astype(int)) for c, r in zip(ijk, rounded)])
    np.testing.assert_array_equal(as_float, 0.0)  # a float read of an int volume: 0, as Warp's


@needs_cxx
@pytest.mark.build
def test_stores_write_the_tiles_and_nothing_outside(module):
    volume = module.Volume.allocate((0, 0, 0), (15, 7, 7), voxel_size=0.5, bg_value=2.5, translation=(1.0, 2.0, 3.0))
    assert volume.get_tile_count() == 2 and sorted(map(tuple, volume.get_tiles())) == [(0, 0, 0), (8, 0, 0)]
    world = np.zeros((18, 9, 8, 3), np.float32)
    module.fill.launch(dim=(18, 9, 8), inputs=[volume.id, world])
    i, j, k = np.meshgrid(np.arange(18), np.arange(9), np.arange(8), indexing="ij")
    np.testing.assert_array_equal(world, np.stack([i * 0.5 + 1.0, j * 0.5 + 2.0, k * 0.5 + 3.0], -1).astype(np.float32))
    values = volume.array()
    expected = np.full((2, 512), 2.5, np.float32)
    for a, b, c in zip(i.reshape(-1) - 1, j.reshape(-1), k.reshape(-1)):
        if 0 <= a < 16 and b < 8:  # voxel (a, b, c) is in the tiles; the kernel wrote i + 2 j - k / 2 there
            expected[a >> 3, ((a & 7) << 6) | ((b & 7) << 3) | (c & 7)] = np.float32(a + 1 + 2 * b) - 0.5 * c
    np.testing.assert_array_equal(values, expected)


@needs_cxx
@pytest.mark.build
def test_ids_in_structs_are_checked_where_read(module):
    data = dense(seed=9)
    volume = module.Volume.load_from_numpy(data, min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL), bg_value=3.0)
    mesh = module.Mesh(np.zeros((3, 3), np.float32), np.array([0, 1, 2], np.int32))
    sdfs = module.Sdf.array([module.Sdf(volume=volume.id, scale=2.0), module.Sdf(volume=12345, scale=1.0),
                             module.Sdf(volume=mesh.id, scale=1.0)])
    n = 12
    points = world_points(n, 10)
    out = np.ones(n, np.float32)
    module.from_structs.launch(dim=n, inputs=[sdfs, points, out])
    uvw = (points.astype(np.float64) - MIN_WORLD) / VOXEL
    want = [2.0 * trilinear(data, 3.0, p) if i % 3 == 0 else 0.0 for i, p in enumerate(uvw)]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)  # not a live volume: the empty one, reading 0
    grads = np.ones((n, 3), np.float32)
    module.sample.launch(dim=n, inputs=[0, points, 1, out, grads])  # 0, Warp's unset id: the empty volume too
    assert not out.any() and not grads.any()


@needs_cxx
@pytest.mark.build
def test_the_interpreter_and_the_cuda_emulation_agree(module):
    emulated = build(SOURCE, "volumes_emulated", block_dim=32, target="cuda-emu")
    data = dense(seed=11)
    volume = module.Volume.load_from_numpy(data, min_world=tuple(MIN_WORLD), voxel_size=tuple(VOXEL), bg_value=7.0)
    interp = Interpreter(compile_ir(SOURCE, "volumes_ref"))
    n = 16
    points = world_points(n, 12)
    for mode in (0, 1):
        native = [volume.id, points, mode, np.zeros(n, np.float32), np.zeros((n, 3), np.float32)]
        emu = [volume.id, points, mode, np.zeros(n, np.float32), np.zeros((n, 3), np.float32)]
        ref = [volume.id, points, np.int32(mode), np.zeros(n, np.float32), np.zeros((n, 3), np.float32)]
        module.sample.launch(dim=n, inputs=native)
        emulated.sample.launch(dim=n, inputs=emu, device="cuda-emu", block_dim=32)
        interp.launch("sample", n, ref, tiled=False)
        for k in (3, 4):
            np.testing.assert_array_equal(native[k], emu[k])
            np.testing.assert_allclose(ref[k], native[k], rtol=1e-6, atol=1e-6)
    adj_native, adj_ref = np.zeros_like(points), np.zeros_like(points)
    weights = np.random.default_rng(13).standard_normal(n).astype(np.float32)
    module.loss.launch(dim=n, inputs=[volume.id, points, np.zeros(n, np.float32)],
                       adj_inputs=[0, adj_native, weights.copy()], adjoint=True)
    interp.launch("loss", n, [volume.id, points, np.zeros(n, np.float32)], tiled=False, adjoint=True,
                  adj_inputs=[np.uint64(0), adj_ref, weights.copy()])
    assert np.abs(adj_native).max() > 0.1  # (the gradient is not all zero: the comparison can fail)
    # (the interpreter sums a sample's corners in its own order: where they cancel, other roundings)
    np.testing.assert_allclose(adj_ref, adj_native, rtol=1e-4, atol=1e-4)


def test_volume_builtins_check_their_arguments():
    head = "import warp as wp\n\n\n@wp.kernel\ndef k(v: wp.uint64, x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):\n    i = wp.tid()\n"
    assert first_error(head + "    out[i] = wp.volume_sample(v, x[i], wp.Volume.LINEAR, dtype=wp.vec2)\n") == (
        "7:64: TC0201: volume_sample: `dtype` must be float, wp.vec3f or wp.int32 (tilec's volumes hold one of those)")
    assert first_error(head + "    out[i] = wp.volume_sample_f(x[i][0], x[i], wp.Volume.LINEAR)\n") == (
        "7:33: TC0201: a volume's id must be a uint64 (`Volume.id`), got a float32 scalar")
    assert first_error(head + "    out[i] = wp.volume_sample_grad_f(v, x[i], wp.Volume.LINEAR, x[i])\n") == (
        "7:65: TC0401: unsupported syntax: volume_sample_grad_f: `grad` is written to: it must be a variable bound "
        "before the call")
    assert first_error(head + "    out[i] = float(wp.Volume.CUBIC)\n").startswith(
        "7:30: TC0301: `CUBIC` is not a member of Volume")


@needs_cxx
@pytest.mark.build
def test_nanovdb_files_and_bad_ones(module):
    """A NanoVDB file Warp saved (the conformance case's, tests/conformance/cases_volumes.py, which samples it
    against Warp): loaded, the dense array it was made of read back; a file cut short or not NanoVDB's
    is a ValueError, never a read past the buffer."""
    from pathlib import Path

    saved = np.load(Path(__file__).parent / "conformance" / "refs" / "volume_nvdb_samples.npz")
    data = saved["in0.data"].tobytes()
    volume = module.Volume.load_from_nvdb(data)
    assert volume.dtype == "float32" and volume.bg_value == 7.0
    dense_values = np.zeros(volume.array().shape, np.float32)
    dense_values[...] = volume.array()
    assert volume.get_tile_count() == 8 and np.isin(dense_values, 7.0).mean() > 0.4  # 10x9x11 voxels of 16^3
    with pytest.raises(ValueError, match="Volume.load_from_nvdb: not a NanoVDB file of version 32"):
        module.Volume.load_from_nvdb(b"\0" * 64)
    for cut in (800, len(data) // 2):
        with pytest.raises(ValueError, match="Volume.load_from_nvdb: "):
            module.Volume.load_from_nvdb(data[:cut])
