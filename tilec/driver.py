"""From normalized IR to a built output folder: generate every file, then compile."""
from __future__ import annotations

import hashlib
from pathlib import Path

from . import __version__
from .backend import sources
from .build import cxx_command, find_cxx, inputs_hash, run_compiler, write_and_build


def generate(module, source: str, flags: dict, plans=None) -> dict:
    """Every generated text file of the output folder: relative path -> text."""
    plans = plans if plans is not None else sources.plan_kernels(module)
    emitted = sources.emit_cpu(module, plans, bool(flags.get("line_directives")))
    files = dict(emitted.files)
    files.update(sources.runtime_files())
    loader = sources.TEMPLATES.get_template("loader.py.j2").render(
        module=module.name, version=__version__, filename=Path(module.filename).name)
    files["__init__.py"] = loader
    digest = inputs_hash(files, flags)
    source_sha = hashlib.sha256(source.encode()).hexdigest()
    files["manifest.json"] = sources.manifest(module, plans, files, flags, digest, source_sha)
    return files


def stale_files(module, source: str, outdir: str, flags: dict) -> list:
    """Unified diffs between what `build` would write and OUTDIR/<module>/ (text files only)."""
    import difflib

    folder = Path(outdir) / module.name
    diffs = []
    for name, text in sorted(generate(module, source, flags).items()):
        path = folder / name
        old = path.read_text() if path.exists() else ""
        if old != text:
            diffs.append("".join(difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=f"{folder.name}/{name} (committed)" if path.exists() else "/dev/null",
                tofile=f"{folder.name}/{name} (generated)")))
    return diffs


def build_module(module, source: str, outdir: str, flags: dict, cxx=None, nvcc=None, arch="",
                 verbose=False, echo=print):
    plans = sources.plan_kernels(module)
    for plan in plans:
        if plan.why_not is not None:
            from .diagnostics import render

            echo(render(plan.why_not, module.filename, source) + f"\n   = note: kernel `{plan.forward.name}` is "
                 "built without an adjoint", err=True)
    files = generate(module, source, flags, plans)
    digest = inputs_hash({k: v for k, v in files.items() if k != "manifest.json"}, flags)
    steps, products = [], []
    out = Path(outdir)
    if not flags.get("emit_only") and flags.get("target") in ("cpu", "all"):
        compiler = find_cxx(cxx)
        if compiler is None:
            echo("note: no C++ compiler found (clang++ or g++); CPU library not built", err=True)
        else:
            so = f"lib{module.name}_cpu.so"
            products.append(so)

            def compile_cpu(tmp: Path, compiler=compiler, so=so):
                cmd = cxx_command(compiler, f"{module.name}.cpp", so, flags.get("debug", False))
                if verbose:
                    echo(" ".join(cmd))
                run_compiler(cmd, tmp, f"{module.name}_cpu.log", out)

            steps.append(compile_cpu)
    if flags.get("target") in ("cuda", "all") and not flags.get("emit_only"):
        echo("note: the CUDA backend is not available in this version; CPU parts only", err=True)
    result = write_and_build(out, module.name, files, digest, steps, products)
    state = "up to date" if result.up_to_date else "built"
    echo(f"{module.name}: {state} in {result.folder}")
    return result
