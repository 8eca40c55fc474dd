"""The shared-memory budget (TC0109): what each kernel's block takes on the GPU, forward and
backward separately, counted as the CUDA emitter lays it out (storage.shared_layout: every tile not
kept in registers, matmul operands and transposes included, and the reduction scratch), against a
budget per architecture.

The budget is `--max-shared` when given, else the smallest limit among the architectures built
for (compiler.MAX_SHARED_BYTES: what a block may opt into; the generated launch opts in). Only
CUDA builds are limited: the CPU library (and the CPU emulation of the .cu) keeps big tiles on
the heap. Expects normalized IR.
"""
from __future__ import annotations

from ..codegen.sources import plan_kernels
from ..diagnostics import Diagnostic
from ..ir.types import TileT, fmt_shape
from .compiler import MAX_SHARED_BYTES
from .emit import plan_cuda
from .storage import SharedLayout, shared_layout

DEFAULT_ARCHS = ("sm_80", "sm_90")  # `tilec build --arch`'s default
LISTED_TILES = 6
TEMPORARIES = {"_tmp", "_v", "_z", "_g"}  # names normalize.py and autodiff.py give their temporaries  # a diagnostic names the largest tiles, then counts the rest


def kernel_shared_memory(module, cpu_plans=None) -> dict:
    """Kernel name -> {"forward": SharedLayout, "backward": SharedLayout (absent without an adjoint)}."""
    plans = plan_cuda(module, cpu_plans if cpu_plans is not None else plan_kernels(module))
    out = {}
    for plan in plans:
        out[plan.forward.name] = {"forward": shared_layout(plan.forward)}
        if plan.adjoint is not None:
            out[plan.forward.name]["backward"] = shared_layout(plan.adjoint)
    return out


def budget(max_shared: int | None, archs=DEFAULT_ARCHS) -> tuple:
    """(bytes, how to name it in a message)."""
    if max_shared is not None:
        return max_shared, f"the {max_shared / 1024:g} KiB budget (--max-shared)"
    known = [a for a in archs if a in MAX_SHARED_BYTES] or list(DEFAULT_ARCHS)
    arch = min(known, key=lambda a: (MAX_SHARED_BYTES[a], a))
    return MAX_SHARED_BYTES[arch], f"the {MAX_SHARED_BYTES[arch] / 1024:g} KiB a block may use on {arch}"


def budget_errors(module, max_shared: int | None, archs=DEFAULT_ARCHS, usage: dict | None = None) -> list:
    """A TC0109 error for each kernel direction whose block needs more shared memory than the budget."""
    limit, named = budget(max_shared, archs)
    usage = usage if usage is not None else kernel_shared_memory(module)
    out = []
    for k in module.kernels:
        for direction, layout in usage.get(k.name, {}).items():
            if layout.total > limit:
                out.append(Diagnostic(
                    "TC0109", f"kernel `{k.source_name}` ({direction}) needs {layout.total / 1024:g} KiB of shared "
                    f"memory per block on the GPU, more than {named}: {describe(layout)}", k.span,
                    help="use smaller tiles, or fewer tiles other threads read (matmul operands, transposes, "
                         "broadcasts, indexing: they live in shared memory); CPU builds (--target cpu) have no "
                         "such limit"))
    return out


def describe(layout: SharedLayout) -> str:
    """The largest shared tiles of a layout, as `name` (shape) dtype (KiB)."""
    tiles = sorted(layout.tiles, key=lambda item: (-item[0].type.nbytes, item[1]))
    parts = [f"`{_name(sym)}` {_extent(sym.type)} {sym.type.dtype} ({sym.type.nbytes / 1024:g} KiB)"
             for sym, _ in tiles[:LISTED_TILES]]
    if len(tiles) > LISTED_TILES:
        rest = sum(sym.type.nbytes for sym, _ in tiles[LISTED_TILES:])
        parts.append(f"{len(tiles) - LISTED_TILES} more tiles ({rest / 1024:g} KiB)")
    if layout.scratch_offset is not None:
        parts.append(f"reduction scratch ({(layout.total - layout.scratch_offset) / 1024:g} KiB)")
    return ", ".join(parts)


def _extent(t) -> str:
    """A tile's shape, or a block stack's capacity."""
    return fmt_shape(t.shape) if isinstance(t, TileT) else f"stack of {t.capacity}"


def _name(sym) -> str:
    """The user's name; tilec's own temporaries as `temporary`."""
    return "temporary" if sym.name in TEMPORARIES else str(sym)


def summary(usage: dict, name: str) -> str:
    """`check --show-types`: one kernel's GPU shared memory per direction."""
    parts = [f"{direction} {layout.total / 1024:g} KiB ({len(layout.tiles)} tile{'s' if len(layout.tiles) != 1 else ''})"
             for direction, layout in usage.get(name, {}).items()]
    return "  GPU shared memory per block: " + ", ".join(parts)
