"""Emit: typed IR -> the generated text files (.cpp, .h, manifest), through jinja2 templates.

Expects normalized IR. Output is deterministic: no timestamps, no absolute
paths, sorted JSON keys.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .. import __version__, ir, naming
from ..types import FLOAT16, BOOL, ArrayT, Scalar
from . import analysis
from .cxx import CxxEmitter, Target, ctype, uses_tape
from .gpu_tiles import CudaEmitter

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("tilec.backend", "templates"),
    keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
)
RUNTIME_DIR = Path(__file__).resolve().parent.parent / "runtime"


@dataclass
class Emitted:
    files: dict  # relative path -> text


def abi_ctype(t) -> str:
    """The C type of a parameter in the generated header."""
    if isinstance(t, ArrayT):
        return "tilec_array"
    if t == FLOAT16:
        return "float"
    if t == BOOL:
        return "int32_t"
    return t.ctype


def param_doc(t) -> str:
    if isinstance(t, ArrayT):
        return f"array of {t.dtype}, {t.ndim}-d"
    return f"scalar {t}"


def kernel_facts(fn: ir.Function, funcs: dict) -> dict:
    tiled = analysis.is_tiled(fn, funcs)
    return {
        "tiled": tiled,
        "lanes": analysis.needs_lanes(fn, funcs, tiled),
        "tid_count": analysis.tid_count(fn),
        "tile_bytes": analysis.tile_bytes(fn, funcs),
        "shared_bytes": analysis.shared_bytes(fn),
    }


def _entry(name: str, params: list, body: str, device: str) -> dict:
    decl = ", ".join(["const tilec_launch* launch"]
                     + [f"{abi_ctype(p.type)} {naming.c_param(p.name)}" for p in params])
    unpack, args = [], []
    for p in params:
        local, cname = naming.cxx_arg(p.name), naming.c_param(p.name)
        if isinstance(p.type, ArrayT):
            unpack.append(f"const {ctype(p.type)} {local}(*reinterpret_cast<const tl::ArrayDesc*>(&{cname}));")
        elif p.type == FLOAT16:
            unpack.append(f"const tl::half {local}({cname});")
        elif p.type == BOOL:
            unpack.append(f"const bool {local} = {cname} != 0;")
        else:
            unpack.append(f"const {ctype(p.type)} {local} = {cname};")
        args.append(local)
    return {"name": name, "params": decl, "unpack": unpack, "body": body, "args": ", ".join(args)}


@dataclass
class KernelPlan:
    """A kernel and, when it could be derived, its adjoint."""

    forward: ir.Function
    adjoint: ir.Function | None
    why_not: object = None  # the warning Diagnostic when there is no adjoint


def plan_kernels(module: ir.Module) -> list:
    from ..autodiff import adjoint_kernel
    from ..structure import NotDifferentiable

    plans = []
    for k in module.kernels:
        if not k.differentiate:
            plans.append(KernelPlan(k, None))
            continue
        lanes = kernel_facts(k, {f.name: f for f in module.funcs})["lanes"]
        try:
            plans.append(KernelPlan(k, adjoint_kernel(k, module, lanes)))
        except NotDifferentiable as e:
            plans.append(KernelPlan(k, None, e.diagnostic))
    return plans


def _entry_for(fn: ir.Function, name: str, body_name: str, funcs: dict, lanes_of=None) -> dict:
    """lanes_of: the forward kernel, whose lane mode an adjoint shares (its own atomics are not per lane)."""
    facts = kernel_facts(fn, funcs)
    lanes = kernel_facts(lanes_of, funcs)["lanes"] if lanes_of is not None else facts["lanes"]
    entry = _entry(name, list(fn.params), body_name, "cpu")
    entry["lanes"] = "true" if lanes else "false"
    entry["stack_bytes"] = 2 * facts["tile_bytes"] + 256 * 1024
    return entry


def emit_cpu(module: ir.Module, plans: list, line_directives: bool = False, cuda_entries=None) -> Emitted:
    target = Target("cpu", "static ", Path(module.filename).name, line_directives)
    funcs = {f.name: f for f in module.funcs}
    func_texts = [CxxEmitter(target).function(f, f.name) for f in module.funcs]
    kernels, header_kernels = [], []
    for plan in plans:
        k = plan.forward
        facts = kernel_facts(k, funcs)
        bodies = [CxxEmitter(target).function(k, f"{k.name}_forward_body")]
        entries = [_entry_for(k, naming.fwd_entry(k.name, "cpu"), f"{k.name}_forward_body", funcs)]
        if plan.adjoint is not None:
            bodies.append(CxxEmitter(target).function(plan.adjoint, f"{k.name}_backward_body"))
            entries.append(_entry_for(plan.adjoint, naming.adj_entry(k.name, "cpu"), f"{k.name}_backward_body",
                                      funcs, lanes_of=k))
        kernels.append({"bodies": bodies, "entries": entries})
        header_kernels.append(_header_kernel(k, facts, entries + list((cuda_entries or {}).get(k.name, []))))
    common = {"version": __version__, "filename": target.filename, "module": module.name}
    cpp = TEMPLATES.get_template("module.cpp.j2").render(
        **common, target="CPU (C++17)", funcs=func_texts, kernels=kernels)
    header = TEMPLATES.get_template("header.h.j2").render(**common, kernels=header_kernels)
    return Emitted({f"{module.name}.cpp": cpp, f"{module.name}.h": header})


def _header_kernel(k: ir.Function, facts: dict, entries: list) -> dict:
    return {
        "name": k.name, "line": k.span.line, "block_dim": k.block_dim, "tiled": facts["tiled"],
        "params": [{"name": p.name, "doc": param_doc(p.type)} for p in k.params],
        "entries": [{"name": e["name"], "params": e["params"]} for e in entries],
    }


def _touches_tiles(fn: ir.Function) -> bool:
    from ..types import TileT

    syms = list(fn.params) + [s.target for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign)]
    return isinstance(fn.ret, TileT) or any(isinstance(s.type, TileT) for s in syms)


def cuda_forward(k: ir.Function, module: ir.Module) -> ir.Function:
    """A kernel as the GPU runs it forward: funcs touching tiles inlined, then normalized."""
    from ..normalize import normalize_module
    from ..structure import inline_calls

    inlined = inline_calls(k, {f.name: f for f in module.funcs}, lift_maps=False)
    return normalize_module(ir.Module(module.name, module.filename, (), (inlined,))).kernels[0]


def plan_cuda(module: ir.Module) -> list:
    """GPU kernels: funcs touching tiles inlined; adjoints wherever the CPU has one."""
    from ..autodiff import adjoint_kernel
    from ..structure import NotDifferentiable

    plans = []
    for k in module.kernels:
        forward = cuda_forward(k, module)
        adjoint, why = None, None
        if k.differentiate:
            try:
                adjoint = adjoint_kernel(k, module, lanes=True)
            except NotDifferentiable as e:
                why = e.diagnostic.message
        plans.append(KernelPlan(forward, adjoint, why))
    return plans


def _cuda_entry(fn: ir.Function, kernel_name: str, launch_name: str, body: str, smem: int, doc: str) -> dict:
    entry = _entry(launch_name, list(fn.params), body, "cuda")
    entry["params"] = entry["params"].replace("const tilec_launch* launch", "const tilec_launch* launch, void* stream")
    entry["kernel"] = kernel_name
    entry["tape"] = uses_tape(fn)
    entry["kernel_params"] = ", ".join(["tilec_launch launch"] + [f"{abi_ctype(p.type)} {naming.c_param(p.name)}"
                                                                   for p in fn.params]
                                       + (["tl::TapeDesc tape"] if entry["tape"] else []))
    entry["call_args"] = ", ".join(naming.c_param(p.name) for p in fn.params)
    entry["smem_bytes"] = smem
    entry["block_dim"] = fn.block_dim
    entry["stack_bytes"] = 256 * 1024 + 2 * sum(s.type.nbytes for s in _tile_syms(fn))
    entry["doc"] = doc
    return entry


def _tile_syms(fn):
    from ..types import TileT

    return {s.target for s in ir.walk_stmts(fn.body) if isinstance(s, ir.Assign) and isinstance(s.target.type, TileT)}


def emit_cuda(module: ir.Module, plans: list, line_directives: bool = False) -> tuple:
    """(.cu text, entries per kernel for the header and manifest)."""
    target = Target("cuda", "__device__ static ", Path(module.filename).name, line_directives)
    scalar_funcs = [f for f in module.funcs if not _touches_tiles(f)]
    func_texts = [CxxEmitter(Target("cuda-func", "__device__ static ", target.filename, line_directives))
                  .function(f, f.name) for f in scalar_funcs]
    kernels, entries = [], {}
    for plan in plans:
        k = plan.forward
        bodies, kernel_entries = [], []
        for fn, direction in ((k, "forward"), (plan.adjoint, "backward")):
            if fn is None:
                continue
            emitter = CudaEmitter(target)
            body_name = f"{k.name}_{direction}_body"
            bodies.append(emitter.function(fn, body_name))
            kernel_name = f"{k.name}_cuda_{direction}"
            kernel_entries.append(_cuda_entry(fn, kernel_name, f"{kernel_name}_launch", body_name,
                                              emitter.smem_bytes, f"kernel {k.name}, {direction}"))
        kernels.append({"bodies": bodies, "entries": kernel_entries})
        entries[k.name] = kernel_entries
    common = {"version": __version__, "filename": target.filename, "module": module.name}
    text = TEMPLATES.get_template("module.cu.j2").render(**common, funcs=func_texts, kernels=kernels)
    return text, entries


def manifest(module: ir.Module, plans: list, files: dict, flags: dict, inputs_hash: str, source_sha: str,
             cuda_plans=(), cuda_entries=None) -> str:
    import hashlib

    funcs = {f.name: f for f in module.funcs}
    kernels = {}
    for plan in plans:
        k = plan.forward
        facts = kernel_facts(k, funcs)
        entries = {"forward": naming.fwd_entry(k.name, "cpu")}
        if plan.adjoint is not None:
            entries["backward"] = naming.adj_entry(k.name, "cpu")
        kernels[k.name] = {
            "line": k.span.line,
            "block_dim": k.block_dim,
            **facts,
            "params": [_param_meta(p) for p in k.params],
            "entries": {"cpu": entries},
        }
        if plan.why_not is not None:
            kernels[k.name]["no_backward"] = f"{plan.why_not.span}: {plan.why_not.message}"
        gpu = (cuda_entries or {}).get(k.name, [])
        if gpu:
            kernels[k.name]["entries"]["cuda"] = {e["kernel"].rsplit("_", 1)[-1]: e["kernel"] for e in gpu}
            kernels[k.name]["entries"]["cuda-emu"] = {e["kernel"].rsplit("_", 1)[-1]: e["name"] for e in gpu}
            kernels[k.name]["cuda_shared_bytes"] = {e["kernel"].rsplit("_", 1)[-1]: e["smem_bytes"] for e in gpu}
            taped = sorted(e["kernel"].rsplit("_", 1)[-1] for e in gpu if e["tape"])
            if taped:  # these kernels take a tl::TapeDesc after their arguments (device_tape.h)
                kernels[k.name]["cuda_tape"] = taped
        why_gpu = next((p.why_not for p in cuda_plans if p.forward.name == k.name and p.why_not), None)
        if why_gpu and plan.adjoint is not None:
            kernels[k.name]["no_backward_cuda"] = str(why_gpu)
    data = {
        "tilec_version": __version__,
        "module": module.name,
        "source": Path(module.filename).name,
        "source_sha256": source_sha,
        "flags": flags,
        "inputs_hash": inputs_hash,
        "kernels": kernels,
        "files": {name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _param_meta(p: ir.Sym) -> dict:
    t = p.type
    if isinstance(t, ArrayT):
        return {"name": p.name, "kind": "array", "dtype": t.dtype.name, "ndim": t.ndim}
    assert isinstance(t, Scalar)
    return {"name": p.name, "kind": "scalar", "dtype": t.name}


def runtime_files() -> dict:
    """The vendored runtime headers: relative path -> text."""
    out = {}
    for path in sorted((RUNTIME_DIR / "tilec").glob("*.h")):
        out[f"tilec/{path.name}"] = path.read_text()
    return out
