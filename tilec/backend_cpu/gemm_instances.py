"""The GEMM code a CPU library needs, compiled once and cached (runtime_headers/tilec/gemm.h,
"Compile time").

gemm.h's templates, instantiated per tile shape, were about half of the compile of a module with
products, and the same shapes come back in every rebuild of a module being edited and in other
modules. A module compiled with compiler.GEMM_EXTERN_FLAG only declares gemm.h's five entry points; `needed`
reads which instances its objects leave undefined (nm), and `instances_object` is the cached
object of explicit instantiations of exactly those, which the library links.

Only the five entries, with template arguments and parameters spelled in numbers, `true` and
`false` and C++ type names, are accepted from nm (`_INSTANCE`): the lines are compiled, so nothing
else may reach them. Any other undefined name of gemm.h, or no nm, makes `needed` answer None, and
the caller compiles the module whole, as without this.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ..naming import RUNTIME_DIR
from .compiler import GEMM_EXTERN_FLAG, SHARED_RUNTIME_FLAG, Precompiled, cached_build

KEEP = 64  # cached instance objects kept (the most recently used; tens to hundreds of KB each)

# `void tl::gemm::matmul_sum<float, 32, 32, 32>(tl::gemm::Strided<float> const*, ..., int, float*)`
_INSTANCE = re.compile(r"void tl::gemm::(matmul|matmul_packed|matmul_sum|matmul_transposed_view|matmul_strided_a)"
                       r"<[\w:<>, -]+>\([\w:<>, *&]*\)")


def uses_gemm(cpp_text: str) -> bool:
    """Whether a generated source may call gemm.h (every product goes through a `tl::` function
    or class whose name says matmul); a false yes costs an nm run and a separate link, no more."""
    return "matmul" in cpp_text.lower()


def needed(objects: list[Path]) -> list[str] | None:
    """The explicit instantiations (`template void tl::gemm::...;` lines, sorted, without
    duplicates) that define what the objects use of gemm.h; None when nm is missing or fails, or an
    undefined name of gemm.h is not an instance this module can define."""
    nm = shutil.which("nm")
    if nm is None:
        return None
    lines: set[str] = set()
    for obj in objects:
        proc = subprocess.run([nm, "-C", "-u", str(obj)], capture_output=True, text=True)
        if proc.returncode != 0:
            return None
        for line in proc.stdout.splitlines():
            name = line.strip()
            if not name.startswith("U "):
                continue
            name = name[2:].strip()
            if "tl::gemm::" not in name:
                continue
            if _INSTANCE.fullmatch(name) is None:
                return None
            lines.add(f"template {name};")
    return sorted(lines)


def instances_source(instances: list[str]) -> str:
    """The instances' translation unit: compiled, like the module, with gemm.h's entry points only
    declared (the module's precompiled header serves), then their definitions and the instances."""
    return (f'#include "{RUNTIME_DIR}/tilec.h"\n#include "{RUNTIME_DIR}/gemm_entries.h"\n'
            "// gemm.h's instances for tilec CPU libraries (backend_cpu/gemm_instances.py)\n"
            + "".join(f"{line}\n" for line in instances))


def instances_object(cxx: str, flags: list[str], headers: dict[str, str], instances: list[str],
                     pre: Precompiled | None = None) -> Path | None:
    """The cached object defining `instances` (needed's lines), compiled with the module's flags
    and the shared runtime's declarations (the library links that runtime), with the module's
    precompiled header `pre` where given; None when it cannot be had."""
    source = instances_source(instances)
    extern = [SHARED_RUNTIME_FLAG, GEMM_EXTERN_FLAG]

    def command(tmp: Path) -> list[str]:
        (tmp / "instances.cpp").write_text(source, encoding="utf-8")
        forced: list[str] = []
        if pre is not None and pre.gch is not None:
            try:
                (tmp / RUNTIME_DIR / "tilec.h.gch").symlink_to(pre.gch)
            except OSError:
                pass  # compiled without it
        elif pre is not None:
            forced = ["-include", pre.include]
        return [cxx, *flags, *extern, "-c", *forced, "-I.", "instances.cpp", "-o", "out.o"]

    return cached_build(cxx, [*flags, *extern, source], headers, "gemm", ".o", command, keep=KEEP)
