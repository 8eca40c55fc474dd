"""Textures sampled by kernels (wp.Texture1D / 2D / 3D, wp.texture_sample): a sample of each result
type (float, vec2f, vec4f), the coordinates as one vector or as separate floats, a texture's
sizes, a texture held in a struct and passed to a func, mip levels picked by a level of detail; the
coordinates' and the level of detail's gradients."""
import warp as wp


@wp.struct
class Field:
    grid: wp.Texture3D
    scale: float


@wp.func
def lookup(tex: wp.Texture3D, p: wp.vec3) -> float:
    return wp.texture_sample(tex, p, dtype=float)


@wp.kernel
def sample3(tex: wp.Texture3D, pts: wp.array(dtype=wp.vec3), span: float, shift: float, out: wp.array(dtype=float),
            pair: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    p = pts[i] * span + wp.vec3(shift, shift, shift)
    v = wp.texture_sample(tex, p, dtype=float)
    out[i] = v * v + float(tex.width + 10 * tex.height + 100 * tex.depth)
    pair[i] = wp.texture_sample(tex, p[0], p[1], p[2], dtype=wp.vec2f)


@wp.kernel
def sample2(tex: wp.Texture2D, u: wp.array(dtype=float), v: wp.array(dtype=float), span: float, shift: float,
            out: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, wp.vec2(u[i] * span + shift, v[i] * span + shift), dtype=wp.vec4f) * 2.0


@wp.kernel
def sample2_lod(tex: wp.Texture2D, uv: wp.array(dtype=wp.vec2), lod: wp.array(dtype=float), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, uv[i], dtype=wp.vec2f, lod=lod[i] * 1.5 + 0.2)


@wp.kernel
def sample1(tex: wp.Texture1D, x: wp.array(dtype=float), span: float, shift: float, out: wp.array(dtype=float)):
    i = wp.tid()
    c = wp.texture_sample(tex, x[i] * span + shift, dtype=wp.vec4f, lod=0.0)
    out[i] = c[0] + 2.0 * c[1] + 3.0 * c[2] + 4.0 * c[3] + float(tex.width)


@wp.kernel
def sample_field(field: Field, pts: wp.array(dtype=wp.vec3), span: float, out: wp.array(dtype=float)):
    i = wp.tid()
    p = pts[i] * span
    out[i] = lookup(field.grid, p) * field.scale + wp.sin(lookup(field.grid, p * 0.5))
