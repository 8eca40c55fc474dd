"""Indexed arrays (wp.indexedarray) read by kernels: element reads through per-dimension index
arrays, `.shape` of the indexed view, dimensions left unindexed, and SIMT and tile kernels."""
from typing import Any

import warp as wp

dt = wp.float64


@wp.kernel
def gather_scale(a: wp.indexedarray(dtype=float), s: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * s + wp.sin(a[i])


@wp.kernel
def gather_subscript_spelling(a: wp.indexedarray[wp.float32], out: wp.array[float]):
    i = wp.tid()
    x = a[i]
    out[i] = x * x


@wp.kernel
def row_energy(a: wp.indexedarray2d(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for j in range(a.shape[1]):
        acc += a[i, j] * a[i, j]
    out[i] = acc


@wp.kernel
def pick_grid(a: wp.indexedarray(dtype=dt, ndim=2), out: wp.array2d(dtype=dt)):
    i, j = wp.tid()
    out[i, j] = a[i, j] * a[i, a.shape[1] - 1 - j]


@wp.kernel
def gather_volume(a: wp.indexedarray3d(dtype=float), out: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    out[i, j, k] = wp.exp(a[i, j, k] * 0.5) - a[i, j, k]


@wp.kernel
def gather_4d_sum(a: wp.indexedarray4d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = float(0.0)
    for k in range(a.shape[2]):
        for m in range(a.shape[3]):
            s += a[i, j, k, m] * float(k + 1)
    out[i, j] = s


@wp.kernel
def block_softmax_gather(x: wp.indexedarray(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i]
    t = wp.tile(v)
    m = wp.tile_sum(wp.tile_map(wp.exp, t))
    y[i] = wp.exp(v) / m[0]


@wp.kernel
def tiled_rows_gather(a: wp.indexedarray2d(dtype=float), out: wp.array2d(dtype=float)):
    row, lane = wp.tid()
    v = a[row, lane]
    t = wp.tile(v)
    total = wp.tile_sum(t * t)
    out[row, lane] = v / wp.sqrt(total[0] + 1.0)


@wp.kernel
def shape_counts(a: wp.indexedarray2d(dtype=float), out: wp.array(dtype=int)):
    out[0] = a.shape[0]
    out[1] = a.shape[1]


@wp.kernel
def atomic_from_gather(a: wp.indexedarray(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, i % 2, a[i] * a[i])


@wp.kernel
def gather_vectors(a: wp.indexedarray(dtype=wp.vec3), out: wp.array(dtype=float), tips: wp.array(dtype=wp.vec3)):
    # an indexed array of vectors (Newton's selection.py passes them to its copy kernels)
    i = wp.tid()
    v = a[i]
    out[i] = wp.length(v) + v[1] * v[2]
    tips[i] = wp.cross(v, a[0]) * float(a.shape[0])


@wp.kernel
def transformed_points(poses: wp.indexedarray2d(dtype=wp.transform), p: wp.array(dtype=wp.vec3),
                       out: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    out[i, j] = wp.transform_point(poses[i, j], p[j])


@wp.kernel
def copy_rows(values: Any, attrib: Any):
    i, j = wp.tid()
    attrib[i, j] = values[i, j] * 2.0


# overloads declared over dtypes and array kinds, the kind a loop variable called like wp.array itself
# (Newton's selection.py: `src_array_type(dtype=dtype, ndim=3)`)
for dtype in [float, wp.vec3]:
    for src_array_type in [wp.array, wp.indexedarray]:
        wp.overload(copy_rows, {"values": src_array_type(dtype=dtype, ndim=2), "attrib": wp.array(dtype=dtype, ndim=2)})
