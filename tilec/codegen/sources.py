"""What both backends share when emitting: kernel plans and facts, C entry descriptions, the
manifest, the loader, the vendored runtime headers, the jinja2 environment.

Expects normalized IR. Output is deterministic: no timestamps, no absolute
paths, sorted JSON keys.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from collections.abc import Iterable, Mapping, Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__, ir, naming
from ..ir.types import BOOL, ArrayT, MatT, Scalar, StructT, Type, VecT
from . import analysis, structs
from ..passes.autodiff import adjoint_kernel, derive
from ..passes.lane_ops import block_tile_form
from ..passes.one_lane import cpu_rewrites, lanes_may_differ, tidy_one_lane
from ..diagnostics import Diagnostic, NotDifferentiable
from ..passes.effects import extreme_params, stored_descriptors, written_params
from .cxx import ctype

if TYPE_CHECKING:
    from importlib.abc import Traversable

    import jinja2


class Templates:
    """The jinja2 environment of one package's `templates/` folder, made on first use: `tilec
    check` plans kernels through this module but renders nothing, and jinja2 is a tenth of its
    start-up."""

    def __init__(self, package: str) -> None:
        self.package = package
        self._env: jinja2.Environment | None = None

    def get_template(self, name: str) -> jinja2.Template:
        if self._env is None:
            import jinja2

            self._env = jinja2.Environment(
                loader=jinja2.PackageLoader(self.package, "templates"),
                keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
            )
            self._env.globals["runtime_dir"] = naming.RUNTIME_DIR
        return self._env.get_template(name)


def templates(package: str) -> Templates:
    """The templates of one package's `templates/` folder (jinja2 loads on the first render)."""
    return Templates(package)


TEMPLATES = templates("tilec.codegen")


@dataclass
class Emitted:
    files: dict[str, str]  # relative path -> text


def abi_ctype(t: Type) -> str:
    """The C type of a parameter in the generated header."""
    if isinstance(t, ArrayT):
        return "tilec_array"
    if isinstance(t, (VecT, MatT)):  # a vector/matrix argument: its components, by address
        return "const void*"
    if isinstance(t, Scalar) and t.storage_only:
        return "float"
    if t == BOOL:
        return "int32_t"
    assert isinstance(t, Scalar), t  # a kernel's parameters: arrays, vectors, matrices, scalars (structs flattened)
    return t.ctype


def param_doc(t: Type) -> str:
    if isinstance(t, ArrayT) and isinstance(t.dtype, ArrayT):
        return f"{t.ndim}-d array of descriptors (tilec_array) of {t.dtype.ndim}-d {t.dtype.dtype} arrays"
    if isinstance(t, ArrayT):
        return f"array of {t.dtype}, {t.ndim}-d"
    if isinstance(t, (VecT, MatT)):
        return f"{t}, a pointer to its {t.length} {t.dtype} components"
    return f"scalar {t}"


def kernel_facts(fn: ir.Function, funcs: dict[str, ir.Function]) -> dict[str, Any]:
    """The facts of a kernel (a shared dict: callers must not change it). Each backend, the plans
    and the manifest ask for the same kernel's facts; each answer walks the whole body, so they are
    kept while the kernel lives (an IR Function is immutable; its hash would walk the body too)."""
    hit = _FACTS.get(id(fn))
    if hit is not None and len(hit[0]) == len(funcs) and all(a is b for a, b in zip(hit[0], funcs.values())):
        return hit[1]
    facts = _kernel_facts(fn, funcs)
    ir.keep_while_alive(_FACTS, fn, id(fn), (tuple(funcs.values()), facts))
    return facts


_FACTS: dict[int, tuple[tuple[ir.Function, ...], dict[str, Any]]] = {}  # id(Function) -> (the funcs it was computed with, its facts); dropped with the Function


def _kernel_facts(fn: ir.Function, funcs: dict[str, ir.Function]) -> dict[str, Any]:
    tiled = analysis.is_tiled(fn, funcs)
    return {
        "tiled": tiled,
        "lanes": analysis.needs_lanes(fn, funcs, tiled),
        "tid_count": analysis.tid_count(fn),
        "tile_bytes": analysis.tile_bytes(fn, funcs),
        "shared_bytes": analysis.shared_bytes(fn),
        "array_access": analysis.array_access(fn),  # the loader's Tape zeroes overwritten adjoints
        # a SIMT launch's partial last block needs at least this many lanes (analysis.partial_block_limit)
        **({"partial_limit": analysis.partial_block_limit(fn, funcs)} if tiled else {}),
        # ids read from values: the loader sets the live objects' table first (runtime live_ids.h)
        **({"live_ids": True} if analysis.reads_live_ids(fn, funcs) else {}),
    }


def live_ids_entry(module: ir.Module, plans: list[KernelPlan]) -> str | None:
    """The entry setting the live objects' table (runtime live_ids.h), if a kernel reads ids from values."""
    funcs = {f.name: f for f in module.funcs}
    return naming.live_ids_entry(module.name) if any(kernel_facts(p.forward, funcs).get("live_ids")
                                                     for p in plans) else None


def _entry(name: str, params: list[ir.Sym], body: str, device: str) -> dict[str, Any]:
    decl = ", ".join(["const tilec_launch* launch"]
                     + [f"{abi_ctype(p.type)} {naming.c_param(p.name)}" for p in params])
    unpack: list[str] = []
    args: list[str] = []
    for p in params:
        local, cname = naming.cxx_arg(p.name), naming.c_param(p.name)
        if isinstance(p.type, ArrayT):
            unpack.append(f"const {ctype(p.type)} {local}(*reinterpret_cast<const tl::ArrayDesc*>(&{cname}));")
        elif isinstance(p.type, (VecT, MatT)):  # a pointer in the C API; a __global__ kernel takes the value
            read = cname if device == "cuda" else f"*static_cast<const {ctype(p.type)}*>({cname})"
            unpack.append(f"const {ctype(p.type)} {local} = {read};")
        else:
            assert isinstance(p.type, Scalar), p  # the rest of a kernel's parameters (structs flattened)
            if p.type.storage_only:
                unpack.append(f"const {p.type.ctype} {local}({cname});")
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
    why_not: Diagnostic | None = None  # the warning Diagnostic when there is no adjoint
    lanes_adjoint: ir.Function | None = None  # the GPU's: derived for cooperating lanes, tile lane ops taken out


def plan_kernels(module: ir.Module) -> list[KernelPlan]:
    plans = []
    for k in module.kernels:
        if not k.differentiate:
            plans.append(KernelPlan(k, None))
            continue
        facts = kernel_facts(k, {f.name: f for f in module.funcs})
        # One derivation per kernel. A tile kernel runs as cooperating lanes on the GPU: its adjoint
        # is derived for lanes, and where the CPU runs it one lane per block the CPU's is that
        # adjoint's one-lane form (one_lane.py). Without tiles, lanes change nothing.
        lanes = facts["lanes"] or facts["tiled"]
        try:
            if not lanes:
                derived = adjoint_kernel(k, module)
                plans.append(KernelPlan(k, derived, lanes_adjoint=derived))
                continue
            derivation = derive(k, module, lanes=True)
            # The CPU runs the lanes adjoint as one lane per block unless the kernel has per-lane
            # values or its lanes may hold different partial adjoints of a tile.
            if facts["lanes"] or lanes_may_differ(derivation.adjoint):
                lanes_form = derivation.finished(module)
                # tiles are the block's on the GPU: their lane ops are copies
                plans.append(KernelPlan(k, lanes_form, lanes_adjoint=block_tile_form(lanes_form)))
                continue
            gpu = (block_tile_form(derivation.finished(module)) if derivation.customs
                   else derivation.finished(module, strip_tile_lane_ops=True))  # the same, made directly
            tidied, lanes_free, ops = tidy_one_lane(gpu, derivation.lane_takes)
            # nothing left that only lanes need (lanes_free): the GPU runs the tidied form too
            plans.append(KernelPlan(k, cpu_rewrites(tidied, ops), lanes_adjoint=tidied if lanes_free else gpu))
        except NotDifferentiable as e:
            plans.append(KernelPlan(k, None, e.diagnostic))
    return plans


def adjoint_warnings(module: ir.Module) -> list[Diagnostic]:
    """The warning of every kernel whose adjoint is refused (what `tilec check` prints)."""
    from ..passes.normalize import normalize_module

    return [plan.why_not for plan in plan_kernels(normalize_module(module)) if plan.why_not is not None]


def manifest(module: ir.Module, plans: list[KernelPlan], files: dict[str, str], flags: dict[str, Any],
             inputs_hash: str, source_sha: str, cuda_plans: Iterable[KernelPlan] = (),
             cuda_entries: dict[str, list[dict[str, Any]]] | None = None) -> str:
    import hashlib

    funcs = {f.name: f for f in module.funcs}
    kernels: dict[str, dict[str, Any]] = {}
    struct_types: dict[str, dict[str, Any]] = {}
    for plan in plans:
        k = plan.forward
        facts = kernel_facts(k, funcs)
        nullable = _tested_arrays(k, funcs)
        entries = {"forward": naming.fwd_entry(module.name, k.name, "cpu")}
        if plan.adjoint is not None:
            entries["backward"] = naming.adj_entry(module.name, k.name, "cpu")
        kernels[k.name] = {
            "line": k.span.line,
            "block_dim": k.block_dim,
            **facts,
            "params": [_param_meta(p, k.params, nullable, {name: (kind, dtype) for name, kind, dtype in k.spatial_ids})
                       for p in k.params],
            "writes": written_params(k, funcs),  # the loader refuses arguments overlapping these
            "entries": {"cpu": entries},
        }
        if k.struct_params:  # the source parameters, some of them structs whose leaves `params` lists
            kernels[k.name]["args"] = structs.kernel_args(k.struct_params)
            structs.structs_used(k.struct_params, struct_types)
        stored = stored_descriptors(k, funcs)
        if stored:  # arrays of structs whose array fields' descriptors it stores: outputs, read back
            kernels[k.name]["stores_descriptors"] = stored
        extremes = extreme_params(k, funcs)
        if extremes:  # the adjoint reads these as the forward left them (the loader runs it on copies)
            kernels[k.name]["extremes"] = extremes
        if k.launch_name:  # one of several instances (per block_dim) the loader shows as one kernel
            kernels[k.name]["launch_name"] = k.launch_name
        if plan.why_not is not None:
            kernels[k.name]["no_backward"] = f"{plan.why_not.span}: {plan.why_not.message}"
        if not k.differentiate:
            why = "built with enable_backward=False"
            kernels[k.name]["no_backward"] = kernels[k.name]["no_backward_cuda"] = why
        gpu = (cuda_entries or {}).get(k.name, [])
        if gpu:
            kernels[k.name]["entries"]["cuda"] = {e["kernel"].rsplit("_", 1)[-1]: e["kernel"] for e in gpu}
            kernels[k.name]["entries"]["cuda-emu"] = {e["kernel"].rsplit("_", 1)[-1]: e["name"] for e in gpu}
            kernels[k.name]["cuda_shared_bytes"] = {e["kernel"].rsplit("_", 1)[-1]: e["smem_bytes"] for e in gpu}
            scratch = {e["kernel"].rsplit("_", 1)[-1]: e["scratch_bytes"] for e in gpu if e.get("scratch_bytes")}
            if scratch:  # bytes of global scratch per resident block: tiles past the shared budget
                kernels[k.name]["cuda_scratch_bytes"] = scratch
            taped = sorted(e["kernel"].rsplit("_", 1)[-1] for e in gpu if e["tape"])
            if taped:  # these kernels take a tl::TapeDesc after their arguments (device_tape.h)
                kernels[k.name]["cuda_tape"] = taped
        why_gpu = next((p.why_not for p in cuda_plans if p.forward.name == k.name and p.why_not), None)
        if why_gpu and plan.adjoint is not None:
            kernels[k.name]["no_backward_cuda"] = why_gpu.message
    data = {
        "tilec_version": __version__,
        "module": module.name,
        "source": Path(module.filename).name,
        "source_sha256": source_sha,
        "flags": flags,
        "inputs_hash": inputs_hash,
        "kernels": kernels,
        **({"not_compiled": {name: {"line": line, "why": why} for name, line, why in module.not_compiled}}
           if module.not_compiled else {}),
        **({"structs": struct_types} if struct_types else {}),
        "files": {name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _tested_arrays(fn: ir.Function, funcs: Mapping[str, ir.Function], depth: int = 0) -> set[ir.Sym]:
    """The array parameters the kernel tests with `if a:` (array_valid), or passes as they are to a
    func that tests them (Newton's `if body_q_prev:` in a func): a launch may pass None."""
    tested = set()
    for x in analysis.all_exprs(fn):
        if isinstance(x, ir.OpCall) and x.op == "array_valid" and isinstance(x.args[0], ir.Var):
            tested.add(x.args[0].sym)
        elif isinstance(x, ir.Call) and x.func in funcs and depth < 16:
            callee = funcs[x.func]
            inner = _tested_arrays(callee, funcs, depth + 1)
            tested |= {a.sym for a, p in zip(x.args, callee.params) if p in inner and isinstance(a, ir.Var)}
    return tested


def _param_meta(p: ir.Sym, params: Iterable[ir.Sym] = (), nullable: AbstractSet[ir.Sym] = frozenset(),
                ids: Mapping[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """A parameter as the loader checks it. Vectors and matrices add `element_shape` (their
    trailing axes: (3,) for vec3, (3, 3) for mat33), `dtype` being the component's. An indexed
    array's base is `"indexed": true` and its index arrays follow it with `"index_of"` (the loader
    takes one argument for all of them). An array the kernel tests (`if a:`) is `"nullable": true`:
    the loader passes None as a null array. A uint64 the kernel reads as a hash grid's id is
    `"hash_grid": "float32"` (the precision its queries read; "any" when it only maps indices), a
    mesh's id `"mesh": "float32"`: the loader takes only a live object's id there."""
    t = p.type
    if isinstance(t, ArrayT) and isinstance(t.dtype, ArrayT):  # an array field of an array of structs
        held = _param_meta(ir.Sym(p.name, p.id, t.dtype))
        meta = {"name": p.name, "kind": "descriptors", "ndim": t.ndim,
                "holds": {k: v for k, v in held.items() if k != "name"}}
        _mark_indexed(meta, p, params)
        return meta
    element = t.dtype if isinstance(t, ArrayT) else t
    extra: dict[str, Any] = {}
    if isinstance(element, (VecT, MatT)):
        shape = [element.rows, element.cols] if isinstance(element, MatT) else [element.length]
        extra = {"element_shape": shape, "value_type": str(element)}
        element = element.dtype
    assert isinstance(element, (Scalar, StructT)), p  # a kernel parameter: a scalar, value or array
    if isinstance(t, ArrayT):
        meta = {"name": p.name, "kind": "array", "dtype": element.name, "ndim": t.ndim, **extra}
        if p in nullable:
            meta["nullable"] = True
        _mark_indexed(meta, p, params)
        return meta
    if extra:
        return {"name": p.name, "kind": "scalar", "dtype": element.name, **extra}
    assert isinstance(t, Scalar)
    if ids and p.name in ids:
        kind, dtype = ids[p.name]
        return {"name": p.name, "kind": "scalar", "dtype": t.name, kind: dtype}
    return {"name": p.name, "kind": "scalar", "dtype": t.name}


def _mark_indexed(meta: dict[str, Any], p: ir.Sym, params: Iterable[ir.Sym]) -> None:
    """An indexed array's base gets `"indexed": true`, its index arrays `index_of` and `axis`."""
    owner = naming.indexed_param(p.name)
    if owner is not None:
        meta.update(index_of=owner[0], axis=owner[1])
    elif any(naming.indexed_param(q.name) == (p.name, 0) for q in params):
        meta["indexed"] = True


def runtime_headers_dir() -> Traversable:
    """The folder holding the runtime headers (`tilec/*.h`): the checkout's top-level
    `runtime_headers/` when tilec runs from source, else the installed package data
    `tilec.runtime_headers` (pyproject.toml maps one onto the other)."""
    import importlib.resources

    checkout = Path(__file__).resolve().parents[2] / "runtime_headers"
    if (checkout / "tilec").is_dir():
        return checkout
    return importlib.resources.files("tilec.runtime_headers")


def runtime_files() -> dict[str, str]:
    """The vendored runtime headers: relative path (under naming.RUNTIME_DIR) -> text."""
    folder = runtime_headers_dir() / "tilec"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".h"))
    return {f"{naming.RUNTIME_DIR}/{name}": (folder / name).read_text() for name in names}


# The loader package: template -> file in the output folder. Only __init__.py and CMakeLists.txt
# name the module; the runtime files are the same for every module of one tilec version.
LOADER_FILES = (("package_init.py.j2", "__init__.py"), ("loader.py.j2", f"{naming.RUNTIME_DIR}/loader.py"),
                ("tape.py.j2", f"{naming.RUNTIME_DIR}/tape.py"), ("structs.py.j2", f"{naming.RUNTIME_DIR}/structs.py"),
                ("torch_function.py.j2", f"{naming.RUNTIME_DIR}/torch_function.py"),
                ("spatial.py.j2", f"{naming.RUNTIME_DIR}/spatial.py"), ("CMakeLists.txt.j2", "CMakeLists.txt"))


def loader_files(module: str, filename: str) -> dict[str, str]:
    """The loader package and CMakeLists.txt of a module (filename: the user's source file)."""
    return {name: TEMPLATES.get_template(template).render(module=module, version=__version__,
                                                          filename=naming.source_label(filename))
            for template, name in LOADER_FILES}
