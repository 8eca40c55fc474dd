"""Warp programs as their users write them (this session's features): tuples passed to funcs and
picked by a loop's variable, Warp's generic annotations (wp.Float, wp.types.vector(3, wp.Int)), type
factories at module level, a tested array in and/or chains, wp.static of loop variables,
`-> types.NoneType`, wp.tile_map of an operator builtin, overloads in a loop over value types."""
import types
from typing import Any

import warp as wp

transformd = wp.types.transformation(dtype=wp.float64)


@wp.struct
class Weight:
    w: float


@wp.func
def weighted_first(t: Any):
    return t[0] * t[1].w


@wp.func
def weighted(values: tuple[float, ...]):
    out = float(0.0)
    for k in range(len(values)):
        out += values[k] * float(k + 1)
    return out


@wp.func
def scaled_sum(a: wp.Float, v: wp.types.vector(3, wp.Float)) -> wp.Float:
    return a * (v[0] + v[1] + v[2])


@wp.kernel
def generics(x: wp.array(dtype=float), mask: wp.array(dtype=int), y: wp.array(dtype=float)) -> types.NoneType:
    i = wp.tid()
    t = (x[i], 2.0, x[i] * x[i])
    s = weighted(t) + weighted((x[i], 1.0)) + scaled_sum(x[i], wp.vec3(1.0, 2.0, x[i]))
    s += weighted_first((x[i], Weight(0.5)))
    for k in range(3):
        s += wp.static(float(k) * 0.5) * t[k]
    p = transformd(wp.vec3d(wp.float64(x[i]), wp.float64(0.0), wp.float64(1.0)), wp.quat_identity(dtype=wp.float64))
    s += float(p.p[0])
    if mask and mask[i] == 0:
        s = -s
    y[i] = s


@wp.kernel
def negated(a: wp.array(dtype=wp.mat22), b: wp.array(dtype=wp.mat22)):
    t = wp.tile_load(a, shape=8)
    wp.tile_store(b, wp.tile_map(wp.neg, t))


@wp.kernel
def doubled(a: wp.array[Any], b: wp.array[Any]):
    i = wp.tid()
    b[i] = a[i] * 2.0


for _T in (wp.vec3, wp.mat22):
    wp.overload(doubled, [wp.array[_T]] * 2)
