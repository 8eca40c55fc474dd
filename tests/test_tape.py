"""The loader's Tape on a three-kernel chain (one overwriting an array an earlier one wrote), against
Warp's wp.Tape on the same file and float64 finite differences; Warp's arrays as launch arguments."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

CHAIN = '''import warp as wp


@wp.kernel
def lift(X: wp.array2d(dtype=wp.float64), H: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(X, shape=(1, 8), offset=(i, 0))
    wp.tile_store(H, wp.tile_map(wp.sin, t) * wp.float64(2.0), offset=(i, 0))


@wp.kernel
def mix(H: wp.array2d(dtype=wp.float64), X: wp.array2d(dtype=wp.float64), G: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    G[i, j] = H[i, j] * H[i, j] + X[i, j]


@wp.kernel
def squash(G: wp.array2d(dtype=wp.float64), H: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    H[i, j] = wp.exp(G[i, j] * wp.float64(0.25))
'''

SHAPE = (4, 8)


@pytest.fixture(scope="module")
def mod():
    return build(CHAIN, "tape_chain")


def forward(mod, X, H, G):
    mod.lift.launch_tiled(dim=SHAPE[0], inputs=[X, H])
    mod.mix.launch(dim=SHAPE, inputs=[H, X, G])
    mod.squash.launch(dim=SHAPE, inputs=[G, H])  # overwrites H: its first value's adjoint is consumed


def x0():
    return np.random.default_rng(3).uniform(-1, 1, SHAPE)


def loss(mod, X, weights):
    H, G = np.zeros(SHAPE), np.zeros(SHAPE)
    forward(mod, X.copy(), H, G)
    return float((H * weights).sum())


def test_tape_gradient_matches_finite_differences(mod):
    X, H, G = x0(), np.zeros(SHAPE), np.zeros(SHAPE)
    weights = np.random.default_rng(4).uniform(0.5, 1.5, SHAPE)
    with mod.Tape() as tape:
        forward(mod, X, H, G)
    assert len(tape.launches) == 3
    tape.backward(grads=[(H, weights)])
    h = 1e-6
    fd = np.zeros(SHAPE)
    for idx in np.ndindex(SHAPE):
        up, down = X.copy(), X.copy()
        up[idx] += h
        down[idx] -= h
        fd[idx] = (loss(mod, up, weights) - loss(mod, down, weights)) / (2 * h)
    assert np.allclose(tape.gradient(X), fd, rtol=1e-6, atol=1e-8)
    # the adjoints of overwritten arrays were consumed: H's and G's are zero after the replay
    assert not tape.gradient(G).any() and not tape.gradient(H).any()
    tape.zero()
    assert not tape.gradient(X).any()
    tape.backward(grads=[(H, weights)])  # a second replay from zeroed adjoints gives the same gradient
    assert np.allclose(tape.gradient(X), fd, rtol=1e-6, atol=1e-8)


def test_launches_outside_a_tape_are_not_recorded(mod):
    with mod.Tape() as tape:
        pass
    forward(mod, x0(), np.zeros(SHAPE), np.zeros(SHAPE))
    assert tape.launches == []


def test_tape_refuses_a_kernel_that_reads_what_it_overwrites():
    inplace = build('''import warp as wp


@wp.kernel
def double(A: wp.array1d(dtype=float)):
    i = wp.tid()
    A[i] = A[i] * 2.0
''', "tape_inplace")
    A = np.ones(4, np.float32)
    with inplace.Tape():
        with pytest.raises(ValueError, match="double: reads and overwrites array `A`; the tape cannot zero"):
            inplace.double.launch(dim=4, inputs=[A])
    assert A.tolist() == [1.0] * 4


def warp_module(tmp_path):
    """The same file, imported by Warp (Warp compiles kernels from their source)."""
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    wp.config.enable_cpu_blocks = True
    path = tmp_path / "tape_chain_warp.py"
    path.write_text(CHAIN)
    spec = importlib.util.spec_from_file_location("tape_chain_warp", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return wp, module


def test_tape_matches_warps_tape_with_warp_arrays(mod, tmp_path):
    # Warp's tape replays with arrays' current contents, so here no array is overwritten after a read
    wp, ref = warp_module(tmp_path)
    weights = np.random.default_rng(5).uniform(0.5, 1.5, SHAPE)

    def arrays():
        return [wp.array(a, dtype=wp.float64, device="cpu", requires_grad=True)
                for a in (x0(), np.zeros(SHAPE), np.zeros(SHAPE), np.zeros(SHAPE))]

    X, H, G, Y = arrays()
    with wp.Tape() as tape:
        wp.launch_tiled(ref.lift, dim=SHAPE[0], inputs=[X, H], block_dim=64, device="cpu")
        wp.launch(ref.mix, dim=SHAPE, inputs=[H, X, G], device="cpu")
        wp.launch(ref.squash, dim=SHAPE, inputs=[G, Y], device="cpu")
    tape.backward(grads={Y: wp.array(weights, dtype=wp.float64, device="cpu")})
    expected = [a.numpy() for a in (Y, X.grad, H.grad, G.grad)]
    assert not expected[2].any() and not expected[3].any()  # Warp consumed the overwritten adjoints

    X, H, G, Y = arrays()  # tilec's launches take Warp's arrays: views of their memory, .grad as adjoints
    with mod.Tape() as ours:
        mod.lift.launch_tiled(dim=SHAPE[0], inputs=[X, H])
        mod.mix.launch(dim=SHAPE, inputs=[H, X, G])
        mod.squash.launch(dim=SHAPE, inputs=[G, Y])
    ours.backward(grads={Y: weights})
    assert ours.gradient(X) is X.grad
    for got, want in zip((Y, X.grad, H.grad, G.grad), expected):
        assert np.allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_warp_arrays_are_written_in_place_and_grad_is_an_adjoint(mod):
    wp = pytest.importorskip("warp")
    X = wp.array(x0(), dtype=wp.float64, device="cpu", requires_grad=True)
    H = wp.zeros(SHAPE, dtype=wp.float64, device="cpu", requires_grad=True)
    pointer = H.ptr
    mod.lift.launch_tiled(dim=SHAPE[0], inputs=[X, H])
    assert H.ptr == pointer and np.allclose(H.numpy(), 2 * np.sin(x0()))
    H.grad.fill_(1.0)
    mod.lift.launch_tiled(dim=SHAPE[0], inputs=[X, H], adj_inputs=[X.grad, H.grad], adjoint=True)
    assert np.allclose(X.grad.numpy(), 2 * np.cos(x0()))
