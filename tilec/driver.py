"""From normalized IR to a built output folder: generate every file, then compile."""
from __future__ import annotations

import hashlib
import json
import platform
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from . import naming
from .backend_cpu import emit as cpu_emit
from .backend_cpu import gemm_instances, units
from .backend_cpu.compiler import (GEMM_EXTERN_FLAG, RUNTIME_HEADER, SHARED_RUNTIME_FLAG, Precompiled, compile_flags,
                                   compile_jobs, compiler_identity, cpu_features, cxx_command, find_cxx, link_command, part_command,
                                   pinned, precompiled_runtime, shared_runtime, target_isa)
from .backend_cuda import emit as cuda_emit
from .backend_cuda.shared_memory import placement_budget
from .backend_cuda.compiler import (MAX_SHARED_BYTES, emu_command, find_nvcc, nvcc_command, nvcc_threads,
                                    nvcc_version, parse_ptxas, ptx_arch)
from . import product_cache
from .build import BuildError, inputs_hash, run_compiler, write_and_build
from .codegen import sources

if TYPE_CHECKING:
    from . import ir
    from .build import BuildResult
    from .codegen.sources import KernelPlan
    from .console import Progress
    from .diagnostics import Diagnostic

Echo = Callable[..., Any]  # click.echo, or print: (text, err=bool)
Step = Callable[[Path], None]  # one compile step, run in the temporary build folder


