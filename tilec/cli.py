"""The `tilec` command line: check, emit, build."""
from __future__ import annotations

import gc
import shutil
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Literal, NoReturn, TypeVar

import click

from . import __version__
from .build import BuildError, OutputFolderError
from .console import Progress, colorize, use_color
from .diagnostics import CompileError, render
from .frontend.source import SourceError, read_source
from .limits import run_deep

if TYPE_CHECKING:
    from . import ir
    from .backend_cuda.shared_memory import Usage
    from .codegen.sources import KernelPlan
    from .diagnostics import Diagnostic
    from .frontend.check import Options as CheckOptions
    from .pipeline import Compiled

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])

# The frontend (libcst: most of the start-up time) is imported by the commands that compile,
# not by `--version`, `--help` or the CLI's import.
PASSES = ("parse", "resolve", "check")  # pipeline.PASSES (test_cli checks they agree)


def compile_source(source: str, filename: str, options: CheckOptions | None = None,
                   dump_after: str | None = None) -> Compiled:
    from .pipeline import compile_source as compile_

    return compile_(source, filename, options, dump_after)


def Options(**kwargs: Any) -> CheckOptions:  # noqa: N802 - stands for frontend.check.Options
    from .frontend.check import Options as options

    return options(**kwargs)

NO_KERNELS = "no kernels found (no function decorated with @wp.kernel)"


class Reporter:
    """Where diagnostics go (stderr), coloured per `--color`."""

    def __init__(self, color: str = "never"):
        self.color = use_color(color, sys.stderr)
        self.count = 0  # diagnostics printed

    def diagnostic(self, text: str) -> None:
        self.count += 1
        click.echo(colorize(text) if self.color else text, err=True, color=self.color)


PLAIN = Reporter()


def _load(path: str) -> str:
    try:
        return read_source(path)
    except SourceError as e:
        click.echo(f"{path}: error: {e}", err=True)
        sys.exit(1)


def run_guarded(fn: Callable[[], _T], path: str, reporter: Reporter = PLAIN) -> _T:
    """Diagnostics -> exit 1; anything unexpected -> a one-line apology, exit 2."""
    try:
        return run_deep(fn)
    except RecursionError:
        click.echo(f"{path}: error[TC0113]: the program nests too deeply for tilec (an expression, call "
                   "chain or block deeper than it can compile); split it into smaller statements", err=True)
        sys.exit(1)
    except CompileError as e:
        source = _load(path)
        for d in e.diagnostics:
            reporter.diagnostic(render(d, path, source))
        n = sum(d.severity == "error" for d in e.diagnostics)  # warnings are printed, not counted
        click.echo(f"{n} error{'s' if n != 1 else ''} found", err=True)
        sys.exit(1)
    except SystemExit:
        raise
    except OutputFolderError as e:
        click.echo(f"{path}: error: {e}", err=True)
        sys.exit(1)
    except BuildError as e:
        click.echo(f"{path}: error: {e}", err=True)
        click.echo(f"  command: {' '.join(e.command)}", err=True)
        for line in e.errors:
            click.echo(f"  {line}", err=True)
        if e.log_path:
            click.echo(f"  log: {e.log_path}", err=True)
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"
        click.echo(f"{path}: internal compiler error: sorry, tilec failed on this file "
                   f"({type(e).__name__}: {e} at {where}); please report it", err=True)
        sys.exit(2)


def common_options(f: _F) -> _F:
    f = click.option("--block-dim", type=click.IntRange(1, 1024), default=256, show_default=True,
                     help="threads per block when the kernel does not fix one")(f)
    f = click.option("--max-shared", type=click.IntRange(0), default=None,
                     help="GPU shared-memory budget per kernel block, in bytes (default: the smallest limit of "
                     "the architectures built for; CPU builds have none)")(f)
    f = click.option("--dump-after", type=click.Choice(PASSES), default=None,
                     help="print the representation after this pass")(f)
    f = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
                     help="colour diagnostics (auto: when stderr is a terminal and NO_COLOR is unset)")(f)
    return f


@click.group()
@click.version_option(__version__, prog_name="tilec")
@click.pass_context
def main(ctx: click.Context) -> None:
    """tilec: compile Python tile programs to C++ and CUDA."""
    # A short-lived process whose parse tree holds ~40 objects per source line and no garbage
    # cycles: the cyclic collector would only rescan them (about 15% of a check). Back on when the
    # command ends, for callers that run the CLI in their own process (click's test runner).
    if gc.isenabled():
        gc.disable()
        ctx.call_on_close(gc.enable)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--show-types", is_flag=True,
              help="print each kernel's variables with dtype/shape and, for tiles, GPU storage")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True,
              help="diagnostics as text on stderr, or as JSON / SARIF 2.1.0 on stdout")
