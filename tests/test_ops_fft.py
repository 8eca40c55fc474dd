"""tile_fft / tile_ifft (#14 item 8): unnormalised DFTs along the last axis of vec2f/vec2d tiles, in
place. Forward against numpy.fft (power-of-two and other lengths, batched 2-d and 3-d tiles, tiles
overhanging their arrays: the zeros outside take part), adjoints against float64 central finite
differences, on the CPU and the CUDA emulation; static checks are tests/test_ops_fft_checks.py. What Warp 1.19
itself computes is tests/conformance/cases_fft.py."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import OnEmulator, build

SOURCE = '''
import warp as wp


@wp.kernel
def forward(X: wp.array2d(dtype=wp.vec2f), F: wp.array2d(dtype=wp.vec2f), I: wp.array2d(dtype=wp.vec2f),
            R: wp.array2d(dtype=wp.vec2f), D: wp.array2d(dtype=wp.vec2d), DF: wp.array2d(dtype=wp.vec2d),
            C: wp.array3d(dtype=wp.vec2d), CF: wp.array3d(dtype=wp.vec2d)):
    i = wp.tid()
    t = wp.tile_load(X, shape=(3, 16), offset=(i * 3, 0))
    wp.tile_fft(t)
    wp.tile_store(F, t, offset=(i * 3, 0))
    u = wp.tile_load(X, shape=(3, 16), offset=(i * 3, 0))
    wp.tile_ifft(u)
    wp.tile_store(I, u, offset=(i * 3, 0))
    wp.tile_fft(u)
    wp.tile_store(R, u, offset=(i * 3, 0))
    d = wp.tile_load(D, shape=(2, 12), offset=(i * 2, 0))
    wp.tile_fft(d)
    wp.tile_store(DF, d, offset=(i * 2, 0))
    c = wp.tile_load(C, shape=(2, 2, 8))
    wp.tile_ifft(c)
    wp.tile_store(CF, c)


@wp.func
def squares(v: wp.vec2d):
    return wp.vec2d(v[0] * v[0], v[0] * v[1])


@wp.kernel
def grads(X: wp.array2d(dtype=wp.vec2d), Y: wp.array2d(dtype=wp.vec2d), Z: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(X, shape=(2, 8))
    wp.tile_fft(t)
    wp.tile_store(Y, wp.tile_map(squares, t))
    u = wp.tile_load(X, shape=(3, 6))
    wp.tile_ifft(u)
    wp.tile_store(Z, u)


@wp.func
def spectrum_of(t: wp.tile(dtype=wp.vec2d, shape=(2, 8))):
    wp.tile_fft(t)


@wp.kernel
def through_func(X: wp.array2d(dtype=wp.vec2d), Y: wp.array2d(dtype=wp.vec2d)):
    t = wp.tile_load(X, shape=(2, 8))
    spectrum_of(t)
    wp.tile_store(Y, t)


@wp.kernel
def overwrite(S: wp.array2d(dtype=wp.vec2d)):
    s = wp.tile_load(S, shape=(4, 4))
    wp.tile_fft(s)
    wp.tile_store(S, s)
'''

DEVICES = [("cpu", 64), ("cuda-emu", 32)]


@pytest.fixture(scope="module", params=DEVICES, ids=lambda d: f"{d[0]}-block{d[1]}")
def target(request):
    device, block_dim = request.param
    return build(SOURCE, "fft_ops" + ("_emu" if device != "cpu" else ""), block_dim=block_dim,
                 target=device), device


def complex_of(x):
    return x[..., 0].astype(np.float64) + 1j * x[..., 1].astype(np.float64)


def pairs_of(z, dtype):
    return np.stack([z.real, z.imag], axis=-1).astype(dtype)


def padded(x, shape):
    out = np.zeros(shape + x.shape[len(shape):], x.dtype)
    out[tuple(slice(0, n) for n in x.shape[:len(shape)])] = x
    return out


@pytest.mark.build
@needs_cxx
def test_forward_against_numpy(target):
    mod, device = target
    rng = np.random.default_rng(8)
    X = rng.standard_normal((5, 16, 2)).astype(np.float32)  # two blocks of (3, 16) rows: the last overhangs
    D = rng.standard_normal((3, 12, 2))  # 12: not a power of two; the second block's tile overhangs
    C = rng.standard_normal((2, 2, 8, 2))
    F, I, R = (np.zeros_like(X) for _ in range(3))
    DF, CF = np.zeros_like(D), np.zeros_like(C)
    mod.forward.launch_tiled(dim=2, inputs=[X, F, I, R, D, DF, C, CF], device=device)
    z = complex_of(X)
    np.testing.assert_allclose(complex_of(F), np.fft.fft(z, axis=-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(complex_of(I), 16 * np.fft.ifft(z, axis=-1), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(complex_of(R), 16 * z, rtol=1e-5, atol=1e-4)  # fft(ifft(x)) = N x
    np.testing.assert_allclose(complex_of(DF), np.fft.fft(complex_of(D), axis=-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(complex_of(CF), 8 * np.fft.ifft(complex_of(C), axis=-1), rtol=1e-12, atol=1e-12)


@pytest.mark.build
@needs_cxx
def test_overhanging_rows_transform_the_zeros_outside(target):
    """A (3, 16) tile at row 3 of a 5-row array holds rows 3, 4 and a row of zeros; a (2, 12) tile
    reading past a 10-column array transforms rows padded with zeros to 12."""
    mod, device = target
    rng = np.random.default_rng(9)
    X = rng.standard_normal((5, 16, 2)).astype(np.float32)
    D = rng.standard_normal((3, 10, 2))
    F, I, R = (np.zeros_like(X) for _ in range(3))
    DF = np.zeros_like(D)
    C = np.zeros((2, 2, 8, 2))
    mod.forward.launch_tiled(dim=2, inputs=[X, F, I, R, D, DF, C, np.zeros_like(C)], device=device)
    want = np.fft.fft(complex_of(padded(D, (4, 12))), axis=-1)[:3, :10]
    np.testing.assert_allclose(complex_of(DF), want, rtol=1e-12, atol=1e-12)


@pytest.mark.build
@needs_cxx
def test_gradients_against_finite_differences(target):
    mod, device = target
    rng = np.random.default_rng(10)
    X = rng.standard_normal((3, 8, 2))
    Y, Z = np.zeros((2, 8, 2)), np.zeros((3, 6, 2))
    kernel = mod.grads if device == "cpu" else OnEmulator(mod.grads)
    check_gradients(kernel, 1, [X, Y, Z], outputs=[1, 2], wrt=[0], rtol=1e-6, atol=1e-7)


@pytest.mark.build
@needs_cxx
def test_adjoint_is_the_inverse_transform_of_the_seed(target):
    """The adjoint of the linear map itself: seed g on Z = ifft(X) gives conj-transposed DFT of g,
    numpy's fft(g) (and on Y through the map, the chain rule around it)."""
    mod, device = target
    rng = np.random.default_rng(11)
    X = rng.standard_normal((3, 8, 2))
    Y, Z = np.zeros((2, 8, 2)), np.zeros((3, 6, 2))
    gZ = rng.standard_normal(Z.shape)
    adj = [np.zeros_like(X), np.zeros_like(Y), gZ.copy()]
    mod.grads.launch_tiled(dim=1, inputs=[X, Y, Z], adj_inputs=adj, adjoint=True, device=device)
    want = np.zeros_like(X)
    want[:, :6] = pairs_of(np.fft.fft(complex_of(gZ), axis=-1), np.float64)
    np.testing.assert_allclose(adj[0], want, rtol=1e-12, atol=1e-12)


