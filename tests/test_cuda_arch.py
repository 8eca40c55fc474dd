"""A launch on a GPU the fatbin does not cover is a clear Python error naming what was built and
what the GPU is (not a CUDA driver error code). The decision is a pure function of the device's
compute capability and the manifest's `cuda_build` (SASS archs and PTX), tested here without a GPU;
the loader's CUDA start-up calls it before loading the fatbin, tested with a stand-in driver."""
from __future__ import annotations

import shutil
import sys
import types

import pytest

from conftest import needs_cxx
from harness import build
from tilec.api import load

SOURCE = '''import warp as wp


@wp.kernel
def double(X: wp.array(dtype=float), Y: wp.array(dtype=float)):
    i = wp.tid()
    Y[i] = X[i] * 2.0
'''

BUILT = {"archs": ["sm_80", "sm_90"], "ptx": "compute_90"}


@pytest.fixture(scope="module")
def loader():
    return build(SOURCE, "archcheck")


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("capability, cuda_build, runs", [
    ((8, 0), BUILT, True),  # SASS for the GPU itself
    ((8, 6), BUILT, True),  # sm_80 SASS runs on a newer minor of major 8
    ((8, 9), {"archs": ["sm_80"], "ptx": "compute_80"}, True),
    ((10, 0), BUILT, True),  # newer than all: the PTX for compute_90 is JIT-compiled
    ((12, 0), {"archs": ["sm_80"], "ptx": "compute_80"}, True),
    ((7, 5), BUILT, False),  # older than every arch: neither SASS nor PTX runs
    ((10, 0), {"archs": ["sm_80", "sm_90"], "ptx": None}, False),  # no PTX, no SASS of major 10
    ((8, 6), {"archs": ["sm_90"], "ptx": "compute_90"}, False),
    ((9, 0), {"archs": ["sm_90a"], "ptx": "compute_90a"}, True),  # arch-specific: that GPU only
    ((10, 0), {"archs": ["sm_90a"], "ptx": "compute_90a"}, False),
    ((10, 3), {"archs": ["sm_100"], "ptx": None}, True),
    ((12, 0), {"archs": ["sm_100"], "ptx": None}, False),
    ((7, 0), {"archs": [], "ptx": None}, True),  # nvcc's default archs: unknown, not refused
    ((7, 0), None, True),  # no CUDA build recorded
])
def test_which_gpus_a_fatbin_runs_on(loader, capability, cuda_build, runs):
    problem = loader.cuda_arch_problem(capability, cuda_build)
    assert (problem is None) == runs, problem
    if not runs:
        major, minor = capability
        assert f"sm_{major}{minor}" in problem and f"{major}.{minor}" in problem
        for arch in cuda_build["archs"]:
            assert arch in problem
        assert (cuda_build["ptx"] or "no PTX") in problem


def _fake_driver(capability, loaded):
    """A stand-in for cuda.bindings.driver: one GPU of `capability`; loading a module records it."""
    driver = types.ModuleType("cuda.bindings.driver")
    driver.CUdevice_attribute = types.SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR="major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR="minor",
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN="shared")
    values = {"major": capability[0], "minor": capability[1], "shared": 99 * 1024}
    driver.cuInit = lambda flags: (0,)
    driver.cuDeviceGet = lambda ordinal: (0, 0)
    driver.cuDeviceGetAttribute = lambda attribute, device: (0, values[attribute])
    driver.cuDevicePrimaryCtxRetain = lambda device: (0, 1)
    driver.cuCtxSetCurrent = lambda context: (0,)

    def load_data(image):
        loaded.append(image)
        raise _Loaded()

    driver.cuModuleLoadData = load_data
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    cuda = types.ModuleType("cuda")
    cuda.bindings = bindings
    return {"cuda": cuda, "cuda.bindings": bindings, "cuda.bindings.driver": driver}


class _Loaded(Exception):
    """The fatbin was handed to the driver: the architecture check let the launch through."""


class _DeviceArray:
    def __init__(self, n, address):
        self.__cuda_array_interface__ = {"typestr": "<f4", "shape": (n,), "strides": None, "data": (address, False),
                                         "version": 3}


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("capability", [(7, 5), (9, 0)])
def test_the_loader_checks_the_gpu_before_loading_the_fatbin(loader, tmp_path, monkeypatch, capability):
    folder = tmp_path / "archcheck"
    shutil.copytree(loader.__file__.rsplit("/", 1)[0], folder)
    (folder / "archcheck.fatbin").write_bytes(b"not a real fatbin")
    for name, module in _fake_driver(capability, loaded := []).items():
        monkeypatch.setitem(sys.modules, name, module)
    mod = load(folder)
    mod.MANIFEST["cuda_build"] = dict(BUILT, nvcc="release 13.0")
    args = [_DeviceArray(8, 1 << 20), _DeviceArray(8, 2 << 20)]
    if capability == (7, 5):
        with pytest.raises(RuntimeError) as info:
            mod.double.launch(dim=8, inputs=args, device="cuda")
        message = str(info.value)
        assert "sm_75" in message and "sm_80, sm_90" in message and "compute_90" in message
        assert "--arch sm_75" in message and not loaded
    else:
        with pytest.raises(_Loaded):
            mod.double.launch(dim=8, inputs=args, device="cuda")
        assert loaded == [b"not a real fatbin"]
