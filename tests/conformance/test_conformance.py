"""Conformance: each case's program built by tilec (CPU and the CUDA emulation), launched like
Warp launched it in refresh_refs.py, compared with Warp 1.19's stored outputs and gradients, and
the adjoint checked against central finite differences of sum(seed * outputs).

Every case runs on the CPU. On the CUDA emulation (whose build is the costly one) the default run
takes the cases of a quarter of the builds, by a stable hash of program and block_dim
(tests/sampling.py); TILEC_TESTS_FULL=1 runs every case there too."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import Arr, BvhArg, Grid, HeldArr, MeshArg, Indexed, Scal, StructArg, StructArr, TextureArg, VolumeArg, all_cases, field_view, slots  # noqa: E402
from conftest import needs_cxx  # noqa: E402
from harness import build  # noqa: E402
from sampling import kept  # noqa: E402

CASES = all_cases()
DEVICES = ["cpu", "cuda-emu"]


def _build_block_dim(case) -> int:
    return case.build_block_dim or case.block_dim


def _on_emulation(case) -> bool:
    """Whether the run takes this case's build for the CUDA emulation (a quarter of the builds)."""
    return kept(f"{case.path.stem}:{_build_block_dim(case)}", 1, 4)


def _runs(cases) -> list:
    """(case, device) pairs: every case on the CPU, the sampled ones on the CUDA emulation too, and
    there every partial-block case (cases_partial: the .cu code's stand-in threads, three builds)."""
    return [pytest.param(case, device, id=f"{case.id}-{device}") for case in cases for device in DEVICES
            if device == "cpu" or _on_emulation(case) or "partial" in case.tags]


def _module(case, device):
    target = "cpu" if device == "cpu" else "cuda-emu"
    return build(case.path.read_text(), case.path.stem, block_dim=_build_block_dim(case), target=target)


def _refs(case):
    if not case.ref_path.exists():
        pytest.fail(f"no reference for {case.id}: run python tests/conformance/refresh_refs.py {case.id}")
    return dict(np.load(case.ref_path))


def _launch(kernel, case, args, device, **adjoint):
    launch = kernel.launch_tiled if case.launch == "tiled" else kernel.launch
    launch(dim=case.dim, inputs=args, device=device, block_dim=case.block_dim, **adjoint)


def _inputs(case, refs, module=None):
    """Fresh arguments: stored inputs, written arrays at their starting value (struct arguments
    as the loader's struct classes and structured arrays: module is the built program)."""
    values = []
    for k, a in enumerate(case.args):
        if isinstance(a, (StructArg, StructArr)):
            values.append(_struct_input(module, k, a, refs))
            continue
        if isinstance(a, HeldArr):  # the loader's structured array: an object field per array field
            data = getattr(module, a.struct).zeros(a.count)
            for f, _ in a.arrays:
                for e in range(a.count):
                    data[f][e] = refs[f"in{k}.{f}.{e}"].copy()
            for f, *_ in a.scalars:
                data[f][...] = refs[f"in{k}.{f}"]
            values.append(data)
            continue
        if isinstance(a, Grid):  # built below, from its points
            values.append(None)
            continue
        if isinstance(a, MeshArg):  # the mesh itself (its id alone would not keep it alive)
            values.append(module.Mesh(**{f: refs[f"in{k}.{f}"].copy() for f, _ in a.arrays()}))
            continue
        if isinstance(a, (TextureArg, VolumeArg)):  # the loader's texture or volume, over its own copy of the data
            values.append(a.make(module, refs[f"in{k}.data"].copy()))
            continue
        if isinstance(a, BvhArg):  # the Bvh itself, over its own copies of the boxes
            values.append(module.Bvh(**{f: refs[f"in{k}.{f}"].copy() for f, _ in a.arrays()}))
            continue
        v = refs[f"in{k}"]
        if isinstance(a, Indexed):  # the loader takes (base, indices)
            v = (v.copy(), [refs.get(f"in{k}_idx{d}") for d in range(len(a.shape))])
        values.append(v[()].item() if isinstance(a, Scal) else v if isinstance(a, Indexed) else v.copy())
    for k, a in enumerate(case.args):
        if isinstance(a, Grid):  # the grid itself: its id alone would not keep it alive
            values[k] = module.HashGrid(*a.dims, dtype=a.dtype)
            values[k].build(values[a.points].copy(), a.radius,
                            groups=None if a.groups is None else values[a.groups].copy())
    return values


def _base(v):
    """The array of an argument value: an indexed array's base."""
    return v[0] if isinstance(v, tuple) else v