@pytest.mark.build
@needs_cxx
def test_transform_of_an_array_in_place_has_its_adjoint(target):
    """Loading an array, transforming it and storing it back over itself: the adjoint needs no value
    of the overwritten array (the transform is linear), so it is built, and it is the inverse
    transform of the seed."""
    mod, device = target
    rng = np.random.default_rng(12)
    S = rng.standard_normal((3, 4, 2))  # a (4, 4) tile over 3 rows: the fourth row is dropped on store
    want = pairs_of(np.fft.fft(complex_of(S), axis=-1), np.float64)
    seed = rng.standard_normal(S.shape)
    adj = [seed.copy()]
    x = S.copy()
    mod.overwrite.launch_tiled(dim=1, inputs=[x], device=device)
    np.testing.assert_allclose(x, want, rtol=1e-12, atol=1e-12)
    mod.overwrite.launch_tiled(dim=1, inputs=[x], adj_inputs=adj, adjoint=True, device=device)
    np.testing.assert_allclose(adj[0], pairs_of(4 * np.fft.ifft(complex_of(seed), axis=-1), np.float64),
                               rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("n", [8, 6])
def test_reference_transforms_are_each_others_adjoint(n):
    """The dot-product test on the [re, im] pairs, <fft(x), y> = <x, ifft(y)>, with the interpreter's
    reference (ops/reference.py), which is what the adjoint rule relies on; and fft then ifft is N x."""
    from types import SimpleNamespace

    from tilec.ops.reference import IMPL

    rng = np.random.default_rng(n)
    x, y = rng.standard_normal((3, n, 2)), rng.standard_normal((3, n, 2))
    fft = IMPL["tile_fft"](None, SimpleNamespace(op="tile_fft"), [x])
    ifft = IMPL["tile_ifft"](None, SimpleNamespace(op="tile_ifft"), [y])
    assert np.isclose(np.sum(fft * y), np.sum(x * ifft), rtol=1e-12)
    np.testing.assert_allclose(complex_of(fft), np.fft.fft(complex_of(x), axis=-1), rtol=1e-12, atol=1e-12)
    back = IMPL["tile_ifft"](None, SimpleNamespace(op="tile_ifft"), [fft])
    np.testing.assert_allclose(back, n * x, rtol=1e-12, atol=1e-12)


@pytest.mark.build
@needs_cxx
def test_a_func_transforms_the_callers_tile(target):
    """Tiles pass to a @wp.func by reference: tile_fft inside it transforms the caller's tile, and the
    gradient flows back through the call."""
    mod, device = target
    rng = np.random.default_rng(14)
    X, Y = rng.standard_normal((2, 8, 2)), np.zeros((2, 8, 2))
    mod.through_func.launch_tiled(dim=1, inputs=[X, Y], device=device)
    np.testing.assert_allclose(complex_of(Y), np.fft.fft(complex_of(X), axis=-1), rtol=1e-12, atol=1e-12)
    seed = rng.standard_normal(Y.shape)
    adj = [np.zeros_like(X), seed.copy()]
    mod.through_func.launch_tiled(dim=1, inputs=[X, Y], adj_inputs=adj, adjoint=True, device=device)
    np.testing.assert_allclose(complex_of(adj[0]), 8 * np.fft.ifft(complex_of(seed), axis=-1), rtol=1e-12,
                               atol=1e-12)
