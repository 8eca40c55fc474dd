"""Value types in whole SIMT programs: funcs taking and returning vectors, loops and branches
over vector locals (their adjoint saves and restores them), component writes on locals and
array elements (`a[i].y = s`; `a[i].x += s` and wp.atomic_add are atomic), 2-d arrays of vectors
and their views; on the CPU and on the CUDA emulation, against numpy, float64 finite
differences and the numpy interpreter."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check_gradients
from harness import build, compile_ir
from tilec.interp import Interpreter

pytestmark = [pytest.mark.build]

SOURCE = '''
import warp as wp


@wp.func
def drift(v: wp.vec3d, g: wp.vec3d, dt: wp.float64) -> wp.vec3d:
    return v + g * dt


@wp.kernel
def particles(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), g: wp.vec3d, dt: wp.float64,
              x_out: wp.array(dtype=wp.vec3d), v_out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    vel = drift(v[i], g, dt)
    p = x[i] + vel * dt
    if p.y < wp.float64(0.0):
        p.y = -p.y
        vel = wp.vec3d(vel.x, -vel.y, vel.z) * wp.float64(0.5)
    x_out[i] = p
    v_out[i] = vel


@wp.kernel
def springs(x: wp.array(dtype=wp.vec3d), rest: wp.float64, force: wp.array(dtype=wp.vec3d),
            energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    acc = wp.vec3d()
    e = wp.float64(0.0)
    for j in range(x.shape[0]):
        d = x[j] - x[i]
        l = wp.length(d)
        if j != i:
            e += (l - rest) * (l - rest)
            acc += wp.normalize(d) * (l - rest)
    force[i] = acc
    wp.atomic_add(energy, 0, e)


@wp.kernel
def writes(a: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d), s: wp.array(dtype=wp.float64),
           out: wp.array(dtype=wp.vec3d), mo: wp.array(dtype=wp.mat22d), total: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = a[i]
    v.x = s[i] * v.z
    v[1] += s[i]
    v[2] *= wp.float64(2.0)
    M = m[i]
    M[0, 1] = M[1, 0] * s[i]
    M[1] = wp.vec2d(M[1, 1], s[i])
    M[0][0] -= s[i]
    out[i] = v
    out[i].y = v.x * s[i]
    out[i].z += s[i]
    mo[i] = M
    wp.atomic_add(total, 0, v)


@wp.kernel
def grid(a: wp.array2d(dtype=wp.vec2d), out: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    row = a[i]
    acc = wp.vec2d()
    for j in range(a.shape[1]):
        acc = acc + row[j] * a[i, j].x
    out[i] = acc
'''

N = 4


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def make(name, seed=0):
    if name == "particles":
        x = rnd(N, 3, seed=seed)
        x[::2, 1] = -0.3  # some bounce
        return [x, rnd(N, 3, seed=seed + 1), np.array([0.0, -9.8, 0.0]), 0.1, np.zeros((N, 3)), np.zeros((N, 3))]
    if name == "springs":
        return [rnd(N, 3, seed=seed), 0.7, np.zeros((N, 3)), np.zeros(1)]
    if name == "writes":
        return [rnd(N, 3, seed=seed), rnd(N, 2, 2, seed=seed + 1), rnd(N, seed=seed + 2), np.zeros((N, 3)),
                np.zeros((N, 2, 2)), np.zeros((1, 3))]
    return [rnd(N, 5, 2, seed=seed), np.zeros((N, 2))]


def reference(name, args):
    if name == "particles":
        x, v, g, dt = args[:4]
        vel = v + g * dt
        p = x + vel * dt
        low = p[:, 1] < 0
        p[low, 1] *= -1
        vel[low] = vel[low] * np.array([1, -1, 1]) * 0.5
        return {4: p, 5: vel}
    if name == "springs":
        x, rest = args[:2]
        d = x[None, :, :] - x[:, None, :]
        l = np.linalg.norm(d, axis=-1)
        off = ~np.eye(N, dtype=bool)
        e = np.where(off, (l - rest) ** 2, 0).sum(1)
        unit = np.where(off[..., None], d / np.where(l > 0, l, 1)[..., None], 0)
        return {2: np.sum(unit * (l - rest)[..., None], 1), 3: np.array([e.sum()])}
    if name == "writes":
        a, m, s = args[:3]
        v = a.copy()
        v[:, 0] = s * v[:, 2]
        v[:, 1] += s
        v[:, 2] *= 2
        M = m.copy()
        M[:, 0, 1] = M[:, 1, 0] * s
        M[:, 1] = np.stack([M[:, 1, 1], s], 1)
        M[:, 0, 0] -= s
        out = v.copy()
        out[:, 1] = v[:, 0] * s
        out[:, 2] += s
        return {3: out, 4: M, 5: v.sum(0, keepdims=True)}
    a = args[0]
    return {1: np.sum(a * a[:, :, :1], 1)}


OUTPUTS = {"particles": [4, 5], "springs": [2, 3], "writes": [3, 4, 5], "grid": [1]}
WRT = {"particles": [0, 1], "springs": [0], "writes": [0, 1, 2], "grid": [0]}


@pytest.fixture(scope="module", params=["cpu", "cuda-emu"])
def compiled(request):
    if request.param == "cuda-emu":
        from harness import toolchain  # noqa: F401
        import shutil

        if shutil.which("nvcc") is None:
            pytest.skip("nvcc is not installed")
    return build(SOURCE, "values_programs", target=request.param), request.param


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_forward_matches_numpy(compiled, name):
    module, device = compiled
    args = make(name)
    getattr(module, name).launch(N, inputs=args, device=device)
    for k, want in reference(name, args).items():
        np.testing.assert_allclose(args[k], want, rtol=1e-12, atol=1e-12)


class _On:
    def __init__(self, kernel, device):
        self.kernel, self.device = kernel, device

    def launch(self, **kw):
        return self.kernel.launch(device=self.device, **kw)


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_adjoint_matches_finite_differences(compiled, name):
    module, device = compiled
    check_gradients(_On(getattr(module, name), device), N, make(name, seed=5), OUTPUTS[name], WRT[name],
                    tiled=False, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_interpreter_matches_compiled(compiled, name):
    module, device = compiled
    interp = Interpreter(compile_ir(SOURCE, "values_programs"))
    a_args, b_args = make(name, seed=7), make(name, seed=7)
    getattr(module, name).launch(N, inputs=a_args, device=device)
    interp.launch(name, N, b_args, tiled=False)
    for k in OUTPUTS[name]:
        np.testing.assert_allclose(a_args[k], b_args[k], rtol=1e-12, atol=1e-12)
    adj_a = [np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0 for x in a_args]
    adj_b = [np.zeros_like(x) if isinstance(x, np.ndarray) else 0.0 for x in b_args]
    for k in OUTPUTS[name]:
        adj_a[k] = np.ones_like(a_args[k])
        adj_b[k] = np.ones_like(b_args[k])
    getattr(module, name).launch(N, inputs=a_args, adj_inputs=adj_a, adjoint=True, device=device)
    interp.launch(name, N, b_args, tiled=False, adjoint=True, adj_inputs=adj_b)
    for k in WRT[name]:
        np.testing.assert_allclose(adj_a[k], adj_b[k], rtol=1e-10, atol=1e-12)


def test_component_store_into_an_array_element():
    """`a[i].y = e` writes that component only (others keep their value); its adjoint takes the
    component's adjoint and zeroes it; `a[i].y *= e` reads the element, so its adjoint is refused."""
    from tilec.pipeline import compile_source
    from tilec.frontend.check import Options
    from tilec.codegen.sources import adjoint_warnings

    src = ("import warp as wp\n\n@wp.kernel\ndef k(s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.vec3d)):\n"
           "    i = wp.tid()\n    out[i].y = s[i] * s[i]\n    out[i][2] = s[i]\n")
    built = build(src, "component_store")
    out = np.arange(6, dtype=np.float64).reshape(2, 3)
    s = np.array([1.5, 2.0])
    built.k.launch(2, inputs=[s, out])
    np.testing.assert_array_equal(out, [[0, 2.25, 1.5], [3, 4, 2]])
    check_gradients(built.k, 2, [s, out], [1], [0], tiled=False)
    scaled = src.replace("out[i][2] = s[i]", "out[i].x *= s[i]")
    warnings = adjoint_warnings(compile_source(scaled, "cs.py", Options()).module)
    assert [(w.code, w.span.line) for w in warnings] == [("TC0502", 7)]