def _struct_input(module, k, a, refs):
    cls = getattr(module, a.struct)
    if isinstance(a, StructArr):
        assert refs[f"layout{k}"].dtype == cls.numpy_dtype(), "the loader's struct layout differs from Warp's"
        data = cls.zeros(a.shape)
        for f in a.fields:
            field_view(data, f[0])[...] = refs[f"in{k}.{f[0]}"]
        return data
    fields = {f: refs[f"in{k}.{f}"][()].item() if isinstance(spec, Scal) and not refs[f"in{k}.{f}"].ndim
              else spec.make(module, refs[f"in{k}.{f}"].copy()) if isinstance(spec, TextureArg)
              else refs[f"in{k}.{f}"].copy() for f, spec in a.fields}
    return cls(**fields)


def _adjoint(kernel, case, refs, device, args):
    adj = [np.zeros_like(_base(v)) if isinstance(_base(v), np.ndarray) else 0 for v in args]
    for k, (a, v) in enumerate(zip(case.args, args)):
        if isinstance(a, StructArg):  # array fields get adjoint arrays; scalar adjoints stay in the kernel
            adj[k] = type(v)(**{f: np.zeros_like(getattr(v, f)) for f, spec in a.fields if isinstance(spec, Arr)})
        if isinstance(a, HeldArr):  # every element's arrays get adjoint arrays
            adj[k] = np.zeros_like(v)
            for f, _ in a.arrays:
                for e in range(a.count):
                    adj[k][f][e] = np.zeros_like(v[f][e])
    for key, _, get in slots(case.args):
        if f"seed{key}" in refs:
            get(adj)[...] = refs[f"seed{key}"]
    _launch(kernel, case, args, device, adj_inputs=adj, adjoint=True)
    return adj


def _loss(kernel, case, refs, device, args) -> float:
    _launch(kernel, case, args, device)
    return sum(float(np.sum(refs[f"seed{key}"].astype(np.float64) * get(args))) for key, _, get in slots(case.args)
               if f"seed{key}" in refs)


def _tolerance(case):
    return dict(rtol=case.rtol, atol=case.atol)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("case, device", _runs(CASES))
def test_forward_matches_warp(case, device):
    refs = _refs(case)
    module = _module(case, device)
    kernel = getattr(module, case.kernel)
    args = _inputs(case, refs, module)
    _launch(kernel, case, args, device)
    for key, a, get in slots(case.args):
        if isinstance(a, Indexed):  # read only: Warp's references hold no output for it
            continue
        np.testing.assert_allclose(get(args), refs[f"out{key}"], **_tolerance(case),
                                   err_msg=f"{case.id}: argument {key} after the forward launch")


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("case, device", _runs([c for c in CASES if c.grad]))
def test_adjoint_matches_warp_and_finite_differences(case, device):
    refs = _refs(case)
    module = _module(case, device)
    kernel = getattr(module, case.kernel)
    adj = _adjoint(kernel, case, refs, device, _inputs(case, refs, module))
    wrt = [(key, get) for key, a, get in slots(case.args) if a.role == "in" and a.differentiable]
    if case.warp_wrong is None:
        for key, get in wrt:
            np.testing.assert_allclose(get(adj), refs[f"grad{key}"], **_tolerance(case),
                                       err_msg=f"{case.id}: gradient of argument {key} vs Warp")
    if case.fd and wrt:
        _check_directional_derivative(kernel, case, refs, device, adj, wrt, module)


def _check_directional_derivative(kernel, case, refs, device, adj, wrt, module=None):
    """d/dh sum(seed * out(x + h d)) at 0 by central differences, against sum(adj * d)."""
    rng = np.random.default_rng(7)
    base = _inputs(case, refs, module)
    direction = {key: rng.standard_normal(get(base).shape) for key, get in wrt}
    # float64 steps only when the loss is float64 too: a float32 output rounds a 1e-6 step away
    wide = all(get(base).dtype == np.float64 for _, get in wrt) and all(
        a.dtype == "float64" for key, a, _ in slots(case.args) if f"seed{key}" in refs)
    h = 1e-6 if wide else 1e-2
    losses = []
    for sign in (1, -1):
        args = _inputs(case, refs, module)
        for key, get in wrt:  # in place: a slot may be a field view of a structured array
            get(args)[...] = (get(base) + sign * h * direction[key]).astype(get(base).dtype)
        losses.append(_loss(kernel, case, refs, device, args))
    numeric = (losses[0] - losses[1]) / (2 * h)
    analytic = sum(float(np.sum(get(adj).astype(np.float64) * direction[key])) for key, get in wrt)
    tol = 1e-6 if wide else 3e-2
    assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (
        f"{case.id}: directional derivative {analytic} vs finite differences {numeric}")
