"""The op table: one `OpSpec` per operation, assembled from the op families.

`OPS` maps every op name to its spec; `API_OPS` are those a program may call
as `wp.<name>`; `MUTATES` names, for ops that update arguments in place, which
parameters they update (the checker rebinds those variables); `PER_LANE_WRITES`, the tile ops
whose scalar operands are each lane's own (every lane writes its value into the block's tile).
"""
from __future__ import annotations

from dataclasses import replace as _replace

from . import (arrays, coop, creation, debug, decompositions, elementwise, fft, internal, linalg, memory, noise, random,
               reduce, spatial, stack, textures, values, views, volumes)
from .core import REQUIRED, Bound, FuncRef, KeptTypes, OpSpec, Param, RuleError

_FAMILIES = (elementwise, creation, memory, reduce, linalg, views, arrays, coop, debug, random, noise, spatial, textures, stack,
             internal, values, fft, decompositions, volumes)

OPS: dict[str, OpSpec] = {}
for _family in _FAMILIES:
    for _spec in _family.OPS:
        assert _spec.name not in OPS, _spec.name
        OPS[_spec.name] = _spec

# The operators also take vectors and matrices, with Warp's value rules (ops/values.py).
for _name in ("add", "sub", "mul", "div", "neg", "eq", "ne"):
    OPS[_name] = _replace(OPS[_name], rule=values.arith_rule(_name, OPS[_name].rule))
# The bitwise operators, abs, sign, min and max also take integer (bitwise) or any (the others) values
# component-wise.
for _name in (*values.BITWISE, "abs", "sign", "min", "max"):
    OPS[_name] = _replace(OPS[_name], rule=values.componentwise_rule(_name, OPS[_name].rule))

# Textures are taken by the few ops that sample, choose or move them (ops/textures.py).
for _name in OPS:
    OPS[_name] = _replace(OPS[_name], rule=textures.texture_guard(_name, OPS[_name].rule))

API_OPS = {name: spec for name, spec in OPS.items() if spec.api}
MUTATES: dict[str, tuple[str, ...]] = {}
for _family in _FAMILIES:
    MUTATES.update(getattr(_family, "MUTATES", {}))

PER_LANE_WRITES = frozenset({"tile", "tile_setitem", "tile_additem", "tile_subitem", "tile_add_at",
                             "tile_scatter_add", "tile_scatter_masked", "tile_from_thread",
                             "tile_bit_and_inplace", "tile_bit_or_inplace", "tile_bit_xor_inplace",
                             "tile_randf", "tile_randi"})  # random tiles: each thread draws with its own rng

__all__ = ["OPS", "API_OPS", "MUTATES", "PER_LANE_WRITES", "OpSpec", "Param", "Bound", "FuncRef", "KeptTypes", "RuleError",
           "REQUIRED"]
