"""Warp's textures in kernels (runtime texture.h): `wp.texture_sample(tex, coords, dtype=...)` and a
texture's `width`, `height` and `depth`.

The level of detail (`lod`, 0 when not given) picks the mip levels, and takes the gradient of
their blend (`texture_sample_lod_gradient`). A texture is a scalar of its own kind in the IR (ir.types TEXTURES), the id of a texture the
loader checked (frontend/textures.py). One op per result type samples it
at its coordinates: a float32 for a 1-d texture, a vec2f or vec3f (the front end makes one of
Warp's separate u, v, w). The sample's gradient flows into the coordinates only
(`texture_sample_gradient`, the derivative of the interpolation, of the coordinates' type); the
texels are constants of the kernel, as in Warp.
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.types import FLOAT32, INT32, ArrayT, Type, VecT, describe, texture_ndim
from .core import Bound, OpSpec, Param

# The value types a sample may have (Warp's dtype=: 1, 2 or 4 channels), by op.
SAMPLE_OPS: dict[str, Type] = {"texture_sample_f": FLOAT32, "texture_sample_v2": VecT(FLOAT32, 2),
              "texture_sample_v4": VecT(FLOAT32, 4)}
COORDS = (FLOAT32, VecT(FLOAT32, 2), VecT(FLOAT32, 3))  # by the texture's dimensionality


def is_texture(t: object) -> bool:
    return texture_ndim(t) > 0


def _texture(b: Bound) -> None:
    if not is_texture(b.types["tex"]):
        b.fail("TC0201", f"`tex` must be a texture, got {describe(b.types['tex'])}", "tex")


def _coords(b: Bound) -> None:
    t = b.types["uvw"]
    if t not in COORDS:
        b.fail("TC0201", f"`uvw` must be a float32, vec2f or vec3f, got {describe(t)}", "uvw")


def _lod(b: Bound) -> None:
    if b.types["lod"] != FLOAT32:
        b.fail("TC0201", f"`lod` must be a float32, got {describe(b.types['lod'])}", "lod")


def _sample(result: Type) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        _texture(b)
        _coords(b)
        _lod(b)
        return result

    return rule


def _gradient(wrt_lod: bool) -> Callable[[Bound], Type]:
    def rule(b: Bound) -> Type:
        _texture(b)
        _coords(b)
        _lod(b)
        if b.types["adj"] not in SAMPLE_OPS.values():
            b.fail("TC0201", f"`adj` must be a sample's type (float32, vec2f or vec4f), got "
                   f"{describe(b.types['adj'])}", "adj")
        return FLOAT32 if wrt_lod else b.types["uvw"]

    return rule


def _size(b: Bound) -> Type:
    _texture(b)
    return INT32


def holds_texture(t: object) -> bool:
    """A texture, or an array of them (an array of structs' texture field)."""
    return is_texture(t) or (isinstance(t, ArrayT) and is_texture(t.dtype))


# The ops that take a texture (or an array of them) and what each may do with it: read one from an
# array, store one (a texture value only), choose between two, sample, read its size. Every other op
# refuses one (texture_guard), so no arithmetic, conversion, atomic or store of a number makes a
# texture: a kernel's texture is always one the loader checked.
TEXTURE_OPS = frozenset({"array_load", "array_store", "select", "where", *SAMPLE_OPS, "texture_sample_gradient",
                         "texture_sample_lod_gradient", "texture_size"})


def texture_guard(name: str, rule: Callable[[Bound], Type | None]) -> Callable[[Bound], Type | None]:
    """`rule`, refusing texture operands where TEXTURE_OPS does not take them, and any value other than
    two textures where they choose or store one."""
    def guarded(b: Bound) -> Type | None:
        operands = {**b.types, **{f"arg{k}": t for k, t in enumerate(b.variadic)}}
        textures = [arg for arg, t in operands.items() if holds_texture(t)]
        if textures and name not in TEXTURE_OPS:
            b.fail("TC0203", f"does not take a texture (`{textures[0]}`: {describe(operands[textures[0]])}); a "
                   "texture is sampled (wp.texture_sample) or its size read", textures[0])
        result = rule(b)
        if name in ("select", "where", "array_store") and (textures or holds_texture(result)):
            values = [arg for arg in ("if_true", "if_false", "value") if arg in b.types]
            for arg in values:
                if not is_texture(b.types[arg]) or arg in b.weak:
                    b.fail("TC0203", f"a texture is chosen or stored from textures only, got "
                           f"{describe(b.types[arg])}", arg)
        return result

    return guarded


SAMPLE = (Param("tex", "value"), Param("uvw", "value"), Param("lod", "value"))
OPS = [
    *(OpSpec(name, SAMPLE, _sample(result), name, f"a texture's {result} sample at its coordinates "
             "(wp.texture_sample)", nondiff=frozenset({"tex"}), api=False, runtime_call=True)
      for name, result in SAMPLE_OPS.items()),
    OpSpec("texture_sample_gradient", (*SAMPLE, Param("adj", "value")), _gradient(False), "texture_sample_gradient",
           "d dot(sample, adj) / d uvw: the interpolation's slope (0 under CLOSEST and where CLAMP or BORDER hold "
           "a coordinate)", api=False, runtime_call=True),
    OpSpec("texture_sample_lod_gradient", (*SAMPLE, Param("adj", "value")), _gradient(True),
           "texture_sample_lod_gradient", "d dot(sample, adj) / d lod: the difference of the two mip levels a "
           "LINEAR mip filter blends (0 where the lod is clamped or one level is read)", api=False,
           runtime_call=True),
    OpSpec("texture_size", (Param("tex", "value"), Param("axis", "value")), _size, "texture_size",
           "a texture's width (axis 0), height (1) or depth (2); 0 for the empty texture", api=False,
           runtime_call=True),
]
