"""A gradient checker for generated kernels: adjoint launches against central finite differences.

Works on a loaded generated module alone (numpy and the loader; no Warp, no tilec pipeline).
The loss is the whole final state, `L = sum_k sum(w_k * A_k)` over every float array argument
after the forward launch, with fixed random weights `w_k`; its gradient is taken with respect to
every float array's value *before* the launch. An adjoint launch seeded with `adj_k = w_k` must
leave exactly that gradient in the adjoint arrays: `w_k` for elements the kernel never touched,
the kernel's contribution added for elements it read, and the seed consumed (zero) for elements
it overwrote. Pure inputs, pure outputs, in-place arrays and accumulations are all covered by
this one definition, which is also what a chain of kernels on a tape relies on.

Each adjoint is launched in two states, and both must match:
  - "before": the arrays as the forward found them (outputs still zero, inputs intact);
  - "after": the arrays as the forward left them (forward launched first, as on a tape).

`gradcheck(kernel, dim, inputs)` returns a `Report`; `report.ok` says whether every element
matched, `str(report)` shows the worst element per argument and state. `check_file` (the
`tilec gradcheck FILE` command) builds a program with float64 arithmetic first and checks its
kernels on random inputs; it alone imports the compiler.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

STATES = ("before", "after")


@dataclass
class Worst:
    """The worst-matching element of one argument's gradient in one launch state."""

    argument: str
    state: str
    index: tuple[int, ...]
    adjoint: float
    numeric: float
    error: float  # |adjoint - numeric| - rtol * |numeric|: positive when the element fails

    def __str__(self) -> str:
        mark = "FAIL" if self.error > 0 else "ok"
        return (f"  {mark:4} {self.argument:>12} ({self.state:6}) worst at {self.index}: adjoint "
                f"{self.adjoint:.9g}, finite difference {self.numeric:.9g}")


@dataclass
class Report:
    kernel: str
    rows: list[Worst] = field(default_factory=list)  # one per (argument, state)
    refused: str | None = None  # why the build has no adjoint, when it has none

    @property
    def ok(self) -> bool:
        return self.refused is None and all(r.error <= 0 for r in self.rows)

    def __str__(self) -> str:
        if self.refused is not None:
            return f"{self.kernel}: no adjoint: {self.refused}"
        head = f"{self.kernel}: gradients {'match' if self.ok else 'DO NOT match'} finite differences"
        return "\n".join([head] + [str(r) for r in self.rows])


# `kernel` below: a generated module's kernel object (the loader's runtime object, duck-typed: Any).


def _launcher(kernel: Any) -> Any:
    return kernel.launch_tiled if kernel.meta.get("tiled") else kernel.launch


def _float_arrays(kernel: Any, values: Sequence[Any]) -> list[int]:
    return [k for k, (p, v) in enumerate(zip(kernel.params, values))
            if p["kind"] == "array" and p["dtype"] in ("float32", "float64", "float16") and v is not None]


def final_state(kernel: Any, dim: Any, values: Sequence[Any], device: str = "cpu") -> list[Any]:
    """The arguments after one forward launch on copies of `values`."""
    state = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
    _launcher(kernel)(dim=dim, inputs=state, device=device)
    return state


def adjoint(kernel: Any, dim: Any, values: Sequence[Any], seeds: dict[int, Any], state: str = "before",
            device: str = "cpu") -> list[Any]:
    """The adjoint arrays after one adjoint launch seeded with `seeds` (dict index -> array)."""
    args = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
    if state == "after":
        _launcher(kernel)(dim=dim, inputs=args, device=device)
    adj = [np.array(seeds[k], copy=True) if k in seeds
           else (np.zeros_like(v) if isinstance(v, np.ndarray) else 0) for k, v in enumerate(values)]
    _launcher(kernel)(dim=dim, inputs=args, adj_inputs=adj, adjoint=True, device=device)
    return adj


def gradcheck(kernel: Any, dim: Any, inputs: Iterable[Any], *, eps: float | None = None, rtol: float | None = None,
              atol: float | None = None, seed: int = 0, samples: int | None = None,
              states: Sequence[str] = STATES, device: str = "cpu") -> Report:
    """Compare `kernel`'s adjoint with central differences of the whole-state loss (module docstring).

    eps/rtol/atol default by the arrays' precision (float64: 1e-6/1e-6/1e-8; narrower: 1e-2/1e-2/1e-3).
    samples: check only this many random elements of each float array (large inputs).
    """
    values = list(inputs)
    name = getattr(kernel, "name", "kernel")
    if "backward" not in kernel.meta["entries"].get(device, {}):
        return Report(name, refused=kernel.meta.get("no_backward", "built without an adjoint"))
    floats = _float_arrays(kernel, values)
    wide = all(np.asarray(values[k]).dtype == np.float64 for k in floats)
    eps = eps if eps is not None else (1e-6 if wide else 1e-2)
    rtol = rtol if rtol is not None else (1e-6 if wide else 1e-2)
    atol = atol if atol is not None else (1e-8 if wide else 1e-3)
    rng = np.random.default_rng(seed)
    weights = {k: rng.standard_normal(np.shape(values[k])).astype(values[k].dtype) for k in floats}

    def change(up: list[Any], down: list[Any]) -> float:
        """loss(up) - loss(down), differenced per element first: a large unaffected output must not
        drown a small gradient in rounding."""
        after_up, after_down = final_state(kernel, dim, up, device), final_state(kernel, dim, down, device)
        return sum(float(np.sum(weights[k].astype(np.float64) * (after_up[k].astype(np.float64)
                                                                  - after_down[k].astype(np.float64))))
                   for k in floats)

    numeric: dict[int, dict[int, float]] = {}
    for k in floats:
        base = np.array(values[k], copy=True)
        flat = base.reshape(-1)
        chosen = (range(flat.size) if samples is None
                  else sorted(rng.choice(flat.size, min(samples, flat.size), replace=False)))
        grad: dict[int, float] = {}
        for i in chosen:
            up, down = flat.copy(), flat.copy()
            up[i] += eps
            down[i] -= eps
            trial_up, trial_down = list(values), list(values)
            trial_up[k], trial_down[k] = up.reshape(base.shape), down.reshape(base.shape)
            grad[i] = change(trial_up, trial_down) / (float(up[i]) - float(down[i]))
        numeric[k] = grad
    report = Report(name)
    for state in states:
        adj = adjoint(kernel, dim, values, weights, state, device)
        for k in floats:
            flat = adj[k].reshape(-1)
            worst: Worst | None = None
            for i, num in numeric[k].items():
                err = abs(float(flat[i]) - num) - rtol * abs(num) - atol
                if worst is None or err > worst.error:
                    index = tuple(int(x) for x in np.unravel_index(i, np.shape(values[k])))
                    worst = Worst(kernel.params[k]["name"], state, index, float(flat[i]), num, err)
            if worst is not None:
                report.rows.append(worst)
    return report


