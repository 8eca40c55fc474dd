"""The CPU backend's emission: kernels and their adjoints as C++17 (`<module>.cpp`) and the C header
(`<module>.h`) listing every entry point of both targets."""
from __future__ import annotations

import dataclasses
from typing import Any

from .. import __version__, ir, naming
from ..codegen import analysis
from ..codegen.cxx import CxxEmitter, Target
from ..codegen.element_loops import in_range_func
from ..codegen.natives import native_texts
from ..codegen.sources import Emitted, KernelPlan, _entry, kernel_facts, live_ids_entry, param_doc, templates
from ..codegen.tile_sums import summed_arrays
from ..ir.types import ArrayT, Scalar, TileT
from ..passes.fuse_tiles import fold_forward

TEMPLATES = templates("tilec.backend_cpu")


def _entry_for(fn: ir.Function, name: str, body_name: str, funcs: dict[str, ir.Function],
               lanes_of: ir.Function | None = None, sums: dict[ir.Sym, TileT] | None = None) -> dict[str, Any]:
    """lanes_of: the forward kernel, whose lane mode and partial-block limit an adjoint shares (its
    own atomics are not per lane): of the adjoint itself only its tiles' bytes are asked (its other
    facts walk the whole adjoint, the longest body of a build). sums: the arrays the entry sums per
    worker thread (tile_sums.py), with their tiles."""
    owner = kernel_facts(lanes_of if lanes_of is not None else fn, funcs)
    entry = _entry(name, list(fn.params), body_name, "cpu")
    entry["sums"], entry["flush"] = _sums_lines(fn, sums or {})
    if sums:
        entry["args"] = ", ".join(f"{naming.cxx_sums(p.name)}.mine()" if p in sums else naming.cxx_arg(p.name)
                                  for p in fn.params)
    entry["lanes"] = "true" if owner["lanes"] else "false"
    own_tile_bytes = owner["tile_bytes"] if lanes_of is None else analysis.tile_bytes(fn, funcs)
    entry["stack_bytes"] = 2 * own_tile_bytes + 256 * 1024
    entry["partial_limit"] = owner.get("partial_limit")  # None: not a tile kernel (no partial blocks)
    return entry


def _sums_type(array: ir.Sym, tile: TileT) -> str:
    assert isinstance(array.type, ArrayT) and isinstance(array.type.dtype, Scalar)  # tile_sums.py: float arrays
    return f"tl::TileSums<{array.type.dtype.ctype}, {array.type.ndim}, {', '.join(str(d) for d in tile.shape)}>"


def _sums_lines(fn: ir.Function, sums: dict[ir.Sym, TileT]) -> tuple[list[str], list[str]]:
    """The declarations of the entry's per-thread sums and, after the launch's blocks, their adds
    into the arrays."""
    decls: list[str] = []
    flushes: list[str] = []
    for p, tile in sums.items():
        others = ", ".join(f"tl::byte_span({naming.cxx_arg(q.name)})" for q in fn.params
                           if q is not p and isinstance(q.type, ArrayT))
        decls.append(f"// {naming.c_param(p.name)}: the adjoint only adds tiles into it; each worker thread sums its own, added once")
        decls.append(f"{_sums_type(p, tile)} {naming.cxx_sums(p.name)}(*reinterpret_cast<const tl::LaunchDesc*>(launch), "
                     f"{naming.cxx_arg(p.name)}, {{{others}}});")
        flushes.append(f"{naming.cxx_sums(p.name)}.flush(*reinterpret_cast<const tl::LaunchDesc*>(launch));")
    return decls, flushes


def emit_cpu(module: ir.Module, plans: list[KernelPlan], line_directives: bool = False,
             cuda_entries: dict[str, list[dict[str, Any]]] | None = None) -> Emitted:
    target = Target("cpu", "static ", naming.source_label(module.filename), line_directives)
    funcs = {f.name: f for f in module.funcs}
    # core.h: tile kernels' bodies applying exp, log or tanh are also compiled for AVX-512 (only
    # those: a second compile of every kernel costs 20-50 % of a module's build for no gain on
    # memory-bound loops; a SIMT body computes one thread's scalars, which no wider vector speeds up)
    cloned = dataclasses.replace(target, func_qualifier="TL_CPU_KERNEL static ")

    in_range = frozenset(f.name for f in module.funcs if in_range_func(f))

    def body_emitter(body: ir.Function, tiled: bool) -> CxxEmitter:
        emitter = CxxEmitter(cloned if tiled and analysis.calls_vector_math(body, funcs) else target)
        emitter.in_range_funcs = in_range
        return emitter

    def in_range_variant(f: ir.Function) -> str:
        """f with its exp, log and tanh on their in-range paths, their keys kept in the calling loop's
        tl::InRange (codegen/cxx.py element_loop_in_range); unused where no such loop calls f."""
        emitter = CxxEmitter(dataclasses.replace(target, func_qualifier="[[maybe_unused]] static "))
        emitter.in_range_seen = naming.IN_RANGE_SEEN
        return emitter.function(f, naming.func_in_range_symbol(f.name), f", tl::InRange& {naming.IN_RANGE_SEEN}")

    func_texts = native_texts(module, "static ", target.filename)
    func_texts += [CxxEmitter(target).function(f, naming.func_symbol(f.name)) for f in module.funcs]
    func_texts += [in_range_variant(f) for f in module.funcs if f.name in in_range]
    kernels: list[dict[str, Any]] = []
    header_kernels: list[dict[str, Any]] = []
    for plan in plans:
        k = plan.forward
        facts = kernel_facts(k, funcs)
        fwd_body, adj_body = naming.kernel_body(k.name, "forward"), naming.kernel_body(k.name, "backward")
        forward = fold_forward(k)  # one loop per tile statement: fewer
        bodies = [body_emitter(forward, facts["tiled"]).function(forward, fwd_body)]
        entries = [_entry_for(k, naming.fwd_entry(module.name, k.name, "cpu"), fwd_body, funcs)]
        if plan.adjoint is not None:
            sums = summed_arrays(plan.adjoint)
            part_types = {p: f"{_sums_type(p, tile)}::Part&" for p, tile in sums.items()}
            bodies.append(body_emitter(plan.adjoint, facts["tiled"]).function(plan.adjoint, adj_body,
                                                                         param_types=part_types))
            entries.append(_entry_for(plan.adjoint, naming.adj_entry(module.name, k.name, "cpu"), adj_body,
                                      funcs, lanes_of=k, sums=sums))
        kernels.append({"bodies": bodies, "entries": entries})
        header_kernels.append(_header_kernel(k, facts, entries + list((cuda_entries or {}).get(k.name, []))))
    common = {"version": __version__, "filename": target.filename, "module": module.name,
              "live_ids_entry": live_ids_entry(module, plans)}
    cpp = TEMPLATES.get_template("module.cpp.j2").render(
        **common, target="CPU (C++17)", funcs=func_texts, kernels=kernels)
    header = TEMPLATES.get_template("header.h.j2").render(**common, kernels=header_kernels)
    return Emitted({f"{module.name}.cpp": cpp, f"{module.name}.h": header})


def _header_kernel(k: ir.Function, facts: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": k.name, "line": k.span.line, "block_dim": k.block_dim, "tiled": facts["tiled"],
        "params": [{"name": p.name, "doc": param_doc(p.type)} for p in k.params],
        "entries": [{"name": e["name"], "params": e["params"], "smem_bytes": e.get("smem_bytes", 0),
                     "scratch_bytes": e.get("scratch_bytes", 0)} for e in entries],
    }


