"""Warp's textures, as its users write them:

    @wp.kernel
    def k(tex: wp.Texture3D, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.texture_sample(tex, points[i], dtype=float)   # or (tex, u, v, w, dtype=wp.vec2f)
        n = tex.width                                               # .height, .depth

Mixed into `FunctionChecker`. A texture (`wp.Texture1D`, `2D`, `3D`: a parameter, a struct's field,
an array of structs' field, a func's parameter, a local) is a scalar of its own kind (ir.types
TEXTURES): the id of a texture the loader checked (a live one of that dimensionality, or 0 for
Warp's empty texture), which no arithmetic or conversion makes, so it flows through structs, funcs
and locals as any value does and is always one a launch passed.

`wp.texture_sample(tex, uvw, dtype=..., lod=...)` becomes one op by result type
(ops/textures.py), over the coordinates as one float32 (1-d) or vector (Warp's separate u, v, w are
put into one), and the level of detail (`lod`, 0.0 when not given: the base level).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from .. import ir
from ..ir.types import FLOAT32, INT32, Scalar, VecT, describe, texture_ndim
from ..ops.textures import COORDS, SAMPLE_OPS
from . import annotations as ann
from .lowering_host import LoweringHost

if TYPE_CHECKING:
    from .check import Lowered

EXPRS = (ir.Const, ir.Var, ir.OpCall, ir.Call)  # ir.Expr's members
SIZES = ("width", "height", "depth")  # a texture's attributes, by axis
# Warp's texture enums, whose members a kernel may read as ints (`int(wp.TextureAddressMode.CLAMP)`)
ENUMS = {"TextureFilterMode": {"CLOSEST": 0, "LINEAR": 1},
         "TextureAddressMode": {"WRAP": 0, "CLAMP": 1, "MIRROR": 2, "BORDER": 3},
         "Volume": {"CLOSEST": 0, "LINEAR": 1}}  # wp.Volume's sampling modes (ops/volumes.py)
RESULTS = {t: op for op, t in SAMPLE_OPS.items()}  # dtype= -> op


def _plain_chain(node: cst.BaseExpression) -> bool:
    """Names, attributes and subscripts by such chains or integers: lowering it twice does nothing twice."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not all(
                isinstance(e.slice, cst.Index) and (isinstance(e.slice.value, cst.Integer) or _plain_chain(e.slice.value))
                for e in node.slice):
            return False
        node = node.value
    return isinstance(node, cst.Name)


