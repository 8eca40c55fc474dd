"""Tape of a tilec module (tilec-rt, tilec 0.1.0): records launches, replays their adjoints in reverse.

    with <module>.Tape() as tape:
        <module>.k1.launch_tiled(dim=..., inputs=[X, H])
        <module>.k2.launch(dim=..., inputs=[H, Y])
    tape.backward(grads=[(Y, dY)])      # or grads={Y: dY} for hashable arrays (Warp's), or loss=L
    dX = tape.gradient(X)

Like Warp's wp.Tape: each array's adjoint is its `.grad` when it has one (Warp arrays), else a
zero array the tape allocates (numpy arrays; `tape.gradient(a)`); adjoints accumulate; after a
kernel's adjoint the adjoints of the array elements it overwrote are zero (consumed), so a value
overwritten by a later launch gets no gradient through its old contents. Which elements a launch
overwrites is found when it is recorded, by running it once more on scratch copies of the arrays
it writes, filled with NaN. When a launch writes an array an earlier recorded launch read, the
tape first keeps a copy of it for that launch's replay (Warp would replay with the new contents);
changes made to arrays outside recorded launches are not seen. A kernel that reads an array it
also overwrites cannot be recorded (its adjoint could not be zeroed exactly): the tape refuses it
rather than return a wrong gradient. Records launches on every device: on "cuda" the arrays are
device arrays (`__cuda_array_interface__`); the adjoints the tape allocates, its copies and scratch
arrays are device memory, and its element-wise bookkeeping (seeding, zeroing overwritten adjoints)
goes through a host copy of each array's bytes (`tape.gradient(a)` is then a device array).
"""
import sys

import numpy as np

_ACTIVE = []  # the tapes recording now, innermost last


def recording():
    return bool(_ACTIVE) and not _ACTIVE[-1]._paused


def active():
    """The innermost recording tape (see recording())."""
    return _ACTIVE[-1]


def record(kernel, launch):
    """Called by a kernel's forward launch before it runs; `launch` replays it (see Tape.record)."""
    _ACTIVE[-1].record(kernel, launch)


