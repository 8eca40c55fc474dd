"""Conformance: each case's program built by tilec (CPU and the CUDA emulation), launched like
Warp launched it in refresh_refs.py, compared with Warp 1.19's stored outputs and gradients, and
the adjoint checked against central finite differences of sum(seed * outputs)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import Arr, Indexed, Scal, all_cases  # noqa: E402
from conftest import needs_cxx  # noqa: E402
from harness import build  # noqa: E402

CASES = all_cases()
DEVICES = ["cpu", "cuda-emu"]


def _module(case, device):
    target = "cpu" if device == "cpu" else "cuda-emu"
    return build(case.path.read_text(), case.path.stem, block_dim=case.build_block_dim or case.block_dim,
                 target=target)


def _refs(case):
    if not case.ref_path.exists():
        pytest.fail(f"no reference for {case.id}: run python tests/conformance/refresh_refs.py {case.id}")
    return dict(np.load(case.ref_path))


def _launch(kernel, case, args, device, **adjoint):
    launch = kernel.launch_tiled if case.launch == "tiled" else kernel.launch
    launch(dim=case.dim, inputs=args, device=device, block_dim=case.block_dim, **adjoint)


def _inputs(case, refs):
    """Fresh arguments: stored inputs, written arrays at their starting value."""
    values = []
    for k, a in enumerate(case.args):
        v = refs[f"in{k}"]
        if isinstance(a, Indexed):  # the loader takes (base, indices)
            v = (v.copy(), [refs.get(f"in{k}_idx{d}") for d in range(len(a.shape))])
        values.append(v[()].item() if isinstance(a, Scal) else v if isinstance(a, Indexed) else v.copy())
    return values


def _base(v):
    """The array of an argument value: an indexed array's base."""
    return v[0] if isinstance(v, tuple) else v


def _adjoint(kernel, case, refs, device, args):
    adj = [np.zeros_like(_base(v)) if isinstance(_base(v), np.ndarray) else 0 for v in args]
    for k in range(len(args)):
        if f"seed{k}" in refs:
            adj[k] = refs[f"seed{k}"].copy()
    _launch(kernel, case, args, device, adj_inputs=adj, adjoint=True)
    return adj


def _loss(kernel, case, refs, device, args) -> float:
    _launch(kernel, case, args, device)
    return sum(float(np.sum(refs[f"seed{k}"].astype(np.float64) * args[k])) for k in range(len(args))
               if f"seed{k}" in refs)


def _tolerance(case):
    return dict(rtol=case.rtol, atol=case.atol)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_forward_matches_warp(case, device):
    refs = _refs(case)
    kernel = getattr(_module(case, device), case.kernel)
    args = _inputs(case, refs)
    _launch(kernel, case, args, device)
    for k, a in enumerate(case.args):
        if isinstance(a, Arr):
            np.testing.assert_allclose(args[k], refs[f"out{k}"], **_tolerance(case),
                                       err_msg=f"{case.id}: argument {k} after the forward launch")


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=[c.id for c in CASES if c.grad])
def test_adjoint_matches_warp_and_finite_differences(case, device):
    refs = _refs(case)
    kernel = getattr(_module(case, device), case.kernel)
    adj = _adjoint(kernel, case, refs, device, _inputs(case, refs))
    wrt = [k for k, a in enumerate(case.args) if isinstance(a, (Arr, Indexed)) and a.role == "in" and a.differentiable]
    if case.warp_wrong is None:
        for k in wrt:
            np.testing.assert_allclose(adj[k], refs[f"grad{k}"], **_tolerance(case),
                                       err_msg=f"{case.id}: gradient of argument {k} vs Warp")
    if case.fd and wrt:
        _check_directional_derivative(kernel, case, refs, device, adj, wrt)


def _check_directional_derivative(kernel, case, refs, device, adj, wrt):
    """d/dh sum(seed * out(x + h d)) at 0 by central differences, against sum(adj * d)."""
    rng = np.random.default_rng(7)
    base = _inputs(case, refs)
    direction = {k: rng.standard_normal(_base(base[k]).shape) for k in wrt}
    wide = all(_base(base[k]).dtype == np.float64 for k in wrt)
    h = 1e-6 if wide else 1e-2
    losses = []
    for sign in (1, -1):
        args = _inputs(case, refs)
        for k in wrt:
            moved = (_base(base[k]) + sign * h * direction[k]).astype(_base(base[k]).dtype)
            args[k] = (moved, base[k][1]) if isinstance(base[k], tuple) else moved
        losses.append(_loss(kernel, case, refs, device, args))
    numeric = (losses[0] - losses[1]) / (2 * h)
    analytic = sum(float(np.sum(adj[k].astype(np.float64) * direction[k])) for k in wrt)
    tol = 1e-6 if wide else 3e-2
    assert abs(numeric - analytic) <= tol * max(1.0, abs(numeric)), (
        f"{case.id}: directional derivative {analytic} vs finite differences {numeric}")
