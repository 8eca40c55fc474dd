"""The Tape, the atomic_min/max adjoint's copies and the launch path on device="cuda", without a
GPU: a stand-in for the loader's CUDA driver object keeps "device" memory in host buffers and runs
each CUDA kernel through the CUDA emulation library (the same .cu, compiled for the CPU), so every
device-memory step the loader and the tape take (allocations, copies, host staging of adjoints)
runs for real. The same chain on the emulation with host arrays is the reference; finite
differences check it too (tests/test_tape.py). What needs a GPU: the real driver calls' argument
conventions and the kernels themselves on silicon (tests/test_gpu.py)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build
from test_tape import CHAIN, SHAPE, x0

pytestmark = [pytest.mark.cuda, needs_cxx]

EXTREME = '''import warp as wp


@wp.kernel
def peak(X: wp.array(dtype=wp.float64), M: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_max(M, i // 3, X[i] * X[i])
'''


class HostDriver:
    """The few cuda.bindings.driver calls the loader and the tape make, on host memory."""

    def __init__(self):
        self.blocks = {}

    def cuMemAlloc(self, n):
        buffer = ctypes.create_string_buffer(n)
        self.blocks[ctypes.addressof(buffer)] = buffer
        return (0, ctypes.addressof(buffer))

    def cuMemFree(self, pointer):
        self.blocks.pop(int(pointer))
        return (0,)

    def cuMemcpyDtoH(self, dst, src, n):
        ctypes.memmove(int(dst), int(src), n)
        return (0,)

    cuMemcpyHtoD = cuMemcpyDtoD = cuMemcpyDtoH

    def cuMemsetD8(self, pointer, value, n):
        ctypes.memset(int(pointer), value, n)
        return (0,)

    def cuCtxSynchronize(self):
        return (0,)

    def cuStreamSynchronize(self, stream):
        return (0,)


class HostCuda:
    """Stands in for the loader's _Cuda: kernels run on the CUDA emulation library."""

    def __init__(self, mod):
        self.mod, self.driver = mod, HostDriver()
        self.emulated = {}
        for meta in mod.MANIFEST["kernels"].values():
            for direction, name in meta["entries"]["cuda"].items():
                self.emulated[name] = meta["entries"]["cuda-emu"][direction]
        self.launched = []

    def check(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        assert int(err) == 0
        return rest[0] if len(rest) == 1 else (rest or None)

    def launch(self, name, shared_bytes, blocks, block_dim, args, stream):
        self.launched.append(name)
        fn = getattr(self.mod._library("cuda-emu"), self.emulated[name])
        assert fn(ctypes.byref(args[0]), None, *args[1:]) == 0

    launch_with_tape = launch  # the emulation's C API runs its own tape loop


class DeviceArray:
    """A "device" array: host memory behind __cuda_array_interface__ only (no array interface)."""

    def __init__(self, host):
        self.host = host
        self.__cuda_array_interface__ = {"typestr": host.dtype.str, "shape": host.shape,
                                         "strides": host.strides, "data": (host.ctypes.data, False), "version": 3}


def device_values(value) -> np.ndarray:
    """The elements of anything with __cuda_array_interface__ here (host memory), as numpy."""
    iface = value.__cuda_array_interface__
    dtype = np.dtype(iface["typestr"])
    buffer = (ctypes.c_char * 1).from_address(iface["data"][0])
    base = np.frombuffer((ctypes.c_char * (1 << 16)).from_address(ctypes.addressof(buffer)), np.uint8)
    strides = iface["strides"] or tuple(int(np.prod(iface["shape"][k + 1:])) * dtype.itemsize
                                        for k in range(len(iface["shape"])))
    return np.lib.stride_tricks.as_strided(base.view(dtype), iface["shape"], strides).copy()


def on_host_cuda(mod, monkeypatch):
    cuda = HostCuda(mod)
    monkeypatch.setattr(mod, "_CUDA", [cuda])
    return cuda


def forward(mod, X, H, G, device):
    mod.lift.launch_tiled(dim=SHAPE[0], inputs=[X, H], device=device)
    mod.mix.launch(dim=SHAPE, inputs=[H, X, G], device=device)
    mod.squash.launch(dim=SHAPE, inputs=[G, H], device=device)


def test_tape_on_cuda_matches_the_emulation(monkeypatch):
    mod = build(CHAIN, "tape_chain", target="cuda-emu")
    weights = np.random.default_rng(4).uniform(0.5, 1.5, SHAPE)
    X, H, G = x0(), np.zeros(SHAPE), np.zeros(SHAPE)
    with mod.Tape() as reference:
        forward(mod, X, H, G, "cuda-emu")
    reference.backward(grads=[(H, weights)])

    cuda = on_host_cuda(mod, monkeypatch)
    Xd, Hd, Gd = DeviceArray(x0()), DeviceArray(np.zeros(SHAPE)), DeviceArray(np.zeros(SHAPE))
    with mod.Tape() as tape:
        forward(mod, Xd, Hd, Gd, "cuda")
    assert len(tape.launches) == 3 and cuda.launched
    np.testing.assert_array_equal(Hd.host, H)
    tape.backward(grads=[(Hd, DeviceArray(weights.copy()))])  # a device seed
    assert "cuda_backward" in " ".join(cuda.launched)
    grad = tape.gradient(Xd)
    assert not hasattr(grad, "__array_interface__")  # device memory the tape allocated
    np.testing.assert_allclose(device_values(grad), reference.gradient(X), rtol=1e-12)
    assert not device_values(tape.gradient(Gd)).any() and not device_values(tape.gradient(Hd)).any()
    tape.zero()
    assert not device_values(tape.gradient(Xd)).any()
    tape.backward(grads=[(Hd, weights)])  # a host seed
    np.testing.assert_allclose(device_values(tape.gradient(Xd)), reference.gradient(X), rtol=1e-12)


def test_atomic_max_adjoint_on_cuda_copies_device_arrays(monkeypatch):
    mod = build(EXTREME, "peak_cuda", target="cuda-emu")
    x = np.array([0.3, -1.2, 0.5, 1.0, 0.1, -0.4, 2.0, 0.2, 0.1])
    m0 = np.array([0.2, 5.0, -1.0])
    seed = np.array([1.0, 10.0, 100.0])
    adj = [np.zeros(9), seed.copy()]
    mod.peak.launch(dim=9, inputs=[x.copy(), m0.copy()], adj_inputs=adj, adjoint=True, device="cuda-emu")
    cuda = on_host_cuda(mod, monkeypatch)
    X, M = DeviceArray(x.copy()), DeviceArray(m0.copy())
    dX, dM = DeviceArray(np.zeros(9)), DeviceArray(seed.copy())
    mod.peak.launch(dim=9, inputs=[X, M], adj_inputs=[dX, dM], adjoint=True, device="cuda")
    assert [name.rsplit("_", 1)[-1] for name in cuda.launched] == ["forward", "backward"]
    np.testing.assert_array_equal(M.host, m0)  # the forward ran on a copy
    np.testing.assert_array_equal(dX.host, adj[0])
    np.testing.assert_array_equal(dM.host, adj[1])
    assert dM.host.tolist() == [0.0, 10.0, 0.0] and not cuda.driver.blocks  # copies freed
