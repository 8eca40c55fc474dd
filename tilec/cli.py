"""The `tilec` command line: check, emit, build."""
from __future__ import annotations

import gc
import sys
import traceback

import click

from . import __version__
from .build import BuildError
from .diagnostics import CompileError, render
from .frontend.check import Options
from .pipeline import PASSES, compile_source


def _load(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        click.echo(f"{path}: error: cannot read file: {e.strerror}", err=True)
        sys.exit(1)
    except UnicodeDecodeError:
        click.echo(f"{path}: error: not UTF-8 text", err=True)
        sys.exit(1)


def run_guarded(fn, path: str):
    """Diagnostics -> exit 1; anything unexpected -> a one-line apology, exit 2."""
    try:
        return fn()
    except CompileError as e:
        source = _load(path)
        for d in e.diagnostics:
            click.echo(render(d, path, source), err=True)
        n = sum(d.severity == "error" for d in e.diagnostics)  # warnings are printed, not counted
        click.echo(f"{n} error{'s' if n != 1 else ''} found", err=True)
        sys.exit(1)
    except SystemExit:
        raise
    except BuildError as e:
        click.echo(f"{path}: error: {e}", err=True)
        click.echo(f"  command: {' '.join(e.command)}", err=True)
        if e.log_path:
            click.echo(f"  log: {e.log_path}", err=True)
        sys.exit(1)
    except Exception as e:  # noqa: BLE001 - the last line of defence against tracebacks
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else "?"
        click.echo(f"{path}: internal compiler error: sorry, tilec failed on this file "
                   f"({type(e).__name__}: {e} at {where}); please report it", err=True)
        sys.exit(2)


def common_options(f):
    f = click.option("--block-dim", type=click.IntRange(1, 1024), default=256, show_default=True,
                     help="threads per block when the kernel does not fix one")(f)
    f = click.option("--max-shared", type=click.IntRange(0), default=48 * 1024, show_default=True,
                     help="shared-memory budget per kernel, in bytes")(f)
    f = click.option("--dump-after", type=click.Choice(PASSES), default=None,
                     help="print the representation after this pass")(f)
    return f


@click.group()
@click.version_option(__version__, prog_name="tilec")
def main():
    """tilec: compile Python tile programs to C++ and CUDA."""
    # A short-lived process whose parse tree holds ~40 objects per source line and no garbage
    # cycles: the cyclic collector would only rescan them (about 15% of a check).
    gc.disable()


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--show-types", is_flag=True,
              help="print each kernel's variables with dtype/shape and, for tiles, GPU storage")
@click.option("-v", "--verbose", is_flag=True, help="list every kernel compiled, and every one not compiled and why")
@common_options
def check(file, show_types, verbose, block_dim, max_shared, dump_after):
    """Check FILE and report diagnostics; emit nothing."""
    source = _load(file)
    options = Options(block_dim=block_dim, max_shared=max_shared)

    def attempt():
        try:
            return compile_source(source, file, options, dump_after)
        except CompileError as e:
            if verbose and getattr(e, "partial", None) is not None:
                click.echo(kernel_listing(e.partial, file))
            raise

    compiled = run_guarded(attempt, file)
    for warning in compiled.warnings:
        click.echo(render(warning, file, source), err=True)
    if verbose:
        click.echo(kernel_listing(compiled, file))
    if show_types:
        click.echo(show_types_text(compiled.module))


def kernel_listing(compiled, path: str) -> str:
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


def show_types_text(module) -> str:
    from . import ir
    from .ir.types import TileT

    placement = gpu_placement(module)
    lines = []
    for fn in module.funcs + module.kernels:
        lines.append(f"{fn.kind} {fn.name} (line {fn.span.line})" + (f", block_dim {fn.block_dim}" if fn.kind == "kernel" else ""))
        seen = {}
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


def gpu_placement(module) -> dict:
    """Kernel name -> the tiles the GPU model keeps in registers (the rest: shared memory). A
    func's tiles are placed at each call site, once inlined."""
    from .backend_cuda.emit import cuda_forward
    from .backend_cuda.storage import register_tiles
    from .passes.normalize import normalize_module

    module = normalize_module(module)
    return {k.name: register_tiles(cuda_forward(k, module)) for k in module.kernels}


def build_flags(block_dim, target="all", debug=False, max_shared=48 * 1024, emit_only=False,
                line_directives=False) -> dict:
    """The flags that shape generated code; recorded in the manifest."""
    flags = {"block_dim": block_dim, "target": target, "debug": debug, "max_shared": max_shared,
             "emit_only": emit_only}
    if line_directives:
        flags["line_directives"] = True
    return flags


def _compile_for_emit(file, block_dim, max_shared, dump_after):
    from .passes.normalize import normalize_module

    source = _load(file)
    options = Options(block_dim=block_dim, max_shared=max_shared)
    compiled = run_guarded(lambda: compile_source(source, file, options, dump_after), file)
    return source, normalize_module(compiled.module)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--target", "what", type=click.Choice(["cpu", "cuda", "header", "loader", "manifest"]), required=True)
@common_options
def emit(file, what, block_dim, max_shared, dump_after):
    """Print generated text to stdout."""
    from .driver import generate

    source, module = _compile_for_emit(file, block_dim, max_shared, dump_after)
    files = generate(module, source, build_flags(block_dim, max_shared=max_shared))
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
@click.option("--cxx", default=None, help="C++ compiler (default: clang++, else g++)")
@click.option("--nvcc", default=None, help="nvcc to use")
@click.option("-v", "--verbose", is_flag=True)
@click.option("--line-directives", is_flag=True, help="emit #line directives pointing at the Python source")
@click.option("--check", "check_only", is_flag=True,
              help="build nothing: exit 1 with a diff when OUTDIR holds stale generated code")
@common_options
def build(file, outdir, target, arch, emit_only, debug, cxx, nvcc, verbose, line_directives, check_only, block_dim,
          max_shared, dump_after):
    """Compile FILE into OUTDIR/<module>/."""
    from .driver import build_module, stale_files

    source, module = _compile_for_emit(file, block_dim, max_shared, dump_after)
    flags = build_flags(block_dim, target, debug, max_shared, emit_only, line_directives)
    if check_only:
        diffs = run_guarded(lambda: stale_files(module, source, outdir, flags), file)
        for diff in diffs:
            click.echo(diff, nl=False)
        if diffs:
            click.echo(f"{module.name}: {len(diffs)} generated file(s) in {outdir} are stale; rebuild with "
                       f"`tilec build {file} -o {outdir}`", err=True)
            sys.exit(1)
        click.echo(f"{module.name}: generated code in {outdir} is up to date")
        return
    run_guarded(lambda: build_module(module, source, outdir, flags, cxx=cxx, nvcc=nvcc, arch=arch,
                                     verbose=verbose, echo=click.echo), file)


if __name__ == "__main__":
    main()