@click.option("-v", "--verbose", is_flag=True,
              help="print each step with its time; list every kernel compiled, and every one not compiled and why")
@common_options
def check(file: str, show_types: bool, fmt: str, verbose: bool, block_dim: int, max_shared: int | None,
          dump_after: str | None, color: str) -> None:
    """Check FILE and report diagnostics; emit nothing."""
    reporter = Reporter(color)
    progress = Progress(verbose, tty=sys.stderr.isatty())
    clean_key = None  # the clean-check shortcut (uptodate.py): only a check that prints nothing
    if not (verbose or show_types or dump_after) and fmt == "text":
        from . import uptodate

        clean_key = uptodate.check_key(file, {"block_dim": block_dim, "max_shared": max_shared})
    source = _load(file)
    options = Options(block_dim=block_dim, max_shared=max_shared)
    if fmt != "text":
        _report_as_data(file, source, options, fmt)

    def attempt() -> Compiled:
        try:
            return compile_source(source, file, options, dump_after)
        except CompileError as e:
            partial = getattr(e, "partial", None)  # pipeline: the kernels that did compile
            if verbose and partial is not None:
                click.echo(kernel_listing(partial, file))
            raise

    with progress.step(f"check {file}"):
        compiled = run_guarded(attempt, file, reporter)
    for warning in compiled.warnings:
        reporter.diagnostic(render(warning, file, source))
    from .codegen.sources import plan_kernels
    from .passes.normalize import normalize_module

    normalized = run_guarded(lambda: normalize_module(compiled.module), file, reporter)
    plans = run_guarded(lambda: plan_kernels(normalized), file, reporter)  # the adjoints, derived once
    for plan in plans:
        if plan.why_not is not None:
            reporter.diagnostic(render(plan.why_not, file, source) + "\n   = note: this kernel gets no adjoint")
    if not compiled.module.kernels:
        reporter.diagnostic(f"{file}: warning: {NO_KERNELS}")
    usage = run_guarded(lambda: _gpu_budget(normalized, max_shared, plans=plans), file, reporter)
    if verbose:
        click.echo(kernel_listing(compiled, file))
    if show_types:
        click.echo(run_guarded(lambda: show_types_text(compiled.module, usage), file))
    if clean_key is not None and not reporter.count:
        from . import uptodate

        if uptodate.check_key(file, {"block_dim": block_dim, "max_shared": max_shared}) == clean_key:
            uptodate.record_clean_check(clean_key)  # the source checked is the one the key read


def _report_as_data(file: str, source: str, options: CheckOptions, fmt: str) -> NoReturn:
    """`check --format json|sarif`: every diagnostic on stdout; exit 1 when one is an error."""
    from . import report

    def diagnostics() -> tuple[list[Diagnostic], Compiled | None]:
        from .passes.normalize import normalize_module

        try:
            compiled = compile_source(source, file, options)
        except CompileError as e:
            return e.diagnostics, None
        try:
            _gpu_budget(normalize_module(compiled.module), options.max_shared)
        except CompileError as e:
            return compiled.warnings + e.diagnostics, compiled
        return compiled.warnings, compiled

    found, compiled = run_guarded(diagnostics, file)
    items = [report.diagnostic_dict(d) for d in found]
    if compiled is not None and not compiled.module.kernels:
        items.append(report.file_message("warning", NO_KERNELS))
    click.echo(report.to_json(file, items) if fmt == "json" else report.to_sarif(file, items))
    sys.exit(1 if any(d["severity"] == "error" for d in items) else 0)


def kernel_listing(compiled: Compiled, path: str) -> str:
    """`tilec check -v`: every kernel instantiation compiled, then every kernel not compiled."""
    lines = []
    for k in compiled.module.kernels:
        origin = "" if k.name == k.source_name else f" (from `{k.source_name}`)"
        lines.append(f"{path}:{k.span.line}: compiled kernel {k.name}{origin}, block_dim {k.block_dim}")
    for name, span, reason in compiled.skipped:
        lines.append(f"{path}:{span.line}: not compiled: kernel {name}: {reason}")
    n = len(compiled.module.kernels)
    lines.append(f"{n} kernel{'s' if n != 1 else ''} compiled, {len(compiled.skipped)} not compiled")
    return "\n".join(lines)


