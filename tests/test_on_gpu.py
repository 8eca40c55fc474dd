"""tests/on_gpu.py, the wrapper that runs the emulation's tests on a real GPU (TILEC_EMU_ON_GPU),
checked here without one: what a wrapped launch passes on and copies back, and which builds the
installed harness routes to the device."""
from __future__ import annotations

import types

import numpy as np
import pytest

import on_gpu


class RecordingKernel:
    """Stands in for a loaded kernel: records its launches and writes 7 into its second input."""

    def __init__(self):
        self.calls = []
        self.meta = {"name": "k"}

    def launch_tiled(self, dim, inputs=(), device="cpu", **kw):
        self.calls.append((dim, list(inputs), device, kw))
        inputs[1][...] = 7

    launch = launch_tiled


@pytest.fixture
def dry(monkeypatch):
    monkeypatch.setattr(on_gpu, "MODE", "dry")


def test_a_wrapped_emulation_launch_gets_copies_and_its_writes_land_in_the_callers_arrays(dry):
    kernel = RecordingKernel()
    wrapped = on_gpu.GpuKernel(kernel)
    x, y = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    record = np.zeros(2, dtype=[("a", np.float32), ("b", np.int32)])
    wrapped.launch_tiled(dim=1, inputs=[x, y, np.float32(2.5), record], device="cuda-emu", block_dim=32)
    (_dim, got, device, kw), = kernel.calls
    assert device == "cuda-emu" and kw == {"block_dim": 32}
    assert got[0] is not x and got[1] is not y and np.array_equal(got[0], x)  # the launch saw copies
    assert got[2] == np.float32(2.5) and got[3] is record  # scalars and structured arrays as they are
    assert np.array_equal(y, np.full(4, 7, np.float32))  # copied back into the caller's array
    assert wrapped.meta == {"name": "k"}  # everything else is the kernel's


def test_read_only_arrays_are_not_written_back_and_other_devices_pass_untouched(dry):
    kernel = RecordingKernel()
    wrapped = on_gpu.GpuKernel(kernel)
    x, y = np.ones(3, np.float32), np.zeros(3, np.float32)
    y.flags.writeable = False
    wrapped.launch(dim=3, inputs=[x, y], device="cuda-emu")
    assert np.array_equal(y, np.zeros(3, np.float32))
    z = np.zeros(3, np.float32)
    wrapped.launch(dim=3, inputs=[x, z], device="cpu")
    assert kernel.calls[-1][1][1] is z and kernel.calls[-1][2] == "cpu"


def test_the_installed_harness_sends_only_emulation_builds_to_the_device(monkeypatch):
    built = []
    module = types.SimpleNamespace(k=RecordingKernel(), CONSTANT=3)
    harness = types.SimpleNamespace(
        build=lambda source, name="prog", block_dim=256, target="cpu": built.append(("host", target)) or module,
        build_for_device=lambda source, name, block_dim, arch: built.append(("device", arch)) or module)
    monkeypatch.setattr(on_gpu, "MODE", "1")
    monkeypatch.setattr(on_gpu, "ARCH", "sm_90")
    on_gpu.install(harness)
    assert harness.build("src", "m", 64, "cpu") is module
    gpu = harness.build("src", "m", 64, "cuda-emu")
    assert built == [("host", "cpu"), ("device", "sm_90")]
    assert isinstance(gpu.k, on_gpu.GpuKernel) and gpu.CONSTANT == 3
