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
rather than return a wrong gradient. Records launches on the CPU devices ("cpu", "cuda-emu").
"""
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
        if launch.device not in ("cpu", "cuda-emu"):
            raise ValueError(f"{kernel.name}: Tape records launches on device='cpu' or 'cuda-emu', not "
                             f"{launch.device!r}")
        access = kernel.meta.get("array_access", {})
        for p in kernel.params:
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
                   if p["kind"] == "array" and access.get(p["name"], ["write"]) != ["read"]}
        for earlier, replay, _ in self.launches:
            for i, (p, v) in enumerate(zip(earlier.params, replay.values)):
                if id(v) in changed and replay.replay_values[i] is v:
                    replay.replay_values[i] = np.array(_host(v), copy=True)

    def _overwritten(self, kernel, launch, access):
        """{param index: boolean mask of the elements this launch overwrites}."""
        written = [i for i, p in enumerate(kernel.params)
                   if p["kind"] == "array" and _is_float(p) and "write" in access.get(p["name"], ["write"])]
        if not written:
            return {}
        scratch = list(launch.values)
        for i, p in enumerate(kernel.params):
            if p["kind"] == "array" and access.get(p["name"], ["write"]) != ["read"]:
                copy = np.array(_host(launch.values[i]), copy=True)
                if i in written:
                    copy.fill(np.nan)
                scratch[i] = copy
        self._paused = True
        try:
            launch(scratch)
        finally:
            self._paused = False
        return {i: ~np.isnan(scratch[i]) for i in written}

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
            if grad is None or not hasattr(grad, "__array_interface__"):
                host = _host(array)
                grad = np.zeros(host.shape, host.dtype)
            self._grads[key] = (array, grad)  # the array is kept alive so its id stays its own
        return self._grads[key][1]

    def backward(self, loss=None, grads=None):
        """Seeds the adjoints (loss: a one-element array whose adjoint becomes 1; grads: {array:
        adjoint} or [(array, adjoint), ...], copied in), then replays every recorded launch's
        adjoint, last first."""
        if loss is not None:
            if _host(loss).size != 1:
                raise ValueError("Tape.backward: `loss` must be a one-element array")
            _host(self.gradient(loss)).fill(1)
        pairs = grads.items() if isinstance(grads, dict) else (grads or ())
        for array, adjoint in pairs:
            target = _host(self.gradient(array))
            seed = _host(adjoint)
            if seed.shape != target.shape:
                raise ValueError(f"Tape.backward: an adjoint of shape {seed.shape} for an array of shape "
                                 f"{target.shape}")
            np.copyto(target, seed, casting="same_kind")
        for kernel, launch, overwritten in reversed(self.launches):
            adjoints = [self.gradient(v) if p["kind"] == "array" and _is_float(p) else None
                        for p, v in zip(kernel.params, launch.values)]
            launch(launch.replay_values, adjoints)
            for i, mask in overwritten.items():
                _host(adjoints[i])[mask] = 0

    def zero(self):
        """Zeroes every adjoint the tape has used (Warp's tape.zero())."""
        for _, grad in self._grads.values():
            _host(grad).fill(0)

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
