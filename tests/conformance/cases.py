"""Conformance cases: Warp programs as Warp's users write them, each launched the same way under
Warp 1.19 (CPU, `enable_cpu_blocks`, by refresh_refs.py) and under tilec (test_conformance.py).

A case names a program under programs/, a kernel, a launch and its arguments. Every area keeps
its cases in a `cases_<area>.py` beside this file (a list `CASES`), so areas grow independently.
Argument specs say how refresh_refs.py makes the inputs; the inputs themselves are stored with
Warp's outputs in refs/<id>.npz, so the comparison never depends on a random generator.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REFS = HERE / "refs"


@dataclass(frozen=True)
class Arr:
    """An array argument. role: "in" (read), "out" (written; starts at zero) or "inout"."""

    shape: tuple
    dtype: str = "float32"
    role: str = "in"
    kind: str = "randn"  # randn | rand (0..1) | int:LO:HI (uniform integers) | zeros | ones | arange
    value: str | None = None  # Warp's element type (vec3, mat33d, quat, transform): shape ends with its axes

    @property
    def differentiable(self) -> bool:
        return self.dtype.startswith("float")


@dataclass(frozen=True)
class Scal:
    """A scalar argument passed by value."""

    value: float | int
    dtype: str = "float32"


def arr(*shape, dtype="float32", kind="randn"):
    return Arr(tuple(shape), dtype, "in", kind)


def out(*shape, dtype="float32"):
    return Arr(tuple(shape), dtype, "out", "zeros")


VALUE_AXES = {"vec2": (2,), "vec3": (3,), "vec4": (4,), "quat": (4,), "transform": (7,), "spatial_vector": (6,),
              "mat22": (2, 2), "mat33": (3, 3), "mat44": (4, 4), "spatial_matrix": (6, 6)}


def _value_axes(value: str) -> tuple:
    return VALUE_AXES[value.rstrip("fdh") if value[-1] in "fdh" and value[:-1] in VALUE_AXES else value]


def varr(n, value, role="in", kind="randn"):
    """A 1-d array of n Warp values (vec3, mat33d, quat, ...) as numpy stores it: trailing component axes."""
    dtype = "float64" if value.endswith("d") else "float32"
    return Arr((n, *_value_axes(value)), dtype, role, "zeros" if role == "out" else kind, value)


@dataclass(frozen=True)
class Case:
    """One launch of one kernel.

    kernel: the kernel's name in the module tilec builds (for a kernel made by a factory, the name
    tilec gives that instantiation); warp_kernel: a Python expression evaluated in the program's
    namespace under Warp that yields the kernel (default: `kernel`).
    launch: "tiled" (wp.launch_tiled, dim = blocks) or "simt" (wp.launch, dim = threads).
    grad: compare the adjoint too (Warp's tape.backward with random output seeds).
    fd: also check tilec's adjoint against central finite differences (a directional derivative).
    warp_wrong: Warp's result is known wrong (DESIGN §6); the reference is numpy/FD, say why.
    build_block_dim: the --block-dim tilec builds with, when not `block_dim`.
    """

    id: str
    program: str
    kernel: str
    dim: tuple
    args: tuple
    block_dim: int = 64
    launch: str = "tiled"
    grad: bool = True
    fd: bool = True
    warp_kernel: str | None = None
    rtol: float = 1e-5
    atol: float = 1e-5
    warp_wrong: str | None = None
    tags: tuple = field(default_factory=tuple)
    build_block_dim: int | None = None  # tilec's --block-dim when not block_dim (a program whose kernels
    # take their block_dims from the launches in the file builds once for all its cases)

    @property
    def path(self) -> Path:
        return PROGRAMS / self.program

    @property
    def ref_path(self) -> Path:
        return REFS / f"{self.id}.npz"


def all_cases() -> list:
    """Every case of every cases_<area>.py, in a stable order; ids are unique."""
    cases = []
    for path in sorted(HERE.glob("cases_*.py")):
        spec = importlib.util.spec_from_file_location(f"conformance_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += list(module.CASES)
    ids = [c.id for c in cases]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate conformance case ids: {sorted(duplicates)}"
    return cases
