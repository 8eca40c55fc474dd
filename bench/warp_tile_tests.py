"""Warp's own tile tests, compiled by tilec: how much of real Warp tile code tilec accepts, and
whether it computes what Warp computes.

    python bench/warp_tile_tests.py [--static] [--files test_tile_load,test_tile_reduce] [-v]

The tests are read from the INSTALLED warp package (`warp/tests/tile/` in site-packages); nothing
of them is copied into this repository. For every test file:

1. static: every `@wp.kernel` in the file (module level, nested in a function or class, made in a
   loop) is found; tilec checks each module-level kernel on its own (the funcs it calls come with
   it) and builds the accepted ones for the CPU. A kernel tilec rejects is reported with its first
   diagnostic; a kernel tilec does not see (nested) is reported as such.
2. run (not with --static): the file's unittest cases run on the CPU under Warp 1.19
   (`enable_cpu_blocks`), with every `wp.launch`/`wp.launch_tiled` of an accepted kernel shadowed:
   the same launch runs through tilec's compiled kernel on copies of the same inputs, forward and
   adjoint (Warp's tape calls `wp.launch(..., adjoint=True)`), and the arrays afterwards are
   compared with Warp's (rtol = atol = 1e-4). Warp's own results are what the test sees, so the
   test's assertions are unchanged.

Prints kernels found / accepted / built, launches matched, gradients (adjoint launches) matched,
and a histogram of the rejection reasons.
"""
from __future__ import annotations

import argparse
import ast
import collections
import importlib
import io
import re
import sys
import tempfile
import time
import unittest
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tilec.api import load  # noqa: E402
from tilec.diagnostics import Diagnostics  # noqa: E402
from tilec.driver import build_module  # noqa: E402
from tilec.frontend.check import Options  # noqa: E402
from tilec.frontend.module import ModuleChecker  # noqa: E402
from tilec.frontend.parse import parse  # noqa: E402
from tilec.frontend.resolve import resolve  # noqa: E402
from tilec.passes.normalize import normalize_module  # noqa: E402
from tilec.pipeline import module_name  # noqa: E402

RTOL = ATOL = 1e-4


class _OneKernel(ModuleChecker):
    """Checks only the kernels in scope.kernels and the funcs they call (not every uncalled func)."""

    def check_uncalled_funcs(self) -> None:
        pass


@dataclass
class KernelReport:
    file: str
    name: str
    line: int
    status: str = "found"  # accepted | rejected | unseen | built
    reason: str = ""
    launches: int = 0
    matched: int = 0
    adjoints: int = 0
    adjoints_matched: int = 0
    unconsumed: int = 0  # adjoint launches where Warp zeroed an output's adjoint and tilec did not
    mismatch: str = ""


@dataclass
class FileReport:
    name: str
    kernels: dict = field(default_factory=dict)  # name -> KernelReport
    module: object = None  # the loaded tilec module of the accepted kernels, at block_dim
    block_dim: int = 64
    build: object = None  # block_dim -> loaded module (or the exception): builds for other block sizes
    modules: dict = field(default_factory=dict)
    tests_run: int = 0
    tests_failed: int = 0


def tile_test_dir() -> Path:
    import warp

    return Path(warp.__file__).resolve().parent / "tests" / "tile"


def _decorated_kernels(tree: ast.Module) -> list:
    """(name, line, at module level) of every function decorated with `*.kernel` or `*.kernel(...)`."""
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "kernel":
                found.append((node.name, node.lineno, id(node) in top))
                break
    return found


def _reason(diag, source: str) -> str:
    """A diagnostic as a histogram key: its code and message without the names in backticks or
    numbers, so one cause counts once; an unknown operation keeps its name and an unsupported
    annotation its text (those name what tilec lacks)."""
    if diag.code == "TC0302":
        return f"{diag.code}: {diag.message}"[:110]
    message = re.sub(r"`[^`]*`", "`…`", diag.message)
    message = re.sub(r"\(\d[\d, ]*\)|\b\d+\b", "N", message)
    if diag.code == "TC0409" and diag.span.line == diag.span.end_line:
        text = source.splitlines()[diag.span.line - 1][diag.span.col - 1:diag.span.end_col - 1]
        message += f" [{text}]"
    return f"{diag.code}: {message}"[:110]


def _build_reason(error: Exception) -> str:
    """A build failure as a histogram key: the exception and the compiler's first error line."""
    text = str(error)
    log = getattr(error, "log_path", None)
    if log and Path(log).exists():
        text = Path(log).read_text(errors="replace")
    first = next((ln.strip() for ln in text.splitlines() if "error" in ln.lower()), text.splitlines()[0] if text else "")
    first = re.sub(r"^[^:]*:\d+:\d+: ", "", first)
    return f"build failed: {type(error).__name__}: {first}"[:110]


