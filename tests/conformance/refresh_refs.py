"""Run every conformance case under Warp 1.19 on the CPU and store inputs, outputs and gradients in
refs/<id>.npz. CI compares tilec with these files and never needs Warp.

    python tests/conformance/refresh_refs.py [CASE_ID_SUBSTRING ...]

Needs `pip install warp-lang==1.19.0`. A CPU block has block_dim lanes (enable_cpu_blocks), like
tilec's. Inputs come from a generator seeded by the case id, so a refresh is reproducible.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import REFS, Arr, Scal, all_cases  # noqa: E402

WARP_VERSION = "1.19.0"


def make_inputs(case) -> list:
    rng = np.random.default_rng(int(hashlib.sha256(case.id.encode()).hexdigest()[:8], 16))
    values = []
    for a in case.args:
        if isinstance(a, Scal):
            values.append(np.array(a.value, dtype=a.dtype))
            continue
        if a.kind == "randn":
            v = rng.standard_normal(a.shape)
        elif a.kind == "rand":
            v = rng.random(a.shape)
        elif a.kind.startswith("int:"):
            _, lo, hi = a.kind.split(":")
            v = rng.integers(int(lo), int(hi), a.shape)
        elif a.kind == "ones":
            v = np.ones(a.shape)
        elif a.kind == "arange":
            v = np.arange(int(np.prod(a.shape))).reshape(a.shape)
        else:
            v = np.zeros(a.shape)
        values.append(v.astype(a.dtype))
    return values


def output_seeds(case, values) -> list:
    """The adjoint seeds of written arrays (None elsewhere)."""
    rng = np.random.default_rng(int(hashlib.sha256((case.id + "/seed").encode()).hexdigest()[:8], 16))
    return [rng.standard_normal(v.shape).astype(v.dtype) if isinstance(a, Arr) and a.role != "in"
            and a.differentiable else None for a, v in zip(case.args, values)]


def load_program(path: Path):
    name = f"conformance_prog_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_warp(case, values, seeds, wp):
    program = load_program(case.path)
    kernel = eval(case.warp_kernel or case.kernel, vars(program))  # our own case files, not user input
    grad = case.grad
    arrays = []
    for a, v in zip(case.args, values):
        if isinstance(a, Scal):  # a Python number; other widths as Warp's scalar type (overloads pick by it)
            arrays.append(v[()].item() if a.dtype in ("float32", "int32") else getattr(wp, a.dtype)(v[()].item()))
        else:
            dtype = getattr(wp, a.value) if a.value else wp.dtype_from_numpy(v.dtype)
            arrays.append(wp.array(v.copy(), dtype=dtype, device="cpu", requires_grad=grad and a.differentiable))
    tape = wp.Tape()
    with tape:
        if case.launch == "tiled":
            wp.launch_tiled(kernel, dim=case.dim, inputs=arrays, block_dim=case.block_dim, device="cpu")
        else:
            wp.launch(kernel, dim=case.dim, inputs=arrays, block_dim=case.block_dim, device="cpu")
    # copies: a CPU array's numpy() shares its memory, and the backward pass may write to it again
    result = {f"out{k}": x.numpy().copy() for k, (a, x) in enumerate(zip(case.args, arrays)) if isinstance(a, Arr)}
    if grad:
        tape.backward(grads={arrays[k]: wp.array(s, dtype=arrays[k].dtype, device="cpu")
                             for k, s in enumerate(seeds) if s is not None})
        for k, (a, x) in enumerate(zip(case.args, arrays)):
            if isinstance(a, Arr) and a.differentiable:
                result[f"grad{k}"] = x.grad.numpy()
    return result


def main(argv) -> int:
    import warp as wp

    assert wp.__version__ == WARP_VERSION, f"references come from warp-lang {WARP_VERSION}, not {wp.__version__}"
    wp.config.enable_cpu_blocks = True
    wp.config.quiet = True
    wp.init()
    REFS.mkdir(exist_ok=True)
    chosen = [c for c in all_cases() if not argv or any(s in c.id for s in argv)]
    for case in chosen:
        values = make_inputs(case)
        seeds = output_seeds(case, values)
        data = {f"in{k}": v for k, v in enumerate(values)}
        data.update({f"seed{k}": s for k, s in enumerate(seeds) if s is not None})
        data.update(run_warp(case, values, seeds, wp))
        np.savez(case.ref_path, **data)
        print(f"{case.id}: {len(data)} arrays")
    known = {c.ref_path.name for c in all_cases()}
    for stale in sorted(p for p in REFS.glob("*.npz") if p.name not in known):
        print(f"note: {stale.name} belongs to no case (remove it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
