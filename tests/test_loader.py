"""The generated loader: every bad argument is a clean Python exception naming it; no crash."""
from __future__ import annotations

import sys

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
    ("device", lambda a: a, {"device": "tpu"}, ValueError, "device='tpu' is not available in this build (built for: cpu)"),
    ("host arrays on cuda", lambda a: a, {"device": "cuda"}, ValueError, "argument `A` is a host (numpy) array but this launch runs on device='cuda'"),
    ("dim type", lambda a: a, {"dim": "2"}, TypeError, "`dim` must be an int or a tuple of 1 to 4 ints"),
    ("dim negative", lambda a: a, {"dim": (-1, 2)}, ValueError, "`dim` entries must be in [1, 2147483647]"),
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
    with pytest.raises(ValueError, match="`dim` entries must be in \\[1, 2147483647\\], got 0"):
        mod.simt.launch(dim=0, inputs=[A, 3])  # issue #17: each extent >= 1 (Warp runs nothing)
    assert not A.any()
    mod.simt.launch(dim=10, inputs=[A, np.int8(3)])
    assert list(A) == [3 * i for i in range(10)]
    with pytest.raises(ValueError, match="argument `k` = 300 does not fit in int8"):
        mod.simt.launch(dim=10, inputs=[A, 300])
    # a partial block runs on cuda too (its missing threads as stand-ins); the arguments are checked
    with pytest.raises(ValueError, match=r"argument `A` is a host \(numpy\) array but this launch runs on "
                                         r"device='cuda'"):
        mod.scale.launch(dim=(2, 4), inputs=good(), device="cuda")


def test_non_contiguous_and_negative_strides(mod):
    big = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    A = big[::-2, ::2]  # negative row stride, every other column
    B = np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 0.5, 0, False])
    np.testing.assert_array_equal(B, A * 0.5)