def _gpu_budget(module: ir.Module, max_shared: int | None, archs: Sequence[str] | None = None,
                plans: list[KernelPlan] | None = None) -> Usage:
    """Each kernel's GPU shared memory (backend_cuda/shared_memory.py) in a normalized module;
    raises CompileError (TC0109) when a kernel's block cannot be placed within the budget, global
    scratch included."""
    from .backend_cuda.shared_memory import DEFAULT_ARCHS, budget, budget_errors, kernel_shared_memory

    archs = archs or DEFAULT_ARCHS
    usage = kernel_shared_memory(module, plans, limit=budget(max_shared, archs)[0])
    errors = budget_errors(module, max_shared, archs, usage)
    if errors:
        raise CompileError(errors)
    return usage


def show_types_text(module: ir.Module, usage: Usage | None = None) -> str:
    from . import ir
    from .backend_cuda.shared_memory import summary
    from .ir.types import TileT

    placement = gpu_placement(module)
    lines = []
    for fn in module.funcs + module.kernels:
        lines.append(f"{fn.kind} {fn.name} (line {fn.span.line})" + (f", block_dim {fn.block_dim}" if fn.kind == "kernel" else ""))
        if fn.kind == "kernel" and usage is not None:
            lines.append(summary(usage, fn.name))
        seen: dict[ir.Sym, str] = {}
        for p in fn.params:
            seen[p] = "param"
        for s in ir.walk_stmts(fn.body):
            for sym in (s.target,) if isinstance(s, ir.Assign) else getattr(s, "targets", ()) or ((s.var,) if isinstance(s, ir.For) else ()):
                seen.setdefault(sym, "local")
        for sym, role in seen.items():
            if sym.name == "_tmp":
                continue
            t = sym.type
            extra = ""
            if isinstance(t, TileT) and fn.kind == "kernel":
                extra = f"  storage={'register' if sym in placement.get(fn.name, ()) else 'shared'}"
            lines.append(f"  {sym}: {t}{extra}  ({role})")
        if fn.kind == "func":
            lines.append(f"  -> {fn.ret}")
    return "\n".join(lines)


def gpu_placement(module: ir.Module) -> dict[str, frozenset[ir.Sym]]:
    """Kernel name -> the tiles the GPU model keeps in registers (the rest: shared memory). A
    func's tiles are placed at each call site, once inlined."""
    from .backend_cuda.emit import cuda_forward
    from .backend_cuda.storage import register_tiles
    from .passes.normalize import normalize_module

    module = normalize_module(module)
    return {k.name: register_tiles(cuda_forward(k, module)) for k in module.kernels}


def build_flags(block_dim: int, target: str = "all", debug: bool = False, max_shared: int | None = None,
                emit_only: bool = False, line_directives: bool = False,
                cuda_archs: Sequence[str] | None = None) -> dict[str, Any]:
    """The flags that shape generated code; recorded in the manifest. `cuda_archs`, the
    architectures a CUDA build is for, sets the shared-memory budget tiles are placed by: recorded
    when not the default."""
    from .backend_cuda.shared_memory import DEFAULT_ARCHS

    flags: dict[str, Any] = {"block_dim": block_dim, "target": target, "debug": debug, "max_shared": max_shared,
             "emit_only": emit_only}
    if cuda_archs and tuple(cuda_archs) != DEFAULT_ARCHS:
        flags["cuda_archs"] = list(cuda_archs)
    if line_directives:
        flags["line_directives"] = True
    return flags