class Tape:
    """A context manager recording this module's launches; see the module docstring."""

    def __init__(self):
        self.launches = []  # (kernel, launch, {param: overwritten-element mask})
        self._grads = {}  # id(array) -> (array, adjoint)
        self._paused = False
        self._fields = {}  # (id(array of structs), field path) -> (its field view, the array): stable leaves

    def __enter__(self):
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        _ACTIVE.remove(self)
        return False

    # ------------------------------------------------------------------ recording

    def record(self, kernel, launch):
        """launch(values) runs `kernel` forward on the given argument values (same order as its
        parameters) with the recorded grid; launch.values are the arguments as given (their ids
        key the adjoints), launch.replay_values what the adjoint replays with."""
        access = kernel.meta.get("array_access", {})
        for p in kernel.params:
            if p["kind"] == "indexedarray":  # its adjoint is its base's: the tape keys adjoints by array
                raise ValueError(f"{kernel.name}: the tape does not record launches with an indexed array "
                                 f"(`{p['name']}`); run its adjoint with launch(..., adj_inputs=..., adjoint=True)")
            if p["kind"] in ("descriptors", "indexed_descriptors"):  # the adjoints of the arrays each holds
                raise ValueError(f"{kernel.name}: the tape does not record launches with an array of structs "
                                 f"holding arrays (`{p['name']}`); run its adjoint with launch(..., adj_inputs=..., "
                                 "adjoint=True)")
            kinds = access.get(p["name"], ["read", "write"]) if p["kind"] == "array" else []
            if "write" in kinds and "read" in kinds and _is_float(p):
                raise ValueError(f"{kernel.name}: reads and overwrites array `{p['name']}`; the tape cannot "
                                 "zero its adjoint exactly (write the result to another array)")
        self._keep_what_earlier_launches_read(kernel, launch, access)
        self.launches.append((kernel, launch, self._overwritten(kernel, launch, access)))

    def _keep_what_earlier_launches_read(self, kernel, launch, access):
        """Before `launch` changes an array, the recorded launches that read it get a copy of its
        current contents for their replay."""
        changed = {id(v) for p, v in zip(kernel.params, launch.values)
                   if p["kind"] == "array" and v is not None and access.get(p["name"], ["write"]) != ["read"]}
        for earlier, replay, _ in self.launches:
            for i, (p, v) in enumerate(zip(earlier.params, replay.values)):
                if id(v) in changed and replay.replay_values[i] is v:
                    replay.replay_values[i] = _copy(v)

    def _overwritten(self, kernel, launch, access):
        """{param index: boolean mask of the elements this launch overwrites}."""
        written = [i for i, p in enumerate(kernel.params)  # (None: a nullable array not passed)
                   if p["kind"] == "array" and _is_float(p) and "write" in access.get(p["name"], ["write"])
                   and launch.values[i] is not None]
        if not written:
            return {}
        scratch = list(launch.values)
        for i, p in enumerate(kernel.params):
            if p["kind"] == "array" and launch.values[i] is not None and access.get(p["name"], ["write"]) != ["read"]:
                scratch[i] = _copy(launch.values[i], fill=np.nan if i in written else None)
        self._paused = True
        try:
            launch(scratch)
        finally:
            self._paused = False
        return {i: ~np.isnan(_read(scratch[i])) for i in written}

    # ------------------------------------------------------------------ adjoints

    def field_view(self, structs, path):
        """The one view of field `path` of an array of structs this tape hands to kernels: its
        adjoint is that field of the array's adjoint (a structured array like it)."""
        key = (id(structs), path)
        if key not in self._fields:
            view = structs
            for part in path.split("."):
                view = view[part]
            self._fields[key] = (view, structs)
        return self._fields[key][0]

    def gradient(self, array):
        """The adjoint the tape accumulates into for `array`: its `.grad` when it has one, else a
        zero array allocated on first use (kept until `reset`); for a field view of an array of
        structs (field_view), that field of the array's adjoint."""
        for (owner, path), (view, structs) in self._fields.items():
            if view is array:
                grad = self.gradient(structs)
                for part in path.split("."):
                    grad = grad[part]
                return grad
        key = id(array)
        if key not in self._grads:
            grad = getattr(array, "grad", None)
            on_device = _on_device(array)
            if grad is None or not hasattr(grad, "__cuda_array_interface__" if on_device else "__array_interface__"):
                grad = _copy(array, fill=0)
            self._grads[key] = (array, grad)  # the array is kept alive so its id stays its own
        return self._grads[key][1]

    def backward(self, loss=None, grads=None):
        """Seeds the adjoints (loss: a one-element array whose adjoint becomes 1; grads: {array:
        adjoint} or [(array, adjoint), ...], copied in), then replays every recorded launch's
        adjoint, last first."""
        if loss is not None:
            if _host(loss).size != 1:
                raise ValueError("Tape.backward: `loss` must be a one-element array")
            with _edit(self.gradient(loss)) as target:
                target.fill(1)
        pairs = grads.items() if isinstance(grads, dict) else (grads or ())
        for array, adjoint in pairs:
            seed = _read(adjoint)
            with _edit(self.gradient(array)) as target:
                if seed.shape != target.shape:
                    raise ValueError(f"Tape.backward: an adjoint of shape {seed.shape} for an array of shape "
                                     f"{target.shape}")
                np.copyto(target, seed, casting="same_kind")
        for kernel, launch, overwritten in reversed(self.launches):
            adjoints = [self.gradient(v) if p["kind"] == "array" and _is_float(p) and v is not None else None
                        for p, v in zip(kernel.params, launch.values)]
            launch(launch.replay_values, adjoints)
            for i, mask in overwritten.items():
                with _edit(adjoints[i]) as target:
                    target[mask] = 0

    def zero(self):
        """Zeroes every adjoint the tape has used (Warp's tape.zero())."""
        for _, grad in self._grads.values():
            with _edit(grad) as target:
                target.fill(0)

    def reset(self):
        """Forgets the recorded launches and the adjoints the tape allocated; zeroes `.grad`s."""
        self.zero()
        self.launches = []
        self._grads = {}
        self._fields = {}


