"""Perlin noise (wp.noise, wp.pnoise, wp.curlnoise; runtime noise.h): the point's gradients against
finite differences, the reference interpreter against the runtime, and the refusal of curlnoise's
adjoint where its gain varies. Warp's own values and gradients: tests/conformance/cases_noise.py."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.interp import Interpreter

SOURCE = '''
import warp as wp


@wp.kernel
def fields(x: wp.array(dtype=float), p2: wp.array(dtype=wp.vec2), p3: wp.array(dtype=wp.vec3),
           p4: wp.array(dtype=wp.vec4), y: wp.array(dtype=float), c: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    state = wp.rand_init(21, i)
    y[i] = wp.noise(state, x[i] * 2.0) + wp.pnoise(state, p2[i], 3, 4) * 0.5 + wp.noise(state, p3[i])
    y[i] += wp.pnoise(state, p4[i], 2, 2, 3, 3)
    c[i] = wp.curlnoise(state, p3[i], wp.uint32(2), 2.0, 0.5) + wp.curlnoise(state, p4[i])
    c[i] += wp.vec3(wp.curlnoise(state, p2[i], 3)[0], 0.0, 0.0)
'''
N = 12


def inputs(seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-3, 3, N).astype(np.float32), rng.uniform(-3, 3, (N, 2)).astype(np.float32),
            rng.uniform(-3, 3, (N, 3)).astype(np.float32), rng.uniform(-3, 3, (N, 4)).astype(np.float32),
            np.zeros(N, np.float32), np.zeros((N, 3), np.float32)]


@needs_cxx
def test_noise_gradients_match_finite_differences():
    """Perlin noise is twice continuously differentiable (quintic blends), so float32 central
    differences with a step of 1e-3 agree to a few 1e-3 with the adjoint's exact gradients."""
    m = build(SOURCE, "noise_fd", block_dim=32)
    check_gradients(m.fields, N, inputs(), outputs=[4, 5], wrt=[0, 1, 2, 3], tiled=False, h=1e-3, rtol=2e-2,
                    atol=5e-3)


@needs_cxx
def test_reference_interpreter_computes_the_runtime_values():
    m = build(SOURCE, "noise_ref", block_dim=32)
    native = inputs(1)
    m.fields.launch(dim=N, inputs=native)
    interp = Interpreter(compile_ir(SOURCE, "noise_ref"))
    ref = inputs(1)
    interp.launch("fields", N, ref, tiled=False)
    np.testing.assert_allclose(ref[4], native[4], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ref[5], native[5], rtol=1e-6, atol=1e-6)


def test_curlnoise_with_a_varying_gain_gets_no_adjoint(tmp_path):
    """Its lacunarity and gain take no gradient (Warp's neither): where one varies, the kernel is built
    without an adjoint and says why, never with a zero gradient for it."""
    (tmp_path / "gain.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\n"
        "def k(v: wp.array(dtype=wp.vec3), g: wp.array(dtype=float), out: wp.array(dtype=wp.vec3)):\n"
        "    i = wp.tid()\n"
        "    out[i] = wp.curlnoise(wp.rand_init(3), v[i], wp.uint32(2), 2.0, g[i])\n")
    proc = subprocess.run([sys.executable, "-m", "tilec", "check", "gain.py"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "gain.py:7:14: warning[TC0501]: curlnoise: tilec derives its gradient for the point only, and `gain` " \
           "is not a constant here" in proc.stderr
