"""Sparse volumes read by kernels (wp.Volume made by load_from_numpy; wp.volume_sample_f / _v / _i,
volume_sample_grad_f, the generic volume_sample and volume_lookup, the maps between world and index
space): LINEAR and CLOSEST samples inside and outside the volume's tiles, and the points' gradients
through the sample, the sample's gradient and the maps."""
import warp as wp


@wp.kernel
def scalar_samples(volume: wp.uint64, pts: wp.array(dtype=wp.vec3), span: float, shift: float,
                   out: wp.array(dtype=float), nearest: wp.array(dtype=float), grads: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    uvw = wp.volume_world_to_index(volume, pts[i] * span + wp.vec3(shift, shift, shift))
    g = wp.vec3()
    d = wp.volume_sample_grad_f(volume, uvw, wp.Volume.LINEAR, g)
    out[i] = d * d + wp.volume_sample(volume, uvw, wp.Volume.LINEAR, dtype=float)
    nearest[i] = wp.volume_sample_f(volume, uvw, wp.Volume.CLOSEST)
    grads[i] = g * 2.0


@wp.kernel
def vector_samples(volume: wp.uint64, pts: wp.array(dtype=wp.vec3), span: float, out: wp.array(dtype=wp.vec3),
                   nearest: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    uvw = wp.volume_world_to_index(volume, pts[i] * span)
    v = wp.volume_sample_v(volume, uvw, wp.Volume.LINEAR)
    out[i] = wp.cw_mul(v, v) + wp.volume_lookup(volume, i % 9, i % 7, i % 5, dtype=wp.vec3)
    nearest[i] = wp.volume_sample(volume, uvw, wp.Volume.CLOSEST, dtype=wp.vec3)


@wp.kernel
def int_voxels(volume: wp.uint64, pts: wp.array(dtype=wp.vec3), span: float, out: wp.array(dtype=int)):
    i = wp.tid()
    uvw = pts[i] * span
    out[i] = wp.volume_sample_i(volume, uvw) + 1000 * wp.volume_lookup_i(volume, i % 11 - 1, i % 9, i % 6)


@wp.kernel
def maps(volume: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    w = wp.volume_index_to_world(volume, pts[i])
    out[i] = wp.volume_world_to_index(volume, w * 2.0) + w
    dirs[i] = wp.volume_index_to_world_dir(volume, pts[i]) * wp.volume_world_to_index_dir(volume, pts[i])[0]