def _is_float(p):
    return p["dtype"] in ("float16", "float32", "float64")


def _host(value):
    """A writable numpy view of a host array (numpy, Warp's CPU arrays, DLPack tensors)."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__array_interface__"):
        return np.asarray(value)
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value.detach() if hasattr(value, "detach") else value)
    return np.asarray(value)


# ---------------------------------------------------------------------- device arrays


def _on_device(value):
    return hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray)


def _read(value):
    """A host ndarray of value's elements: a view for host arrays, a copy for device arrays."""
    if _on_device(value):
        return _Span(value).read()
    return _host(value)


class _edit:
    """`with _edit(a) as host:` a writable host ndarray of a's elements, written back to the device
    on exit when a is a device array (the bytes between a strided array's elements are rewritten
    with what they held)."""

    def __init__(self, value):
        self.value = value
        self.span = _Span(value) if _on_device(value) else None

    def __enter__(self):
        return self.span.read() if self.span else _host(self.value)

    def __exit__(self, kind, *rest):
        if self.span and kind is None:
            self.span.write_back()
        return False


def _copy(value, fill=None):
    """A new array like value on the same side (numpy, or device memory the tape owns): a copy of its
    elements, or every element `fill`."""
    if not _on_device(value):
        host = np.array(_host(value), copy=True)
        if fill is not None:
            host.fill(fill)
        return host
    span = _Span(value)
    host = span.read()
    if fill is not None:
        host.fill(fill)
    return _DeviceCopy(span, host)


def _cuda():
    return sys.modules[__name__.rpartition(".")[0]]._cuda()


class _Span:
    """The bytes a device array spans ([first element, last element + 1), any strides)."""

    def __init__(self, value):
        iface = value.__cuda_array_interface__
        self.dtype = np.dtype(iface["typestr"])
        self.shape = tuple(iface["shape"])
        strides = iface.get("strides")
        if strides is None:
            strides, acc = [], self.dtype.itemsize
            for n in reversed(self.shape):
                strides.insert(0, acc)
                acc *= n
        self.strides = tuple(strides)
        address = iface["data"][0] or 0
        low = address + sum(min(0, (n - 1) * s) for n, s in zip(self.shape, self.strides))
        high = address + sum(max(0, (n - 1) * s) for n, s in zip(self.shape, self.strides)) + self.dtype.itemsize
        self.address, self.low = address, low
        self.size = high - low if all(self.shape) else 0
        self.buffer = None

    def read(self):
        """The elements, as a strided view of a host copy of the span."""
        self.buffer = np.zeros(max(self.size, self.dtype.itemsize), np.uint8)
        if self.size:
            cuda = _cuda()
            cuda.check(cuda.driver.cuCtxSynchronize())
            cuda.check(cuda.driver.cuMemcpyDtoH(self.buffer.ctypes.data, self.low, self.size))
        return np.lib.stride_tricks.as_strided(self.buffer[self.address - self.low:].view(self.dtype)
                                               if self.size else self.buffer.view(self.dtype)[:0],
                                               self.shape, self.strides)

    def write_back(self, target=None):
        if self.size:
            cuda = _cuda()
            cuda.check(cuda.driver.cuMemcpyHtoD(self.low if target is None else target, self.buffer.ctypes.data,
                                                self.size))


class _DeviceCopy:
    """Device memory the tape allocated: the span of another device array, with its layout."""

    def __init__(self, span, host):
        cuda = _cuda()
        self._free = cuda.driver.cuMemFree
        self.pointer = cuda.check(cuda.driver.cuMemAlloc(max(span.size, 1)))
        span.write_back(self.pointer)
        offset = int(self.pointer) + (span.address - span.low)
        self.shape = span.shape
        self.__cuda_array_interface__ = {"typestr": span.dtype.str, "shape": span.shape, "strides": span.strides,
                                         "data": (offset, False), "version": 3}

    def __del__(self):
        try:
            self._free(self.pointer)
        except Exception:  # interpreter shutdown
            pass
