"""The shared-memory budget (TC0109): what each kernel's block takes on the GPU, forward and
backward separately, counted as the CUDA emitter lays it out (storage.shared_layout: every tile not
kept in registers, matmul operands and transposes included, and the reduction scratch), against a
budget per architecture.

The budget is `--max-shared` when given, else the smallest limit among the architectures built
for (compiler.MAX_SHARED_BYTES: what a block may opt into; the generated launch opts in). Tiles
past it live in global scratch, largest first (storage.shared_layout); what is still refused is a
block whose global scratch would pass MAX_SCRATCH_BYTES (one block's slice must fit a device, and
tile offsets stay in 32 bits), or whose shared remainder (the reduction scratch) passes the budget.
Only CUDA builds are limited: the CPU library keeps big tiles on the heap. Expects normalized IR.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ir
from ..codegen.sources import KernelPlan, plan_kernels
from ..diagnostics import Diagnostic
from ..ir.types import StackT, TileT, fmt_shape
from .compiler import MAX_SHARED_BYTES
from .emit import plan_cuda
from .storage import SharedLayout, placed_type, shared_layout

DEFAULT_ARCHS = ("sm_80", "sm_90")  # `tilec build --arch`'s default
MAX_SCRATCH_BYTES = 1 << 30  # one block's global scratch slice
LISTED_TILES = 6
TEMPORARIES = {"_tmp", "_v", "_z", "_g"}  # names normalize.py and autodiff.py give their temporaries  # a diagnostic names the largest tiles, then counts the rest


Usage = dict[str, dict[str, SharedLayout]]  # kernel name -> direction ("forward", "backward") -> layout


def kernel_shared_memory(module: ir.Module, cpu_plans: list[KernelPlan] | None = None,
                         limit: int | None = None) -> Usage:
    """Kernel name -> {"forward": SharedLayout, "backward": SharedLayout (absent without an adjoint)},
    laid out as the emitter does for a budget of `limit` bytes (None: everything in shared memory)."""
    plans = plan_cuda(module, cpu_plans if cpu_plans is not None else plan_kernels(module))
    out: Usage = {}
    for plan in plans:
        out[plan.forward.name] = {"forward": shared_layout(plan.forward, budget=limit)}
        if plan.adjoint is not None:
            out[plan.forward.name]["backward"] = shared_layout(plan.adjoint, budget=limit)
    return out


def placement_budget(flags: dict[str, Any]) -> int:
    """The budget the CUDA emitter places tiles by, from a build's flags (`max_shared`, `cuda_archs`)."""
    return budget(flags.get("max_shared"), tuple(flags.get("cuda_archs") or DEFAULT_ARCHS))[0]


def budget(max_shared: int | None, archs: Sequence[str] = DEFAULT_ARCHS) -> tuple[int, str]:
    """(bytes, how to name it in a message)."""
    if max_shared is not None:
        return max_shared, f"the {max_shared / 1024:g} KiB budget (--max-shared)"
    known = [a for a in archs if a in MAX_SHARED_BYTES] or list(DEFAULT_ARCHS)
    arch = min(known, key=lambda a: (MAX_SHARED_BYTES[a], a))
    return MAX_SHARED_BYTES[arch], f"the {MAX_SHARED_BYTES[arch] / 1024:g} KiB a block may use on {arch}"


def budget_errors(module: ir.Module, max_shared: int | None, archs: Sequence[str] = DEFAULT_ARCHS,
                  usage: Usage | None = None) -> list[Diagnostic]:
    """A TC0109 error for each kernel direction whose block cannot be placed: its shared remainder
    past the budget, or its global scratch past MAX_SCRATCH_BYTES."""
    limit, named = budget(max_shared, archs)
    usage = usage if usage is not None else kernel_shared_memory(module, limit=limit)
    out: list[Diagnostic] = []
    for k in module.kernels:
        for direction, layout in usage.get(k.name, {}).items():
            if layout.total > limit:
                out.append(Diagnostic(
                    "TC0109", f"kernel `{k.source_name}` ({direction}) needs {layout.total / 1024:g} KiB of shared "
                    f"memory per block on the GPU, more than {named}, with every tile in global scratch: "
                    f"{describe(layout)}", k.span,
                    help="use a smaller block_dim (the reduction scratch takes 8 bytes per thread and component); "
                         "CPU builds (--target cpu) have no such limit"))
            elif layout.global_total > MAX_SCRATCH_BYTES:
                out.append(Diagnostic(
                    "TC0109", f"kernel `{k.source_name}` ({direction}) needs {_size(layout.global_total)} of memory "
                    f"per block on the GPU for tiles that do not fit {named} (tried: the largest in global scratch, "
                    f"at most {_size(MAX_SCRATCH_BYTES)} per block): {describe(layout, placed='global')}", k.span,
                    help="use smaller tiles; CPU builds (--target cpu) have no such limit"))
    return out


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n / 1024:g} KiB"


def describe(layout: SharedLayout, placed: str = "shared") -> str:
    """The largest shared (or global scratch) tiles of a layout, as `name` (shape) dtype (KiB)."""
    tiles = sorted(layout.tiles if placed == "shared" else layout.global_tiles,
                   key=lambda item: (-placed_type(item[0]).nbytes, item[1]))
    size = _size if placed == "global" else (lambda n: f"{n / 1024:g} KiB")
    parts = [f"`{_name(sym)}` {_extent(placed_type(sym))} {placed_type(sym).dtype} ({size(placed_type(sym).nbytes)})"
             for sym, _ in tiles[:LISTED_TILES]]
    if len(tiles) > LISTED_TILES:
        rest = sum(placed_type(sym).nbytes for sym, _ in tiles[LISTED_TILES:])
        parts.append(f"{len(tiles) - LISTED_TILES} more tiles ({size(rest)})")
    if layout.scratch_offset is not None and placed == "shared":
        parts.append(f"reduction scratch ({(layout.total - layout.scratch_offset) / 1024:g} KiB)")
    return ", ".join(parts)


def _extent(t: TileT | StackT) -> str:
    """A tile's shape, or a block stack's capacity."""
    return fmt_shape(t.shape) if isinstance(t, TileT) else f"stack of {t.capacity}"


def _name(sym: ir.Sym) -> str:
    """The user's name; tilec's own temporaries as `temporary`."""
    return "temporary" if sym.name in TEMPORARIES else str(sym)


def summary(usage: Usage, name: str) -> str:
    """`check --show-types`: one kernel's GPU shared memory per direction."""
    parts = [f"{direction} {_size(layout.total)} ({_tiles(layout.tiles)})"
             + (f" + {_size(layout.global_total)} global scratch ({_tiles(layout.global_tiles)})"
                if layout.global_tiles else "")
             for direction, layout in usage.get(name, {}).items()]
    return "  GPU shared memory per block: " + ", ".join(parts)


def _tiles(tiles: tuple[tuple[ir.Sym, int], ...]) -> str:
    return f"{len(tiles)} tile{'s' if len(tiles) != 1 else ''}"