def _launch_block_dim(source: str, scope) -> int:
    """The most common `block_dim=<constant>` of the file's launches (64 when none is constant)."""
    import libcst as cst

    counts = collections.Counter()
    for match in re.finditer(r"block_dim\s*=\s*([A-Za-z_0-9]+)", source):
        try:
            value = scope.constant(cst.parse_expression(match.group(1)))
        except Exception:  # noqa: BLE001 - not an expression tilec evaluates
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            counts[value] += 1
    return counts.most_common(1)[0][0] if counts else 64


def static_phase(path: Path, outdir: Path, build: bool) -> FileReport:
    source = path.read_text()
    report = FileReport(path.stem)
    for name, line, top in _decorated_kernels(ast.parse(source)):
        key = name if top else f"{name}@{line}"
        report.kernels[key] = KernelReport(path.stem, name, line)
        if not top:
            report.kernels[key].status = "unseen"
            report.kernels[key].reason = "nested kernel (in a function, class or loop): not compiled by tilec"
    parsed = parse(source, path.name, module_name(path.name))
    file_diags = Diagnostics()
    scope = resolve(parsed, file_diags)
    report.block_dim = _launch_block_dim(source, scope)
    options = Options(block_dim=report.block_dim)
    every = dict(scope.kernels)
    accepted = {}
    for name, fd in every.items():
        kr = report.kernels.get(name) or report.kernels.setdefault(name, KernelReport(path.stem, name, 0))
        diags = Diagnostics()
        scope.kernels = {name: fd}
        try:
            _OneKernel(parsed, scope, diags, options).run()
        except Exception as e:  # noqa: BLE001 - an internal error is a result here, not a crash
            kr.status, kr.reason = "rejected", f"internal error: {type(e).__name__}: {e}"[:110]
            continue
        errors = [d for d in diags.items if d.severity == "error"]
        if errors:
            kr.status, kr.reason = "rejected", _reason(errors[0], source)
        else:
            kr.status = "accepted"
            accepted[name] = fd
    if not build or not accepted:
        return report

    def build_at(block_dim: int, names=None):
        scope.kernels = {n: accepted[n] for n in (names or accepted)}
        module = normalize_module(_OneKernel(parsed, scope, Diagnostics(), Options(block_dim=block_dim)).run())
        flags = {"block_dim": block_dim, "target": "cpu", "debug": False, "max_shared": 48 * 1024,
                 "emit_only": False}
        folder = outdir / f"{block_dim}-{len(names or accepted)}-{sorted(names or accepted)[0]}"
        build_module(module, source, str(folder), flags, echo=lambda *a, **k: None)
        return load(folder / module.name)

    def good_kernels(names: list) -> list:
        """The kernels of `names` that build: all of them, or a bisection down to the failing ones."""
        try:
            build_at(report.block_dim, names)
            return names
        except Exception as e:  # noqa: BLE001 - a failed build is a result: find the kernels that fail
            if len(names) == 1:
                report.kernels[names[0]].status = "rejected"
                report.kernels[names[0]].reason = _build_reason(e)
                return []
            half = len(names) // 2
            return good_kernels(names[:half]) + good_kernels(names[half:])

    report.build = build_at
    try:
        report.module = report.modules[report.block_dim] = build_at(report.block_dim)
        good = list(accepted)
    except Exception:  # noqa: BLE001 - some kernel does not build: find which, build the others
        good = good_kernels(list(accepted))
        accepted = {n: accepted[n] for n in good}
        if not good:
            return report
        try:
            report.module = report.modules[report.block_dim] = build_at(report.block_dim)
        except Exception as e:  # noqa: BLE001
            for name in good:
                report.kernels[name].status, report.kernels[name].reason = "rejected", _build_reason(e)
            return report
    for name in good:
        meta = report.module.MANIFEST["kernels"].get(name)
        report.kernels[name].status = "built" if meta is not None else "rejected"
        if meta is None:
            report.kernels[name].reason = "accepted but missing from the built module"
    return report


# ---------------------------------------------------------------- the run phase


def _snapshot(values) -> list:
    import warp as wp

    out = []
    for v in values:
        if isinstance(v, wp.array):
            out.append(None if v.ptr is None and v.size else np.array(v.numpy(), copy=True))
        else:
            out.append(v)
    return out


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=RTOL, atol=ATOL, equal_nan=True))


def _consumed_by_warp(tilec_adj, warp_adj, seed) -> bool:
    """An output's adjoint that Warp's adjoint consumed (zero afterwards) and tilec's left as it
    was: a difference in what happens to the seed, not in any computed gradient."""
    return (seed is not None and np.any(seed) and not np.any(warp_adj) and tilec_adj is not None
            and _close(tilec_adj, seed))


