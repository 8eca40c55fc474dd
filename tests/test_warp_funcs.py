"""Funcs with Warp's calling convention: tiles by reference, arrays through funcs (with their
gradients), custom adjoints, enable_backward=False. CPU and the CUDA emulation against numpy,
gradients against float64 finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

pytestmark = [pytest.mark.build, needs_cxx]
DEVICES = ["cpu", "cuda-emu"]

BYREF = '''
import warp as wp

TILE = 8


@wp.func
def bump(t: wp.tile(dtype=float, shape=(TILE,))):
    t += wp.tile_ones(shape=TILE, dtype=float)


@wp.func
def set_first(t: wp.tile(dtype=float, shape=(TILE,)), v: float):
    t[0] = v


@wp.func
def bump_twice(t: wp.tile(dtype=float, shape=(TILE,))):
    bump(t)
    bump(t)


@wp.func
def scaled_copy(t: wp.tile(dtype=float, shape=(TILE,))):
    t *= 2.0
    t = t * 10.0
    t += wp.tile_ones(shape=TILE, dtype=float)
    return t


@wp.func
def patch(t: wp.tile(dtype=float, shape=(TILE,))):
    wp.tile_assign(t, wp.tile_full(shape=2, value=-1.0, dtype=float), offset=(3,))


@wp.func
def accumulate(acc: wp.tile(dtype=float, shape=(TILE,)), x: wp.array(dtype=float), i: int):
    for k in range(3):
        acc -= wp.tile_load(x, shape=TILE, offset=i * TILE) * float(k)


@wp.kernel
def calls(x: wp.array(dtype=float), y: wp.array2d(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    bump(t)
    wp.tile_store(y, wp.tile_reshape(t, shape=(1, TILE)), offset=(0, i * TILE))
    set_first(t, 5.0)
    wp.tile_store(y, wp.tile_reshape(t, shape=(1, TILE)), offset=(1, i * TILE))
    bump_twice(t)
    wp.tile_store(y, wp.tile_reshape(t, shape=(1, TILE)), offset=(2, i * TILE))
    u = scaled_copy(t)
    wp.tile_store(y, wp.tile_reshape(t, shape=(1, TILE)), offset=(3, i * TILE))
    wp.tile_store(y, wp.tile_reshape(u, shape=(1, TILE)), offset=(4, i * TILE))
    patch(u)
    wp.tile_store(y, wp.tile_reshape(u, shape=(1, TILE)), offset=(5, i * TILE))


@wp.kernel
def grads(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=TILE, offset=i * TILE)
    sq = t * t
    bump(sq)
    accumulate(sq, x, i)
    wp.tile_store(y, sq, offset=i * TILE)
'''


def _calls_reference(x):
    tiles = x.reshape(-1, 8).copy()
    rows = []
    tiles += 1
    rows.append(tiles.copy())
    tiles[:, 0] = 5
    rows.append(tiles.copy())
    tiles += 2
    rows.append(tiles.copy())
    rows.append(tiles.copy())  # scaled_copy only rebinds its parameter: the caller's tile stays
    u = tiles * 2 * 10 + 1
    rows.append(u.copy())
    u[:, 3:5] = -1
    rows.append(u)
    return np.stack([r.reshape(-1) for r in rows])


@pytest.mark.parametrize("device", DEVICES)
def test_tiles_are_passed_by_reference(device):
    m = build(BYREF, "byref", block_dim=32, target=device)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros((6, 16), np.float32)
    m.calls.launch_tiled(dim=(2,), inputs=[x, y], device=device)
    np.testing.assert_allclose(y, _calls_reference(x))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_through_a_tile_updated_by_reference(device):
    m = build(BYREF.replace("dtype=float", "dtype=wp.float64").replace("float(k)", "wp.float64(k)")
              .replace("v: float", "v: wp.float64"),
              "byref64", block_dim=32, target=device)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(16)
    y = np.zeros(16)
    m.grads.launch_tiled(dim=(2,), inputs=[x, y], device=device)
    np.testing.assert_allclose(y, x * x + 1 - 3 * x)
    kernel = m.grads if device == "cpu" else OnEmulator(m.grads)
    check_gradients(kernel, (2,), [x, y], outputs=[1], wrt=[0])


ARRAY_FUNCS = '''
import warp as wp

TILE = 8


@wp.func
def load_scaled(x: wp.array(dtype=wp.float64), i: int):
    return wp.tile_load(x, shape=TILE, offset=i * TILE) * wp.float64(2.0)


@wp.func
def store_square(y: wp.array(dtype=wp.float64), t: wp.tile(dtype=wp.float64, shape=(TILE,)), i: int):
    wp.tile_store(y, t * t, offset=i * TILE)


@wp.func
def elementwise(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), i: int):
    y[i] = wp.sin(x[i]) * x[i]


@wp.kernel
def tiled(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    store_square(y, load_scaled(x, i), i)


@wp.kernel
def simt(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    elementwise(x, y, i)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_array_parameters_of_funcs_get_gradients(device):
    m = build(ARRAY_FUNCS, "arrfuncs", block_dim=32, target=device)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(16)
    y = np.zeros(16)
    m.tiled.launch_tiled(dim=(2,), inputs=[x, y], device=device)
    np.testing.assert_allclose(y, 4 * x * x)
    kernel = m.tiled if device == "cpu" else OnEmulator(m.tiled)
    check_gradients(kernel, (2,), [x, y], outputs=[1], wrt=[0])
    adj = [np.zeros(16), np.ones(16)]
    m.tiled.launch_tiled(dim=(2,), inputs=[x, y], adj_inputs=adj, adjoint=True, device=device)
    np.testing.assert_allclose(adj[0], 8 * x)


def test_array_parameters_of_simt_funcs_get_gradients():
    m = build(ARRAY_FUNCS, "arrfuncs", block_dim=32)
    x = np.linspace(-1, 1, 16)
    y = np.zeros(16)
    adj = [np.zeros(16), np.ones(16)]
    m.simt.launch(dim=16, inputs=[x, y], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[0], np.cos(x) * x + np.sin(x))


NO_BACKWARD = '''
import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def by_module_option(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * 2.0


@wp.kernel(enable_backward=True)
def kept(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * 3.0
'''


def test_enable_backward_false_builds_no_adjoint():
    m = build(NO_BACKWARD, "nobackward")
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    m.by_module_option.launch(dim=4, inputs=[x, y])
    np.testing.assert_allclose(y, 2 * x)
    assert "backward" not in m.by_module_option.meta["entries"]["cpu"]
    with pytest.raises(ValueError, match="enable_backward=False"):
        m.by_module_option.launch(dim=4, inputs=[x, y], adj_inputs=[np.zeros(4, np.float32), y.copy()],
                                  adjoint=True)
    adj = [np.zeros(4, np.float32), np.ones(4, np.float32)]
    m.kept.launch(dim=4, inputs=[x, y], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[0], 3.0)


def test_kernel_decorator_enable_backward_false():
    m = build(NO_BACKWARD.replace('wp.set_module_options({"enable_backward": False})', "")
              .replace("@wp.kernel\n", "@wp.kernel(enable_backward=False)\n"), "nobackward2")
    assert "backward" not in m.by_module_option.meta["entries"]["cpu"]
    assert "backward" in m.kept.meta["entries"]["cpu"]


CUSTOM_GRAD = '''
import warp as wp


@wp.func
def clipped(x: float) -> float:
    return wp.min(x, 1.0)


@wp.func_grad(clipped)
def adj_clipped(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret


@wp.kernel
def uses_custom(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = clipped(x[i])


@wp.func
def product(a: float, b: float) -> float:
    return a * a * b


@wp.func_grad(product)
def adj_product(a: float, b: float, adj_ret: float):
    wp.adjoint[a] += 2.0 * a * b * adj_ret * 10.0
    wp.adjoint[b] -= a * a * adj_ret


@wp.kernel
def two_args(x: wp.array(dtype=float), z: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = product(x[i], z[i])
'''


@pytest.mark.parametrize("device", DEVICES)
def test_func_grad_is_used(device):
    m = build(CUSTOM_GRAD, "customgrad", target=device)
    x = np.array([0.5, 2.0, -1.0], np.float32)
    y = np.zeros(3, np.float32)
    m.uses_custom.launch(dim=3, inputs=[x, y], device=device)
    np.testing.assert_allclose(y, [0.5, 1.0, -1.0])
    adj = [np.zeros(3, np.float32), np.array([1.0, 2.0, 3.0], np.float32)]
    m.uses_custom.launch(dim=3, inputs=[x, y], adj_inputs=adj, adjoint=True, device=device)
    np.testing.assert_allclose(adj[0], [1.0, 2.0, 3.0])  # the user's straight-through rule, not min's 0
    adj = [np.zeros(3, np.float32), np.zeros(3, np.float32), np.ones(3, np.float32)]
    m.two_args.launch(dim=3, inputs=[x, x * 2, y], adj_inputs=adj, adjoint=True, device=device)
    np.testing.assert_allclose(adj[0], 2 * x * 2 * x * 10)  # d/da of a*a*b by the rule: 2ab, times 10
    np.testing.assert_allclose(adj[1], -x * x)


def test_func_grad_under_tile_map_is_used():
    """As in Warp 1.19: tile_map applies the func's @wp.func_grad elementwise (conformance cases
    fgrad_mapped_* compare with Warp)."""
    m = build(CUSTOM_GRAD + '''

@wp.kernel
def mapped(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=4)
    wp.tile_store(y, wp.tile_map(clipped, t))
''', "custommap")
    x = np.array([0.5, 2.0, -1.0, 3.0], np.float32)
    y = np.zeros(4, np.float32)
    m.mapped.launch_tiled(dim=(1,), inputs=[x, y])
    np.testing.assert_allclose(y, [0.5, 1.0, -1.0, 1.0])
    adj = [np.zeros(4, np.float32), np.array([1.0, 2.0, 3.0, 4.0], np.float32)]
    m.mapped.launch_tiled(dim=(1,), inputs=[x, y], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[0], [1.0, 2.0, 3.0, 4.0])  # the straight-through rule, not min's 0 past 1


def test_func_replay_gives_the_replayed_value_and_the_bodys_derivative():
    m = build(CUSTOM_GRAD.replace("@wp.func_grad(clipped)", "@wp.func_replay(clipped)")
              .replace("def adj_clipped(x: float, adj_ret: float):\n    wp.adjoint[x] += adj_ret",
                       "def replay_clipped(x: float) -> float:\n    return wp.min(x, 1.0)"), "customreplay")
    x = np.array([0.5, 2.0], np.float32)
    y = np.zeros(2, np.float32)
    adj = [np.zeros(2, np.float32), np.ones(2, np.float32)]
    m.uses_custom.launch(dim=2, inputs=[x, y], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[0], [1.0, 0.0])  # d min(x, 1) / dx: the body's derivative


def test_func_grad_over_arrays_is_used():
    m = build('''
import warp as wp


@wp.func
def squared_at(a: wp.array(dtype=float), i: int):
    return a[i] * a[i]


@wp.func_grad(squared_at)
def adj_squared_at(a: wp.array(dtype=float), i: int, adj_ret: float):
    wp.adjoint[a][i] += 5.0 * adj_ret


@wp.kernel
def k(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] = squared_at(a, i)
''', "customarrays")
    a = np.array([1.0, 2.0], np.float32)
    b = np.zeros(2, np.float32)
    m.k.launch(dim=2, inputs=[a, b])
    np.testing.assert_allclose(b, a * a)
    adj = [np.zeros(2, np.float32), np.array([1.0, 3.0], np.float32)]
    m.k.launch(dim=2, inputs=[a, b], adj_inputs=adj, adjoint=True)
    np.testing.assert_allclose(adj[0], [5.0, 15.0])  # the rule's 5 * adj_ret, not the body's 2 * a * adj_ret


REF_PARAMS = '''
import warp as wp


@wp.func
def bump(x: wp.ref[wp.float64], v: wp.ref[wp.vec3d], s: wp.float64):
    x += s * s
    v[1] = v[1] * s + x
    return x * wp.float64(2.0)


@wp.kernel
def updated(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x = a[i]
    v = b[i]
    y = bump(x, v, a[i] + wp.float64(1.0))
    y += bump(x, v, wp.float64(0.5))
    out[i] = x + y + v[0] + v[1] * wp.float64(3.0)
'''


@pytest.mark.parametrize("device", DEVICES)
def test_ref_parameters_update_the_callers_variables_and_get_gradients(device):
    """wp.ref[T] (Warp 1.19): forward as Warp's (tests/conformance wl_by_reference); Warp builds no adjoint
    through such a call, tilec's is the inlined body's, checked by finite differences."""
    m = build(REF_PARAMS, "ref_params", target=device)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(8), rng.standard_normal((8, 3))
    out = np.zeros(8)
    m.updated.launch(dim=8, inputs=[a, b, out], device=device)
    x, v1 = a.copy(), b[:, 1].copy()
    ys = []
    for s in (a + 1.0, np.full(8, 0.5)):  # the two calls, in order, on the caller's x and v
        x = x + s * s
        v1 = v1 * s + x
        ys.append(x * 2.0)
    np.testing.assert_allclose(out, x + ys[0] + ys[1] + b[:, 0] + v1 * 3.0, rtol=1e-12)
    kernel = m.updated if device == "cpu" else OnEmulator(m.updated)
    check_gradients(kernel, 8, [a, b, out], outputs=[2], wrt=[0, 1], tiled=False)


GRAD_CALLS = '''
import warp as wp

EPS = wp.float64(1.0e-6)


@wp.func
def potential(d: wp.vec3d):
    return wp.float64(1.0) / (wp.length(d) + EPS)


@wp.func
def branchy(x: wp.float64, y: wp.float64):
    if x > wp.float64(0.5):
        return x * x * y
    z = wp.exp(x)
    if y < wp.float64(0.0):
        z = wp.sin(z * y)
    return z + y * y


@wp.kernel
def forces(d: wp.array(dtype=wp.vec3d), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
           f: wp.array(dtype=wp.vec3d), gx: wp.array(dtype=wp.float64), gy: wp.array(dtype=wp.float64),
           ga: wp.array(dtype=wp.float64)):
    i = wp.tid()
    f[i] = -wp.grad(potential)(d[i])
    a, b = wp.grad(branchy)(x[i], y[i])
    gx[i] = a
    gy[i] = b
    p, q = wp.grad(wp.atan2)(y[i], x[i])  # a builtin's: d/dy, d/dx
    ga[i] = p - q
'''


def _branchy(x, y):
    z = np.exp(x)
    z = np.where(y < 0, np.sin(z * y), z)
    return np.where(x > 0.5, x * x * y, z + y * y)


@pytest.mark.parametrize("device", DEVICES)
def test_grad_calls_give_the_gradient_and_their_own_derivative(device):
    """wp.grad(f)(x) (Warp 1.19) in forward code: each input's gradient of a func (branches, early
    returns) against finite differences of numpy's f; the kernel's adjoint differentiates through it
    (Warp treats the gradient as a constant there), checked by finite differences."""
    m = build(GRAD_CALLS, "grad_calls", target=device)
    rng = np.random.default_rng(5)
    n = 64
    d, x, y = rng.standard_normal((n, 3)), rng.standard_normal(n) * 1.5, rng.standard_normal(n) * 1.5
    outs = [np.zeros((n, 3)), np.zeros(n), np.zeros(n), np.zeros(n)]
    m.forces.launch(dim=n, inputs=[d, x, y, *outs], device=device)
    length = np.linalg.norm(d, axis=1)[:, None]
    np.testing.assert_allclose(outs[0], d / length / (length + 1e-6) ** 2, rtol=1e-12)
    h = 1e-6
    np.testing.assert_allclose(outs[1], (_branchy(x + h, y) - _branchy(x - h, y)) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(outs[2], (_branchy(x, y + h) - _branchy(x, y - h)) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(outs[3], (x + y) / (x * x + y * y), rtol=1e-12)
    kernel = m.forces if device == "cpu" else OnEmulator(m.forces)
    check_gradients(kernel, n, [d, x, y, *outs], outputs=[3, 4, 5, 6], wrt=[0, 1, 2], tiled=False, h=1e-5,
                    rtol=1e-5, atol=1e-7)


GRAD_LOOPS = '''
import warp as wp


@wp.func
def wave(x: wp.float64, n: int):
    e = wp.float64(0.0)
    for k in range(n):
        e += wp.sin(x * wp.float64(k + 1)) * wp.exp(x * wp.float64(0.1))
    return e


@wp.kernel
def slopes(x: wp.array(dtype=wp.float64), n: wp.array(dtype=int), g: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a, dn = wp.grad(wave)(x[i], n[i])
    g[i] = a * x[i]
'''


def test_grad_calls_of_funcs_with_loops_and_their_derivative():
    """wp.grad(f) of a func with a run-time loop whose adjoint needs no tape: the gradient against
    finite differences of numpy's f, and the kernel's adjoint through it (a second derivative) by
    finite differences."""
    m = build(GRAD_LOOPS, "grad_loops")
    rng = np.random.default_rng(6)
    x, n = rng.standard_normal(32), rng.integers(0, 6, 32).astype(np.int32)
    g = np.zeros(32)
    m.slopes.launch(dim=32, inputs=[x, n, g])

    def wave(v):
        return sum(np.where(k < n, np.sin(v * (k + 1)) * np.exp(v * 0.1), 0.0) for k in range(6))

    h = 1e-6
    np.testing.assert_allclose(g, x * (wave(x + h) - wave(x - h)) / (2 * h), rtol=1e-6, atol=1e-8)
    check_gradients(m.slopes, 32, [x, n, g], outputs=[2], wrt=[0], tiled=False, h=1e-5, rtol=1e-5, atol=1e-7)
