"""Warp's textures (wp.Texture1D / 2D / 3D, wp.texture_sample; frontend/textures.py, runtime
texture.h, the loader's Texture classes). Values and gradients against Warp: the conformance cases
tex_*. Here: the coordinates' gradients against float64 finite differences away from texel centres
(where a LINEAR sample is smooth), the reference interpreter against the compiled sampler, textures
in arrays of structs and the empty texture, what the loader refuses, and the diagnostics."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, first_error

PROGRAM = '''import warp as wp


@wp.struct
class Holder:
    tex: wp.Texture3D
    scale: float


@wp.kernel
def s3(tex: wp.Texture3D, p: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    c = wp.texture_sample(tex, p[i], dtype=wp.vec2f)
    out[i] = c[0] + 3.0 * c[1]


@wp.kernel
def s2(tex: wp.Texture2D, u: wp.array(dtype=float), v: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, u[i], v[i], dtype=float)


@wp.kernel
def s1(tex: wp.Texture1D, u: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, u[i], dtype=float)


@wp.kernel
def mip2(tex: wp.Texture2D, uv: wp.array(dtype=wp.vec2), lod: wp.array(dtype=float), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = wp.texture_sample(tex, uv[i], dtype=wp.vec2f, lod=lod[i])


@wp.kernel
def table(holders: wp.array(dtype=Holder), which: wp.array(dtype=int), p: wp.array(dtype=wp.vec3),
          out: wp.array(dtype=float)):
    i = wp.tid()
    h = holders[which[i]]
    if h.tex.width == 0:
        out[i] = -1.0
    else:
        out[i] = wp.texture_sample(h.tex, p[i], dtype=float) * h.scale
'''

N = 40


def _coords(rng, n, ndim, size, normalized):
    """Coordinates in and around the texture, at least 0.05 texel from any texel centre (and, under
    CLAMP, from the clamped edges): where a LINEAR sample is smooth within a finite difference's step."""
    texel = rng.uniform(-1.0, size + 1.0, (n, ndim))
    frac = texel - np.floor(texel)
    texel = np.where(np.abs(frac - 0.5) < 0.05, texel + 0.2, texel)
    return (texel / size if normalized else texel).astype(np.float32)


def _central_difference(f, x, h):
    """d sum(f(x)) / dx per element of x (float64 arithmetic over float32 launches)."""
    grad = np.zeros(x.shape)
    for index in np.ndindex(*x.shape):
        up, down = x.astype(np.float64), x.astype(np.float64)
        up[index] += h
        down[index] -= h
        grad[index] = (f(up.astype(np.float32)).astype(np.float64).sum()
                       - f(down.astype(np.float32)).astype(np.float64).sum()) / (2 * h)
    return grad


@needs_cxx
@pytest.mark.parametrize("address", ["clamp", "wrap", "mirror", "border"])
@pytest.mark.parametrize("normalized", [True, False])
def test_the_coordinates_gradient_is_the_samples_slope(address, normalized):
    mod = build(PROGRAM, "textures_grad")
    rng = np.random.default_rng(7)
    size = 5
    mode = getattr(mod.TextureAddressMode, address.upper())
    tex = mod.Texture3D(rng.standard_normal((size, size, size, 2)).astype(np.float32), address_mode=mode,
                        normalized_coords=normalized)
    p = _coords(rng, N, 3, size, normalized)

    def forward(points):
        out = np.zeros(N, np.float32)
        mod.s3.launch(dim=N, inputs=[tex, points, out])
        return out

    adj_p = np.zeros_like(p)
    mod.s3.launch(dim=N, inputs=[tex, p, np.zeros(N, np.float32)],
                  adj_inputs=[None, adj_p, np.ones(N, np.float32)], adjoint=True)
    h = 1e-3 / size if normalized else 1e-3
    expected = _central_difference(forward, p, h)
    np.testing.assert_allclose(adj_p, expected, rtol=2e-2, atol=2e-2 * (size if normalized else 1))
    assert np.abs(expected).max() > 0.1  # not a flat comparison


@needs_cxx
def test_closest_sampling_has_no_coordinate_gradient_and_reads_the_texel_the_point_is_in():
    mod = build(PROGRAM, "textures_grad")
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    tex = mod.Texture2D(data, filter_mode=mod.TextureFilterMode.CLOSEST, normalized_coords=False)
    u = np.array([0.2, 1.7, 3.99, -3.0, 9.0], np.float32)
    v = np.array([0.5, 2.2, 1.0, 0.1, 2.9], np.float32)
    out = np.zeros(5, np.float32)
    mod.s2.launch(dim=5, inputs=[tex, u, v, out])
    cols = np.clip(np.floor(u), 0, 3).astype(int)
    rows = np.clip(np.floor(v), 0, 2).astype(int)
    np.testing.assert_array_equal(out, data[rows, cols])
    adj_u, adj_v = np.zeros(5, np.float32), np.zeros(5, np.float32)
    mod.s2.launch(dim=5, inputs=[tex, u, v, out], adj_inputs=[None, adj_u, adj_v, np.ones(5, np.float32)],
                  adjoint=True)
    assert not adj_u.any() and not adj_v.any()


