"""Struct-of-parameters kernels: a @wp.struct carrying scalars and arrays into SIMT and tile kernels."""
from typing import Any

import warp as wp

TILE = 16


@wp.struct
class Material:
    stiffness: float
    damping: float
    rest: wp.array(dtype=float)


@wp.struct
class Layer:
    weight: wp.array2d(dtype=float)
    bias: wp.array(dtype=float)
    gain: float


@wp.kernel
def spring_force(mat: Material, x: wp.array(dtype=float), v: wp.array(dtype=float), f: wp.array(dtype=float)):
    i = wp.tid()
    stretch = x[i] - mat.rest[i]
    f[i] = -mat.stiffness * stretch * wp.abs(stretch) - mat.damping * v[i]


@wp.func
def layer_unit(layer: Layer, row: int, x: wp.array(dtype=float)) -> float:
    acc = layer.bias[row]
    for j in range(layer.weight.shape[1]):
        acc += layer.weight[row, j] * x[j]
    return wp.tanh(layer.gain * acc)


@wp.kernel
def dense(layer: Layer, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = layer_unit(layer, i, x)


@wp.kernel
def tile_affine(layer: Layer, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    b = wp.tile_load(layer.bias, shape=TILE, offset=i * TILE)
    r = wp.tile_map(wp.sin, t * layer.gain + b)
    wp.tile_store(y, r, offset=i * TILE)


@wp.struct
class Empty:
    pass


@wp.struct
class Tagged:
    tag: Empty
    scale: float


@wp.func
def scaled_by(e: Empty, t: Tagged, x: float):
    return x * t.scale


@wp.kernel
def empty_structs(e: Empty, t: Tagged, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    # a struct without fields (Warp's benchmark_launches passes one): a parameter, a field, a local, an argument
    i = wp.tid()
    local = Empty()
    y[i] = scaled_by(local, t, x[i]) + scaled_by(e, t, 1.0)


@wp.struct
class Pair:
    a: float
    b: float


@wp.func
def swapped(s: Any):
    return type(s)(s.b, s.a * 2.0)  # Warp's generic construction of the argument's own struct type


@wp.kernel
def generic_struct_construction(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    p = swapped(Pair(x[i], 1.5))
    y[i] = p.a * 10.0 + p.b
