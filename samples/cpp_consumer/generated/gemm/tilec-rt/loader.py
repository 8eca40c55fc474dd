"""The launch machinery of a tilec module (tilec 0.1.0): one file, the same for every module
tilec generates, vendored into each output folder as tilec-rt/loader.py. A module's __init__.py
executes this file in its own namespace, so every module keeps its own libraries and device
state; the kernel table, the module's name and its source file are the folder's manifest.json.

Imports only the standard library and numpy (and cuda-python for device="cuda"). Mirrors
Warp's launch API:

    import <module>
    <module>.<kernel>.launch_tiled(dim=(8, 8), inputs=[A, B, C], device="cpu")
    <module>.<kernel>.launch_tiled(dim=(8, 8), inputs=[A, B, C], adj_inputs=[dA, dB, dC],
                                   adjoint=True, device="cpu")
    <module>.<kernel>.launch(dim=n, inputs=[...])          # plain (SIMT) kernels

Every argument is checked before native code runs; bad input raises TypeError or
ValueError naming the argument. Arrays: numpy, Warp's CPU arrays (through the array
interface, no copy), host DLPack tensors; on device="cuda" anything with
__cuda_array_interface__ or DLPack. `Tape` (in tilec-rt/tape.py) records launches and replays
their adjoints; `<kernel>.torch_function` (in tilec-rt/torch_function.py) wraps a kernel for PyTorch.
"""
import ctypes
import json
import os
import sys as _sys
import types as _types
import weakref

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))


def _sibling(name):
    """A helper module of the vendored runtime (tilec-rt/<name>.py), loaded once per module
    however this loader was imported (as a package, by tilec.load, or by path)."""
    import importlib.util
    import sys

    full = f"{__name__}._tilec_{name}"
    if full not in sys.modules:
        spec = importlib.util.spec_from_file_location(full, os.path.join(_HERE, "tilec-rt", f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
    return sys.modules[full]


_tilec_tape = _sibling("tape")
Tape = _tilec_tape.Tape
_spatial = _sibling("spatial")
HashGrid, Mesh, Bvh = _spatial.HashGrid, _spatial.Mesh, _spatial.Bvh  # Warp's wp.HashGrid, wp.Mesh and wp.Bvh, on the CPU
Volume = _spatial.Volume  # Warp's wp.Volume (float32, vec3f and int32 voxels), on the CPU
# Warp's wp.Texture1D / 2D / 3D (CPU) and their enums
Texture1D, Texture2D, Texture3D = _spatial.Texture1D, _spatial.Texture2D, _spatial.Texture3D
TextureFilterMode, TextureAddressMode = _spatial.TextureFilterMode, _spatial.TextureAddressMode

with open(os.path.join(_HERE, "manifest.json"), encoding="utf-8") as _f:
    MANIFEST = json.load(_f)
_MODULE, _SOURCE = MANIFEST["module"], MANIFEST["source"]  # the module's name and the user's file (label)
_structs = _sibling("structs")  # @wp.struct classes and how struct arguments become leaves
_structs.make_classes(MANIFEST.get("structs", {}))

# bfloat16 arrays are their raw bits in numpy (uint16), as Warp's .numpy() returns them.
_DTYPES = {
    "bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
    "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "float16": np.float16, "bfloat16": np.uint16, "float32": np.float32, "float64": np.float64,
    "texture1d": np.uint64, "texture2d": np.uint64, "texture3d": np.uint64,  # a texture's id (spatial.py)
}
_CTYPES = {
    "bool": ctypes.c_int32, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64, "float16": ctypes.c_float, "bfloat16": ctypes.c_float,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
    "texture1d": ctypes.c_uint64, "texture2d": ctypes.c_uint64, "texture3d": ctypes.c_uint64,
}
_INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "uint8": (0, 2**8 - 1), "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1),
    "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1),
    "uint64": (0, 2**64 - 1),
}
_MAX_GRID = 2**31 - 1
_GLOBAL_TID = 2  # _Launch.lane_tid: wp.tid() is the global thread index (launch() of a tile kernel)
_ROWS_TID = 3  # _Launch.lane_tid: the same, with dim counting threads and blocks spanning its rows
_MAX_POINTS = 2**52  # grid points of one launch (block_dim lanes each): far from any int64 overflow


class _Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("shape", ctypes.c_int64 * 4), ("strides", ctypes.c_int64 * 4)]


class _Launch(ctypes.Structure):
    _fields_ = [("dim", ctypes.c_int64 * 4), ("ndim", ctypes.c_int32), ("lane_tid", ctypes.c_int32),
                ("block_dim", ctypes.c_int32), ("num_threads", ctypes.c_int32)]


_LIBS = {}
_HOST_LIBRARIES = {"cpu": (f"lib{_MODULE}_cpu.so", "cpu"), "cuda-emu": (f"lib{_MODULE}_cuda_emu.so", "cuda-emu")}
_PRODUCTS = {"cpu": f"lib{_MODULE}_cpu.so", "cuda": f"{_MODULE}.fatbin", "cuda-emu": f"lib{_MODULE}_cuda_emu.so"}


def built_for():
    """The devices this folder holds a compiled library for (a folder of sources only: none)."""
    return [d for d, name in sorted(_PRODUCTS.items()) if os.path.exists(os.path.join(_HERE, name))]


def _built_list():
    return ", ".join(built_for()) or "nothing: the folder holds sources only"


def _library(device):
    if device not in _LIBS:
        name, target = _HOST_LIBRARIES[device]
        path = os.path.join(_HERE, name)
        if not os.path.exists(path):
            raise RuntimeError(f"{path} is missing (built for: {_built_list()}): run "
                               f"`tilec build {_SOURCE} --target {target}`")
        if device == "cpu":
            _check_cpu(MANIFEST.get("cpu_build"), path)
        _LIBS[device] = ctypes.CDLL(path)
    return _LIBS[device]