def _compile_for_emit(file: str, block_dim: int, max_shared: int | None, dump_after: str | None,
                      reporter: Reporter = PLAIN, cuda_archs: Sequence[str] | None = None
                      ) -> tuple[str, ir.Module, list[KernelPlan] | None]:
    """The normalized module to generate code for; a file without kernels is an error here, and so
    is, when CUDA is built for `cuda_archs`, a kernel past the shared-memory budget. With
    `cuda_archs`, also the kernels' plans (their adjoints) the budget was found from, for the
    generation to reuse: deriving them is most of a long kernel's compile."""
    from .codegen.sources import plan_kernels
    from .passes.normalize import normalize_module

    source = _load(file)
    options = Options(block_dim=block_dim, max_shared=max_shared)
    compiled = run_guarded(lambda: compile_source(source, file, options, dump_after), file, reporter)
    for warning in compiled.warnings:
        reporter.diagnostic(render(warning, file, source))
    if not compiled.module.kernels:
        reporter.diagnostic(f"{file}: error: {NO_KERNELS}")
        sys.exit(1)
    module = run_guarded(lambda: normalize_module(compiled.module), file, reporter)
    plans: list[KernelPlan] | None = None
    if cuda_archs is not None:
        def planned_within_budget() -> list[KernelPlan]:
            found = plan_kernels(module)
            _gpu_budget(module, max_shared, cuda_archs, found)
            return found

        plans = run_guarded(planned_within_budget, file, reporter)
    return source, module, plans


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--target", "what", type=click.Choice(["cpu", "cuda", "header", "loader", "manifest"]), required=True)
@common_options
def emit(file: str, what: str, block_dim: int, max_shared: int | None, dump_after: str | None, color: str) -> None:
    """Print generated text to stdout."""
    from .driver import generate

    source, module, plans = _compile_for_emit(file, block_dim, max_shared, dump_after, Reporter(color),
                                              cuda_archs=() if what == "cuda" else None)
    files = run_guarded(lambda: generate(module, source, build_flags(block_dim, max_shared=max_shared), plans), file)
    key = {"cpu": f"{module.name}.cpp", "cuda": f"{module.name}.cu", "header": f"{module.name}.h", "loader": "__init__.py",
           "manifest": "manifest.json"}[what]
    click.echo(files[key], nl=False)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--outdir", default="build", show_default=True, type=click.Path(file_okay=False))
@click.option("--target", type=click.Choice(["cpu", "cuda", "cuda-emu", "all"]), default="all", show_default=True,
              help="cpu: the .so; cuda: the fatbin (nvcc); cuda-emu: the .cu run on the CPU; all: cpu and cuda")
@click.option("--arch", default="sm_80,sm_90", show_default=True, help="CUDA architectures")
@click.option("--emit-only", is_flag=True, help="write sources, compile nothing")
@click.option("--debug", is_flag=True, help="compile without optimisation, with debug info")
@click.option("--native", is_flag=True, help="CPU library for this machine's CPU only (-march=native) instead of "
              "the portable baseline (x86-64-v3, armv8-a)")
@click.option("--cxx", default=None, help="C++ compiler (default: $CXX, else clang++, else g++)")
@click.option("--nvcc", default=None, help="nvcc to use (default: $NVCC, else nvcc on PATH)")
@click.option("-v", "--verbose", is_flag=True, help="print each step with its time, and each compiler command")
@click.option("--line-directives", is_flag=True, help="emit #line directives pointing at the Python source")
@click.option("--check", "check_only", is_flag=True,
              help="build nothing: exit 1 with a summary when OUTDIR holds stale generated code")
@click.option("--diff", "full_diff", is_flag=True, help="with --check: print the whole diff, not the first 40 lines")
@common_options
def build(file: str, outdir: str, target: str, arch: str, emit_only: bool, debug: bool, native: bool,
          cxx: str | None, nvcc: str | None, verbose: bool, line_directives: bool, check_only: bool, full_diff: bool,
          block_dim: int, max_shared: int | None, dump_after: str | None, color: str) -> None:
    """Compile FILE into OUTDIR/<module>/."""
    reporter = Reporter(color)
    _require_tools(cxx=cxx, nvcc=nvcc)
    stamp = None  # the no-op rebuild's shortcut (uptodate.py): neither verbose nor a dump prints there
    if not (check_only or verbose or dump_after):
        stamp = _shortcut(file, outdir, dict(
            target=target, arch=arch, emit_only=emit_only, debug=debug, native=native, cxx=cxx, nvcc=nvcc,
            line_directives=line_directives, block_dim=block_dim, max_shared=max_shared))
        if stamp is True:
            return
    from .driver import build_module

    progress = Progress(verbose, tty=sys.stderr.isatty())
    progress.expect(2)  # the check and the generation; build_module adds its compiler steps
    with progress.step(f"check {file}"):
        cuda_archs = tuple(a.strip() for a in arch.split(",") if a.strip()) if target in ("cuda", "all") else None
        source, module, plans = _compile_for_emit(file, block_dim, max_shared, dump_after, reporter, cuda_archs)
    flags = build_flags(block_dim, target, debug, max_shared, emit_only, line_directives, cuda_archs)
    if native:
        flags["native"] = True
    if check_only:
        _check_output(file, outdir, module, source, flags, full_diff, progress, plans)
        return
    notes: list[str] = []

    def echo(message: str = "", err: bool = False, **kwargs: Any) -> None:
        notes.extend([message] if err else [])
        click.echo(message, err=err, **kwargs)

    result = run_guarded(lambda: build_module(module, source, outdir, flags, cxx=cxx, nvcc=nvcc, arch=arch,
                                              verbose=verbose, echo=echo, progress=progress, plans=plans),
                         file, reporter)
    if isinstance(stamp, str) and not notes and not reporter.count:  # a build that printed nothing to replay
        from . import uptodate

        uptodate.record(stamp, result.folder)


