"""Random numbers, bit for bit Warp's: `rand_init(seed[, offset])` makes a generator state (a
uint32) and `tile_randf` / `tile_randi` fill a tile from one, leaving it unchanged.

The scalar draws `randf`, `randi`, `randu`, `randn` are pure functions of the state *before* the
call: the value Warp's draw returns from it. Warp's draws also advance their state variable in
place; the frontend (lower_random.py) expresses that as `state = rand_advance(state, DRAWS[op])`
before the statement, so these ops never update anything themselves.

Warp's generator is the PCG hash of Jarzynski and Olano; tile element e is drawn by thread
e % block_dim, which seeds its own stream with hash(thread + rng) and takes its elements in order
(e // block_dim draws in). Values therefore depend on block_dim, as Warp documents; tilec's CPU
(Warp with enable_cpu_blocks) and GPU streams are the same.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..ir.types import FLOAT32, INT32, UINT32, Scalar, TileT, Type, VecT, describe
from . import rules
from .core import Bound, OpSpec, Param


def _int_operand(b: Bound, name: str) -> None:
    t = b.types.get(name)
    if t is not None and not (isinstance(t, Scalar) and t.is_integral):
        b.fail("TC0203", f"`{name}` must be an integer, got {describe(t)}", name)


def _rand_init(b: Bound) -> Type:
    _int_operand(b, "seed")
    _int_operand(b, "offset")
    return UINT32


def _tile_rand(dtype: Scalar) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        rng = b.types["rng"]
        if rng != UINT32:
            b.fail("TC0203", f"`rng` must be a generator state (a uint32 from wp.rand_init), got "
                   f"{describe(rng)}", "rng")
        bounds = [n for n in ("min", "max") if n in b.types]
        if len(bounds) == 1:
            b.fail("TC0303", "give both `min` and `max`, or neither", bounds[0])
        for n in bounds:
            t = b.types[n]
            if not (isinstance(t, Scalar) and (t.is_float or t.is_integral if dtype.is_float else t.is_integral)) \
                    or (t.is_float and n not in b.weak and t != dtype):
                b.fail("TC0203", f"`{n}` must be {'a float32' if dtype.is_float else 'an int32'}, got "
                       f"{describe(t)}", n)
        return TileT(dtype, rules.check_shape_value(b, "shape", b.attrs["shape"]))

    return rule


def _draw(dtype: Scalar) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        state = b.types["state"]
        if state != UINT32:
            b.fail("TC0203", f"`state` must be a generator state (a uint32 from wp.rand_init), got "
                   f"{describe(state)}", "state")
        bounds = [n for n in ("low", "high") if n in b.types]
        if len(bounds) == 1:
            b.fail("TC0303", "give both `low` and `high`, or neither", bounds[0])
        for n in bounds:
            t = b.types[n]
            ok = isinstance(t, Scalar) and (t.is_float or t.is_integral if dtype.is_float else t.is_integral)
            if not ok or (n not in b.weak and t != dtype):
                b.fail("TC0203", f"`{n}` must be {'an' if dtype.name[0] in 'iu' else 'a'} {dtype.name}, got "
                       f"{describe(t)}", n)
        return dtype

    return rule


def _advance(b: Bound) -> Type:
    return UINT32


def _poisson(b: Bound) -> Type:
    if b.types["state"] != UINT32:
        b.fail("TC0203", f"`state` must be a generator state (a uint32 from wp.rand_init), got "
               f"{describe(b.types['state'])}", "state")
    lam = b.types["lam"]
    if lam != FLOAT32 and not (isinstance(lam, Scalar) and "lam" in b.weak):
        b.fail("TC0203", f"`lam` must be a float32, got {describe(lam)}", "lam")
    return UINT32


def _tile_params() -> tuple[Param, ...]:
    return (Param("shape", "shape"), Param("rng", "value"), Param("min", "value", None),
            Param("max", "value", None), Param("storage", "storage", "register"))


def _draw_params(with_bounds: bool = True) -> tuple[Param, ...]:
    bounds = (Param("low", "value", None), Param("high", "value", None)) if with_bounds else ()
    return (Param("state", "value"),) + bounds


def _sample(length: int) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        if b.types["state"] != UINT32:
            b.fail("TC0203", f"`state` must be a generator state (a uint32 from wp.rand_init), got "
                   f"{describe(b.types['state'])}", "state")
        return VecT(FLOAT32, length)

    return rule


# Warp's samplers of points in shapes: (the point's components, the uniform draws it takes).
SAMPLERS = {
    "sample_triangle": (2, 2, "barycentric coordinates (u, v) of a uniform point of a triangle"),
    "sample_unit_ring": (2, 1, "a uniform point of the unit circle"),
    "sample_unit_disk": (2, 2, "a uniform point of the unit disk"),
    "sample_unit_sphere_surface": (3, 2, "a uniform point of the unit sphere"),
    "sample_unit_sphere": (3, 3, "a uniform point of the unit ball"),
    "sample_unit_hemisphere_surface": (3, 2, "a uniform point of the unit hemisphere z >= 0"),
    "sample_unit_hemisphere": (3, 3, "a uniform point of the unit half-ball z >= 0"),
    "sample_unit_square": (2, 2, "a uniform point of the unit square centred on the origin"),
    "sample_unit_cube": (3, 3, "a uniform point of the unit cube centred on the origin"),
}
# How many times each scalar draw advances its state (Box-Muller takes two uniforms).
DRAWS = {"randf": 1, "randi": 1, "randu": 1, "randn": 2, **{name: n for name, (_, n, _) in SAMPLERS.items()}}
_OPS = [
    OpSpec("randf", _draw_params(), _draw(FLOAT32), "randf",
           "a uniform float in [0, 1) (or [low, high)) as Warp's randf draws it; advances state",
           adj_cpp="randf", nondiff=frozenset({"state"})),
    OpSpec("randi", _draw_params(), _draw(INT32), "randi",
           "a random int32 (or one in [low, high)) as Warp's randi draws it; advances state"),
    OpSpec("randu", _draw_params(), _draw(UINT32), "randu",
           "a random uint32 (or one in [low, high)) as Warp's randu draws it; advances state"),
    OpSpec("randn", _draw_params(False), _draw(FLOAT32), "randn",
           "a standard normal float as Warp's randn draws it (Box-Muller, two draws); advances state"),
    *(OpSpec(name, (Param("state", "value"),), _sample(length), name,
             f"{doc}, as Warp draws it ({count} draw{'s' if count > 1 else ''}); advances state")
      for name, (length, count, doc) in SAMPLERS.items()),
    OpSpec("poisson", (Param("state", "value"), Param("lam", "value")), _poisson, "poisson",
           "a Poisson-distributed uint32 of mean lam as Warp's poisson draws it (a varying number of draws); "
           "advances state", nondiff=frozenset({"state", "lam"})),
    OpSpec("poisson_state", (Param("state", "value"), Param("lam", "value")), _advance, "poisson_state",
           "the state after poisson(state, lam)'s draws", api=False, elementwise=True),
    OpSpec("rand_advance", (Param("state", "value"), Param("count", "value")), _advance, "rand_advance",
           "the state after `count` draws", api=False, elementwise=True),
    OpSpec("rand_init", (Param("seed", "value"), Param("offset", "value", None)), _rand_init, "rand_init",
           "a generator state from a seed (and an offset selecting an independent stream)",
           elementwise=True),
    OpSpec("tile_randf", _tile_params(), _tile_rand(FLOAT32), "tile_randf",
           "a tile of uniform floats in [0, 1) (or [min, max)) drawn as Warp draws them"),
    OpSpec("tile_randi", _tile_params(), _tile_rand(INT32), "tile_randi",
           "a tile of random int32s (or in [min, max)) drawn as Warp draws them"),
]
# Every op that draws from a state (poisson takes a varying number of draws: not in DRAWS).
DRAWING = frozenset(DRAWS) | {"poisson"}
# A draw: a call of random.h. poisson's draws vary in number: the state after it is poisson_state's.
OPS = [replace(spec, runtime_call=True) if spec.name in DRAWING else spec for spec in _OPS]