class TextureLowering(LoweringHost):
    def lower_attribute(self, node: cst.Attribute) -> Lowered:
        """`tex.width`, `.height`, `.depth` (those of its dimensionality); `wp.TextureAddressMode.CLAMP`."""
        members = ENUMS.get(self.scope.api_attr(node.value) or "")
        if members is not None:
            if node.attr.value not in members:
                self.fail("TC0301", f"`{node.attr.value}` is not a member of {self.scope.api_attr(node.value)} (its "
                          f"members: {', '.join(members)})", node.attr)
            return ir.Const(members[node.attr.value], INT32, self.span(node))
        if node.attr.value in SIZES and _plain_chain(node.value):
            tex = self.expr(node.value)
            ndim = texture_ndim(tex.type) if isinstance(tex, EXPRS) else 0
            if ndim:
                axis = SIZES.index(node.attr.value)
                if axis >= ndim:
                    self.fail("TC0301", f"{describe(tex.type)} has no `.{node.attr.value}`; it has "
                              f"{', '.join('.' + s for s in SIZES[:ndim])}", node.attr)
                return self.make_op("texture_size", [tex, ir.Const(axis, INT32, self.span(node.attr))], {}, node)
        return super().lower_attribute(node)

    def lower_texture_sample(self, node: cst.Call) -> ir.Expr:
        """`wp.texture_sample(tex, uvw | u[, v[, w]], dtype=float | wp.vec2f | wp.vec4f[, lod])`."""
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        tex_node = keywords.pop("tex", None) or (positional.pop(0) if positional else None)
        if tex_node is None:
            self.fail("TC0408", "texture_sample: no value for `tex`", node)
        tex = self.expr(tex_node)
        ndim = texture_ndim(tex.type) if isinstance(tex, EXPRS) else 0
        if not ndim:
            self.fail("TC0201", "texture_sample: `tex` must be a texture (wp.Texture1D, wp.Texture2D or wp.Texture3D), "
                      f"got {describe(tex.type) if isinstance(tex, EXPRS) else 'this'}", tex_node)
        coord_names = {1: ("u",), 2: ("uv",), 3: ("uvw",)}[ndim]
        split = ("u", "v", "w")[:ndim]
        coord_nodes = [keywords.pop(k) for k in (*coord_names, *split) if k in keywords]
        values = [self.expr(n) for n in coord_nodes]
        while positional and len(values) < ndim and not (len(values) == 1 and ndim > 1 and
                                                         isinstance(values[0], EXPRS) and
                                                         isinstance(values[0].type, VecT)):
            coord_nodes.append(positional.pop(0))
            values.append(self.expr(coord_nodes[-1]))
        for key in ("dtype", "lod"):  # positional after the coordinates, in Warp's order
            if key not in keywords and positional:
                keywords[key] = positional.pop(0)
        unknown = sorted(set(keywords) - {"dtype", "lod"})
        if unknown or positional:
            self.fail("TC0408", f"texture_sample: unexpected argument `{unknown[0]}`" if unknown else
                      "texture_sample: too many arguments", node)
        uvw = self.texture_coords(coord_nodes, values, ndim, node)
        if "dtype" not in keywords:
            self.fail("TC0408", "texture_sample: no value for `dtype` (float, wp.vec2f or wp.vec4f: the channels "
                      "read)", node)
        try:
            result = ann.annotation(keywords["dtype"], self.scope)
        except ann.AnnotationError:
            result = None
        if result not in RESULTS:
            self.fail("TC0201", "texture_sample: `dtype` must be float, wp.vec2f or wp.vec4f (1, 2 or 4 channels)",
                      keywords["dtype"])
        lod: Lowered = ir.Const(0.0, FLOAT32, self.span(node))  # Warp's default: the base level
        if "lod" in keywords:
            lod = self.expr(keywords["lod"])
            if self.is_weak(lod) and isinstance(lod.type, Scalar):
                lod = ir.Const(float(cast(float, lod.value)), FLOAT32, lod.span)  # a literal: Warp's float
            if not (isinstance(lod, EXPRS) and lod.type == FLOAT32):
                self.fail("TC0201", "texture_sample: `lod` must be a float32", keywords["lod"])
        return cast(ir.Expr, self.make_op(RESULTS[cast("Scalar | VecT", result)], [tex, uvw, lod], {}, node))

    def texture_coords(self, nodes: list[cst.BaseExpression], values: list[Lowered], ndim: int, call: cst.Call
                       ) -> ir.Expr:
        """The coordinates as one float32 (1-d) or vec2f / vec3f: a vector argument as it is, or
        separate float arguments put into one."""
        want = COORDS[ndim - 1]
        if len(values) == 1 and isinstance(values[0], EXPRS) and values[0].type == want:
            return values[0]
        if len(values) != ndim:
            self.fail("TC0408", f"texture_sample: a {ndim}-d texture is sampled at {ndim} coordinate(s) (or a "
                      f"{want}), got {len(values)}", call)
        parts: list[ir.Expr] = []
        for n, v in zip(nodes, values):
            if self.is_weak(v) and isinstance(v.type, Scalar):
                v = ir.Const(float(cast(float, v.value)), FLOAT32, v.span)  # a literal: Warp's float
            if not (isinstance(v, EXPRS) and v.type == FLOAT32):
                self.fail("TC0201", f"texture_sample: a coordinate must be a float32, got "
                          f"{describe(v.type) if isinstance(v, EXPRS) else 'this'}", n)
            parts.append(v)
        if ndim == 1:
            return parts[0]
        return ir.OpCall("value_new", tuple(parts), (("type", want),), want, self.span(call))
