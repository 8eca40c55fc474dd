"""Conformance cases for Warp's Perlin noise: wp.noise and wp.pnoise of a float, vec2, vec3 and vec4
point, wp.curlnoise of a vec2, vec3 and vec4 point over octaves (runtime noise.h), forward and adjoint
(the point's gradient, through the noise's second derivatives for curlnoise)."""
from cases import Case, Scal, arr, out, varr

P = "noise.py"
N = 32
SIMT = dict(launch="simt", block_dim=32)

CASES = [
    Case("noise_points", P, "noises", dim=(N,),
         args=(Scal(7, "int32"), arr(N), varr(N, "vec2"), varr(N, "vec3"), varr(N, "vec4"),
               out(N), out(N), out(N), out(N)), rtol=1e-4, atol=1e-5, **SIMT),
    Case("noise_curls", P, "curls", dim=(N,),
         args=(Scal(11, "int32"), varr(N, "vec2"), varr(N, "vec3"), varr(N, "vec4"),
               varr(N, "vec2", "out"), varr(N, "vec3", "out"), varr(N, "vec3", "out")), rtol=1e-4, atol=1e-5, **SIMT),
]
