"""Conformance cases for Warp's textures (wp.Texture1D / 2D / 3D sampled by wp.texture_sample):
values and the coordinates' gradients under each filter and address mode, normalized coordinates
and texel ones, texels of float32, float16 and normalized integers. The texels are stored with the
case (in<k>.data). fd=False: a sample is piecewise linear in its coordinates (constant under
CLOSEST), so a finite difference across a texel's centre is not its derivative; tests/test_textures.py
checks the gradients by finite differences away from them."""
from cases import Arr, Case, Scal, StructArg, TextureArg, arr, out, varr

P = "textures.py"
N = 64
SIMT = dict(launch="simt", block_dim=32, fd=False, rtol=1e-5, atol=1e-5)


def texels(*shape, dtype="float32"):
    return Arr(tuple(shape), dtype, "in", "int:0:256" if dtype == "uint8" else "int:-128:128" if dtype == "int8"
               else "randn")


def sample3(id, data, span, shift, **texture):
    return Case(id, P, "sample3", dim=(N,), args=(TextureArg(data, 3, **texture), varr(N, "vec3"), Scal(span),
                                                 Scal(shift), out(N), varr(N, "vec2", "out")), **SIMT)


def sample2(id, data, span, shift, **texture):
    return Case(id, P, "sample2", dim=(N,), args=(TextureArg(data, 2, **texture), arr(N), arr(N), Scal(span),
                                                 Scal(shift), varr(N, "vec4", "out")), **SIMT)


def sample1(id, data, span, shift, **texture):
    return Case(id, P, "sample1", dim=(N,), args=(TextureArg(data, 1, **texture), arr(N), Scal(span), Scal(shift),
                                                 out(N)), **SIMT)


CASES = [
    # Newton's SDF textures: texel coordinates, trilinear, clamped
    sample3("tex3_linear_clamp_texels", texels(4, 5, 6), 2.5, 3.0, normalized=False),
    sample3("tex3_linear_border", texels(3, 4, 5, 2), 0.6, 0.5, address="border"),
    sample3("tex3_linear_axes", texels(4, 3, 5), 0.8, 0.5, address=("wrap", "mirror", "clamp")),
    sample3("tex3_closest_wrap", texels(3, 4, 5, 2), 0.8, 0.5, filter="closest", address="wrap"),
    sample3("tex3_half_mirror_texels", texels(4, 4, 4, dtype="float16"), 3.0, 2.0, address="mirror",
            normalized=False),
    sample2("tex2_linear_wrap_rgba8", texels(5, 7, 4, dtype="uint8"), 0.8, 0.5, address="wrap"),
    sample2("tex2_linear_mirror_2ch", texels(6, 5, 2), 0.9, 0.5, address="mirror"),
    sample2("tex2_closest_border_texels", texels(5, 6, 4), 4.0, 3.0, filter="closest", address="border",
            normalized=False),
    sample2("tex2_linear_clamp_int8", texels(4, 6, dtype="int8"), 0.7, 0.5),
    sample1("tex1_linear_clamp_rgba", texels(9, 4), 0.7, 0.5),
    sample1("tex1_linear_wrap_texels", texels(7, 2), 5.0, 3.5, address="wrap", normalized=False),
    sample1("tex1_closest_mirror", texels(6), 0.9, 0.5, filter="closest", address="mirror"),
    Case("tex2_mip_linear", P, "sample2_lod", dim=(N,),
         args=(TextureArg(texels(12, 9, 2), 2, address="wrap", levels=0), varr(N, "vec2", kind="rand"),
               arr(N, kind="rand"), varr(N, "vec2", "out")), **SIMT),
    Case("tex2_mip_closest_texels", P, "sample2_lod", dim=(N,),
         args=(TextureArg(texels(8, 6, dtype="uint8"), 2, normalized=False, levels=3, mip_filter="closest"),
               varr(N, "vec2", kind="rand"), arr(N, kind="rand"), varr(N, "vec2", "out")), **SIMT),
    Case("tex_struct_field", P, "sample_field", dim=(N,),
         args=(StructArg("Field", (("grid", TextureArg(texels(4, 4, 5), 3)), ("scale", Scal(1.5)))),
               varr(N, "vec3", kind="rand"), Scal(1.2), out(N)), **SIMT),
]
