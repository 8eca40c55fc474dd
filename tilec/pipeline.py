"""The pipeline as one function: parse -> resolve -> check -> verify (-> autodiff -> emit).

Each pass is a function from one representation to the next; the pipeline
stops after a pass that reported an error and raises `CompileError`.
"""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import ir
from .diagnostics import CompileError, Diagnostics
from .frontend.check import Options
from .frontend.module import ModuleChecker
from .frontend.nested import discover
from .frontend.parse import Parsed, parse
from .frontend.resolve import resolve
from .passes.verify import verify_module

PASSES = ("parse", "resolve", "check")


@dataclass
class Compiled:
    parsed: Parsed
    module: ir.Module
    warnings: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # (kernel, span, reason): kernels not compiled


def module_name(path: str) -> str:
    stem = Path(path).stem
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
    return name if name and not name[0].isdigit() else f"m_{name}"


def compile_source(source: str, filename: str, options: Options | None = None,
                   dump_after: str | None = None, out=sys.stdout) -> Compiled:
    options = options or Options()
    diags = Diagnostics()
    parsed = parse(source, filename, module_name(filename))
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
        error.partial = Compiled(parsed, partial, [], found.skipped + [
            (name, span, "its check reported errors") for name, span in checker.kernel_errors])
        raise error
    problems = verify_module(module)
    if problems:
        raise AssertionError("IR verifier: " + "; ".join(problems))
    if dump_after == "check":
        out.write(ir.dump_module(module))
    return Compiled(parsed, module, [d for d in diags.items if d.severity != "error"], found.skipped)


def _stop_on_errors(diags: Diagnostics) -> None:
    if diags.has_errors:
        raise CompileError(diags.sorted())


def _dump_scope(scope) -> str:
    lines = [f"api aliases: {sorted(scope.api_aliases)}", f"imported: {dict(sorted(scope.api_names.items()))}"]
    lines += [f"const {k} = {v!r}" for k, v in sorted(scope.constants.items())]
    lines += [f"func {k}" for k in scope.funcs] + [f"kernel {k} block_dim={v.block_dim}" for k, v in scope.kernels.items()]
    return "\n".join(lines) + "\n"
