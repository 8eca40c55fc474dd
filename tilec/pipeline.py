"""The pipeline as one function: parse -> resolve -> check -> verify (-> autodiff -> emit).

Each pass is a function from one representation to the next; the pipeline
stops after a pass that reported an error and raises `CompileError`.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from . import ir, naming
from .diagnostics import CompileError, Diagnostic, Diagnostics, Span
from .frontend.check import Options
from .frontend.consts import FoldError
from .frontend.module import ModuleChecker
from .frontend.nested import discover
from .frontend.parse import Parsed, parse
from .frontend.ranges import check_int_ranges
from .frontend.resolve import Scope, resolve
from .passes.grad_calls import expand_grad_calls
from .passes.verify import verify_module

PASSES = ("parse", "resolve", "check")


@dataclass
class Compiled:
    parsed: Parsed
    module: ir.Module
    warnings: list[Diagnostic] = field(default_factory=list)
    skipped: list[tuple[str, Span, str]] = field(default_factory=list)  # (kernel, span, reason): kernels not compiled


def module_name(path: str) -> str:
    """The module name of a source file; a stem that is not an ASCII Python identifier is refused."""
    name = naming.module_name(path)
    if name is None:
        raise CompileError([Diagnostic(
            "TC0002", f"the module name {naming.source_label(Path(path).stem)!r} (the file name without "
            ".py) is not a Python identifier: it names the loader, the library and every C entry point",
            Span(1, 1, 1, 1), help="rename the file to an ASCII identifier, e.g. `prog.py`")])
    return name


def compile_source(source: str, filename: str, options: Options | None = None,
                   dump_after: str | None = None, out: TextIO | None = None) -> Compiled:
    parsed = parse(source, filename, module_name(filename))
    try:
        return _check(parsed, options or Options(), dump_after, out)
    except FoldError as e:
        raise CompileError([Diagnostic(e.code, str(e), parsed.span(e.node))]) from None


def _check(parsed: Parsed, options: Options, dump_after: str | None, out: TextIO | None) -> Compiled:
    out = out or sys.stdout  # looked up per call: click's CliRunner swaps sys.stdout
    diags = Diagnostics()
    if dump_after == "parse":
        out.write(parsed.tree.code)
    scope = resolve(parsed, diags)
    found = discover(scope, parsed, diags)  # kernels/funcs below module level, per binding
    if dump_after == "resolve":
        out.write(_dump_scope(scope))
    checker = ModuleChecker(parsed, scope, diags, options)
    module = checker.run()
    if diags.has_errors:  # `tilec check -v` still lists what was compiled and what was not
        failed = {name for name, _ in checker.kernel_errors}
        partial = dataclasses.replace(module, kernels=tuple(k for k in module.kernels if k.name not in failed))
        error = CompileError(diags.sorted())
        error.partial = Compiled(parsed, partial, [], found.skipped + checker.not_compiled + [
            (name, span, "its check reported errors") for name, span in checker.kernel_errors])
        raise error
    if checker.grad_calls:
        module = expand_grad_calls(module, diags)  # wp.grad(f)(x): funcs derived from f's adjoint
    check_int_ranges(module, diags)
    _stop_on_errors(diags)
    problems = verify_module(module)
    if problems:
        raise AssertionError("IR verifier: " + "; ".join(problems))
    if dump_after == "check":
        out.write(ir.dump_module(module))
    return Compiled(parsed, module, [d for d in diags.items if d.severity != "error"],
                    found.skipped + checker.not_compiled)


def _stop_on_errors(diags: Diagnostics) -> None:
    if diags.has_errors:
        raise CompileError(diags.sorted())


def _dump_scope(scope: Scope) -> str:
    lines = [f"api aliases: {sorted(scope.api_aliases)}", f"imported: {dict(sorted(scope.api_names.items()))}"]
    lines += [f"const {k} = {v!r}" for k, v in sorted(scope.constants.items())]
    lines += [f"func {k}" for k in scope.funcs] + [f"kernel {k} block_dim={v.block_dim}" for k, v in scope.kernels.items()]
    return "\n".join(lines) + "\n"
