"""The suite's CUDA-emulation tests on a real GPU (TILEC_EMU_ON_GPU=1, for a lent device; bench/gpu.sh).

Every program a test builds for the CUDA emulation through `harness.build` is built for the device
instead (nvcc, sm_90 or TILEC_GPU_ARCH), and each of its launches on device="cuda-emu" runs on
device="cuda": numpy arrays among the arguments are copied to the device (cupy) before the launch
and back into the same numpy arrays after it, so the test compares what the GPU computed. Arguments
that are not plain numpy arrays (scalars, structs, structured arrays) are passed as they are.
Tests that hold on to the arrays a launch got (a Tape's gradients, looked up by array) or patch
the built module see the copies and the wrapper instead: bench/gpu.sh leaves those two out.

TILEC_EMU_ON_GPU=dry runs the same copies with numpy standing in for the device and the emulation
for the GPU, to check this wrapper itself on a machine without one."""
from __future__ import annotations

import os

import numpy as np

MODE = os.environ.get("TILEC_EMU_ON_GPU", "")
ARCH = os.environ.get("TILEC_GPU_ARCH", "sm_90")


def _device_module():
    import cupy

    return cupy


def _to_device(value):
    """(the value the launch gets, the host array to copy back into or None)."""
    if not isinstance(value, np.ndarray) or value.dtype.fields is not None or value.dtype == object:
        return value, None
    if MODE == "dry":
        return value.copy(), value
    return _device_module().asarray(value), value


def _copy_back(pairs) -> None:
    if MODE != "dry" and pairs:
        _device_module().cuda.runtime.deviceSynchronize()
    for device_value, host in pairs:
        if host is not None and host.flags.writeable:
            host[...] = device_value if MODE == "dry" else device_value.get()


def _on_gpu(launch):
    def run(*args, **kw):
        if kw.get("device") != "cuda-emu":
            return launch(*args, **kw)
        kw["device"] = "cuda-emu" if MODE == "dry" else "cuda"
        pairs = []
        for field in ("inputs", "outputs", "adj_inputs", "adj_outputs"):
            if kw.get(field) is not None:
                moved = [_to_device(v) for v in kw[field]]
                pairs += moved
                kw[field] = [d for d, _host in moved]
        try:
            return launch(*args, **kw)
        finally:
            _copy_back(pairs)

    return run


class GpuKernel:
    """A kernel whose launches on the emulation run on the device."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.launch = _on_gpu(kernel.launch)
        self.launch_tiled = _on_gpu(kernel.launch_tiled)

    def __getattr__(self, name):
        return getattr(self._kernel, name)


class GpuModule:
    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        return GpuKernel(value) if hasattr(value, "launch_tiled") else value


def install(harness) -> None:
    """Routes harness.build's emulation builds to the device (before test modules import it)."""
    build = harness.build

    def build_for_gpu(source, name="prog", block_dim=256, target="cpu"):
        if target != "cuda-emu":
            return build(source, name, block_dim, target)
        if MODE == "dry":
            return GpuModule(build(source, name, block_dim, target))
        return GpuModule(harness.build_for_device(source, name, block_dim, ARCH))

    harness.build = build_for_gpu
