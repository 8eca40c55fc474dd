"""The loader's device='cuda' path without a GPU: cuda-python's driver module is replaced by a
recording stand-in with the same call signatures, so what the loader hands the driver can be
checked: the fatbin, the kernel's parameter block (launch description, array descriptors,
scalars, the tape), the dynamic shared memory attribute, and the relaunch loop of adjoints that
save values, including freeing every allocation. (tests/test_gpu.py runs the real thing.)"""
from __future__ import annotations

import ctypes
import shutil
import sys
import types

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.cuda, needs_cxx]

SOURCE = '''
import warp as wp


@wp.kernel
def loop(A: wp.array2d(dtype=wp.float64), N: wp.array1d(dtype=int), C: wp.array2d(dtype=wp.float64), s: wp.float64):
    i = wp.tid()
    a = wp.tile_load(A, shape=(4, 4), offset=(i * 4, 0))
    n = N[i]
    k = 0
    while k < n:
        a = wp.tile_map(wp.sin, a) * s
        k += 1
    wp.tile_store(C, a, offset=(i * 4, 0))
'''


class DeviceArray:
    """A stand-in for a torch/cupy CUDA tensor: host memory behind __cuda_array_interface__."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = {"shape": array.shape, "typestr": array.dtype.str, "version": 3,
                                         "data": (array.ctypes.data, False), "strides": array.strides}


class FakeDriver(types.ModuleType):
    """cuda.bindings.driver as the loader uses it; `need` is what the kernel's blocks report."""

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76

    max_shared = 227 * 1024

    def cuDeviceGetAttribute(self, attribute, device):
        assert attribute in (97, 75, 76) and device == 0
        return (0, {97: self.max_shared, 75: 9, 76: 0}[attribute])  # an sm_90 GPU

    def __init__(self, need):
        super().__init__("cuda.bindings.driver")
        self.need, self.memory, self.launches, self.attributes, self.image = need, {}, [], [], None

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGet(self, ordinal):
        return (0, ordinal)

    def cuDevicePrimaryCtxRetain(self, device):
        return (0, "context")

    def cuCtxSetCurrent(self, context):
        return (0,)

    def cuModuleLoadData(self, image):
        self.image = image
        return (0, "module")

    def cuModuleGetFunction(self, module, name):
        return (0, name.decode())

    def cuFuncSetAttribute(self, fn, attribute, value):
        self.attributes.append((fn, attribute, value))
        return (0,)

    def cuMemAlloc(self, size):
        buffer = ctypes.create_string_buffer(size)
        self.memory[ctypes.addressof(buffer)] = buffer
        return (0, ctypes.addressof(buffer))

    def cuMemFree(self, pointer):
        del self.memory[int(pointer)]
        return (0,)

    def cuMemsetD8(self, pointer, value, count):
        ctypes.memset(int(pointer), value, count)
        return (0,)

    def cuStreamSynchronize(self, stream):
        return (0,)

    def cuMemcpyDtoH(self, host, device, count):
        ctypes.memmove(host, int(device), count)
        return (0,)

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        kinds = FORWARD_PARAMS + (FORWARD_PARAMS[1:] + [TapeDesc] if fn.endswith("_backward") else [])
        pointers = (ctypes.c_void_p * len(kinds)).from_address(params)
        # copies: the parameter block lives only as long as the call
        values = [kind.from_buffer_copy(ctypes.string_at(p, ctypes.sizeof(kind))) for kind, p in zip(kinds, pointers)]
        self.launches.append({"fn": fn, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "params": values})
        if fn.endswith("_backward"):
            needs = (ctypes.c_uint64 * 2).from_address(values[-1].need)
            needs[0], needs[1] = self.need  # every block reports the same need here
        return (0,)


class TapeDesc(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("block_bytes", ctypes.c_int64), ("thread_bytes", ctypes.c_int64),
                ("done", ctypes.c_void_p), ("need", ctypes.c_void_p)]


class ArrayDesc(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4)]


class LaunchDesc(ctypes.Structure):
    _fields_ = [("dim", ctypes.c_int64 * 4), ("ndim", ctypes.c_int32), ("lane_tid", ctypes.c_int32),
                ("block_dim", ctypes.c_int32), ("num_threads", ctypes.c_int32)]


# loop(A, N, C, s): the launch description, then the kernel's parameters
FORWARD_PARAMS = [LaunchDesc, ArrayDesc, ArrayDesc, ArrayDesc, ctypes.c_double]