@needs_cxx
def test_integer_texels_are_normalized_as_warps_are():
    mod = build(PROGRAM, "textures_grad")
    u = np.array([0.5, 1.5, 2.5, 3.5], np.float32)  # each texel's centre
    out = np.zeros(4, np.float32)
    for data, want in [(np.array([0, 51, 255, 128], np.uint8), [0, 0.2, 1.0, 128 / 255]),
                       (np.array([-128, -127, 0, 127], np.int8), [-1.0, -1.0, 0.0, 1.0]),
                       (np.array([0, 65535, 1, 2], np.uint16), [0, 1.0, 1 / 65535, 2 / 65535]),
                       (np.array([-5, 7, 1 << 20, 3], np.int32), [-5, 7, 1 << 20, 3]),
                       (np.array([0.5, -2.0, 1e4, 3.0], np.float16), [0.5, -2.0, 1e4, 3.0])]:
        tex = mod.Texture1D(data, normalized_coords=False)
        mod.s1.launch(dim=4, inputs=[tex, u, out])
        np.testing.assert_allclose(out, np.array(want, np.float32), rtol=1e-6, err_msg=str(data.dtype))


@needs_cxx
def test_textures_in_an_array_of_structs_and_the_empty_texture():
    mod = build(PROGRAM, "textures_grad")
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 4, 4)).astype(np.float32)
    tex = mod.Texture3D(data, normalized_coords=False)
    holders = mod.Holder.array([mod.Holder(tex=tex, scale=2.0), mod.Holder(scale=5.0)])  # the second: empty
    which = np.array([0, 1, 0, 1], np.int32)
    p = np.full((4, 3), 2.0, np.float32)  # the centre of the texture: the mean of the middle 8 texels
    out = np.zeros(4, np.float32)
    mod.table.launch(dim=4, inputs=[holders, which, p, out])
    middle = data[1:3, 1:3, 1:3].mean()
    np.testing.assert_allclose(out, [2 * middle, -1.0, 2 * middle, -1.0], rtol=1e-5)
    holders["tex"][1] = 99  # not a texture's id: refused before any native code reads it
    with pytest.raises(ValueError, match=r"table: argument `holders.tex`\[1\] = 99 is not the id of a live tilec "
                                         r"Texture3D"):
        mod.table.launch(dim=4, inputs=[holders, which, p, out])
    flat = np.zeros(4, np.float32)
    mod.s3.launch(dim=4, inputs=[None, p, flat])  # Warp's empty texture: every sample zero
    assert not flat.any()


@needs_cxx
def test_the_reference_interpreter_samples_as_the_runtime_does():
    from tilec.ops.reference import IMPL

    mod = build(PROGRAM, "textures_grad")
    rng = np.random.default_rng(11)
    for address in ("clamp", "wrap", "mirror", "border"):
        tex = mod.Texture2D(rng.standard_normal((4, 6)).astype(np.float32), normalized_coords=address != "clamp",
                            address_mode=getattr(mod.TextureAddressMode, address.upper()))
        uv = _coords(rng, N, 2, 6, address != "clamp")
        out = np.zeros(N, np.float32)
        mod.s2.launch(dim=N, inputs=[tex, uv[:, 0].copy(), uv[:, 1].copy(), out])
        adj_u, adj_v = np.zeros(N, np.float32), np.zeros(N, np.float32)
        mod.s2.launch(dim=N, inputs=[tex, uv[:, 0].copy(), uv[:, 1].copy(), out],
                      adj_inputs=[None, adj_u, adj_v, np.ones(N, np.float32)], adjoint=True)
        call = type("Call", (), {"op": "texture_sample_f"})()
        grad = type("Call", (), {"op": "texture_sample_gradient"})()
        want = [IMPL["texture_sample_f"](None, call, [tex.id, uv[k], 0.0]) for k in range(N)]
        want_grad = np.array([IMPL["texture_sample_gradient"](None, grad, [tex.id, uv[k], 0.0, np.float32(1)])
                              for k in range(N)])
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6, err_msg=address)
        np.testing.assert_allclose(np.stack([adj_u, adj_v], 1), want_grad, rtol=1e-4, atol=1e-4, err_msg=address)