class Shadow:
    """Replaces wp.launch: Warp runs the launch, then tilec runs it on copies of the same inputs."""

    def __init__(self, reports: dict):
        import warp as wp
        import warp._src.context as context

        self.wp, self.context = wp, context
        self.original = context.launch
        self.reports = reports  # file stem -> FileReport

    def __enter__(self):
        self.wp.launch = self.context.launch = self.launch
        return self

    def __exit__(self, *exc):
        self.wp.launch = self.context.launch = self.original

    def _find(self, kernel):
        func = getattr(kernel, "func", None)
        if func is None or "<locals>" in getattr(func, "__qualname__", ""):
            return None, None, None
        stem = Path(getattr(func, "__code__", None).co_filename).stem if hasattr(func, "__code__") else ""
        report = self.reports.get(stem)
        if report is None or report.module is None:
            return None, None, None
        kr = report.kernels.get(func.__name__)
        if kr is None or kr.status != "built":
            return None, None, None
        return kr, func.__name__, report

    def launch(self, kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None,
               stream=None, adjoint=False, record_tape=True, record_cmd=False, max_blocks=0, block_dim=None):
        found = self._find(kernel)
        kwargs = dict(dim=dim, inputs=inputs, outputs=outputs, adj_inputs=adj_inputs, adj_outputs=adj_outputs,
                      device=device, stream=stream, adjoint=adjoint, record_tape=record_tape,
                      record_cmd=record_cmd, max_blocks=max_blocks, block_dim=block_dim)
        if found[0] is None or self.wp.get_device(device).is_cuda or record_cmd:
            return self.original(kernel, **kwargs)
        kr, name, report = found
        args = list(inputs) + list(outputs)
        adjs = list(adj_inputs or []) + list(adj_outputs or [])
        before, adj_before = _snapshot(args), _snapshot(adjs)
        result = self.original(kernel, **kwargs)
        after, adj_after = _snapshot(args), _snapshot(adjs)
        try:
            self._compare(kr, name, report, dim, block_dim, before, after, adj_before, adj_after, adjoint)
        except Exception as e:  # noqa: BLE001 - a loader refusal or native failure is a mismatch
            self._record(kr, adjoint, False, f"tilec launch raised {type(e).__name__}: {e}"[:160])
        return result

    def _compare(self, kr, name, report, dim, block_dim, before, after, adj_before, adj_after, adjoint):
        dims = [int(d) for d in (dim if isinstance(dim, (list, tuple)) else [dim])]
        block = int(block_dim) if block_dim else report.block_dim
        if block not in report.modules:  # another block size: tilec builds the file for it too
            try:
                report.modules[block] = report.build(block)
            except Exception as e:  # noqa: BLE001
                report.modules[block] = e
        module = report.modules[block]
        if isinstance(module, Exception):
            self._record(kr, adjoint, False, f"build at block_dim {block} failed: {type(module).__name__}")
            return
        tk = getattr(module, name)
        tiled = bool(tk.meta.get("tiled"))
        values = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in before]
        if any(v is None for v in values):
            self._record(kr, adjoint, False, "an argument tilec cannot pass (empty or foreign array)")
            return
        launch = tk.launch
        if tiled and len(dims) > 1 and dims[-1] == block:  # launch_tiled(dim, B) is launch(dim + (B,), B)
            launch, dims = tk.launch_tiled, dims[:-1]
        if not adjoint:
            launch(dim=tuple(dims), inputs=values, device="cpu")
            bad = [k for k, (a, b) in enumerate(zip(values, after)) if isinstance(b, np.ndarray) and not _close(a, b)]
            self._record(kr, False, not bad, f"forward: argument(s) {bad} differ from Warp" if bad else "")
            return
        adj = [np.array(v, copy=True) if isinstance(v, np.ndarray) else (0 if v is not None else None)
               for v in adj_before]
        adj = adj + [None] * (len(values) - len(adj))
        launch(dim=tuple(dims), inputs=values, adj_inputs=adj, adjoint=True, device="cpu")
        seeds = adj_before + [None] * len(adj)
        differ = [k for k, (a, b) in enumerate(zip(adj, adj_after)) if isinstance(b, np.ndarray) and not _close(a, b)]
        kept = [k for k in differ if _consumed_by_warp(adj[k], adj_after[k], seeds[k])]
        bad = [k for k in differ if k not in kept]
        kr.unconsumed += bool(kept)
        self._record(kr, True, not bad, f"adjoint: gradient(s) of argument(s) {bad} differ from Warp" if bad else "")

    @staticmethod
    def _record(kr, adjoint, ok, why):
        if adjoint:
            kr.adjoints += 1
            kr.adjoints_matched += ok
        else:
            kr.launches += 1
            kr.matched += ok
        if not ok and not kr.mismatch:
            kr.mismatch = why