@pytest.fixture
def cuda_module(tmp_path, monkeypatch):
    """A freshly loaded copy of a built module, with a fatbin file and the fake driver installed."""
    import tilec

    built = build(SOURCE, "loader_cuda", block_dim=32, target="cuda-emu")
    from pathlib import Path

    folder = tmp_path / "loader_cuda"
    shutil.copytree(Path(built.__file__).parent, folder)
    (folder / "loader_cuda.fatbin").write_bytes(b"fatbin bytes")

    def install(need=(0, 0)):
        driver = FakeDriver(need)
        bindings = types.ModuleType("cuda.bindings")
        bindings.driver = driver
        cuda = types.ModuleType("cuda")
        cuda.bindings = bindings
        for name, module in (("cuda", cuda), ("cuda.bindings", bindings), ("cuda.bindings.driver", driver)):
            monkeypatch.setitem(sys.modules, name, module)
        return tilec.load(folder), driver

    return install


def args():
    A = DeviceArray(np.arange(32, dtype=np.float64).reshape(8, 4))
    N = DeviceArray(np.array([1, 3], np.int32))
    C = DeviceArray(np.zeros((8, 4)))
    return A, N, C


def test_forward_launch_hands_the_driver_the_kernel_parameters(cuda_module):
    module, driver = cuda_module()
    A, N, C = args()
    module.loop.launch_tiled(dim=(2,), inputs=[A, N, C, 0.5], device="cuda")
    assert driver.image == b"fatbin bytes"
    (launch,) = driver.launches
    assert launch["fn"] == "loader_cuda_loop_cuda_forward" and launch["grid"] == (2, 1, 1) and launch["block"] == (32, 1, 1)
    grid, desc, _, _, scale = launch["params"]
    assert grid.ndim == 1 and grid.dim[0] == 2 and grid.block_dim == 32
    assert desc.data == A.array.ctypes.data and list(desc.shape[:2]) == [8, 4] and list(desc.strides[:2]) == [32, 8]
    assert scale.value == 0.5


@pytest.mark.parametrize("need,launches", [((0, 0), 1), ((100, 16), 1), ((5000, 200), 2)])
def test_adjoint_relaunches_until_its_tape_fits_and_frees_everything(cuda_module, need, launches):
    module, driver = cuda_module(need)
    A, N, C = args()
    adj = [DeviceArray(np.zeros((8, 4))), None, DeviceArray(np.ones((8, 4))), 0.0]
    module.loop.launch_tiled(dim=(2,), inputs=[A, N, C, 0.5], adj_inputs=adj, adjoint=True, device="cuda")
    assert [x["fn"] for x in driver.launches] == ["loader_cuda_loop_cuda_backward"] * launches
    last = driver.launches[-1]["params"][-1]
    assert last.block_bytes >= need[0] and last.thread_bytes >= need[1]
    assert last.block_bytes % 16 == 0 and last.thread_bytes % 16 == 0
    assert driver.memory == {}  # the tape, the done flags and the need counters are freed


def test_a_tape_that_never_fits_is_an_error_not_a_hang(cuda_module, monkeypatch):
    module, driver = cuda_module((5000, 0))
    original = driver.cuLaunchKernel

    def growing(*a):
        driver.need = (driver.need[0] * 2, 0)  # a replay that is not deterministic
        return original(*a)

    monkeypatch.setattr(driver, "cuLaunchKernel", growing)
    A, N, C = args()
    with pytest.raises(RuntimeError, match="loop_cuda_backward: the adjoint's tape did not fit after relaunching"):
        module.loop.launch_tiled(dim=(2,), inputs=[A, N, C, 0.5], adj_inputs=[None, None, None, 0.0], adjoint=True,
                                 device="cuda")
    assert driver.memory == {}


def test_shared_memory_beyond_the_device_is_a_clean_error(cuda_module):
    module, driver = cuda_module()
    need = module.loop.meta["cuda_shared_bytes"]["backward"]  # the saved tile's replay copies
    assert need > 0
    driver.max_shared = need - 1
    A, N, C = args()
    with pytest.raises(ValueError, match=rf"loop_cuda_backward needs {need} bytes of shared memory per block; this "
                                         rf"GPU allows {need - 1} \(use smaller tiles\)"):
        module.loop.launch_tiled(dim=(2,), inputs=[A, N, C, 0.5], adj_inputs=[None, None, None, 0.0], adjoint=True,
                                 device="cuda")
    assert driver.launches == [] and driver.memory == {}