@needs_cxx
@pytest.mark.parametrize("mip_filter", ["linear", "closest"])
def test_mip_levels_against_the_interpreter_and_the_lods_gradient_against_finite_differences(mip_filter):
    from tilec.ops.reference import IMPL

    mod = build(PROGRAM, "textures_grad")
    rng = np.random.default_rng(5)
    tex = mod.Texture2D(rng.standard_normal((12, 9, 2)).astype(np.float32), num_mip_levels=0,
                        mip_filter_mode=getattr(mod.TextureFilterMode, mip_filter.upper()),
                        address_mode=mod.TextureAddressMode.WRAP)
    assert tex.num_mip_levels == 4  # 12x9, 6x4, 3x2, 1x1
    uv = rng.uniform(-0.2, 1.2, (N, 2)).astype(np.float32)
    lod = rng.uniform(-0.5, 3.5, N).astype(np.float32)
    lod[:4] = [0.0, 1.0, 2.0, 7.0]  # integer lods and one past the last level
    lod = np.where(np.abs(lod - np.round(lod)) < 0.02, np.round(lod), lod).astype(np.float32)

    def forward(lods):
        out = np.zeros((N, 2), np.float32)
        mod.mip2.launch(dim=N, inputs=[tex, uv, lods, out])
        return out

    out = forward(lod)
    call = type("Call", (), {"op": "texture_sample_v2"})()
    want = np.array([IMPL["texture_sample_v2"](None, call, [tex.id, uv[k], lod[k]]) for k in range(N)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    adj_lod = np.zeros(N, np.float32)
    seed = np.tile(np.float32([1.0, -2.0]), (N, 1))
    mod.mip2.launch(dim=N, inputs=[tex, uv, lod, out], adj_inputs=[None, None, adj_lod, seed.copy()], adjoint=True)
    h = 1e-3
    fd = ((forward(lod + h).astype(np.float64) - forward(lod - h)) * seed).sum(1) / (2 * h)
    smooth = (lod > 0.01) & (lod < 2.99) & (np.abs(lod - np.round(lod)) > 0.01)  # not at a level, not clamped
    if mip_filter == "linear":
        np.testing.assert_allclose(adj_lod[smooth], fd[smooth], rtol=1e-2, atol=1e-2)
        assert np.abs(adj_lod[smooth]).max() > 0.1
    else:
        assert not adj_lod.any()  # the nearest level: piecewise constant in the lod
    assert not adj_lod[lod >= 3.0].any() and not adj_lod[lod < 0].any()  # clamped: no gradient


@needs_cxx
def test_the_loader_refuses_what_tilec_textures_do_not_hold():
    mod = build(PROGRAM, "textures_grad")
    data = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="num_mip_levels"):
        mod.Texture2D(data, num_mip_levels=3)  # 2x3 has two levels
    with pytest.raises(TypeError, match="data"):
        mod.Texture2D(data.astype(np.float64))
    with pytest.raises(ValueError, match="LINEAR"):
        mod.Texture2D(data.astype(np.int32), filter_mode=mod.TextureFilterMode.LINEAR)
    two = mod.Texture2D(data)
    out, p = np.zeros(1, np.float32), np.zeros((1, 3), np.float32)
    with pytest.raises(ValueError, match="s3: argument `tex`: the kernel reads a Texture3D, got a Texture2D"):
        mod.s3.launch(dim=1, inputs=[two, p, out])
    with pytest.raises(TypeError, match="field `Holder.tex` is a Texture3D"):
        mod.Holder(tex=two)


@pytest.mark.parametrize("body, error", [
    ("out[i] = wp.texture_sample(u, 0.5, dtype=float)",
     "12:32: TC0201: texture_sample: `tex` must be a texture (wp.Texture1D, wp.Texture2D or wp.Texture3D), got a "
     "1-d float32 array"),
    ("out[i] = wp.texture_sample(tex, 0.5, dtype=float)",
     "12:14: TC0408: texture_sample: a 2-d texture is sampled at 2 coordinate(s) (or a vec2f), got 1"),
    ("out[i] = wp.texture_sample(tex, 0.5, 0.5, dtype=wp.vec3f)[0]",
     "12:53: TC0201: texture_sample: `dtype` must be float, wp.vec2f or wp.vec4f (1, 2 or 4 channels)"),
    ("out[i] = float(tex.depth)", "12:24: TC0301: a 2-d texture (wp.Texture2D) has no `.depth`; it has .width, .height"),
    ("out[i] = float(tex + 1)", "12:20: TC0203"),
])
def test_diagnostics(body, error):
    source = ("import warp as wp\n\n\n@wp.kernel\ndef k(tex: wp.Texture2D, u: wp.array(dtype=float),\n"
              "      out: wp.array(dtype=float)):\n    i = wp.tid()\n\n\n\n\n    " + body + "\n")
    assert first_error(source).startswith(error)