# ---------------------------------------------------------------- `tilec gradcheck FILE`


def widened(module: Any) -> Any:
    """The checked IR module with every float32/float16 type made float64 (finite differences need
    the precision): a structural copy, symbols stay equal to each other."""
    import dataclasses

    from .ir.types import FLOAT16, FLOAT32, FLOAT64

    def go(x: Any) -> Any:
        if x == FLOAT32 or x == FLOAT16:
            return FLOAT64
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            changes = {f.name: go(getattr(x, f.name)) for f in dataclasses.fields(x)}
            if all(changes[k] is getattr(x, k) for k in changes):
                return x
            return dataclasses.replace(x, **changes)
        if isinstance(x, tuple):
            items = tuple(go(v) for v in x)
            return x if all(a is b for a, b in zip(items, x)) else items
        return x

    return go(module)


def random_inputs(kernel: Any, shapes: dict[str, Any], scalars: dict[str, Any], rng: np.random.Generator) -> list[Any]:
    """Arguments for `kernel`: float arrays uniform in [0.5, 1.5) (inside every math function's
    domain), integer arrays zero, scalars from `scalars` (default 1). `shapes` gives an array's
    own axes; an array of vectors, matrices or transforms gets its value's axes appended."""
    values: list[Any] = []
    for p in kernel.params:
        if p["kind"] == "scalar":
            values.append(scalars.get(p["name"], 1))
            continue
        shape = tuple(shapes.get(p["name"], (16,) * p["ndim"]))
        if len(shape) != p["ndim"]:
            raise ValueError(f"--shape {p['name']}: {len(shape)} dimension(s) given, the array has "
                             f"{p['ndim']}")
        shape += tuple(p.get("element_shape", ()))  # a vec3 / transform array's trailing axes
        if p["dtype"].startswith("float"):
            values.append(rng.uniform(0.5, 1.5, shape).astype(p["dtype"]))
        else:
            values.append(np.zeros(shape, p["dtype"]))
    return values


def check_file(path: str, kernels: Sequence[str] = (), dim: Sequence[int] = (1,), shapes: dict[str, Any] | None = None,
               scalars: dict[str, Any] | None = None, seed: int = 0, block_dim: int = 256, outdir: str | None = None,
               echo: Callable[[str], Any] = print) -> bool:
    """Build FILE with float64 arithmetic, then gradcheck each kernel (all by default) on random inputs;
    True when every checked gradient matches. Refused kernels are reported, not failed."""
    import tempfile

    from .api import load
    from .driver import build_module
    from .frontend.check import Options
    from .passes.normalize import normalize_module
    from .pipeline import compile_source

    with open(path, encoding="utf-8") as f:
        source = f.read()
    module = normalize_module(widened(compile_source(source, path, Options(block_dim=block_dim)).module))
    known = [k.name for k in module.kernels]
    unknown = [n for n in kernels if n not in known]
    if unknown:
        raise ValueError(f"no kernel named {', '.join(unknown)} (kernels: {', '.join(known)})")
    flags = {"block_dim": block_dim, "target": "cpu", "debug": False, "max_shared": 48 * 1024,
             "emit_only": False}
    folder = outdir or tempfile.mkdtemp(prefix="tilec-gradcheck-")
    build_module(module, source, folder, flags, echo=lambda *a, **k: None)
    generated = load(f"{folder}/{module.name}")
    names = list(kernels) or list(generated.__all__)
    rng = np.random.default_rng(seed)
    ok = True
    for name in names:
        kernel = getattr(generated, name)
        values = random_inputs(kernel, shapes or {}, scalars or {}, rng)
        report = gradcheck(kernel, tuple(dim), values, seed=seed)
        echo(str(report))
        ok = ok and (report.ok or report.refused is not None)
    return ok


def parse_assignments(items: Iterable[str], kind: type) -> dict[str | None, Any]:
    """["A=4,8", "n=3"] -> {"A": (4, 8), "n": 3}; an item without `NAME=` is keyed None."""
    out: dict[str | None, Any] = {}
    for item in items:
        name, _, text = item.rpartition("=")
        try:
            numbers = tuple(kind(x) for x in text.split(",") if x.strip())
        except ValueError:
            numbers = ()
        if not numbers:  # `n=` or a non-number: the user's error, not an IndexError
            form = "D0,D1" if kind is int else "X"
            raise ValueError(f"cannot read `{item}`: expected NAME={form}")
        out[name or None] = numbers if kind is int else numbers[0]
    return out
