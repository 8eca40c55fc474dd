"""The CUDA backend's emission: every kernel as the GPU runs it (funcs touching tiles inlined) and
its adjoint, as CUDA (`<module>.cu`), with the launch entries for the header and the manifest."""
from __future__ import annotations

from typing import Any

from .. import __version__, ir, naming
from ..codegen.analysis import calls
from ..codegen.cxx import CxxEmitter, Target, uses_tape
from ..codegen.natives import native_texts
from ..diagnostics import Diagnostic
from ..codegen.sources import KernelPlan, _entry, abi_ctype, kernel_facts, live_ids_entry, templates
from ..ir.types import MatT, TileT, Type, VecT
from ..passes.normalize import normalize_module
from ..passes.structure import inline_calls
from .gpu_tiles import CudaEmitter

TEMPLATES = templates("tilec.backend_cuda")


def _touches_tiles(fn: ir.Function) -> bool:
    syms = list(fn.params) + [s.target for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign)]
    return isinstance(fn.ret, TileT) or any(isinstance(s.type, TileT) for s in syms)


def cuda_forward(k: ir.Function, module: ir.Module) -> ir.Function:
    """A kernel as the GPU runs it forward: funcs touching tiles inlined, then normalized. Expects
    a normalized module: a kernel calling no func is its own GPU form (normalizing is idempotent),
    so the facts both backends ask of it (cxx.py, analysis.py) are computed once."""
    if not calls(k):
        return k
    inlined = inline_calls(k, {f.name: f for f in module.funcs}, lift_maps=False)
    return normalize_module(ir.Module(module.name, module.filename, (), (inlined,))).kernels[0]


def plan_cuda(module: ir.Module, cpu_plans: list[KernelPlan]) -> list[KernelPlan]:
    """GPU kernels: funcs touching tiles inlined; their adjoints derived for cooperating lanes.

    The adjoint is the CPU plan's, derived once (sources.plan_kernels): the lanes form of a tile
    kernel (of which the CPU may run a one-lane form), or the CPU's own adjoint of a kernel touching
    no tiles (lanes only change how tile adjoints are summed).
    """
    plans = []
    for k, cpu in zip(module.kernels, cpu_plans):
        forward = cuda_forward(k, module)
        adjoint: ir.Function | None = None
        why: Diagnostic | None = None
        if k.differentiate:
            adjoint, why = cpu.lanes_adjoint, cpu.why_not
        plans.append(KernelPlan(forward, adjoint, why))
    return plans


def _cuda_entry(fn: ir.Function, kernel_name: str, launch_name: str, body: str, smem: int, scratch: int,
                doc: str, partial_limit: int | None) -> dict[str, Any]:
    entry = _entry(launch_name, list(fn.params), body, "cuda")
    entry["params"] = entry["params"].replace("const tilec_launch* launch", "const tilec_launch* launch, void* stream")
    entry["kernel"] = kernel_name
    entry["tape"] = uses_tape(fn)
    entry["kernel_params"] = ", ".join(["tilec_launch launch"] + [f"{_kernel_ctype(p.type)} {naming.c_param(p.name)}"
                                                                   for p in fn.params]
                                       + (["tl::TapeDesc tape"] if entry["tape"] else [])
                                       + (["tl::ScratchDesc scratch"] if scratch else []))
    entry["call_args"] = "".join(", " + _kernel_arg(p) for p in fn.params)  # after `*launch`; none for no params
    entry["smem_bytes"] = smem
    entry["scratch_bytes"] = scratch  # per block, in global memory: tiles past the shared budget
    entry["block_dim"] = fn.block_dim
    entry["stack_bytes"] = 256 * 1024 + 2 * sum(s.type.nbytes for s in ir.assigned_tiles(fn.body)
                                                 if isinstance(s.type, TileT))  # (always: for the type checker)
    entry["doc"] = doc
    entry["partial_limit"] = partial_limit  # None: not a tile kernel (no partial blocks)
    return entry


def _kernel_ctype(t: Type) -> str:
    """A __global__ kernel's parameter: vectors and matrices by value (the launch copies their bytes)."""
    return t.ctype if isinstance(t, (VecT, MatT)) else abi_ctype(t)


def _kernel_arg(p: ir.Sym) -> str:
    """The C entry's argument as the kernel takes it: a vector/matrix pointer is read."""
    name = naming.c_param(p.name)
    return f"*static_cast<const {p.type.ctype}*>({name})" if isinstance(p.type, (VecT, MatT)) else name


def emit_cuda(module: ir.Module, plans: list[KernelPlan], line_directives: bool = False,
              shared_budget: int | None = None) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """(.cu text, entries per kernel for the header and manifest). Tiles past `shared_budget` bytes of
    shared memory per block go to global scratch (storage.shared_layout)."""
    target = Target("cuda", "__device__ static ", naming.source_label(module.filename), line_directives)
    scalar_funcs = [f for f in module.funcs if not _touches_tiles(f)]
    func_texts = native_texts(module, "__device__ static ", target.filename)
    func_texts += [CxxEmitter(Target("cuda-func", "__device__ static ", target.filename, line_directives))
                   .function(f, naming.func_symbol(f.name)) for f in scalar_funcs]
    funcs = {f.name: f for f in module.funcs}
    kernels: list[dict[str, Any]] = []
    entries: dict[str, list[dict[str, Any]]] = {}
    for plan in plans:
        k = plan.forward
        bodies: list[str] = []
        kernel_entries: list[dict[str, Any]] = []
        # the forward kernel's, for both directions (as the CPU entries and the manifest have it)
        partial_limit = kernel_facts(k, funcs).get("partial_limit")
        for fn, direction in ((k, "forward"), (plan.adjoint, "backward")):
            if fn is None:
                continue
            emitter = CudaEmitter(target, shared_budget)
            body_name = naming.kernel_body(k.name, direction)
            bodies.append(emitter.function(fn, body_name))
            kernel_name = naming.entry(module.name, k.name, "cuda", direction)
            kernel_entries.append(_cuda_entry(fn, kernel_name, f"{kernel_name}_launch", body_name,
                                              emitter.smem_bytes, emitter.scratch_bytes,
                                              f"kernel {k.name}, {direction}", partial_limit))
        kernels.append({"bodies": bodies, "entries": kernel_entries})
        entries[k.name] = kernel_entries
    common = {"version": __version__, "filename": target.filename, "module": module.name,
              "live_ids_entry": live_ids_entry(module, plans)}
    text = TEMPLATES.get_template("module.cu.j2").render(**common, funcs=func_texts, kernels=kernels)
    return text, entries