def _cpu_flags():
    """This CPU's feature flags as Linux lists them (None where they cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return set(value.split())
    except OSError:
        pass
    return None


def _check_cpu(build, path):
    """Refuse a CPU library built for features this CPU lacks (it would die of SIGILL)."""
    import platform

    if not build:
        return
    machine = platform.machine().lower()
    if build.get("machine") and build["machine"] != machine:
        raise RuntimeError(f"{path} was built for {build['machine']} CPUs; this one is {machine}: "
                           f"rebuild with `tilec build {_SOURCE} --target cpu` on this machine")
    have = _cpu_flags()
    missing = sorted(set(build.get("cpu_features", ())) - have) if have is not None else []
    if missing:
        raise RuntimeError(f"{path} was built for {build.get('isa')} and needs CPU features this CPU lacks: "
                           f"{', '.join(missing)}; rebuild it on this machine with `tilec build {_SOURCE} "
                           "--target cpu` (without --native, the portable baseline)")


def _arch_parts(name, prefix):
    """("sm_86", "sm_") -> (8, 6, ""); ("compute_90a", "compute_") -> (9, 0, "a"); None if not one."""
    import re

    m = re.fullmatch(re.escape(prefix) + r"(\d+)(\d)([af]?)", name or "")
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def _runs_on(arch, capability, binary):
    """Whether code for arch (major, minor, suffix) runs on a GPU of capability (major, minor): SASS
    on the same major version at an equal or newer minor, PTX (JIT-compiled) on any equal or newer
    GPU; arch-specific code ("a") only on exactly its GPU, family code ("f") within its major."""
    major, minor, suffix = arch
    if suffix == "a":
        return capability == (major, minor)
    if binary or suffix == "f":
        return capability[0] == major and capability[1] >= minor
    return capability >= (major, minor)


def cuda_arch_problem(capability, cuda_build):
    """Why the fatbin described by the manifest's `cuda_build` ({"archs": [sm_XY...], "ptx":
    compute_XY}) cannot run on a GPU of compute capability (major, minor), or None when it can (or
    when the build recorded no architectures: nvcc's default, unknown here)."""
    archs = list((cuda_build or {}).get("archs") or ())
    ptx = (cuda_build or {}).get("ptx")
    if not archs and not ptx:
        return None
    major, minor = capability
    sass = [_arch_parts(a, "sm_") for a in archs]
    if any(a is not None and _runs_on(a, (major, minor), True) for a in sass):
        return None
    virtual = _arch_parts(ptx, "compute_")
    if virtual is not None and _runs_on(virtual, (major, minor), False):
        return None
    built = "SASS for " + (", ".join(archs) or "no architecture") + (f" and PTX {ptx}" if ptx else ", no PTX")
    return (f"this GPU is sm_{major}{minor} (compute capability {major}.{minor}) but the fatbin holds {built}, "
            "none of which runs on it")


class _Cuda:
    """The fatbin on the current CUDA device, through cuda-python's driver API."""

    def __init__(self):
        try:
            from cuda.bindings import driver
        except ImportError as e:
            raise RuntimeError("device='cuda' needs cuda-python (pip install cuda-python)") from e
        self.driver = driver
        path = os.path.join(_HERE, f"{_MODULE}.fatbin")
        if not os.path.exists(path):
            raise RuntimeError(f"{path} is missing (built for: {_built_list()}): run "
                               f"`tilec build {_SOURCE} --target cuda`")
        self.check(driver.cuInit(0))
        device = self.device = self.check(driver.cuDeviceGet(0))
        attribute = driver.CUdevice_attribute
        capability = tuple(int(self.check(driver.cuDeviceGetAttribute(getattr(attribute, which), device)))
                           for which in ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
                                         "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"))
        problem = cuda_arch_problem(capability, MANIFEST.get("cuda_build"))
        if problem:
            raise RuntimeError(f"{path}: {problem}; rebuild with `tilec build {_SOURCE} --target cuda "
                               f"--arch sm_{capability[0]}{capability[1]}` (or add it to the --arch list)")
        optin = driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        self.max_shared = int(self.check(driver.cuDeviceGetAttribute(optin, device)))
        self.context = self.check(driver.cuDevicePrimaryCtxRetain(device))
        self.check(driver.cuCtxSetCurrent(self.context))
        with open(path, "rb") as f:
            self.image = f.read()
        self.module = self.check(driver.cuModuleLoadData(self.image))
        self.functions = {}

    def check(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            raise RuntimeError(f"CUDA driver error {err}")
        return rest[0] if len(rest) == 1 else (rest or None)

    def function(self, name, shared_bytes):
        if shared_bytes > self.max_shared:
            raise ValueError(f"{name} needs {shared_bytes} bytes of shared memory per block; this GPU allows "
                             f"{self.max_shared} (use smaller tiles)")
        if name not in self.functions:
            fn = self.check(self.driver.cuModuleGetFunction(self.module, name.encode()))
            if shared_bytes > 48 * 1024:
                attr = self.driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                self.check(self.driver.cuFuncSetAttribute(fn, attr, shared_bytes))
            self.functions[name] = fn
        return self.functions[name]

    def launch(self, name, shared_bytes, blocks, block_dim, args, stream):
        fn = self.function(name, shared_bytes)
        pointers = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.check(self.driver.cuLaunchKernel(fn, blocks, 1, 1, block_dim, 1, 1, shared_bytes, stream or 0,
                                              ctypes.addressof(pointers), 0))


    def launch_with_tape(self, name, shared_bytes, blocks, block_dim, args, stream, scratch=None):
        """An adjoint that saves values: launched until its tape fits, as the C API's launch does
        (device_tape.h): blocks that overflow report their need and are rerun, finished ones skip.
        With global scratch (a _ScratchDesc) its resident blocks loop over the grid."""
        d = self.driver
        done = self.check(d.cuMemAlloc(4 * blocks))
        need = self.check(d.cuMemAlloc(16))
        try:
            self.check(d.cuMemsetD8(done, 0, 4 * blocks))
            block_bytes, thread_bytes = 256, 32
            for _ in range(3):
                tape = _TapeDesc()
                tape.block_bytes, tape.thread_bytes = -(-block_bytes // 16) * 16, -(-thread_bytes // 16) * 16
                base = self.check(d.cuMemAlloc(max(1, blocks * (tape.block_bytes + block_dim * tape.thread_bytes))))
                try:
                    tape.base, tape.done, tape.need = int(base), int(done), int(need)
                    self.check(d.cuMemsetD8(need, 0, 16))
                    self.launch(name, shared_bytes, scratch.slots if scratch else blocks, block_dim,
                                args + [tape] + ([scratch] if scratch else []), stream)
                    got = (ctypes.c_uint64 * 2)()
                    self.check(d.cuStreamSynchronize(stream or 0))
                    self.check(d.cuMemcpyDtoH(ctypes.addressof(got), need, 16))
                finally:
                    self.check(d.cuMemFree(base))
                if got[0] <= tape.block_bytes and got[1] <= tape.thread_bytes:
                    return
                block_bytes, thread_bytes = max(block_bytes, got[0]), max(thread_bytes, got[1])
            raise RuntimeError(f"{name}: the adjoint's tape did not fit after relaunching")
        finally:
            self.check(d.cuMemFree(done))
            self.check(d.cuMemFree(need))


    def open_scratch(self, name, shared_bytes, blocks, block_dim, block_bytes, stream):
        """The global scratch of one launch (runtime global_scratch.h): a slice of `block_bytes` per
        resident block (occupancy x multiprocessors, at most `blocks`, at most what half the free
        memory holds), allocated on the stream; MemoryError when the device has no room for one."""
        d = self.driver
        fn = self.function(name, shared_bytes)
        sms = self.check(d.cuDeviceGetAttribute(
            d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self.device))
        per_sm = self.check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, block_dim, shared_bytes))
        free, _total = self.check(d.cuMemGetInfo())
        desc = _ScratchDesc()
        desc.block_bytes, desc.blocks = block_bytes, blocks
        desc.slots = max(1, min(blocks, max(1, int(sms)) * max(1, int(per_sm)), int(free) // 2 // block_bytes))
        err, base = d.cuMemAllocAsync(desc.slots * block_bytes, stream or 0)
        if int(err) == 2:  # CUDA_ERROR_OUT_OF_MEMORY
            raise MemoryError(f"{name}: out of device memory for {desc.slots} x {block_bytes} bytes of global "
                              "scratch (tiles past the shared-memory budget)")
        desc.base = int(self.check((err, base)))
        return desc

    def close_scratch(self, desc, stream):
        self.check(self.driver.cuMemFreeAsync(desc.base, stream or 0))  # stream-ordered: after the launch


class _ScratchDesc(ctypes.Structure):  # runtime global_scratch.h
    _fields_ = [("base", ctypes.c_void_p), ("block_bytes", ctypes.c_int64), ("slots", ctypes.c_int64),
                ("blocks", ctypes.c_int64)]


class _TapeDesc(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("block_bytes", ctypes.c_int64), ("thread_bytes", ctypes.c_int64),
                ("done", ctypes.c_void_p), ("need", ctypes.c_void_p)]


_CUDA = []


def _cuda():
    if not _CUDA:
        _CUDA.append(_Cuda())
    return _CUDA[0]


def _points(grid):
    """The number of points of a launch grid (the product of its extents)."""
    total = 1
    for d in grid:
        total *= d
    return total


def _partial_block_message(name, grid, block_dim, why):
    """Why launch() of a tile kernel refuses a `dim` that leaves a partial last block (issue #13)."""
    total = _points(grid)
    dim = grid[0] if len(grid) == 1 else tuple(grid)
    rest = total % block_dim
    what = "dim" if len(grid) == 1 else f"the number of points of dim, {total},"
    pad = (f"pad dim to {total + block_dim - rest}" if len(grid) == 1
           else f"pad dim to a number of points that is a multiple of {block_dim}, e.g. its last dimension")
    return (f"{name}: launch(dim={dim}, block_dim={block_dim}) of a tile kernel: {what} is not a multiple of "
            f"block_dim={block_dim}, so its last block has only {rest} of {block_dim} threads; " + why
            + " (" + pad + " with arrays sized to match, or use launch_tiled)")


def _partial_block_refusal(meta, rest):
    """Why a partial last block of `rest` threads cannot run (None: it can; docs/kernels.md).
    There, as in Warp, tile element e belongs to thread e % block_dim and the missing threads'
    elements are inactive: not stored, left out of reductions and scans (the runtime masks them;
    on cuda the block runs whole, its missing threads as stand-ins whose own effects are masked). Ops that read elements at other positions (matmul, transpose, views, t[i] ...) would
    read inactive ones, which Warp leaves unset: defined only when their tiles fit in `rest`."""
    limit = meta.get("partial_limit")
    if limit is None:
        return "this build predates partial blocks: rebuild it"
    if rest < limit:
        return (f"an operation of this kernel reads a tile of {limit} elements at other positions than its "
                f"own, so it would read elements of the missing threads, which Warp leaves unset")
    return None


def _grid(dim, what):
    if type(dim) is int and 1 <= dim <= _MAX_GRID:  # the common case, as the checks below take it
        return (dim,)
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool):
        dim = (int(dim),)
    if not isinstance(dim, (tuple, list)) or not 1 <= len(dim) <= 4:
        raise TypeError(f"{what}: `dim` must be an int or a tuple of 1 to 4 ints, got {dim!r}")
    out = []
    for d in dim:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{what}: `dim` entries must be ints, got {d!r}")
        if d < 1 or d > _MAX_GRID:  # issue #17: a grid without points is refused (Warp runs nothing)
            raise ValueError(f"{what}: `dim` entries must be in [1, {_MAX_GRID}], got {int(d)}"
                             + (" (a launch without work: skip the call)" if d == 0 else ""))
        out.append(int(d))
    total = _points(out)
    if total > _MAX_POINTS:  # the C side counts the grid's points (times block_dim lanes) in an int64
        raise ValueError(f"{what}: `dim` {tuple(out)} has {total} points, more than {_MAX_POINTS}")
    return tuple(out)


def _strict(what, name, value, kind):
    """A keyword that must be exactly a bool (or a non-negative int): `adjoint="no"` is an error."""
    if value is False or value is True:
        if kind is bool:
            return value
    elif kind is int and type(value) is int and value >= 0:
        return value
    if kind is bool and isinstance(value, (bool, np.bool_)):
        return bool(value)
    if kind is int and isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    raise TypeError(f"{what}: `{name}` must be {'True or False' if kind is bool else 'a non-negative int'}, "
                    f"got {value!r}")


class IndexedArray:
    """An indexed array argument (Warp's wp.indexedarray): `data`, the base array, and `indices`,
    one int32 1-d index array per dimension (None or missing: the dimension is not indexed).
    Element [i, j] is data[indices[0][i], indices[1][j]]. A kernel also takes a Warp indexedarray
    or a `(data, indices)` pair; as an adjoint it takes the base's adjoint (or one of these)."""

    def __init__(self, data, indices):
        self.data = data
        self.indices = list(indices)

    @property
    def shape(self):
        return tuple(_shape(i)[0] if i is not None else _shape(self.data)[k]
                     for k, i in enumerate(self.indices + [None] * (len(_shape(self.data)) - len(self.indices))))


def _indexed_form(value):
    """The base array of an indexed array argument (an IndexedArray, a Warp indexedarray, a (data, indices)
    pair whose data is an array), else None."""
    if hasattr(value, "data") and hasattr(value, "indices"):
        return value.data
    if isinstance(value, (tuple, list)) and len(value) == 2 and (isinstance(value[0], np.ndarray) or hasattr(
            value[0], "__cuda_array_interface__")) and isinstance(value[1], (tuple, list)):
        return value[0]
    return None


def _indexed_parts(name, p, value, device, adjoint=False):
    """[base, index0, ...] of an indexed array argument (adjoint: [base adjoint, None, ...])."""
    if value is None or (adjoint and not isinstance(value, (tuple, list)) and not hasattr(value, "indices")):
        return [value] + [None] * p["ndim"]
    if hasattr(value, "data") and hasattr(value, "indices"):
        data, indices = value.data, value.indices
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        data, indices = value
    else:
        raise TypeError(f"{name} must be an indexed array: {_sys.modules[__name__].__name__}.IndexedArray(data, "
                        f"indices), a (data, indices) pair or a Warp indexedarray, got {type(value).__name__}")
    if adjoint:
        return [data] + [None] * p["ndim"]
    indices = list(indices or ())
    while len(indices) > p["ndim"] and indices[-1] is None:  # Warp's indexedarray keeps four entries
        indices.pop()
    if len(indices) > p["ndim"]:
        raise ValueError(f"{name} has {p['ndim']} dimension(s) but {len(indices)} index arrays")
    indices += [None] * (p["ndim"] - len(indices))
    shape = _shape(data)
    components = len(p.get("element_shape", ()))  # a vec3 base: numpy's trailing (3,)
    if len(shape) != p["ndim"] + components:
        raise ValueError(f"{name}: the base array must have {p['ndim'] + components} dimension(s), got {len(shape)}")
    out = [data]
    for k, idx in enumerate(indices):
        if idx is None:
            if device == "cuda":
                raise ValueError(f"{name}: dimension {k} has no index array; on device='cuda' pass one for "
                                 "every dimension")
            idx = np.arange(shape[k], dtype=np.int32)
        elif device != "cuda":  # an index past the base would read outside it: refused before the launch
            host = np.asarray(idx)
            if host.ndim == 1 and host.size and host.dtype == np.int32 and (host.min() < 0 or host.max() >= shape[k]):
                raise ValueError(f"{name}: index array {k} holds {int(host.min())}..{int(host.max())}, outside "
                                 f"the base array's dimension {k} of extent {shape[k]}")
        out.append(idx)
    return out


class Kernel:
    """One compiled kernel: forward and adjoint launches on the CPU."""

    def __init__(self, name, meta):
        self.name = meta.get("launch_name", name)  # an instance per block_dim: the kernel's own name
        self.meta = meta
        self._c_params = meta["params"]  # what the C entry takes: an indexed array is several arrays
        self.params = [dict(p, kind="indexed_" + p["kind"] if p["kind"] == "descriptors" else "indexedarray")
                       if p.get("indexed") else p for p in meta["params"] if "index_of" not in p]
        self.args = meta.get("args")  # the source parameters when some are structs (params: their leaves)
        self.block_dim = meta["block_dim"]
        self._checked = None  # (_launch_key, converted arguments) of the last launch: see _run
        self._checked_adjoints = None  # the same for the last adjoint launch's adjoint arrays
        self._last_launch = None  # ((grid, lane_tid, block_dim, num_threads), its _Launch)
        # what a launch may skip (most of a small launch's time is this Python): no indexed
        # argument to take apart and put back, no descriptors stored back
        self._plain = all(p["kind"] in ("array", "scalar") for p in self.params)
        self._stores_back = any(p["kind"] in ("descriptors", "indexed_descriptors") for p in self.params)

    def __repr__(self):
        names = ", ".join(p["name"] for p in self.params)
        return f"<tilec kernel {self.name}({names}) block_dim={self.block_dim}>"

    # -------------------------------------------------------------- public API

    def launch(self, dim, inputs=(), outputs=(), adj_inputs=None, adj_outputs=None, adjoint=False,
               device="cpu", block_dim=None, num_threads=0, stream=None):
        """A plain launch: one thread per point of `dim` (Warp's wp.launch). For a kernel with tile
        operations, wp.tid() is the global thread index and each run of block_dim consecutive
        threads in the row-major order of `dim` is one block sharing its tiles (Warp's
        launch_tiled(dim, B) is launch(dim + (B,), B)); a block may span rows of `dim`."""
        grid = _grid(dim, self.name)
        if self.meta["tid_count"] > len(grid):
            raise ValueError(f"{self.name}: unpacks {self.meta['tid_count']} values from wp.tid() but "
                             f"dim has {len(grid)} dimension(s)")
        if not self.meta["tiled"]:
            return self._run(grid, 0, inputs, outputs, adj_inputs, adj_outputs, adjoint, device, 1, num_threads,
                             stream)
        block_dim = self._block_dim(block_dim)
        if grid[-1] % block_dim:
            rest = _points(grid) % block_dim
            why = _partial_block_refusal(self.meta, rest) if rest else None
            if why:
                raise ValueError(_partial_block_message(self.name, grid, block_dim, why))
            # blocks of block_dim consecutive threads of the row-major order of dim; they may span its
            # rows, and the last has `rest` threads when that is not 0
            return self._run(grid, _ROWS_TID, inputs, outputs, adj_inputs, adj_outputs, adjoint, device, block_dim,
                             num_threads, stream)
        blocks = grid[:-1] + (grid[-1] // block_dim,)
        return self._run(blocks, _GLOBAL_TID, inputs, outputs, adj_inputs, adj_outputs, adjoint, device, block_dim,
                         num_threads, stream)

    def torch_function(self, dim, outputs, device=None):
        """A torch.autograd.Function launching this kernel forward and its adjoint backward over
        `dim`; `outputs` names the array parameters it writes (see tilec-rt/torch_function.py)."""
        if self.args:
            raise ValueError(f"{self.name}: torch_function does not take kernels with struct arguments yet")
        return _sibling("torch_function").function(self, dim, list(outputs), device)

    def launch_tiled(self, dim, inputs=(), outputs=(), adj_inputs=None, adj_outputs=None, adjoint=False,
                     device="cpu", block_dim=None, num_threads=0, stream=None):
        """A tiled launch: one block of block_dim lanes per point of `dim` (Warp's wp.launch_tiled)."""
        grid = _grid(dim, self.name)
        self._block_dim(block_dim)
        n = self.meta["tid_count"]
        if n > len(grid) + 1:
            raise ValueError(f"{self.name}: unpacks {n} values from wp.tid() but dim has {len(grid)} "
                             "dimension(s) (plus the lane)")
        lane_tid = 1 if n == len(grid) + 1 else 0
        return self._run(grid, lane_tid, inputs, outputs, adj_inputs, adj_outputs, adjoint, device,
                         self.block_dim, num_threads, stream)

    def _signature(self):
        return "(" + ", ".join(f"{p['name']}: {p.get('dtype', 'arrays')}" for p in self.params) + f") block_dim {self.block_dim}"

    def _accepts(self, values):
        """Whether the arguments' dtypes fit this instance (for picking an overload; _convert checks fully)."""
        if len(values) != len(self.params) or self.args:
            return True  # let the launch report the count (and check struct arguments)
        for p, v in zip(self.params, values):
            if p["kind"] == "scalar" and "element_shape" in p:
                continue  # a vector/matrix value converts to its component dtype
            indexed = _indexed_form(v)
            if (p["kind"] == "indexedarray") != (indexed is not None):
                return False  # overloads on wp.array and wp.indexedarray of one dtype differ here
            if indexed is not None:
                p, v = dict(p, kind="array"), indexed  # its base array decides the rest
            if isinstance(v, np.ndarray) and p["kind"] == "array" and "element_shape" in p:
                comp = tuple(p["element_shape"])  # overloads on vec3 / mat33 / quat differ here only
                if v.ndim != p["ndim"] + len(comp) or tuple(v.shape[p["ndim"]:]) != comp:
                    return False
            elif isinstance(v, np.ndarray) and p["kind"] == "array" and v.dtype.fields is None and v.ndim != p["ndim"]:
                return False  # a (n, 3) float32 array is a vec3 overload's argument, not a float one's
            if isinstance(v, np.ndarray) or isinstance(v, np.generic):
                got = v.dtype.name
            elif hasattr(v, "__cuda_array_interface__"):
                got = next((d for d, t in _TYPESTR.items() if t == v.__cuda_array_interface__["typestr"]), None)
            elif isinstance(v, bool):
                got = "bool"
            elif isinstance(v, float):
                got = p["dtype"] if p["kind"] == "scalar" and p["dtype"].startswith("float") else "float"
            elif isinstance(v, int):
                got = p["dtype"] if p["kind"] == "scalar" and p["dtype"] in _INT_RANGES else "int"
            else:
                continue
            if got != p["dtype"]:
                return False
        return True

    def _block_dim(self, block_dim):
        if block_dim is not None and block_dim != self.block_dim:
            raise ValueError(f"{self.name}: block_dim={block_dim} differs from the compiled block_dim "
                             f"{self.block_dim}; launch it with block_dim={block_dim} in the source file "
                             f"(one instance per value), rebuild with --block-dim {block_dim}, or use "
                             f"@tl.kernel(block_dim={block_dim})")
        return self.block_dim

    # -------------------------------------------------------------- checking

    def _run(self, grid, lane_tid, inputs, outputs, adj_inputs, adj_outputs, adjoint, device, block_dim,
             num_threads, stream=None, leaves=False):
        device = device or "cpu"
        adjoint = _strict(self.name, "adjoint", adjoint, bool)
        if self.args and not leaves:  # leaves: a Tape replay, whose values are already the leaves
            inputs, outputs, adj_inputs, adj_outputs = self._leaves(inputs, outputs, adj_inputs, adj_outputs,
                                                                    adjoint)
        num_threads = _strict(self.name, "num_threads", num_threads, int)
        if device not in self.meta["entries"]:
            raise ValueError(f"{self.name}: device={device!r} is not available in this build "
                             f"(built for: {_built_list()})")
        values = self._values(list(inputs) + list(outputs), "inputs")
        uploads = []  # device copies of descriptor tables (device='cuda'), freed however the launch ends
        try:
            return self._launch_values(values, grid, lane_tid, adj_inputs, adj_outputs, adjoint, device, block_dim,
                                       num_threads, stream, uploads)
        finally:
            for table in uploads:
                table.free(stream)

    def _launch_values(self, values, grid, lane_tid, adj_inputs, adj_outputs, adjoint, device, block_dim, num_threads,
                       stream, uploads):
        if self.meta.get("live_ids"):  # ids read from values: checked against the CPU's live objects
            _spatial.live_ids_on(self.name, device)
        flat_values = values if self._plain else self._flat(values, device)
        # The same arrays as the last launch, unchanged in every property the checks read: its
        # converted arguments, already checked, are reused (without that a launch's Python took
        # ~25 us, most of it checking and converting).
        key = _launch_key(device, self._c_params, flat_values)
        args = _reused(self._checked, key, flat_values)
        if args is None:
            args = [self._convert(p, v, device=device, uploads=uploads) for p, v in zip(self._c_params, flat_values)]
            _refuse_overlaps(self.name, self._c_params, args, self.meta.get("writes", ()))
            self._checked = _held(key, flat_values, args)
        entries = self.meta["entries"][device]
        direction = "backward" if adjoint else "forward"
        if direction not in entries:
            # the GPU's own reason where only it lacks one, else the reason both lack it
            why = (self.meta.get("no_backward_cuda") if device != "cpu" else None) or self.meta.get("no_backward")
            raise ValueError(f"{self.name}: this build has no {direction} kernel for device={device!r}"
                             + (f" ({why})" if why else ""))
        if adjoint:
            args += self._adjoint_args(key, values, flat_values, adj_inputs, adj_outputs, device, uploads)
        if not adjoint and _tilec_tape.recording():
            _tilec_tape.record(self, _Replay(self, grid, lane_tid, values, device, block_dim, num_threads, stream))
        launch = self._launch_desc(grid, lane_tid, block_dim, int(num_threads))
        if adjoint and self.meta.get("extremes"):
            with _FinalValues(self, launch, args, device, block_dim, stream) as finals:
                return self._native(device, direction, launch, finals, block_dim, stream)
        self._native(device, direction, launch, args, block_dim, stream)
        if self._stores_back:
            _descriptors_back(self._c_params, args, self.meta.get("stores_descriptors", ()), stream)
            self._indexed_back(values, flat_values)

    def _launch_desc(self, grid, lane_tid, block_dim, num_threads):
        """The C entry's launch descriptor (which it only reads), kept for the next launch alike."""
        want = (grid, lane_tid, block_dim, num_threads)
        kept = self._last_launch
        if kept is not None and kept[0] == want:
            return kept[1]
        launch = _Launch()
        for k, d in enumerate(grid):
            launch.dim[k] = d
        launch.ndim = len(grid)
        launch.lane_tid = lane_tid
        launch.block_dim = block_dim
        launch.num_threads = num_threads
        self._last_launch = (want, launch)
        return launch

    def _adjoint_args(self, key, values, flat_values, adj_inputs, adj_outputs, device, uploads):
        """The adjoint arrays converted for the C entry, after checking them against the arrays; the
        same adjoint arrays as the last adjoint launch, of the same arrays, reuse its conversions
        (as the arrays do: ~9 us each)."""
        adj = self._values(list(adj_inputs or []) + list(adj_outputs or []), "adj_inputs")
        flat = adj if self._plain else self._flat(adj, device, adjoint=True)
        adj_key = None if key is None else _launch_key(device, self._c_params, flat, nulls=True)
        adj_key = None if adj_key is None else (key, adj_key)
        reused = _reused(self._checked_adjoints, adj_key, flat)
        if reused is not None:
            return reused
        for p, v, a in zip(self.params, values, adj):
            if p["kind"] == "array" and a is not None and _shape(a) != _shape(v):
                raise ValueError(f"{self.name}: adjoint of `{p['name']}` has shape {_shape(a)} but the "
                                 f"array has shape {_shape(v)}")
        for p, v, a in zip(self._c_params, flat_values, flat):
            if p["kind"] == "descriptors" and a is not None:
                _check_held_adjoints(f"{self.name}: adjoint of `{p['name']}`", v, a)
            if p.get("indexed") and a is not None and _shape(a) != _shape(v):
                raise ValueError(f"{self.name}: adjoint of indexed array `{p['name']}` has shape {_shape(a)} "
                                 f"but its base array has shape {_shape(v)}")
        converted = [self._convert(p, a, adjoint=True, device=device, uploads=uploads)
                     for p, a in zip(self._c_params, flat)]
        self._checked_adjoints = _held(adj_key, flat, converted)
        return converted

    def _native(self, device, direction, launch, args, block_dim, stream):
        entries = self.meta["entries"][device]
        if device == "cuda":
            blocks = _points(launch.dim[:launch.ndim])
            if launch.lane_tid == _ROWS_TID:  # dim counts threads
                blocks //= block_dim
            if blocks:
                shared = self.meta["cuda_shared_bytes"][direction]
                scratch_bytes = self.meta.get("cuda_scratch_bytes", {}).get(direction, 0)
                cuda, params = _cuda(), [launch] + [a[0] for a in args]
                scratch = (cuda.open_scratch(entries[direction], shared, blocks, block_dim, scratch_bytes, stream)
                           if scratch_bytes else None)
                try:
                    if direction in self.meta.get("cuda_tape", ()):
                        cuda.launch_with_tape(entries[direction], shared, blocks, block_dim, params, stream, scratch)
                    else:
                        cuda.launch(entries[direction], shared, scratch.slots if scratch else blocks, block_dim,
                                    params + ([scratch] if scratch else []), stream)
                finally:
                    if scratch is not None:
                        cuda.close_scratch(scratch, stream)
            return
        fn = getattr(_library(device), entries[direction])
        extra = [None] if device == "cuda-emu" else []  # the stream of the C API's CUDA launch wrappers
        if self.meta.get("live_ids"):  # ids read from values: checked against the live objects (spatial.py)
            with _spatial.live_ids(self.name, _library(device), f"{_MODULE}_set_live_ids", device):
                rc = fn(ctypes.byref(launch), *extra, *[a[0] for a in args])
        else:
            rc = fn(ctypes.byref(launch), *extra, *[a[0] for a in args])
        if rc == 2:
            raise MemoryError(f"{self.name}: out of memory in the native launch")
        if rc == 5:  # reduce.h: no_active_element (a partial last block, docs/kernels.md)
            raise RuntimeError(f"{self.name}: a tile_reduce/argmax/argmin group of the partial last block has no "
                               "active element and its operator no identity (0, 1, -inf or +inf), as Warp reports")
        if rc == 6:  # core.h partial_block_defined; launch() refuses these first
            raise ValueError(f"{self.name}: this build cannot run a partial last block of this launch")
        if rc == 3:  # TILEC_ASSERT_FAILED (runtime debug.h): the message went to stderr
            raise AssertionError(f"{self.name}: an assert failed in the kernel (--debug build; see stderr)")
        if rc != 0:
            raise RuntimeError(f"{self.name}: native launch failed with code {rc}")

    def _leaves(self, inputs, outputs, adj_inputs, adj_outputs, adjoint):
        """Struct arguments spread into the leaf arguments the compiled kernel takes (tilec-rt/structs.py)."""
        views = _tilec_tape.active().field_view if _tilec_tape.recording() else None  # one view per field
        names = ", ".join(a["name"] for a in self.args)

        def spread(values, what, adjoint):
            values = list(values)
            if len(values) != len(self.args):
                raise TypeError(f"{self.name}: expects {len(self.args)} {what} ({names}), got {len(values)}")
            return [v for a, x in zip(self.args, values)
                    for _, v in _structs.leaf_values(self.name, a, x, adjoint, views)]

        inputs = spread(list(inputs) + list(outputs), "inputs", False)
        if adjoint:
            adj_inputs = spread(list(adj_inputs or []) + list(adj_outputs or []), "adj_inputs", True)
        return inputs, (), adj_inputs, ()

    def _flat(self, values, device, adjoint=False):
        """The arguments as the C entry takes them: an indexed array as its base and index arrays."""
        out = []
        for p, v in zip(self.params, values):
            if p["kind"] == "indexedarray":
                out += _indexed_parts(f"{self.name}: argument `{p['name']}`", p, v, device, adjoint)
            elif p["kind"] == "indexed_descriptors":
                out += _indexed_descriptor_parts(f"{self.name}: argument `{p['name']}`", p, v, device, adjoint)
            else:
                out.append(v)
        return out

    def _indexed_back(self, values, flat):
        """An indexed array field of an array of structs whose descriptors the kernel stored: each
        element's (base, [index arrays]) put together again from the parts _descriptors_back set."""
        stored, at = self.meta.get("stores_descriptors", ()), 0
        for p, v in zip(self.params, values):
            width = 1 + p["holds"]["ndim"] if p["kind"] == "indexed_descriptors" else \
                1 + p["ndim"] if p["kind"] == "indexedarray" else 1
            if p["kind"] == "indexed_descriptors" and p["name"] in stored and isinstance(v, np.ndarray):
                parts = flat[at:at + width]
                for index in np.ndindex(*v.shape):
                    base = parts[0][index]
                    v[index] = None if base is None else (base, [part[index] for part in parts[1:]])
            at += width

    def _values(self, values, what):
        if len(values) != len(self.params):
            names = ", ".join(p["name"] for p in self.params)
            raise TypeError(f"{self.name}: expects {len(self.params)} {what} ({names}), got {len(values)}")
        return values

    def _convert(self, p, value, adjoint=False, device="cpu", uploads=None):
        """(ctypes value, keep-alive) for one argument, after checking it."""
        name = f"{self.name}: argument `{p['name']}`" + (" (adjoint)" if adjoint else "")
        if p["kind"] == "scalar" and "element_shape" in p:  # a vector or matrix value
            return (_value_arg(name, p, None if adjoint else value), None)
        if p["kind"] == "scalar":
            if adjoint:
                return (_CTYPES[p["dtype"]](0), None)  # scalar adjoints are not returned
            if _spatial.is_object_param(p):  # a live object's id only (spatial.py), kept alive for the launch
                return _spatial.object_arg(name, p, value, device)
            return (_scalar(name, p["dtype"], value), None)
        if value is None and (adjoint or p.get("nullable")):
            return (_Array(), None)  # a null array: the kernel tests it (`if a:`) before any use
        if p["kind"] == "descriptors":  # an output's elements may hold no array yet
            return _descriptors(name, p, value, device, adjoint or p["name"] in self.meta.get("stores_descriptors", ()),
                                uploads)
        if p["dtype"] in _spatial.TEXTURE_DTYPES:  # an array of structs' texture field: ids of live textures only
            _spatial.texture_ids(name, p, value, device)
        if device == "cuda":
            return _gpu_array(name, p, value)
        return _array(name, p, value)


class _FinalValues:
    """The arguments of an adjoint launch whose kernel updates arrays with atomic_min/max
    (meta["extremes"]): those arrays replaced by their values after the forward, computed by running
    the forward on copies of every array the kernel writes. Either launch state gives the same values
    (after the forward, rerunning it changes no extreme), so each thread's adjoint can tell whether
    its value won (docs/gradients.md)."""

    def __init__(self, kernel, launch, args, device, block_dim, stream):
        self.kernel, self.launch, self.args = kernel, launch, args
        self.device, self.block_dim, self.stream = device, block_dim, stream
        self.buffers = []  # device copies to free

    def __enter__(self):
        params, n = self.kernel.params, len(self.kernel.params)
        forward = list(self.args[:n])
        for i, p in enumerate(params):
            if p["kind"] == "array" and p["name"] in self.kernel.meta.get("writes", ()):
                forward[i] = self._copy(p, forward[i])
        self.kernel._native(self.device, "forward", self.launch, forward, self.block_dim, self.stream)
        extremes = self.kernel.meta["extremes"]
        return [forward[i] if i < n and params[i]["name"] in extremes else a for i, a in enumerate(self.args)]

    def _copy(self, p, arg):
        desc, value = arg
        if self.device != "cuda":
            return _array(f"{self.kernel.name}: argument `{p['name']}`", p, np.array(value, copy=True))
        extent = _extent(desc, p["ndim"], np.dtype(_DTYPES[p["dtype"]]).itemsize)
        if extent is None:
            return arg
        cuda = _cuda()
        cuda.check(cuda.driver.cuStreamSynchronize(self.stream or 0))
        lo, hi = extent
        buffer = cuda.check(cuda.driver.cuMemAlloc(hi - lo))
        self.buffers.append(buffer)
        cuda.check(cuda.driver.cuMemcpyDtoD(buffer, lo, hi - lo))
        copy = _Array()
        copy.data = int(buffer) + (desc.data - lo)
        for k in range(4):
            copy.shape[k], copy.strides[k] = desc.shape[k], desc.strides[k]
        return (copy, None)

    def __exit__(self, *exc):
        if self.buffers:
            cuda = _cuda()
            cuda.check(cuda.driver.cuStreamSynchronize(self.stream or 0))
            for buffer in self.buffers:
                cuda.check(cuda.driver.cuMemFree(buffer))
        return False


class _Replay:
    """One recorded launch (for the Tape): replay(values[, adjoints]) runs it forward, or its adjoint."""

    def __init__(self, kernel, grid, lane_tid, values, device, block_dim, num_threads, stream):
        self.kernel, self.grid, self.lane_tid, self.values = kernel, grid, lane_tid, list(values)
        self.replay_values = list(values)
        self.device, self.block_dim, self.num_threads, self.stream = device, block_dim, num_threads, stream

    def __call__(self, values, adjoints=None):
        self.kernel._run(self.grid, self.lane_tid, values, (), adjoints, (), adjoints is not None, self.device,
                         self.block_dim, self.num_threads, self.stream, leaves=True)


def _shape(value):
    shape = getattr(value, "shape", None)
    if shape is None and hasattr(value, "__cuda_array_interface__"):  # a device array with no .shape
        shape = value.__cuda_array_interface__["shape"]
    return tuple(shape) if shape is not None else np.shape(value)


def _extent(desc, ndim, itemsize):
    """[first byte, last byte + 1) that an array descriptor spans (any strides), or None if empty."""
    if not desc.data or any(desc.shape[k] == 0 for k in range(ndim)):
        return None
    lo = hi = desc.data
    for k in range(ndim):
        reach = (desc.shape[k] - 1) * desc.strides[k]
        lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
    return lo, hi + itemsize


def _launch_key(device, params, values, nulls=False):
    """What the argument checks and conversions of a launch read, or None where that cannot be
    told cheaply: for a numpy array its id (_same_objects then asks whether it is the same object),
    shape, strides, dtype, writeability and data address (all of which may change in place:
    `a.shape = ...`, `a.flags.writeable = False`, `a.resize(...)`); for a Python number its type
    and value; with `nulls` (adjoint arrays), None as itself. Anything else (Warp, torch or GPU
    arrays, vectors, a 0-d array as a scalar) gives None: checked at every launch."""
    if device != "cpu":
        return None
    key = []
    for p, v in zip(params, values):
        if type(v) is np.ndarray and p["kind"] == "array":
            key.append((id(v), v.shape, v.strides, v.dtype, v.flags.writeable, _data_address(v)))
        elif type(v) in (int, float, bool) and p["kind"] == "scalar" and "element_shape" not in p:
            key.append((type(v), v))
        elif v is None and nulls:  # an adjoint not asked for
            key.append(None)
        else:
            return None
    return tuple(key)


def _data_address(a):
    """A numpy array's data address: through a ctypes view of its buffer (~0.4 us) where it has a
    writeable contiguous one, else from __array_interface__ (~1.5 us: it builds a dict)."""
    try:
        return ctypes.addressof(ctypes.c_byte.from_buffer(a))
    except (TypeError, ValueError, BufferError):
        return a.__array_interface__["data"][0]


def _references(values):
    """Weak references to a launch's arrays (None for numbers): the cache keeps no array alive."""
    return tuple(weakref.ref(v) if type(v) is np.ndarray else None for v in values)


def _held(key, values, converted):
    """What a launch keeps of its converted arguments for the next one (None: nothing, no key)."""
    return None if key is None else (key, _references(values), tuple(c[0] for c in converted))


def _reused(held, key, values):
    """The converted arguments `held` kept, for the same key and the very same arrays, else None."""
    if key is None or held is None or held[0] != key or not _same_objects(held[1], values):
        return None
    return [(desc, v) for desc, v in zip(held[2], values)]


def _same_objects(refs, values):
    """Whether each array is the very object referred to (an id is reused once its object dies)."""
    return all(r is None or r() is v for r, v in zip(refs, values))


def _refuse_overlaps(kernel, params, args, writes):
    """Two array arguments sharing memory where the kernel writes one: its result would depend on
    the order threads run in (and its adjoint on more), so the launch is refused."""
    spans = []
    for p, (desc, value) in zip(params, args):
        if p["kind"] == "array":
            extent = _extent(desc, p["ndim"], _element_bytes(p))
            if extent is not None:
                spans.append((p["name"], extent, value))
    for i, (a, (lo_a, hi_a), x) in enumerate(spans):
        for b, (lo_b, hi_b), y in spans[i + 1:]:
            if (a in writes or b in writes) and lo_a < hi_b and lo_b < hi_a and _share(x, y):
                written = a if a in writes else b
                raise ValueError(f"{kernel}: arguments `{a}` and `{b}` overlap in memory and the kernel writes "
                                 f"`{written}`; pass separate arrays (copy one first)")


def _share(x, y):
    """Whether two arrays whose byte ranges overlap share an element (interleaved views such as
    A[::2] and A[1::2] do not); assumed so where it cannot be decided cheaply."""
    if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
        return True
    try:
        return bool(np.shares_memory(x, y, max_work=10**6))
    except Exception:  # numpy's TooHardError: too costly to decide
        return True


def _element_bytes(p):
    """Bytes of one array element: a scalar, or a vector/matrix of `element_shape` components."""
    n = 1
    for d in p.get("element_shape", ()):
        n *= d
    return np.dtype(_DTYPES[p["dtype"]]).itemsize * n


def _value_arg(name, p, value):
    """A vector/matrix argument (a sequence, a numpy array or a Warp value of element_shape) as its
    components' bytes (the kernel reads them by address); None gives zeros (an adjoint slot)."""
    shape = tuple(p["element_shape"])
    if value is None:
        data = np.zeros(shape, _DTYPES[p["dtype"]])
    else:
        try:
            data = np.asarray(value)
        except Exception as e:  # noqa: BLE001 - any unconvertible object is the caller's error
            raise TypeError(f"{name} must be a {p['value_type']} (a sequence of numbers), got {type(value).__name__}") from e
        if data.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be a {p['value_type']} (numbers), got dtype {data.dtype}")
        if data.shape != shape and not (len(shape) == 2 and data.shape == (shape[0] * shape[1],)):
            raise ValueError(f"{name} must be a {p['value_type']} of shape {shape}, got shape {data.shape}")
        if data.dtype.kind == "f" and np.dtype(_DTYPES[p["dtype"]]).kind in "iub":
            raise TypeError(f"{name} must hold integers ({p['value_type']}), got {data.dtype}")
        data = data.astype(_DTYPES[p["dtype"]])
    raw = np.ascontiguousarray(data).tobytes()
    return (ctypes.c_char * len(raw)).from_buffer_copy(raw)


def _trailing(name, p, shape, strides, itemsize):
    """Splits an array of vectors/matrices into its `ndim` array axes, after checking the trailing
    component axes are exactly element_shape and densely packed (Warp's layout)."""
    comp = tuple(p.get("element_shape", ()))
    if not comp:
        return shape, strides
    if len(shape) != p["ndim"] + len(comp) or tuple(shape[p["ndim"]:]) != comp:
        raise ValueError(f"{name} must have shape (..{p['ndim']} axes.., {', '.join(map(str, comp))}) for an array of "
                         f"{p['value_type']}, got shape {tuple(shape)}")
    want = itemsize
    for d, st in zip(reversed(comp), reversed(tuple(strides)[p["ndim"]:])):
        if st != want and d > 1:
            raise ValueError(f"{name}: the {p['value_type']} components must be contiguous (trailing strides "
                             f"{tuple(strides)[p['ndim']:]}); pass np.ascontiguousarray(...)")
        want *= d
    return tuple(shape[:p["ndim"]]), tuple(strides[:p["ndim"]])


def _scalar(name, dtype, value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if dtype in _INT_RANGES or dtype == "bool":
        if isinstance(value, (float, np.floating)) or not isinstance(value, (int, np.integer, bool, np.bool_)):
            raise TypeError(f"{name} must be an integer ({dtype}), got {type(value).__name__}")
        lo, hi = _INT_RANGES.get(dtype, (0, 1))
        if dtype == "bool":
            return ctypes.c_int32(1 if value else 0)
        if not lo <= int(value) <= hi:
            raise ValueError(f"{name} = {int(value)} does not fit in {dtype}")
        return _CTYPES[dtype](int(value))
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number ({dtype}), got {type(value).__name__}")
    return _CTYPES[dtype](float(value))


_TYPESTR = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2", "uint16": "<u2", "int32": "<i4",
            "uint32": "<u4", "int64": "<i8", "uint64": "<u8", "float16": "<f2", "bfloat16": "<u2",
            "float32": "<f4", "float64": "<f8"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "uint", 6: "bool"}  # 4: bfloat16, read as its bits


def _export(name, make):
    try:
        return make()
    except Exception as e:  # the producer's own refusal (a tensor that requires grad, say)
        raise TypeError(f"{name} could not be exported through DLPack: {e}") from e


def _dlpack_interface(name, value):
    """__cuda_array_interface__'s fields from a DLPack producer on a CUDA device (no copy)."""
    device_type, device_id = value.__dlpack_device__()
    if device_type == _DL_CPU:
        raise ValueError(f"{name} is a host array (DLPack device CPU) but this launch runs on device='cuda'")
    if device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise TypeError(f"{name} is on DLPack device type {device_type}, not a CUDA device")
    if device_id != 0:
        raise ValueError(f"{name} is on cuda:{device_id} but tilec launches on cuda:0")
    capsule = _export(name, lambda: value.__dlpack__())
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # A DLManagedTensor starts with its DLTensor. The capsule is not consumed: the producer still
    # owns the memory, and the capsule (kept alive with the value) frees its own record.
    tensor = _DLTensor.from_address(get(capsule, b"dltensor"))
    kind = _DL_CODES.get(tensor.dtype.code)
    if kind is None or tensor.dtype.lanes != 1:
        raise TypeError(f"{name} has an unsupported DLPack dtype (code {tensor.dtype.code}, "
                        f"{tensor.dtype.bits} bits, {tensor.dtype.lanes} lanes)")
    dtype = np.dtype("bool" if kind == "bool" else f"{kind}{tensor.dtype.bits}")
    shape = tuple(tensor.shape[k] for k in range(tensor.ndim))
    strides = (tuple(tensor.strides[k] * dtype.itemsize for k in range(tensor.ndim)) if tensor.strides
               else None)
    data = (tensor.data or 0) + tensor.byte_offset
    return {"typestr": dtype.str, "shape": shape, "strides": strides, "data": (data, False)}, capsule


def _gpu_array(name, p, value):
    """A device array (torch, cupy, anything with __cuda_array_interface__ or DLPack) as a tilec_array."""
    if isinstance(value, np.ndarray):
        raise ValueError(f"{name} is a host (numpy) array but this launch runs on device='cuda'")
    _check_warp_array(name, p, value)
    iface = getattr(value, "__cuda_array_interface__", None)
    if iface is None and hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        iface, capsule = _dlpack_interface(name, value)
        value = (value, capsule)
    if iface is None:
        raise TypeError(f"{name} must be a GPU array (with __cuda_array_interface__ or DLPack) of {p['dtype']}, "
                        f"got {type(value).__name__}")
    if iface["typestr"] != _TYPESTR[p["dtype"]]:
        raise TypeError(f"{name} must have dtype {p['dtype']}, got typestr {iface['typestr']}")
    shape = tuple(iface["shape"])
    if "element_shape" in p and len(shape) == p["ndim"] + len(p["element_shape"]):
        strides = iface.get("strides")
        item = np.dtype(_DTYPES[p["dtype"]]).itemsize
        if strides is None:
            strides, acc = [], item
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        shape, strides = _trailing(name, p, shape, strides, item)
        iface = dict(iface, shape=shape, strides=strides)
    if len(shape) != p["ndim"]:
        raise ValueError(f"{name} must have {p['ndim']} dimension(s), got {len(shape)}")
    if iface["data"][1]:
        raise ValueError(f"{name} is read-only; kernels may write to their arrays")
    itemsize = np.dtype(_DTYPES[p["dtype"]]).itemsize  # of a component, for vectors and matrices
    if iface["data"][0] % itemsize:
        raise ValueError(f"{name} is not aligned to its element size")
    strides = iface.get("strides")
    if strides is not None and any(s % itemsize for s in strides):
        raise ValueError(f"{name} has strides {tuple(strides)} that are not multiples of its element size")
    if strides is None:  # C-contiguous
        strides, acc = [], _element_bytes(p)
        for n in reversed(shape):
            strides.insert(0, acc)
            acc *= n
    desc = _Array()
    desc.data = iface["data"][0] or None
    for k in range(len(shape)):
        desc.shape[k] = shape[k]
        desc.strides[k] = strides[k]
    return (desc, value)


def _descriptor_layout(n):
    """The record of one runtime tl::Array<T, n> descriptor (core.h): data pointer, n extents, n byte strides."""
    return np.dtype([("data", "<u8"), ("shape", "<i8", (n,)), ("strides", "<i8", (n,))])


def _element_name(name, index):
    """`name[i, j]` for an element of an array of structs, an " (adjoint)" suffix kept after the index."""
    base = name.removesuffix(" (adjoint)")
    return f"{base}[{', '.join(map(str, index))}]{name[len(base):]}"


def _descriptors(name, p, value, device, unset=False, uploads=None):
    """An array field of an array of structs (the leaf `ps.data`: an object array holding one array
    per element) as one array of descriptors, laid out as the runtime's tl::Array<T, N> (core.h: the
    data pointer, N extents, N byte strides; the same on the host and in the .cu). Each held array is
    checked as an array parameter is; in an adjoint an element without an array gets no gradient."""
    held = p["holds"]
    if isinstance(value, _structs.WarpRecords):
        return _warp_descriptors(name, p, value.records, unset, device, uploads)
    objects = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if objects.dtype != object or objects.ndim != p["ndim"]:
        raise TypeError(f"{name} must be a {p['ndim']}-d array of arrays (the field of an array of structs), "
                        f"got {objects.ndim}-d {objects.dtype}")
    n = held["ndim"]
    table = np.zeros(objects.shape, _descriptor_layout(n))
    keep = []
    for index in np.ndindex(*objects.shape):
        item = objects[index]
        where = _element_name(name, index)
        if item is None:
            if unset:
                continue  # a zero descriptor: an adjoint not asked for, or an output element to store into
            raise ValueError(f"{where} is not set (every element's array field needs an array)")
        desc, kept = (_gpu_array if device == "cuda" else _array)(where, held, item)
        table[index] = (desc.data or 0, tuple(desc.shape[:n]), tuple(desc.strides[:n]))
        keep.append((table[index].tobytes(), item))
    return _DescriptorTable(table, objects, keep).argument(device, uploads)


def _check_held_adjoints(name, values, adjoints):
    """Each element's adjoint array has its array's shape (an array field of an array of structs)."""
    if not all(isinstance(x, np.ndarray) and x.dtype == object for x in (values, adjoints)):
        return  # Warp's records: their shapes are read as they are
    if adjoints.shape != values.shape:
        raise ValueError(f"{name} has {adjoints.shape} elements but the array of structs {values.shape}")
    for index in np.ndindex(*values.shape):
        v, a = values[index], adjoints[index]
        if a is not None and v is not None and _shape(a) != _shape(v):
            raise ValueError(f"{name}[{', '.join(map(str, index))}] has shape {_shape(a)} but the array it is "
                             f"the adjoint of has shape {_shape(v)}")


def _warp_descriptors(name, p, records, unset, device, uploads=None):
    """The descriptors of an array field of a Warp array of structs, from Warp's array_t records
    (data pointer, int32 extents and strides, ndim); a record with no data or ndim 0 holds no array."""
    n = p["holds"]["ndim"]
    table = np.zeros(records.shape, _descriptor_layout(n))
    known = []
    itemsize = _element_bytes(p["holds"])
    for index in np.ndindex(*records.shape):
        r = records[index]
        where = _element_name(name, index)
        if not r["data"] or not r["ndim"]:
            if not unset:
                raise ValueError(f"{where} holds no array (a Warp array_t without data)")
            continue
        misaligned = r["data"] % itemsize or any(int(st) % itemsize for st in r["strides"][:n])
        if r["ndim"] != n or misaligned:
            if unset:  # an output element Warp left uninitialised (wp.empty), whatever its bytes look like
                continue  # (no Warp array is misaligned): stored before it is read
            if r["ndim"] != n:
                raise ValueError(f"{where} holds a {int(r['ndim'])}-d array, the field is {n}-d")
            raise ValueError(f"{where} is not aligned to its element size")
        table[index] = (r["data"], tuple(int(x) for x in r["shape"][:n]), tuple(int(x) for x in r["strides"][:n]))
        known.append((table[index].tobytes(), np.array(r, copy=True)))
    return _DescriptorTable(table, records, known).argument(device, uploads)


def _warp_record(like, item):
    """Warp's array_t record (of dtype `like`) for what a descriptor stored: a Warp record as it
    was, a numpy array (data, extents, strides, no grad), or None (zeros)."""
    out = np.zeros((), like)
    if isinstance(item, np.void) or (isinstance(item, np.ndarray) and item.dtype == like):
        out[()] = item
    elif isinstance(item, np.ndarray):
        out["data"], out["ndim"] = item.ctypes.data, item.ndim
        out["shape"][:item.ndim], out["strides"][:item.ndim] = item.shape, item.strides
    return out


class _DescriptorTable:
    """The descriptors a launch passed for one array field of an array of structs: the packed table,
    the object array it was made from (the caller's field view) and (descriptor bytes, array) of each
    held array, so that descriptors the kernel stored (a tile of structs sorted and stored) map back
    to the arrays they describe."""

    def __init__(self, table, objects, known):
        self.table, self.objects, self.known = table, objects, known
        self.device = None  # on device='cuda': the table's copy in device memory, freed after the launch

    def argument(self, device, uploads=None):
        """(the array descriptor of the table, self): on device='cuda' a copy of the table in device
        memory (the held arrays are device arrays there), listed in `uploads` to be freed."""
        desc = _Array()
        desc.data = self.table.ctypes.data if self.table.size else None
        if device == "cuda" and self.table.size:
            cuda = _cuda()
            self.device = int(cuda.check(cuda.driver.cuMemAlloc(self.table.nbytes)))
            if uploads is not None:
                uploads.append(self)
            cuda.check(cuda.driver.cuMemcpyHtoD(self.device, self.table.ctypes.data, self.table.nbytes))
            desc.data = self.device
        for k in range(self.table.ndim):
            desc.shape[k] = self.table.shape[k]
            desc.strides[k] = self.table.strides[k]
        return (desc, self)

    def fetch(self, stream):
        """The table as the kernel left it (device='cuda': copied back after the launch)."""
        if self.device is not None:
            cuda = _cuda()
            cuda.check(cuda.driver.cuStreamSynchronize(stream or 0))
            cuda.check(cuda.driver.cuMemcpyDtoH(self.table.ctypes.data, self.device, self.table.nbytes))

    def free(self, stream):
        if self.device is not None:
            cuda = _cuda()
            cuda.check(cuda.driver.cuStreamSynchronize(stream or 0))  # the launch has read it
            cuda.check(cuda.driver.cuMemFree(self.device))
            self.device = None


def _descriptors_back(params, args, stored, stream=None):
    """After a launch: every array field of an array of structs whose descriptors the kernel stores gets back, per
    element, the array its descriptor now describes (one of the launch's held arrays; None for a
    zero descriptor, as tile_zeros makes)."""
    tables = [kept for p, (_, kept) in zip(params, args) if p["kind"] == "descriptors"]
    if not tables:
        return
    known = {}
    for t in tables:
        known.update(dict(t.known))  # (a Warp record where the object array is Warp's)
    for p, (_, t) in zip(params, args):
        if p["kind"] != "descriptors" or p["name"] not in stored or not t.objects.flags.writeable:
            continue
        t.fetch(stream)
        warp = t.objects.dtype != object  # Warp's array_t records, not an object field
        for index in np.ndindex(*t.table.shape):
            raw = t.table[index].tobytes()
            if raw not in known and any(raw):  # a kernel only copies descriptors it was given
                raise RuntimeError(f"argument `{p['name']}`[{', '.join(map(str, index))}]: the kernel stored an "
                                   "array descriptor the launch did not pass")
            if warp:
                t.objects[index] = _warp_record(t.objects.dtype, known.get(raw))
            else:
                t.objects[index] = known.get(raw)  # None: a zero descriptor


def _indexed_descriptor_parts(name, p, value, device, adjoint=False):
    """An indexed array field of an array of structs (an object array of indexed arrays) as object
    arrays of the bases and of each dimension's index arrays (each element split by _indexed_parts)."""
    if value is None:
        return [None] * (1 + p["holds"]["ndim"])
    objects = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if objects.dtype != object or objects.ndim != p["ndim"]:
        raise TypeError(f"{name} must be a {p['ndim']}-d array of indexed arrays (the field of an array of "
                        f"structs), got {objects.ndim}-d {objects.dtype}")
    parts = [np.empty(objects.shape, object) for _ in range(1 + p["holds"]["ndim"])]
    for index in np.ndindex(*objects.shape):
        where = _element_name(name, index)
        item = objects[index]
        split = ([None] * len(parts) if item is None else
                 _indexed_parts(where, p["holds"], item, "cpu" if device == "cuda-emu" else device, adjoint))
        for part, x in zip(parts, split):
            part[index] = x
    return parts


def _warp_element(value):
    """(component dtype, component shape, type name) of a Warp array's elements (`wp.array` of
    vec3 -> ("float32", (3,), "vec3f")); None for any other object."""
    dtype = getattr(value, "dtype", None)
    if not type(value).__module__.startswith("warp") or not isinstance(dtype, type):
        return None
    scalar = getattr(dtype, "_wp_scalar_type_", dtype).__name__
    shape = tuple(getattr(dtype, "_shape_", ()))
    label = dtype.__name__
    if label in ("vec_t", "mat_t"):  # a declared wp.vec(length=5, dtype=...) / wp.mat(shape=...)
        label = (f"vector(length={shape[0]}, dtype={scalar})" if len(shape) == 1 else
                 f"matrix(shape={shape}, dtype={scalar})")
    return scalar, shape, label


def _check_warp_array(name, p, value):
    """A Warp array's element type and dimensions must be the parameter's, as Warp checks them: its
    memory alone cannot tell a float32 (n, 3) array from an array of n vec3."""
    element = _warp_element(value)
    if element is None:
        return
    scalar, shape, label = element
    if scalar != p["dtype"] or shape != tuple(p.get("element_shape", ())):
        raise TypeError(f"{name} must be an array of {p.get('value_type', p['dtype'])}, got a Warp array of {label}")
    if getattr(value, "ndim", p["ndim"]) != p["ndim"]:
        raise ValueError(f"{name} must have {p['ndim']} dimension(s), got {value.ndim}")


def _array(name, p, value):
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__cuda_array_interface__"):
            raise ValueError(f"{name} is a GPU array but this launch runs on the cpu")
        _check_warp_array(name, p, value)
        if hasattr(value, "__array_interface__"):  # Warp's CPU arrays: a view of their memory, no copy
            view = np.asarray(value)
            pointer = value.__array_interface__["data"][0]
            if isinstance(view, np.ndarray) and view.__array_interface__["data"][0] == pointer:
                return _array(name, p, view)
        if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
            if value.__dlpack_device__()[0] != _DL_CPU:
                raise ValueError(f"{name} is a device array (DLPack) but this launch runs on the cpu")
            view = _export(name, lambda: np.from_dlpack(value))  # a host tensor (torch on the CPU, say): no copy
            return _array(name, p, view)
        raise TypeError(f"{name} must be a numpy array of {p['dtype']}, got {type(value).__name__}")
    want = np.dtype(_DTYPES[p["dtype"]])
    if p["dtype"] == "bfloat16" and value.dtype.name == "bfloat16" and value.itemsize == 2:
        value = value.view(np.uint16)  # ml_dtypes' bfloat16: the same bits
    if value.dtype != want:
        raise TypeError(f"{name} must have dtype {p['dtype']}, got {value.dtype}")
    shape, strides = value.shape, value.strides
    if "element_shape" in p:
        shape, strides = _trailing(name, p, value.shape, value.strides, value.itemsize)
    elif value.ndim != p["ndim"]:
        raise ValueError(f"{name} must have {p['ndim']} dimension(s), got {value.ndim}")
    if not value.flags.writeable:
        raise ValueError(f"{name} is read-only; kernels may write to their arrays")
    address = _data_address(value) if value.size else None
    if address is not None and address % value.itemsize != 0:
        raise ValueError(f"{name} is not aligned to its element size")
    desc = _Array()
    desc.data = address
    for k in range(len(shape)):
        desc.shape[k] = shape[k]
        desc.strides[k] = strides[k]
    return (desc, value)


class Instances:
    """One kernel compiled as several instances: one per block_dim of its launches in the file
    and per overload of a generic kernel. A launch runs the instance compiled for its block_dim
    (256 when not given, as in Warp) whose parameter dtypes match its arguments."""

    def __init__(self, name, kernels):
        self.name = name
        self.kernels = kernels

    def __repr__(self):
        return f"<tilec kernel {self.name}: {', '.join(k._signature() for k in self.kernels)}>"

    def pick(self, block_dim, values):
        block_dims = sorted({k.block_dim for k in self.kernels})
        if not any(k.meta["tiled"] for k in self.kernels):
            block_dim = None  # plain SIMT code does not depend on it
        elif block_dim is None and len(block_dims) > 1:
            block_dim = 256  # Warp's default
        same = [k for k in self.kernels if block_dim is None or k.block_dim == block_dim]
        if not same:
            raise ValueError(f"{self.name}: no instance for block_dim={block_dim}; compiled for block_dim "
                             f"{', '.join(map(str, block_dims))} (from the launches in the source file)")
        matching = [k for k in same if k._accepts(values)]
        if not matching:
            raise TypeError(f"{self.name}: no instance takes these argument dtypes; compiled for "
                            f"{'; '.join(k._signature() for k in same)} (from the overloads in the source file)")
        return matching[0]

    def launch(self, dim, inputs=(), outputs=(), block_dim=None, **kwargs):
        kernel = self.pick(block_dim, list(inputs) + list(outputs))
        return kernel.launch(dim, inputs, outputs, block_dim=block_dim, **kwargs)

    def launch_tiled(self, dim, inputs=(), outputs=(), block_dim=None, **kwargs):
        kernel = self.pick(block_dim, list(inputs) + list(outputs))
        return kernel.launch_tiled(dim, inputs, outputs, block_dim=block_dim, **kwargs)


class NotCompiled:
    """A kernel of the source file that tilec left out (a generic kernel without overloads): a launch
    says why instead of an AttributeError."""

    def __init__(self, name, line, why):
        self.name = name
        self.why = f"{_SOURCE}:{line}: {why}"

    def __repr__(self):
        return f"<tilec kernel {self.name}: not compiled>"

    def launch(self, *args, **kwargs):
        raise TypeError(f"{self.name} was not compiled: {self.why}; declare its types with "
                        f"wp.overload({self.name}, [...]) in the source file and rebuild")

    launch_tiled = launch


class _Kernels(type(os)):
    """The module's class: kernels are its properties, never globals, so a kernel named like a loader
    global (np, Kernel, _library, ...) cannot replace what the loader itself uses."""


def _expose():
    """Each kernel under its name; instances of one kernel (launch_name) behind one Instances."""
    groups = {}
    for name, meta in MANIFEST["kernels"].items():
        groups.setdefault(meta.get("launch_name", name), []).append(Kernel(name, meta))
    nested = {}
    for name, cls in _structs.CLASSES.items():  # @wp.struct classes: MyStruct(field=...), MyStruct.zeros(n)
        outer, _, inner = name.partition(".")
        if inner:  # a struct declared in a class (`Gaussian.Data`): reached through the class's name
            holder = nested.setdefault(outer, _types.SimpleNamespace())
            for part in inner.split(".")[:-1]:
                holder = holder.__dict__.setdefault(part, _types.SimpleNamespace())
            setattr(holder, inner.split(".")[-1], cls)
            continue
        setattr(_Kernels, name, property(lambda _module, cls=cls: cls))
    for name, holder in nested.items():
        setattr(_Kernels, name, property(lambda _module, holder=holder: holder))
    for name, kernels in groups.items():
        kernel = kernels[0] if len(kernels) == 1 and "launch_name" not in kernels[0].meta else \
            Instances(name, kernels)
        setattr(_Kernels, name, property(lambda _module, kernel=kernel: kernel))
    left_out = {name: NotCompiled(name, entry["line"], entry["why"])
                for name, entry in MANIFEST.get("not_compiled", {}).items() if name not in groups}
    for name, kernel in left_out.items():
        setattr(_Kernels, name, property(lambda _module, kernel=kernel: kernel))
    return sorted(set(groups) | {name for name in _structs.CLASSES if "." not in name} | set(nested) | set(left_out))


__all__ = _expose()
_sys.modules[__name__].__class__ = _Kernels