def run_phase(stem: str, report: FileReport, reports: dict, verbose: bool) -> None:
    module = importlib.import_module(f"warp.tests.tile.{stem}")
    suite = unittest.TestSuite()
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            for name in unittest.TestLoader().getTestCaseNames(obj):
                if name.endswith("_cpu"):
                    suite.addTest(obj(name))
    stream = io.StringIO()
    with Shadow(reports):
        result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    report.tests_run = result.testsRun
    report.tests_failed = len(result.failures) + len(result.errors)
    if verbose and report.tests_failed:
        print(f"  {stem}: {report.tests_failed} Warp test(s) failed or errored under the shadow")
        first = (result.errors + result.failures)[0]
        print("    first: " + first[0].id() + "\n" + "\n".join(first[1].splitlines()[-6:]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--static", action="store_true", help="check and build only; run no Warp test")
    parser.add_argument("--no-build", action="store_true", help="check only (implies --static)")
    parser.add_argument("--files", default="", help="comma-separated test file stems (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per kernel")
    args = parser.parse_args(argv)
    files = sorted(tile_test_dir().glob("test_*.py"))
    if args.files:
        wanted = set(args.files.split(","))
        files = [f for f in files if f.stem in wanted]
    run = not (args.static or args.no_build)
    if run:
        import warp as wp

        wp.config.enable_cpu_blocks = True
        wp.config.quiet = True
        wp.init()
    reports = {}
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="tilec-warp-tests-") as tmp:
        for path in files:
            reports[path.stem] = static_phase(path, Path(tmp) / path.stem, build=not args.no_build)
            if args.verbose:
                _progress(reports[path.stem], "checked")
        if run:
            for path in files:
                run_phase(path.stem, reports[path.stem], reports, args.verbose)
                if args.verbose:
                    _progress(reports[path.stem], "ran")
    print_summary(reports, args.verbose, run, time.time() - start)
    return 0


def _progress(report: FileReport, what: str) -> None:
    ks = list(report.kernels.values())
    status = collections.Counter(k.status for k in ks)
    print(f"[{what}] {report.name}: {len(ks)} kernels, {status['accepted'] + status['built']} accepted, "
          f"{status['built']} built; launches {sum(k.matched for k in ks)}/{sum(k.launches for k in ks)}, "
          f"adjoints {sum(k.adjoints_matched for k in ks)}/{sum(k.adjoints for k in ks)}", flush=True)


def print_summary(reports: dict, verbose: bool, ran: bool, seconds: float) -> None:
    kernels = [k for r in reports.values() for k in r.kernels.values()]
    by_status = collections.Counter(k.status for k in kernels)
    accepted = by_status["accepted"] + by_status["built"]
    if verbose:
        for k in kernels:
            extra = f" launches {k.matched}/{k.launches} adjoints {k.adjoints_matched}/{k.adjoints}" if ran else ""
            why = k.reason or k.mismatch
            print(f"{k.file}:{k.line} {k.name}: {k.status}{extra}{'  -- ' + why if why else ''}")
    print(f"Warp tile tests: {len(reports)} files, {len(kernels)} kernels found "
          f"({by_status['unseen']} nested, not seen by tilec)")
    print(f"  accepted by tilec's checker: {accepted}/{len(kernels)}; built for the CPU: {by_status['built']}")
    if ran:
        launched = [k for k in kernels if k.launches or k.adjoints]
        print(f"  launches matched: {sum(k.matched for k in kernels)}/{sum(k.launches for k in kernels)} "
              f"(kernels all matched: {sum(1 for k in launched if k.matched == k.launches and k.launches)}/"
              f"{len(launched)})")
        print(f"  gradients matched (adjoint launches): {sum(k.adjoints_matched for k in kernels)}/"
              f"{sum(k.adjoints for k in kernels)}; of these, launches where Warp zeroed an output's "
              f"adjoint and tilec left it: {sum(k.unconsumed for k in kernels)}")
        print(f"  Warp tests run on the CPU: {sum(r.tests_run for r in reports.values())}, "
              f"failed/errored under the shadow: {sum(r.tests_failed for r in reports.values())}")
        mismatches = collections.Counter(k.mismatch.split(":")[0] for k in kernels if k.mismatch)
        for why, n in mismatches.most_common(5):
            print(f"  mismatch {n:4d}  {why}")
    reasons = collections.Counter(k.reason for k in kernels if k.status in ("rejected", "unseen"))
    print("  top rejection reasons:")
    for why, n in reasons.most_common(15):
        print(f"    {n:4d}  {why}")
    print(f"  ({seconds:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
