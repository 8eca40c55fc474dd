"""The generated loader: every bad argument is a clean Python exception naming it; no crash."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def scale(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), s: float, n: int, flag: bool):
    i, j = wp.tid()
    t = wp.tile_load(A, shape=(4, 4), offset=(i * 4, j * 4))
    wp.tile_store(B, t * s, offset=(i * 4, j * 4))


@wp.kernel
def simt(A: wp.array1d(dtype=wp.int64), k: wp.int8):
    i = wp.tid()
    A[i] = wp.int64(k) * wp.int64(i)
'''


@pytest.fixture(scope="module")
def mod():
    return build(SOURCE, "loader_checks")


def good():
    return [np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32), 2.0, 3, True]


class NotAnArray:
    pass


class FakeGpuArray:
    __cuda_array_interface__ = {"shape": (8, 8), "typestr": "<f4", "data": (0, False), "version": 3}


BAD = [
    # (description, mutate(args) -> args, launch kwargs, exception, message fragment)
    ("too few", lambda a: a[:4], {}, TypeError, "expects 5 inputs (A, B, s, n, flag), got 4"),
    ("too many", lambda a: a + [1], {}, TypeError, "expects 5 inputs"),
    ("wrong dtype", lambda a: [a[0].astype(np.float64)] + a[1:], {}, TypeError, "argument `A` must have dtype float32, got float64"),
    ("wrong ndim", lambda a: [a[0].reshape(64)] + a[1:], {}, ValueError, "argument `A` must have 2 dimension(s), got 1"),
    ("not an array", lambda a: [a[0], [[1.0]]] + a[2:], {}, TypeError, "argument `B` must be a numpy array of float32, got list"),
    ("object", lambda a: [NotAnArray()] + a[1:], {}, TypeError, "argument `A` must be a numpy array"),
    ("gpu array", lambda a: [FakeGpuArray()] + a[1:], {}, ValueError, "argument `A` is a GPU array but this launch runs on the cpu"),
    ("read-only", lambda a: [a[0], np.broadcast_to(np.zeros((8, 8), np.float32), (8, 8))] + a[2:], {}, ValueError, "argument `B` is read-only"),
    ("scalar type", lambda a: a[:2] + ["2.0"] + a[3:], {}, TypeError, "argument `s` must be a number (float32), got str"),
    ("int from float", lambda a: a[:3] + [3.5] + a[4:], {}, TypeError, "argument `n` must be an integer (int32), got float"),
    ("int overflow", lambda a: a[:3] + [2**31] + a[4:], {}, ValueError, "argument `n` = 2147483648 does not fit in int32"),
    ("negative overflow", lambda a: a[:3] + [-(2**31) - 1] + a[4:], {}, ValueError, "does not fit in int32"),
    ("bool from str", lambda a: a[:4] + ["yes"], {}, TypeError, "argument `flag` must be an integer (bool)"),
    ("block_dim", lambda a: a, {"block_dim": 128}, ValueError, "block_dim=128 differs from the compiled block_dim 256"),
    ("device", lambda a: a, {"device": "tpu"}, ValueError, "device='tpu' is not available in this build (built for: cpu, cuda, cuda-emu)"),
    ("host arrays on cuda", lambda a: a, {"device": "cuda"}, ValueError, "argument `A` is a host (numpy) array but this launch runs on device='cuda'"),
    ("dim type", lambda a: a, {"dim": "2"}, TypeError, "`dim` must be an int or a tuple of 1 to 4 ints"),
    ("dim negative", lambda a: a, {"dim": (-1, 2)}, ValueError, "`dim` entries must be in [0, 2147483647]"),
    ("dim too long", lambda a: a, {"dim": (1, 1, 1, 1, 1)}, TypeError, "`dim` must be an int or a tuple of 1 to 4 ints"),
    ("tid count", lambda a: a, {"dim": (2, 2, 2)}, None, None),  # a third grid dimension is fine
    ("adjoint shape", lambda a: a, {"adjoint": True, "adj_inputs": [np.zeros((4, 4), np.float32), np.zeros((8, 8), np.float32), 0.0, 0, False]}, ValueError, "adjoint of `A` has shape (4, 4) but the array has shape (8, 8)"),
    ("adjoint dtype", lambda a: a, {"adjoint": True, "adj_inputs": [np.zeros((8, 8)), np.zeros((8, 8), np.float32), 0.0, 0, False]}, TypeError, "argument `A` (adjoint) must have dtype float32"),
    ("adjoint count", lambda a: a, {"adjoint": True, "adj_inputs": [np.zeros((8, 8), np.float32)]}, TypeError, "expects 5 adj_inputs"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_arguments_raise_clean_exceptions(mod, case):
    _, mutate, kwargs, exc, fragment = case
    kwargs = dict(kwargs)
    dim = kwargs.pop("dim", (2, 2))
    if exc is None:
        mod.scale.launch_tiled(dim=dim, inputs=mutate(good()), **kwargs)
        return
    with pytest.raises(exc) as info:
        mod.scale.launch_tiled(dim=dim, inputs=mutate(good()), **kwargs)
    assert fragment in str(info.value)


def test_tiny_arrays_and_huge_grids_are_safe(mod):
    # every block reads and writes out of bounds: loads give zeros, stores are dropped, no crash
    A, B = np.ones((1, 1), np.float32), np.zeros((1, 1), np.float32)
    mod.scale.launch_tiled(dim=(50, 50), inputs=[A, B, 2.0, 0, False])
    assert B[0, 0] == 2.0
    E = np.zeros((0, 0), np.float32)
    mod.scale.launch_tiled(dim=(3, 3), inputs=[E, np.zeros((0, 0), np.float32), 1.0, 0, False])


def test_empty_launch_and_plain_kernel_checks(mod):
    A = np.zeros(10, np.int64)
    mod.simt.launch(dim=0, inputs=[A, 3])
    assert not A.any()
    mod.simt.launch(dim=10, inputs=[A, np.int8(3)])
    assert list(A) == [3 * i for i in range(10)]
    with pytest.raises(ValueError, match="argument `k` = 300 does not fit in int8"):
        mod.simt.launch(dim=10, inputs=[A, 300])
    with pytest.raises(TypeError, match="uses tile operations; call launch_tiled"):
        mod.scale.launch(dim=4, inputs=good())


def test_non_contiguous_and_negative_strides(mod):
    big = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    A = big[::-2, ::2]  # negative row stride, every other column
    B = np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 0.5, 0, False])
    np.testing.assert_array_equal(B, A * 0.5)
