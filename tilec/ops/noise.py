"""Perlin noise as Warp defines it: `wp.noise(state, x)`, `wp.pnoise(state, x, px, ...)`,
`wp.curlnoise(state, x, octaves, lacunarity, gain)` (runtime: noise.h, the same values as Warp 1.19).

x is a float32 scalar or a vec2/vec3/vec4 of float32; the state a uint32 from wp.rand_init (noise
does not advance it). The gradients with respect to x are the internal ops `noise_gradient` /
`pnoise_gradient` and `curlnoise_adjoint` (through the noise's second derivatives; adjoints.py).
curlnoise's lacunarity and gain get no gradient (Warp's neither): where they are not constants the
kernel is built without an adjoint (a warning), never with a zero one. Not elementwise ops: an
untyped literal argument keeps its own type (a period an int, `gain=1` a number the runtime converts),
never the state's uint32.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir.types import FLOAT32, UINT32, Scalar, Type, VecT, describe
from .core import Bound, OpSpec, Param


def _state(b: Bound) -> None:
    t = b.types["state"]
    if t != UINT32 and not ("state" in b.weak and isinstance(t, Scalar) and t.is_integral):
        b.fail("TC0203", f"`state` must be a generator state (a uint32 from wp.rand_init), got {describe(t)}", "state")


def _point(b: Bound, lengths: tuple[int, ...] = (1, 2, 3, 4)) -> int:
    """The number of components of `x`: 1 for a float32, n for a vecn of float32."""
    t = b.types["x"]
    if t == FLOAT32:
        n = 1
    elif isinstance(t, VecT) and t.family == "vec" and t.dtype == FLOAT32:
        n = t.length
    else:
        n = 0
    if n not in lengths:
        wanted = " or ".join(["a float32"] * (1 in lengths) + [f"vec{k}" for k in lengths if k > 1])
        b.fail("TC0201", f"`x` must be {wanted} (of float32), got {describe(t)}", "x")
    return n


def _noise(b: Bound) -> Type:
    _state(b)
    _point(b)
    return FLOAT32


def _gradient(b: Bound) -> Type:
    n = _point(b)
    return FLOAT32 if n == 1 else VecT(FLOAT32, n)


def _periods(b: Bound) -> None:
    n = _point(b)
    if len(b.variadic) != n:
        b.fail("TC0407", f"takes one period per component of `x` ({n}), given {len(b.variadic)}")
    for k, t in enumerate(b.variadic):
        if not (isinstance(t, Scalar) and t.is_integral):
            b.fail("TC0201", f"period {k + 1} must be an int, got {describe(t)}")
        if b.variadic_consts[k] is not None and b.variadic_consts[k] <= 0:
            b.fail("TC0303", f"period {k + 1} must be positive, got {b.variadic_consts[k]}")


def _pnoise(b: Bound) -> Type:
    _state(b)
    _periods(b)
    return FLOAT32


def _pnoise_gradient(b: Bound) -> Type:
    _periods(b)
    return _gradient(b)


def _curlnoise_adjoint(b: Bound) -> Type:
    n = _point(b, (2, 3, 4))
    return VecT(FLOAT32, n)


def _curlnoise(b: Bound) -> Type:
    _state(b)
    n = _point(b, (2, 3, 4))
    octaves = b.types["octaves"]
    if not (isinstance(octaves, Scalar) and octaves.is_integral):
        b.fail("TC0201", f"`octaves` must be an int, got {describe(octaves)}", "octaves")
    for name in ("lacunarity", "gain"):
        t = b.types[name]
        if t != FLOAT32 and not (name in b.weak and isinstance(t, Scalar)):
            b.fail("TC0201", f"`{name}` must be a float32, got {describe(t)}", name)
    return VecT(FLOAT32, 2 if n == 2 else 3)


STATE, X = Param("state", "value"), Param("x", "value")
OPS = [
    OpSpec("noise", (STATE, X), _noise, "noise",
           "Perlin noise of a float or a vec2/vec3/vec4 point, in about [-1, 1], as Warp's (the state is not advanced)",
           adj_cpp="noise", nondiff=frozenset({"state"})),
    OpSpec("pnoise", (STATE, X), _pnoise, "pnoise",
           "periodic Perlin noise: one integer period per component of the point (`pnoise(state, xy, px, py)`)",
           adj_cpp="pnoise", variadic="periods", nondiff=frozenset({"state"})),
    OpSpec("curlnoise", (STATE, X, Param("octaves", "value", 1), Param("lacunarity", "value", 2.0),
                         Param("gain", "value", 0.5)), _curlnoise, "curlnoise",
           "divergence-free noise: the curl of Perlin noise fields summed over octaves (a vec2 for a vec2 point, "
           "else a vec3); its adjoint is for the point only (lacunarity and gain constants)", adj_cpp="curlnoise", nondiff=frozenset({"state", "octaves"})),
    OpSpec("curlnoise_adjoint", (STATE, X, Param("octaves", "value"), Param("lacunarity", "value"), Param("gain", "value"),
                                 Param("adj", "value")), _curlnoise_adjoint, "curlnoise_adjoint",
           "the gradient of dot(curlnoise(state, x, ...), adj) with respect to x", api=False),
    OpSpec("noise_gradient", (STATE, X), _gradient, "noise_gradient",
           "the gradient of noise(state, x) with respect to x", api=False),
    OpSpec("pnoise_gradient", (STATE, X), _pnoise_gradient, "pnoise_gradient",
           "the gradient of pnoise(state, x, periods...) with respect to x", variadic="periods", api=False),
]
OPS = [replace(spec, runtime_call=True) for spec in OPS]  # each a scalar call of noise.h
