"""Elementwise ops, creation, load/store: forward results on the CPU against numpy.

Shapes are chosen so tiles overhang the arrays (partial tiles at the edges).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

T = 8


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.kernel
def ew_f32(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(T, T), offset=(i * T, j * T))
    b = wp.tile_load(B, shape=(T, T), offset=(i * T, j * T))
    c = wp.tile_map(softplus, a) * 2.0 + a * b - b / (wp.tile_map(wp.abs, a) + 1.0) - (-a) + 0.5
    c += wp.tile_map(wp.max, a, b)
    c -= wp.tile_map(wp.tanh, b) * wp.tile_map(wp.sin, a)
    wp.tile_store(C, c, offset=(i * T, j * T))


@wp.kernel
def ew_f64(A: wp.array2d(dtype=wp.float64), C: wp.array2d(dtype=wp.float64), s: wp.float64):
    i, j = wp.tid()
    a = wp.tile_load(A, shape=(T, T), offset=(i * T, j * T))
    c = wp.tile_map(wp.sqrt, a * a + 1.0) * s + wp.tile_map(wp.exp, -a)
    wp.tile_store(C, c, offset=(i * T, j * T))


@wp.kernel
def ew_f16(A: wp.array1d(dtype=wp.float16), C: wp.array1d(dtype=wp.float16)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(16,), offset=i * 16)
    wp.tile_store(C, a * a + a, offset=i * 16)


@wp.kernel
def ew_i32(A: wp.array1d(dtype=int), B: wp.array1d(dtype=int), C: wp.array1d(dtype=int)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(16,), offset=i * 16)
    b = wp.tile_load(B, shape=(16,), offset=i * 16)
    c = (a & b) | (a ^ 3) + a * b - b
    wp.tile_store(C, c, offset=i * 16)


@wp.kernel
def nd3(A: wp.array3d(dtype=float), C: wp.array3d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(2, 3, 4), offset=(i * 2, 0, 0))
    wp.tile_store(C, a * a + 1.0, offset=(i * 2, 0, 0))


@wp.kernel
def nd4(A: wp.array4d(dtype=float), C: wp.array4d(dtype=float)):
    i = wp.tid()
    a = wp.tile_load(A, shape=(1, 2, 3, 4), offset=(i, 0, 0, 0))
    wp.tile_store(C, 3.0 * a - 1.0, offset=(i, 0, 0, 0))


@wp.kernel
def creation(Z: wp.array2d(dtype=float), R: wp.array1d(dtype=int), F: wp.array1d(dtype=wp.float64), v: float):
    wp.tile_store(Z, wp.tile_zeros(shape=(2, 4), dtype=float) + wp.tile_ones(shape=(2, 4), dtype=float) * v)
    wp.tile_store(R, wp.tile_arange(3, 19, 2, dtype=int))
    wp.tile_store(F, wp.tile_full(shape=(8,), value=wp.float64(2.5), dtype=wp.float64), offset=8)
    wp.tile_store(F, wp.tile_astype(wp.tile_arange(8, dtype=int), dtype=wp.float64))
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "elementwise")


def softplus(x):
    return np.log1p(np.exp(x))


def grid(shape, tile):
    return tuple(-(-n // t) for n, t in zip(shape, tile))


def test_float32_expression_on_partial_tiles(mod):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((13, 11)).astype(np.float32)
    B = rng.standard_normal((13, 11)).astype(np.float32)
    C = np.zeros_like(A)
    mod.ew_f32.launch_tiled(dim=grid(A.shape, (8, 8)), inputs=[A, B, C])
    want = softplus(A) * 2 + A * B - B / (np.abs(A) + 1) + A + 0.5 + np.maximum(A, B) - np.tanh(B) * np.sin(A)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)


def test_float64_and_scalar_parameter(mod):
    A = np.linspace(-2, 2, 17 * 9).reshape(17, 9)
    C = np.zeros_like(A)
    mod.ew_f64.launch_tiled(dim=grid(A.shape, (8, 8)), inputs=[A, C, 0.75])
    np.testing.assert_allclose(C, np.sqrt(A * A + 1) * 0.75 + np.exp(-A), rtol=1e-12)


def test_float16(mod):
    A = np.linspace(-3, 3, 40).astype(np.float16)
    C = np.zeros_like(A)
    mod.ew_f16.launch_tiled(dim=3, inputs=[A, C])
    want = (A.astype(np.float32) ** 2).astype(np.float16).astype(np.float32) + A.astype(np.float32)
    np.testing.assert_allclose(C.astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_int32_bit_ops(mod):
    rng = np.random.default_rng(2)
    A = rng.integers(-50, 50, 37).astype(np.int32)
    B = rng.integers(-50, 50, 37).astype(np.int32)
    C = np.zeros_like(A)
    mod.ew_i32.launch_tiled(dim=3, inputs=[A, B, C])
    np.testing.assert_array_equal(C, (A & B) | (A ^ 3) + A * B - B)


def test_3d_and_4d(mod):
    A = np.arange(5 * 3 * 4, dtype=np.float32).reshape(5, 3, 4) / 7
    C = np.zeros_like(A)
    mod.nd3.launch_tiled(dim=3, inputs=[A, C])
    np.testing.assert_allclose(C, A * A + 1, rtol=1e-6)
    A4 = np.arange(3 * 2 * 3 * 4, dtype=np.float32).reshape(3, 2, 3, 4)
    C4 = np.zeros_like(A4)
    mod.nd4.launch_tiled(dim=3, inputs=[A4, C4])
    np.testing.assert_allclose(C4, 3 * A4 - 1)


def test_strided_and_transposed_inputs(mod):
    rng = np.random.default_rng(3)
    big = rng.standard_normal((30, 40)).astype(np.float32)
    A = big[::2, ::3]  # non-contiguous view
    B = rng.standard_normal(A.shape).astype(np.float32)
    out_big = np.zeros((30, 28), np.float32)
    C = out_big[::2, ::2]  # write through a strided view
    assert not A.flags.c_contiguous and not C.flags.c_contiguous
    mod.ew_f32.launch_tiled(dim=grid(A.shape, (8, 8)), inputs=[A, B, C])
    want = softplus(A) * 2 + A * B - B / (np.abs(A) + 1) + A + 0.5 + np.maximum(A, B) - np.tanh(B) * np.sin(A)
    np.testing.assert_allclose(C, want, rtol=1e-5, atol=1e-5)
    assert np.all(out_big[1::2] == 0), "writes stayed inside the view"
    T = np.ascontiguousarray(big[:13, :11]).T  # transposed (Fortran order) input
    C2 = np.zeros(T.shape, np.float32)
    mod.ew_f32.launch_tiled(dim=grid(T.shape, (8, 8)), inputs=[T, T, C2])
    want2 = softplus(T) * 2 + T * T - T / (np.abs(T) + 1) + T + 0.5 + T - np.tanh(T) * np.sin(T)
    np.testing.assert_allclose(C2, want2, rtol=1e-5, atol=1e-5)


def test_creation_ops(mod):
    Z = np.zeros((2, 4), np.float32)
    R = np.zeros(8, np.int32)
    F = np.zeros(16, np.float64)
    mod.creation.launch_tiled(dim=1, inputs=[Z, R, F, 1.5])
    np.testing.assert_array_equal(Z, np.full((2, 4), 1.5, np.float32))
    np.testing.assert_array_equal(R, np.arange(3, 19, 2))
    np.testing.assert_array_equal(F, np.concatenate([np.arange(8.0), np.full(8, 2.5)]))