class DLPackOnly:
    """A DLPack producer without the numpy or CUDA array interfaces; `device` as DLPack reports it."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, stream=None, **kw):
        return self.array.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.device


def test_dlpack_host_tensors_run_on_the_cpu_without_copies(mod):
    A = np.arange(64, dtype=np.float32).reshape(8, 8)
    B = np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[DLPackOnly(A[:, ::-1]), DLPackOnly(B), 2.0, 0, False])
    np.testing.assert_array_equal(B, A[:, ::-1] * 2.0)  # written through the producer's memory


def test_dlpack_cuda_tensors_become_device_array_descriptors(mod):
    """What a torch/cupy CUDA tensor without __cuda_array_interface__ gives the loader: the DLTensor's
    pointer, shape and (element) strides, as tilec_array fields in bytes."""
    import importlib

    loader = importlib.import_module(type(mod.scale).__module__)
    base = np.zeros((6, 10), np.float32)
    view = base[1:, 2::3]  # a byte offset and non-unit strides
    param = {"name": "A", "kind": "array", "dtype": "float32", "ndim": 2}
    desc, keep = loader._gpu_array("k: argument `A`", param, DLPackOnly(view, device=(2, 0)))
    assert desc.data == view.__array_interface__["data"][0]
    assert list(desc.shape[:2]) == [5, 3] and list(desc.strides[:2]) == [40, 12]
    assert keep[0].array is view  # the producer and its capsule stay alive for the launch
    with pytest.raises(TypeError, match=r"argument `A` must have dtype float32, got typestr <f8"):
        loader._gpu_array("k: argument `A`", param, DLPackOnly(np.zeros((2, 2)), device=(2, 0)))
    with pytest.raises(ValueError, match=r"argument `A` must have 2 dimension\(s\), got 1"):
        loader._gpu_array("k: argument `A`", param, DLPackOnly(np.zeros(4, np.float32), device=(2, 0)))
    with pytest.raises(TypeError, match=r"argument `A` is on DLPack device type 4, not a CUDA device"):
        loader._gpu_array("k: argument `A`", param, DLPackOnly(view, device=(4, 0)))
    with pytest.raises(ValueError, match=r"argument `A` is on cuda:1 but tilec launches on cuda:0"):
        loader._gpu_array("k: argument `A`", param, DLPackOnly(view, device=(2, 1)))


@pytest.mark.parametrize("data,strides,message", [
    (2, None, "argument `A` is not aligned to its element size"),
    (64, (40, 6), r"argument `A` has strides \(40, 6\) that are not multiples of its element size"),
])
def test_misaligned_device_arrays_are_refused(mod, data, strides, message):
    import importlib

    loader = importlib.import_module(type(mod.scale).__module__)
    value = FakeGpuArray()
    value.__cuda_array_interface__ = {"shape": (8, 8), "typestr": "<f4", "data": (data, False), "version": 3,
                                      "strides": strides}
    param = {"name": "A", "kind": "array", "dtype": "float32", "ndim": 2}
    with pytest.raises(ValueError, match=message):
        loader._gpu_array("k: argument `A`", param, value)


class BrokenDLPack(DLPackOnly):
    def __dlpack__(self, stream=None, **kw):
        raise RuntimeError("Can't export tensors that require grad")


def test_dlpack_wrong_device_is_a_clean_error(mod):
    args = good()
    for device, where in ((1, "cpu"), (2, "cuda")):
        with pytest.raises(TypeError, match=r"argument `B` could not be exported through DLPack: Can't export"):
            first = args[0] if where == "cpu" else DLPackOnly(args[0], (2, 0))
            mod.scale.launch_tiled(dim=(2, 2), inputs=[first, BrokenDLPack(args[1], (device, 0))] + args[2:],
                                   device=where)
    with pytest.raises(ValueError, match=r"argument `A` is a host array \(DLPack device CPU\) but this launch runs "
                                         r"on device='cuda'"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[DLPackOnly(args[0])] + args[1:], device="cuda")
    with pytest.raises(ValueError, match=r"argument `A` is a device array \(DLPack\) but this launch runs on the cpu"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[DLPackOnly(args[0], device=(2, 0))] + args[1:])


def test_a_relaunch_with_changed_arguments_checks_them_again(mod):
    """The loader reuses the last launch's converted arguments only for the same arrays with the same
    shape, strides, dtype, writeability and memory, and the same numbers (Kernel._run)."""
    A, B = np.arange(64, dtype=np.float32).reshape(8, 8), np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 2.0, 3, True])
    np.testing.assert_array_equal(B, 2 * A)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 3.0, 3, True])  # a new scale
    np.testing.assert_array_equal(B, 3 * A)
    B.flags.writeable = False
    with pytest.raises(ValueError, match="argument `B` is read-only"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 3.0, 3, True])
    B.flags.writeable = True
    B.shape = (64,)
    with pytest.raises(ValueError, match="argument `B` must have 2 dimension"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 3.0, 3, True])
    B.shape = (8, 8)
    with pytest.raises(ValueError, match="arguments `A` and `B` overlap"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[A, A, 3.0, 3, True])
    with pytest.raises(TypeError, match="argument `s` must be a number"):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, "3", 3, True])
    C = np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, C, 0.5, 3, True])
    np.testing.assert_array_equal(C, 0.5 * A)
    np.testing.assert_array_equal(B, 3 * A)
    B.resize((16, 8), refcheck=False)  # new memory: the descriptor must follow it
    mod.scale.launch_tiled(dim=(4, 2), inputs=[A, B, 1.0, 3, True])
    np.testing.assert_array_equal(B[:8], A)
    np.testing.assert_array_equal(B[8:], 0)
    del C
    D = np.zeros((8, 8), np.float32)  # may reuse C's id: a new object all the same
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, D, 0.5, 3, True])
    np.testing.assert_array_equal(D, 0.5 * A)


def test_the_data_address_a_relaunch_compares_is_the_arrays_own(mod):
    """_data_address (the loader's launch key) reads a writeable contiguous array's address through
    its buffer and every other array's from __array_interface__: both agree with numpy's."""
    loader = sys.modules[type(mod.scale).__module__]
    base = np.arange(96, dtype=np.float32).reshape(8, 12)
    frozen = base.copy()
    frozen.flags.writeable = False
    for a in (base, base[2:, 3:], base[:, ::2], base[::-1], np.asfortranarray(base), frozen,
              np.zeros((0, 4), np.float32), base[3:4, 5:6], np.zeros(3, [("x", np.float32), ("n", np.int32)])):
        assert loader._data_address(a) == a.__array_interface__["data"][0]


def test_an_adjoint_relaunch_with_changed_adjoint_arrays_checks_them_again(mod):
    """The adjoint arrays' conversions are reused only for the same adjoint arrays, unchanged, of
    the same arrays (Kernel._adjoint_args): a changed shape, writeability or array is checked and
    converted again, and the gradient goes where the launch says."""
    A, B = np.arange(64, dtype=np.float32).reshape(8, 8), np.zeros((8, 8), np.float32)

    def adjoint(dA, dB, s=2.0):
        mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, s, 3, True], adj_inputs=[dA, dB, 0.0, 0, False],
                               adjoint=True)

    dA, dB = np.zeros((8, 8), np.float32), np.ones((8, 8), np.float32)
    adjoint(dA, dB)
    np.testing.assert_array_equal(dA, 2.0)
    dB[:] = 1
    adjoint(dA, dB, 3.0)  # a new scale: the arrays' key changes, the adjoint arrays are the same
    np.testing.assert_array_equal(dA, 5.0)
    dA.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument `A` \(adjoint\) is read-only"):
        adjoint(dA, dB)
    dA.flags.writeable = True
    dA.shape = (64,)
    with pytest.raises(ValueError, match="adjoint of `A` has shape"):
        adjoint(dA, dB)
    dA.shape = (8, 8)
    other = np.zeros((8, 8), np.float32)
    dB[:] = 1
    adjoint(other, dB)  # another adjoint array: the gradient goes there, not into dA
    np.testing.assert_array_equal(other, 2.0)
    np.testing.assert_array_equal(dA, 5.0)
    dB[:] = 1
    adjoint(None, dB)  # no gradient asked for A
    np.testing.assert_array_equal(other, 2.0)
    dB[:] = 1
    adjoint(other, dB)
    np.testing.assert_array_equal(other, 4.0)


def test_a_relaunch_over_another_grid_or_thread_count_runs_that_grid(mod):
    """The launch descriptor kept from the last launch (Kernel._launch_desc) serves only a launch of
    the same grid, lane mapping, block_dim and thread count."""
    A, B = np.ones((8, 8), np.float32), np.zeros((8, 8), np.float32)
    mod.scale.launch_tiled(dim=(1, 1), inputs=[A, B, 2.0, 3, True])
    assert B[:4, :4].tolist() == np.full((4, 4), 2.0).tolist() and not B[4:].any() and not B[:, 4:].any()
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 3.0, 3, True])
    np.testing.assert_array_equal(B, 3.0)
    mod.scale.launch_tiled(dim=(2, 2), inputs=[A, B, 4.0, 3, True], num_threads=2)
    np.testing.assert_array_equal(B, 4.0)
    mod.scale.launch_tiled(dim=(2, 1), inputs=[A, B, 5.0, 3, True], num_threads=2)
    np.testing.assert_array_equal(B[:, :4], 5.0)
    np.testing.assert_array_equal(B[:, 4:], 4.0)
