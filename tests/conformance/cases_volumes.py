"""Conformance cases for Warp's sparse volumes (wp.Volume on the CPU, made from a dense array by
load_from_numpy; runtime volume.h): samples, voxel reads and the maps bit for bit or nearly, and the
points' gradients against Warp's adjoint. The volume's voxels are stored with the case."""
from cases import Arr, Case, Scal, VolumeArg, out, varr

P = "volumes.py"
N = 48
SIMT = dict(launch="simt", block_dim=32)
SHAPE = (10, 9, 11)
FLOATS = VolumeArg(Arr(SHAPE), min_world=(1.0, -2.0, 0.5), voxel_size=(0.5, 0.25, 0.75), bg_value=7.0)
VECTORS = VolumeArg(Arr((*SHAPE, 3)), min_world=(0.0, 0.0, 0.0), voxel_size=0.5, bg_value=(0.5, -0.5, 1.0))
FROM_FILE = VolumeArg(Arr(SHAPE), min_world=(1.0, -2.0, 0.5), voxel_size=(0.5, 0.25, 0.75), bg_value=7.0, nvdb=True)
INTS = VolumeArg(Arr(SHAPE, "int32", kind="int:-50:50"), voxel_size=1.0, bg_value=-7)

# atol 5e-4 on the gradients: where a point's eight corners hold one value (outside the tiles, the
# background) the slope is 0, and Warp's sum of the corners' terms and tilec's (the sample's and its
# gradient's adjoints added as two ops) cancel to different roundings, up to ~2e-4 after the chain
CASES = [
    # fd=False: a sample is continuous but not smooth across voxel faces, and a random point's 1e-2 step
    # crosses one often; tests/test_volumes.py checks these gradients by finite differences inside voxels
    Case("volume_scalar_samples", P, "scalar_samples", dim=(N,),
         args=(FLOATS, varr(N, "vec3"), Scal(2.5), Scal(3.0), out(N), out(N), varr(N, "vec3", "out")),
         rtol=1e-5, atol=5e-4, fd=False, **SIMT),
    Case("volume_nvdb_samples", P, "scalar_samples", dim=(N,),  # the same volume through a NanoVDB file
         args=(FROM_FILE, varr(N, "vec3"), Scal(2.5), Scal(3.0), out(N), out(N), varr(N, "vec3", "out")),
         rtol=1e-5, atol=5e-4, fd=False, **SIMT),
    Case("volume_vector_samples", P, "vector_samples", dim=(N,),
         args=(VECTORS, varr(N, "vec3", kind="rand"), Scal(5.5), varr(N, "vec3", "out"), varr(N, "vec3", "out")),
         rtol=1e-5, atol=5e-4, fd=False, **SIMT),
    Case("volume_int_voxels", P, "int_voxels", dim=(N,), args=(INTS, varr(N, "vec3", kind="rand"), Scal(12.0),
                                                              out(N, dtype="int32")), grad=False, **SIMT),
    Case("volume_maps", P, "maps", dim=(N,), args=(FLOATS, varr(N, "vec3"), varr(N, "vec3", "out"),
                                                   varr(N, "vec3", "out")), rtol=1e-6, atol=1e-6, **SIMT),
]