def generate(module: ir.Module, source: str, flags: dict[str, Any],
             plans: list[KernelPlan] | None = None) -> dict[str, str]:
    """Every generated text file of the output folder: relative path -> text."""
    plans = plans if plans is not None else sources.plan_kernels(module)
    line_directives = bool(flags.get("line_directives"))
    cuda_plans = cuda_emit.plan_cuda(module, plans)
    cu_text, cuda_entries = cuda_emit.emit_cuda(module, cuda_plans, line_directives, placement_budget(flags))
    emitted = cpu_emit.emit_cpu(module, plans, line_directives, cuda_entries)
    files = dict(emitted.files)
    files[f"{module.name}.cu"] = cu_text
    files.update(sources.runtime_files())
    files.update(sources.loader_files(module.name, module.filename))
    source_sha = hashlib.sha256(source.encode()).hexdigest()
    files["manifest.json"] = sources.manifest(module, plans, files, flags, "", source_sha, cuda_plans,
                                              cuda_entries)
    manifest = json.loads(files["manifest.json"])
    manifest["inputs_hash"] = folder_digest(files, flags)
    files["manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return files


def folder_digest(files: dict[str, str], flags: dict[str, Any]) -> str:
    """The up-to-date key of a folder's generated files and flags: every file, the manifest too
    (a change only the manifest shows, such as the source's hash, rebuilds), with the manifest's
    own `inputs_hash` left out (it holds this value)."""
    hashed = dict(files)
    if "manifest.json" in hashed:
        manifest = json.loads(hashed["manifest.json"])
        manifest["inputs_hash"] = ""
        hashed["manifest.json"] = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    return inputs_hash(hashed, flags)


def build_module(module: ir.Module, source: str, outdir: str, flags: dict[str, Any], cxx: str | None = None,
                 nvcc: str | None = None, arch: str = "", verbose: bool = False, echo: Echo = print,
                 progress: Progress | None = None, plans: list[KernelPlan] | None = None) -> BuildResult:
    """Generates and compiles OUTDIR/<module>/. `progress` (console.Progress) times each step;
    without one, `verbose` prints each compiler command. `plans`: the module's kernel plans
    (sources.plan_kernels) when the caller already derived them."""
    if progress is None:
        from .console import Progress

        progress = Progress(False, echo)
    plans = plans if plans is not None else sources.plan_kernels(module)
    for plan in plans:
        if plan.why_not is not None:
            from .diagnostics import render

            echo(render(plan.why_not, module.filename, source) + f"\n   = note: kernel `{plan.forward.name}` is "
                 "built without an adjoint", err=True)
    with progress.step("generate sources"):
        files = generate(module, source, flags, plans)
    if flags.get("target") in ("cuda", "all"):
        for warning in shared_memory_warnings(module, files["manifest.json"], arch):
            from .diagnostics import render

            echo(render(warning, module.filename, source), err=True)
    digest = folder_digest(files, flags)
    steps: list[Step] = []
    products: dict[str, tuple[str, list[str]]] = {}
    out = Path(outdir)
    target, debug = flags.get("target"), flags.get("debug", False)
    name = module.name
    runtime = {k: v for k, v in files.items() if k.startswith(naming.RUNTIME_DIR + "/")}
    if not flags.get("emit_only"):
        compiler = find_cxx(cxx) if target in ("cpu", "all", "cuda-emu") else None
        if target in ("cpu", "all", "cuda-emu") and compiler is None:
            echo("note: no C++ compiler found (clang++ or g++); CPU libraries not built", err=True)
        if compiler and target in ("cpu", "all"):
            isa = target_isa(bool(flags.get("native")))
            command = cxx_command(compiler, f"{name}.cpp", f"lib{name}_cpu.so", debug, isa)
            products[f"lib{name}_cpu.so"] = (f"{name}.cpp", command)
            steps.append(_cxx_step(f"{name}.cpp", f"lib{name}_cpu.so", debug, f"{name}_cpu.log", out, verbose, echo,
                                   progress, compiler, isa, runtime))
        if compiler and target == "cuda-emu":
            command = emu_command(compiler, f"{name}.cu", f"lib{name}_cuda_emu.so", debug)
            products[f"lib{name}_cuda_emu.so"] = (f"{name}.cu", command)
            steps.append(_step(command, f"{name}_cuda_emu.log", out, verbose, echo, progress))
        if target in ("cuda", "all"):
            nvcc_path = find_nvcc(nvcc)
            if nvcc_path is None:
                echo("note: nvcc not found: the CUDA fatbin is not built (the .cu source is written)", err=True)
            else:
                archs = [a.strip() for a in arch.split(",") if a.strip()]
                command = nvcc_command(nvcc_path, f"{name}.cu", f"{name}.fatbin", archs, debug)
                products[f"{name}.fatbin"] = (f"{name}.cu", command)
                steps.append(_nvcc_step(command, name, out, verbose, echo, nvcc_version(nvcc_path), archs, progress,
                                        runtime, debug))
    progress.expect(len(steps))
    if len(steps) > 1 and compile_jobs() > 1:
        steps = [_side_by_side(steps)]
    result = write_and_build(out, name, files, digest, steps, products)
    progress.close()
    state = "up to date" if result.up_to_date else "built"
    echo(f"{name}: {state} in {result.folder}")
    if verbose:
        table = resource_table(result.folder / "manifest.json")
        if table:
            echo(table)
    return result


def record_resources(manifest_path: Path, ptxas: dict[str, Any], nvcc_version: str, archs: list[str]) -> None:
    """Adds nvcc's per-kernel registers, shared memory and spills to manifest.json."""
    import json

    data = json.loads(manifest_path.read_text())
    data["cuda_build"] = {"archs": archs, "ptx": ptx_arch(archs), "nvcc": nvcc_version}
    for name, kernel in data["kernels"].items():
        kernels = kernel.get("entries", {}).get("cuda", {})
        found = {direction: ptxas[cu] for direction, cu in sorted(kernels.items()) if cu in ptxas}
        if found:
            kernel["cuda_resources"] = found
    manifest_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def resource_table(manifest_path: Path) -> str:
    """`tilec build -v`: one line per CUDA kernel and architecture."""
    import json

    if not manifest_path.exists():
        return ""
    data = json.loads(manifest_path.read_text())
    rows = []
    for name, kernel in sorted(data["kernels"].items()):
        for direction, archs in sorted(kernel.get("cuda_resources", {}).items()):
            dynamic = kernel.get("cuda_shared_bytes", {}).get(direction, 0)
            for arch, r in sorted(archs.items()):
                rows.append(f"  {name} {direction:<8} {arch}: {r.get('registers', 0):>3} registers, "
                            f"{r.get('spill_stores', 0)}/{r.get('spill_loads', 0)} bytes spilled (st/ld), "
                            f"{r.get('stack_frame_bytes', 0)} B stack, "
                            f"{r.get('static_shared_bytes', 0)} B static + {dynamic} B dynamic shared")
    return ("CUDA resources (nvcc " + data.get("cuda_build", {}).get("nvcc", "?") + "):\n" + "\n".join(rows)
            if rows else "")


def shared_memory_warnings(module: ir.Module, manifest_text: str, arch: str) -> list[Diagnostic]:
    """A warning at each kernel whose GPU shared memory exceeds what a requested architecture allows
    a block: its CUDA launches would fail."""
    import json

    from .diagnostics import Diagnostic

    kernels = json.loads(manifest_text)["kernels"]
    archs = [a.strip() for a in arch.split(",") if a.strip() in MAX_SHARED_BYTES]
    out = []
    for k in module.kernels:
        for direction, need in sorted(kernels[k.name].get("cuda_shared_bytes", {}).items()):
            over = [a for a in archs if need > MAX_SHARED_BYTES[a]]
            if over:
                limits = ", ".join(f"{a} allows {MAX_SHARED_BYTES[a] // 1024} KiB" for a in over)
                out.append(Diagnostic(
                    "TC0601", f"kernel `{k.source_name}` ({direction}) needs {need / 1024:g} KiB of shared memory "
                    f"per block on the GPU ({limits}): its CUDA launches will fail", k.span, severity="warning",
                    help="use smaller tiles, or fewer tiles other threads read (they live in shared memory)"))
    return out


# The compile steps edit manifest.json in the temporary folder; side by side they take turns.
_MANIFEST_EDIT = threading.Lock()


def _side_by_side(steps: list[Step]) -> Step:
    """The compile steps at once, each waiting on its own compiler: `--target all` takes the longer of
    g++ and nvcc instead of their sum where cores are idle (compile_jobs). The first failure, in the
    steps' order, is raised after every step has ended."""

    def run(tmp: Path) -> None:
        errors: list[BaseException | None] = [None] * len(steps)

        def one(i: int) -> None:
            try:
                steps[i](tmp)
            except BaseException as e:  # noqa: BLE001 - raised in the calling thread below
                errors[i] = e

        others = [threading.Thread(target=one, args=(i,), name=f"tilec-step-{i}") for i in range(1, len(steps))]
        for thread in others:
            thread.start()
        one(0)
        for thread in others:
            thread.join()
        for error in errors:
            if error is not None:
                raise error

    return run


def _step(cmd: list[str], log_name: str, out: Path, verbose: bool, echo: Echo, progress: Progress) -> Step:
    def run(tmp: Path) -> None:
        if verbose:
            echo(" ".join(cmd))
        with progress.step(f"{Path(cmd[0]).name} -> {cmd[cmd.index('-o') + 1]}"):
            run_compiler(cmd, tmp, log_name, out)

    return run


def _cxx_step(source: str, output: str, debug: bool, log_name: str, out: Path, verbose: bool, echo: Echo,
              progress: Progress, compiler: str, isa: str, headers: dict[str, str]) -> Step:
    """The CPU library, with the cached precompiled runtime header where the compiler takes one
    (backend_cpu/compiler.py) and gemm.h's instances from their cache (backend_cpu/gemm_instances.py);
    its ISA and the CPU features it may use go into manifest.json (`cpu_build`), which the loader
    checks against the running CPU before loading it."""
    import json

    def compile_library(tmp: Path, flags: list[str], text: str) -> None:
        """The whole file, or its units as objects (_compiled_as_objects)."""
        runtime = shared_runtime(compiler, flags, headers, debug)
        if runtime is not None:  # linked from a private name: another build may prune the cache meanwhile
            runtime = pinned(runtime, tmp)
        extern = runtime is not None and gemm_instances.uses_gemm(text)
        pre = precompiled_runtime(compiler, flags + ([SHARED_RUNTIME_FLAG] if runtime else [])
                                  + ([GEMM_EXTERN_FLAG] if extern else []), headers, debug)
        link = tmp / naming.RUNTIME_DIR / "tilec.h.gch"
        if pre is not None and pre.gch is not None:
            try:
                link.symlink_to(pre.gch)
            except OSError:
                pre = None
        # the whole file compiles without extern's macro: g++ then ignores a .gch made with it, and
        # clang++ would use such a .pch regardless (gemm.h's entries left undefined)
        whole_pch = pre.include if pre is not None and (pre.gch is not None or not extern) else None
        # and a clang++ .pch that cannot be used is refused, not ignored: the headers compile instead
        refusable = whole_pch is not None and pre is not None and pre.gch is None
        cmd = cxx_command(compiler, source, output, debug, isa, pch=whole_pch, runtime_object=runtime)
        try:
            with progress.step(f"{Path(compiler).name} -> {output}"):
                if runtime is None or not _compiled_as_objects(compiler, source, text, output, isa, runtime, tmp,
                                                               verbose, echo, extern, headers, pre):
                    if verbose:
                        echo(" ".join(cmd))
                    try:
                        run_compiler(cmd, tmp, log_name, out)
                    except BuildError:
                        if not refusable:
                            raise
                        run_compiler(cxx_command(compiler, source, output, debug, isa, runtime_object=runtime),
                                     tmp, log_name, out)
        finally:
            if pre is not None and pre.gch is not None:
                link.unlink()
            if runtime is not None:
                runtime.unlink()

    def run(tmp: Path) -> None:
        flags = compile_flags(debug, isa, compiler)
        texts = _module_texts(tmp, source)
        key = None
        if product_cache.enabled() and not debug and isa != "native":  # see product_cache.py
            key = product_cache.product_key([compiler], [compiler_identity(compiler)], _commands(compiler, output, isa),
                                            {**headers, **texts})
        if key is not None and product_cache.fetch(key, tmp, [output]):
            with progress.step(f"{Path(compiler).name} -> {output}: unchanged C++, the library built before"):
                if verbose:
                    echo(f"{output}: copied from the cache ({product_cache.KIND}/{key})")
        else:
            compile_library(tmp, flags, texts[source])
            if key is not None:
                product_cache.store(key, [tmp / output])
        manifest_path = tmp / "manifest.json"
        features = cpu_features(compiler, isa)
        with _MANIFEST_EDIT:
            data = json.loads(manifest_path.read_text())
            data["cpu_build"] = {"isa": isa, "cpu_features": features, "machine": platform.machine().lower()}
            manifest_path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")

    return run


def _commands(compiler: str, output: str, isa: str) -> list[str]:
    """Every command that may make the library, paths aside (for its product_cache key): a change to
    any of their flags is a different library."""
    unit, runtime = "unit.cpp", Path("runtime.o")
    return [*cxx_command(compiler, unit, output, False, isa, pch=RUNTIME_HEADER, runtime_object=runtime)[1:], "\0",
            *part_command(compiler, unit, "unit.o", isa, True)[1:], "\0",
            *link_command(compiler, ["unit.o"], output, isa, runtime)[1:]]


def _module_texts(tmp: Path, source: str) -> dict[str, str]:
    """The source and the module's header it includes (the runtime headers aside), by name."""
    names = [source, Path(source).with_suffix(".h").name]
    return {name: (tmp / name).read_text(encoding="utf-8") for name in names if (tmp / name).exists()}


def _compiled_as_objects(compiler: str, source: str, text: str, output: str, isa: str, runtime: Path, tmp: Path,
                         verbose: bool, echo: Echo, extern: bool, headers: dict[str, str],
                         pre: Precompiled | None) -> bool:
    """The library linked from objects: the module's entries split into translation units
    (backend_cpu/units.py) compiled at once on idle cores, and with `extern`, each unit compiled
    without gemm.h's instances, which come from their cached object (gemm_instances.py). False when
    there is nothing to do that way (one idle core, one entry, and no extern) or a step failed: the
    caller then compiles the whole file, whose errors it reports as always. The parts, objects and
    the pinned instances are private names in tmp, removed here: they never reach the output. text:
    the source's."""
    import subprocess

    jobs = compile_jobs()
    texts = units.split(text, jobs) if jobs > 1 else None
    if texts is None and not extern:
        return False
    stem = Path(source).stem
    names = ([(f".{stem}.part{i}.cpp", f".{stem}.part{i}.o") for i in range(len(texts))] if texts is not None
             else [(source, f".{stem}.o")])
    written = [part for part, _ in names] if texts is not None else []
    instances: Path | None = None
    try:
        for part, text in zip(written, texts or []):
            (tmp / part).write_text(text, encoding="utf-8")
        include = pre.include if pre is not None else RUNTIME_HEADER
        commands = [part_command(compiler, part, obj, isa, extern, include) for part, obj in names]
        for command in commands if verbose else ():
            echo(" ".join(command))
        running = [subprocess.Popen(command, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for command in commands]
        if any([proc.wait() != 0 for proc in running]):  # a list: wait for every part
            return False
        objects = [obj for _, obj in names]
        if extern:
            wanted = gemm_instances.needed([tmp / obj for obj in objects])
            if wanted is None:
                return False
            if wanted:
                cached = gemm_instances.instances_object(compiler, compile_flags(False, isa, compiler), headers, wanted, pre)
                instances = pinned(cached, tmp) if cached is not None else None
                if instances is None:
                    return False
                objects.append(instances.name)
                if verbose:
                    echo(f"gemm instances ({len(wanted)}): {cached}")
        linked = link_command(compiler, objects, output, isa, runtime)
        if verbose:
            echo(" ".join(linked))
        return subprocess.run(linked, cwd=tmp, capture_output=True).returncode == 0
    finally:
        for part in written:
            (tmp / part).unlink(missing_ok=True)
        for _, obj in names:
            (tmp / obj).unlink(missing_ok=True)
        if instances is not None:
            instances.unlink(missing_ok=True)


def _nvcc_step(cmd: list[str], name: str, out: Path, verbose: bool, echo: Echo, version: str, archs: list[str],
               progress: Progress, headers: dict[str, str], debug: bool) -> Step:
    """The fatbin, or the one compiled before from the same .cu (product_cache.py: kept with
    ptxas's report, which the manifest's resources are read from)."""
    report = "ptxas.log"  # beside the fatbin in the cache entry, never in the output folder

    def run(tmp: Path) -> None:
        key = None
        if product_cache.enabled() and not debug:
            host = shutil.which("g++")  # nvcc preprocesses with the host compiler on PATH
            key = product_cache.product_key([cmd[0], *([host] if host else [])], [version], cmd[1:],
                                            {**headers, **_module_texts(tmp, f"{name}.cu")})
        if key is not None and product_cache.fetch(key, tmp, [f"{name}.fatbin", report]):
            with progress.step(f"nvcc -> {name}.fatbin: unchanged CUDA, the fatbin built before"):
                if verbose:
                    echo(f"{name}.fatbin: copied from the cache ({product_cache.KIND}/{key})")
                log = (tmp / report).read_text(encoding="utf-8")
                (tmp / report).unlink()
        else:
            running = cmd + nvcc_threads(version, compile_jobs())
            if verbose:
                echo(" ".join(running))
            with progress.step(f"nvcc -> {name}.fatbin ({', '.join(archs)})"):
                log = run_compiler(running, tmp, f"{name}_cuda.log", out)
            if key is not None:
                (tmp / report).write_text(log, encoding="utf-8")
                product_cache.store(key, [tmp / f"{name}.fatbin", tmp / report])
                (tmp / report).unlink()
        with _MANIFEST_EDIT:
            record_resources(tmp / "manifest.json", parse_ptxas(log), version, archs)

    return run