def _shortcut(file: str, outdir: str, options: dict[str, Any]) -> Literal[True] | str | None:
    """True (after printing the up-to-date line) when uptodate.py finds OUTDIR/<module>/ current
    without compiling; else the stamp key to record after the build (None: none can be made)."""
    import os
    from pathlib import Path

    from . import naming, uptodate

    module = naming.module_name(file)
    if module is None:
        return None
    key = uptodate.build_key(file, outdir, options)
    folder = Path(os.path.abspath(outdir)) / module
    if uptodate.holds(key, folder, module):
        click.echo(f"{module}: up to date in {folder}")
        return True
    return key


def _require_tools(**explicit: str | None) -> None:
    """An explicit --cxx/--nvcc is used or the command fails naming it: never another compiler."""
    for option, path in explicit.items():
        if path is not None and shutil.which(path) is None:
            click.echo(f"error: --{option} {path}: not found or not executable", err=True)
            sys.exit(1)


def _check_output(file: str, outdir: str, module: ir.Module, source: str, flags: dict[str, Any], full_diff: bool,
                  progress: Progress, plans: list[KernelPlan] | None = None) -> None:
    """`build --check`: exit 0 when OUTDIR/<module>/ is current, else a summary and exit 1."""
    from pathlib import Path

    from . import staleness
    from .driver import generate

    with progress.step("generate sources"):
        generated = run_guarded(lambda: generate(module, source, flags, plans), file)
    result = staleness.compare(generated, Path(outdir) / module.name)
    command = staleness.rebuild_command(file, outdir, result.recorded, flags)
    if not result.exists:
        click.echo(f"{module.name}: {Path(outdir) / module.name} does not exist; build it with `{command}`", err=True)
        sys.exit(1)
    if not result.stale:
        click.echo(f"{module.name}: generated code in {outdir} is up to date")
        return
    click.echo(staleness.summary(result, None if full_diff else 40))
    click.echo(f"{module.name}: generated code in {Path(outdir) / module.name} is stale; rebuild with `{command}`",
               err=True)
    sys.exit(1)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--kernel", "kernels", multiple=True, help="kernel to check (default: all)")
@click.option("--dim", default="1", show_default=True, help="launch dimensions, e.g. 4 or 4,2")
@click.option("--shape", "shapes", multiple=True, help="NAME=D0,D1 array shape (default 16 per dimension)")
@click.option("--value", "values", multiple=True, help="NAME=X scalar argument (default 1)")
@click.option("--seed", default=0, show_default=True)
@click.option("--block-dim", type=click.IntRange(1, 1024), default=256, show_default=True)
def gradcheck(file: str, kernels: tuple[str, ...], dim: str, shapes: tuple[str, ...], values: tuple[str, ...],
              seed: int, block_dim: int) -> None:
    """Check FILE's adjoints against float64 finite differences on random inputs."""
    from .gradcheck import check_file, parse_assignments

    def named(items: tuple[str, ...], kind: type, option: str) -> dict[str, Any]:
        """--shape/--value items: one without `NAME=` is refused (it would go unused)."""
        out: dict[str, Any] = {}
        for item in items:
            for name, value in parse_assignments([item], kind).items():
                if name is None:
                    raise ValueError(f"{option} {item}: expected NAME={'D0,D1' if kind is int else 'X'}")
                out[name] = value
        return out

    def run() -> bool:
        try:
            launch = parse_assignments([dim], int)
            if None not in launch:
                raise ValueError(f"--dim {dim}: expected launch dimensions, e.g. 4 or 4,2")
            return check_file(file, kernels, launch[None], named(shapes, int, "--shape"),
                              named(values, float, "--value"), seed, block_dim, echo=click.echo)
        except ValueError as e:  # a bad option or argument: the user's error, not the compiler's
            click.echo(f"{file}: error: {e}", err=True)
            sys.exit(1)

    sys.exit(0 if run_guarded(run, file) else 1)


if __name__ == "__main__":
    main()
