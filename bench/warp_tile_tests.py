"""Warp's own tile tests, compiled by tilec: how much of real Warp tile code tilec accepts, and
whether it computes what Warp computes.

    nice python bench/warp_tile_tests.py [--static | --no-build] [--files test_tile_load,test_tile_reduce] [-v]
                                         [--dir cuda --files test_texture]

The tests are read from the INSTALLED warp package (`warp/tests/tile/` in site-packages, or the
folder --dir names); nothing of them is copied into this repository. A Warp texture argument
reaches tilec's launch as its twin made by the built module (the same texels, levels and modes).
For every test file:

1. static: every `@wp.kernel` in the file (module level, nested in a function or class, made in a
   loop or a kernel factory) is found; tilec's own discovery (frontend/nested.py) instantiates a
   nested kernel once per statically visible binding of its free variables; each instance is
   checked on its own (the funcs it calls come with it) and the accepted ones are built for the
   CPU. A kernel tilec rejects is reported with its first diagnostic (TC0433 where no binding
   is known); a kernel neither compiled nor named by a diagnostic would be reported as unseen.
2. run (not with --static): the file's unittest cases run on the CPU under Warp 1.19
   (`enable_cpu_blocks`), with every `wp.launch`/`wp.launch_tiled` of an accepted kernel shadowed:
   the same launch runs through tilec's compiled kernel on copies of the same inputs, forward and
   adjoint (Warp's tape calls `wp.launch(..., adjoint=True)`), and the arrays afterwards are
   compared with Warp's (rtol = atol = 1e-4). Warp's own results are what the test sees, so the
   test's assertions are unchanged. The kernel object Warp launches is mapped back to its source
   kernel by the file and first line of its code object, and to the tilec instance whose bindings
   equal the values in its Python closure; a launch no built instance can take (kernel rejected,
   binding not compiled) is counted as not run, with the reason.

3. Warp's truth (run phase): every Warp module load on the CPU is recorded (WarpBuilds): a kernel
   tilec rejects is counted as a gap only when Warp builds it ("rejected by tilec but compiled by
   Warp: N", listed with -v); one Warp refuses too, or never builds on the CPU (a CUDA-only test),
   is not. Module-level rejected kernels no test builds are built on the CPU directly.

Prints kernels found / accepted / built, launches matched, gradients (adjoint launches) matched,
the rejected kernels Warp compiles, and a histogram of the rejection reasons.
"""
from __future__ import annotations

import argparse
import ast
import collections
import functools
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
from tilec.frontend.nested import discover  # noqa: E402
from tilec.frontend.parse import parse  # noqa: E402
from tilec.frontend.resolve import resolve  # noqa: E402
from tilec.passes.normalize import normalize_module  # noqa: E402
from tilec.pipeline import module_name  # noqa: E402

RTOL = ATOL = 1e-4
# float16 results compare at a few half ulps (one ulp is 2**-10 relative), not at 1e-4, which is finer
# than a half holds: Warp's CPU tile_matmul of half tiles rounds to half after every multiply and
# every add of its K loop; tilec sums each product in float32 and rounds once (as a GPU MMA with a
# float32 accumulator does), so the two differ by a few ulps and neither is more right than that.
HALF_TOL = 4e-3

# (file stem, kernel name) -> why its launches may differ from Warp's without either being wrong: the
# kernel's result is unspecified (it depends on the lanes' schedule) or Warp's own is. A mismatch of
# an excused kernel is counted apart (`excused`), never as matched.
EXCUSED = {
    ("test_tile_stack", "overflow_data_integrity_kernel"):
        "64 lanes push onto a stack of capacity 4: which 4 values survive is the lanes' schedule "
        "(tile_stack_push: 'which slot a given thread receives is unspecified'); Warp's test checks "
        "only that 4 pops succeed with pushed values",
}


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
    nested: bool = False  # defined below module level (in a function, class or loop)
    instances: dict = field(default_factory=dict)  # tilec kernel name -> Instance (one per binding)
    launches: int = 0
    matched: int = 0
    adjoints: int = 0
    adjoints_matched: int = 0
    unconsumed: int = 0  # adjoint launches where Warp zeroed an output's adjoint and tilec did not
    mismatch: str = ""
    reordered: int = 0  # forward launches matched only up to the order of their values (tile stacks)
    unsubstituted: int = 0  # launches Warp ran that no compiled tilec instance could take
    unsubstituted_why: str = ""
    excused: int = 0  # mismatching launches of a kernel in EXCUSED
    pops: bool = False  # its body pops a tile stack (float outputs may match up to order)
    warp: str = ""  # Warp 1.19 on the CPU: "compiled" (a module load built it), "failed", or "" (never built)
    warp_error: str = ""  # the first exception of a failed Warp build


@dataclass
class Instance:
    """One tilec instantiation of a source kernel: a nested kernel has one per binding of its
    free variables (`make(16)` -> `k__T_16`); a module-level kernel has one, bindings ()."""

    bindings: tuple  # ((free variable, value), ...) as tilec's frontend/nested.py bound them
    status: str = "found"  # accepted | rejected | built
    reason: str = ""


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
    first_lines: dict = field(default_factory=dict)  # first line of a kernel's code object -> key


TEST_DIR = "tile"  # the folder of warp/tests read (--dir)


def tile_test_dir() -> Path:
    import warp

    return Path(warp.__file__).resolve().parent / "tests" / TEST_DIR


def _decorated_kernels(tree: ast.Module) -> list:
    """(name, line of the def, first line of its code object, at module level) of every function
    decorated with `*.kernel` or `*.kernel(...)`. The code object of a decorated function starts
    at its first decorator: that is how a kernel Warp runs is found again (`co_firstlineno`)."""
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "kernel":
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found.append((node.name, node.lineno, first, id(node) in top))
                break
    return sorted(found, key=lambda f: f[1])


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


def _discover(parsed, scope, report: FileReport, by_line: dict) -> None:
    """tilec's own discovery of nested kernels (frontend/nested.py): one instance per statically
    visible binding, added to scope.kernels; a kernel it cannot bind is rejected with its
    diagnostic. A failure here is a result for the file's nested kernels, never a crash."""
    diags = Diagnostics()
    try:
        discover(scope, parsed, diags)
    except Exception as e:  # noqa: BLE001 - an internal error is a result here, not a crash
        for kr in report.kernels.values():
            if kr.nested:
                kr.status, kr.reason = "rejected", f"internal error in nested discovery: {type(e).__name__}: {e}"[:110]
        return
    skipped = {}
    for diag in diags.items:  # TC0433: no binding known (a warning where nothing calls its factory); named by it
        if diag.code == "TC0433":
            skipped.setdefault(diag.span.line, _reason(diag, parsed.source))
    for line, reason in skipped.items():
        kr = by_line.get(line)
        if kr is not None and not kr.instances:
            kr.status, kr.reason = "rejected", reason


def static_phase(path: Path, outdir: Path, build: bool) -> FileReport:
    source = path.read_text()
    report = FileReport(path.stem)
    by_line = {}  # line of a kernel's def -> its KernelReport
    tree = ast.parse(source)
    pops_at = {n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
               and any(isinstance(c, ast.Attribute) and c.attr == "tile_stack_pop" for c in ast.walk(n))}
    for name, line, first, top in _decorated_kernels(tree):
        key = name if top else f"{name}@{line}"
        kr = report.kernels[key] = by_line[line] = KernelReport(path.stem, name, line, nested=not top,
                                                                pops=line in pops_at)
        report.first_lines[first] = key
        if not top:  # until tilec's discovery says otherwise
            kr.status, kr.reason = "unseen", "nested kernel: neither compiled by tilec nor named by a diagnostic"
    parsed = parse(source, path.name, module_name(path.name))
    file_diags = Diagnostics()
    scope = resolve(parsed, file_diags)
    report.block_dim = _launch_block_dim(source, scope)
    _discover(parsed, scope, report, by_line)
    options = Options(block_dim=report.block_dim)
    for fd in scope.kernels.values():  # the harness builds per block_dim Warp launches with (Shadow._compare),
        if fd.bindings and len(fd.launch_block_dims) == 1:  # not once per `block_dim=` literal of the file (tests
            continue  # launch at several), but an instance its binding gives one (`block_dim=THREADS`) keeps it
        fd.launch_block_dims = ()
    every = dict(scope.kernels)
    owner = {}  # tilec kernel name -> the KernelReport of its source kernel
    for name, fd in every.items():
        line = parsed.span(fd.node.name).line
        kr = by_line.get(line) or report.kernels.setdefault(name, KernelReport(path.stem, name, line))
        owner[name] = kr
        inst = kr.instances[name] = Instance(tuple(fd.bindings))
        diags = Diagnostics()
        scope.kernels = {name: fd}
        try:
            _OneKernel(parsed, scope, diags, options).run()
        except Exception as e:  # noqa: BLE001 - an internal error is a result here, not a crash
            inst.status, inst.reason = "rejected", f"internal error: {type(e).__name__}: {e}"[:110]
            continue
        errors = [d for d in diags.items if d.severity == "error"]
        if errors:
            inst.status, inst.reason = "rejected", _reason(errors[0], source)
        else:
            inst.status = "accepted"
    accepted = {n: every[n] for n, kr in owner.items() if kr.instances[n].status == "accepted"}
    if build and accepted:
        _build_phase(report, parsed, scope, source, outdir, accepted, owner)
    for kr in report.kernels.values():
        _summarise(kr)
    return report


def _summarise(kr: KernelReport) -> None:
    """A source kernel's status from its instances: accepted/built when every instance is, else
    rejected with the first rejected instance's reason (its other instances still run)."""
    if not kr.instances:
        return
    states = [i.status for i in kr.instances.values()]
    bad = next((i for i in kr.instances.values() if i.status == "rejected"), None)
    if bad is not None:
        kr.status, kr.reason = "rejected", bad.reason
    else:
        kr.status, kr.reason = ("built" if all(s == "built" for s in states) else "accepted"), ""


def _build_phase(report: FileReport, parsed, scope, source: str, outdir: Path, accepted: dict, owner: dict) -> None:
    """Builds the accepted instances for the CPU (bisecting to the ones that fail to build)."""

    def instance(name):
        return owner[name].instances[name]

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
                instance(names[0]).status = "rejected"
                instance(names[0]).reason = _build_reason(e)
                return []
            half = len(names) // 2
            return good_kernels(names[:half]) + good_kernels(names[half:])

    report.build = build_at
    try:
        report.module = report.modules[report.block_dim] = build_at(report.block_dim)
        good = list(accepted)
    except Exception:  # noqa: BLE001 - some kernel does not build: find which, build the others
        good = good_kernels(list(accepted))
        for name in list(accepted):
            if name not in good:
                del accepted[name]
        if not good:
            return
        try:
            report.module = report.modules[report.block_dim] = build_at(report.block_dim)
        except Exception as e:  # noqa: BLE001
            for name in good:
                instance(name).status, instance(name).reason = "rejected", _build_reason(e)
            return
    built = set(report.module.MANIFEST["kernels"])
    built |= {m.get("launch_name") for m in report.module.MANIFEST["kernels"].values()}
    for name in good:
        if name in built:
            instance(name).status = "built"
        else:
            instance(name).status, instance(name).reason = "rejected", "accepted but missing from the built module"


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


def _tilec_texture(module, value):
    """A Warp texture's twin in tilec's `module` (its texels, read back or as constructed for a mipmapped
    one, and its modes; a Warp struct's fields likewise); any other value as it is."""
    import types

    import warp as wp

    if hasattr(value, "_cls") and hasattr(value._cls, "vars"):  # a Warp struct: its fields, textures converted
        return types.SimpleNamespace(**{name: _tilec_texture(module, getattr(value, name)) for name in value._cls.vars})
    if not isinstance(value, wp.Texture):
        return value
    shape = (value.depth, value.height, value.width)[3 - value.ndim:]
    texels = getattr(value, "_tilec_base", None)
    if texels is None or value.num_mip_levels == 1:  # (one level: its texels now, after any copy_from)
        texels = np.zeros(shape + ((value.num_channels,) if value.num_channels > 1 else ()),
                          np.dtype(value.dtype.__name__))  # (Warp's texel types are named as numpy's)
        value.copy_to(texels)
    modes = (value.address_mode_u, value.address_mode_v, value.address_mode_w)[:value.ndim]
    return getattr(module, f"Texture{value.ndim}D")(
        texels, filter_mode=int(value.filter_mode), address_mode=tuple(int(m) for m in modes),
        normalized_coords=bool(value.normalized_coords), num_mip_levels=value.num_mip_levels,
        mip_filter_mode=int(value.mip_filter_mode))


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    if a.dtype.names or b.dtype.names:  # arrays of structs: field by field
        return a.dtype.names == b.dtype.names and all(_close(a[f], b[f]) for f in a.dtype.names)
    if a.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    tol = HALF_TOL if np.float16 in (a.dtype, b.dtype) else RTOL
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol, equal_nan=True))


def _same_values(a, b, pops: bool = False) -> bool:
    """The same values in another order: what lanes pushing onto a tile stack leave behind (its order
    is the lanes' schedule, which Warp's own tests do not fix: they compare sorted values). Integers
    always; floats only for a kernel that pops a tile stack (pops), so that a permuted float result
    (a wrong transpose) is never counted as matched elsewhere."""
    kinds = "biuf" if pops else "biu"
    return (a is not None and b is not None and a.shape == b.shape and a.dtype.kind in kinds
            and _close(np.sort(a, axis=None), np.sort(b, axis=None)))


def _consumed_by_warp(tilec_adj, warp_adj, seed) -> bool:
    """An output's adjoint that Warp's adjoint consumed (zero afterwards) and tilec's left as it
    was: a difference in what happens to the seed, not in any computed gradient."""
    return (seed is not None and np.any(seed) and not np.any(warp_adj) and tilec_adj is not None
            and _close(tilec_adj, seed))


_MISSING = object()


def _free_values(func) -> dict:
    """The values a Python function's free variables hold (closure cells), by name."""
    out = {}
    for var, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[var] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    return _WithGlobals(out, func.__globals__)


class _WithGlobals(dict):
    """Closure values, falling back to the function's module globals (a module-level loop variable)."""

    def __init__(self, cells: dict, globals_: dict):
        super().__init__(cells)
        self.globals = globals_

    def get(self, key, default=None):
        return super().get(key, self.globals.get(key, default))


_PY_DTYPES = {float: ("float", "float32"), int: ("int", "int32"), bool: ("bool",)}


def _same(bound, value) -> bool:
    """Whether tilec's binding of a free variable (frontend/nested.py: a number, a tuple, a
    DtypeValue or FuncValue) is the value the closure holds at run time."""
    kind = type(bound).__name__
    if kind == "DtypeValue":
        names = _PY_DTYPES.get(value, (getattr(value, "__name__", None),))
        return bound.api in names
    if kind == "FuncValue":
        return bound.name in (getattr(value, "key", None), getattr(value, "__name__", None))
    if isinstance(bound, tuple):
        try:
            return len(bound) == len(value) and all(_same(b, v) for b, v in zip(bound, value))
        except TypeError:
            return False
    if isinstance(bound, (bool, int, float)) and isinstance(value, (bool, int, float, np.number)):
        return bool(bound == value) and isinstance(bound, bool) == isinstance(value, (bool, np.bool_))
    return False


def _kernel_report(reports: dict, kernel):
    """(FileReport, KernelReport) of a Warp kernel object: its source kernel, found by the file and
    first line of its code object; (None, None) when it is not one of the measured files'."""
    code = getattr(getattr(kernel, "func", None), "__code__", None)
    if code is None:
        return None, None
    report = reports.get(Path(code.co_filename).stem)
    if report is None:
        return None, None
    return report, report.kernels.get(report.first_lines.get(code.co_firstlineno))


class WarpBuilds:
    """Records, for every kernel of the measured files, whether Warp builds it on the CPU: wraps
    Warp's Module.load (codegen and C++ compile of a module's kernels); a load that returns marks
    each kernel of the module "compiled", one that raises marks them "failed" (unless another load
    built them). This is the truth the rejections are measured against: a kernel tilec rejects
    and Warp builds is a gap; one Warp refuses too is not."""

    def __init__(self, reports: dict):
        import warp._src.context as context

        self.context = context
        self.reports = reports
        self.original = context.Module.load

    def __enter__(self):
        recorder, original = self, self.original

        def load(module, device, *args, **kwargs):
            try:
                result = original(module, device, *args, **kwargs)
            except Exception as e:
                recorder.record(module, device, e)
                raise
            recorder.record(module, device, None)
            return result

        self.context.Module.load = load
        return self

    def __exit__(self, *exc):
        self.context.Module.load = self.original

    def record(self, module, device, error) -> None:
        try:
            if not self.context.runtime.get_device(device).is_cpu:
                return
            kernels = list(module._get_live_kernels()) + list(module.kernels.values())
        except Exception:  # noqa: BLE001 - an unknown device or module layout: nothing to record
            return
        for kernel in kernels:
            _, kr = _kernel_report(self.reports, kernel)
            if kr is None or kr.warp == "compiled":
                continue
            if error is None:
                kr.warp, kr.warp_error = "compiled", ""
            elif not kr.warp:
                kr.warp, kr.warp_error = "failed", f"{type(error).__name__}: {error}".splitlines()[0][:110]

    def build_unseen(self, stem: str) -> None:
        """Builds on the CPU the file's module-level kernels that tilec rejects and no test made
        Warp build (their tests are CUDA-only, or never launch them); generic ones cannot be built
        without types and stay unknown."""
        import warp as wp

        module = importlib.import_module(f"warp.tests.{TEST_DIR}.{stem}")
        for kr in self.reports[stem].kernels.values():
            if kr.status != "rejected" or kr.nested or kr.warp:
                continue
            kernel = getattr(module, kr.name, None)
            if not isinstance(kernel, wp.Kernel) or getattr(kernel, "is_generic", False):
                continue
            try:
                kernel.module.load(wp.get_device("cpu"))
            except Exception:  # noqa: BLE001 - recorded by load
                continue


def _spell_runtime(value) -> str:
    return getattr(value, "__name__", None) or repr(value)[:20]


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
        self.texture_inits = {cls: cls.__init__ for cls in (self.wp.Texture1D, self.wp.Texture2D, self.wp.Texture3D)}

        def remembering(original):  # a mipmapped texture's base texels: Warp's copy_to refuses them, its twin
            def init(texture, data=None, *args, **kwargs):  # needs them
                original(texture, data, *args, **kwargs)
                if data is not None:
                    texture._tilec_base = np.array(data.numpy() if hasattr(data, "numpy") else data, copy=True)
            return init

        for cls, original in self.texture_inits.items():
            cls.__init__ = remembering(original)
        return self

    def __exit__(self, *exc):
        for cls, original in self.texture_inits.items():
            cls.__init__ = original
        self.wp.launch = self.context.launch = self.original

    def _find(self, kernel):
        """(KernelReport, tilec kernel name, FileReport) of a kernel Warp launches: found by the
        file and first line of its code object, and among the source kernel's instances the one
        whose bindings are the values the Python closure holds. The name is None (and the third
        item says why) when no built instance can take the launch; (None, None, None) when the
        kernel is not one of the measured files'."""
        report, kr = _kernel_report(self.reports, kernel)
        if kr is None:
            return None, None, None
        values = _free_values(kernel.func)
        for name, inst in kr.instances.items():
            if all(_same(value, values.get(var, _MISSING)) for var, value in inst.bindings):
                if inst.status != "built" or report.module is None:
                    return kr, None, f"its instance is {inst.status}"
                return kr, name, report
        if not kr.instances:
            return kr, None, "no instance compiled"
        return kr, None, "this binding (" + ", ".join(f"{k}={_spell_runtime(v)}" for k, v in values.items()
                                                     if not callable(v))[:80] + ") not compiled"

    def launch(self, kernel, dim, inputs=(), outputs=(), adj_inputs=(), adj_outputs=(), device=None,
               stream=None, adjoint=False, record_tape=True, record_cmd=False, max_blocks=0, block_dim=None):
        found = self._find(kernel)
        kwargs = dict(dim=dim, inputs=inputs, outputs=outputs, adj_inputs=adj_inputs, adj_outputs=adj_outputs,
                      device=device, stream=stream, adjoint=adjoint, record_tape=record_tape,
                      record_cmd=record_cmd, max_blocks=max_blocks, block_dim=block_dim)
        dev = self.wp.get_device(device)
        if found[0] is None or dev.is_cuda or record_cmd or getattr(dev, "is_capturing", False):
            return self.original(kernel, **kwargs)  # a captured launch runs later, at capture_launch
        if found[1] is None:  # a kernel of a measured file that tilec cannot run for this launch
            found[0].unsubstituted += 1
            found[0].unsubstituted_why = found[0].unsubstituted_why or found[2]
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
        block = int(block_dim) if block_dim else 1  # Warp on the CPU: a launch without block_dim runs blocks of 1
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
        tiled = any(k.meta.get("tiled") for k in getattr(tk, "kernels", [tk]))
        values = [np.array(v, copy=True) if isinstance(v, np.ndarray) else _tilec_texture(module, v) for v in before]
        if any(v is None for v in values):
            self._record(kr, adjoint, False, "an argument tilec cannot pass (empty or foreign array)")
            return
        launch = functools.partial(tk.launch, block_dim=block) if tiled else tk.launch
        if tiled and len(dims) > 1 and dims[-1] == block:  # launch_tiled(dim, B) is launch(dim + (B,), B)
            launch, dims = functools.partial(tk.launch_tiled, block_dim=block), dims[:-1]
        if not adjoint:
            launch(dim=tuple(dims), inputs=values, device="cpu")
            bad = [k for k, (a, b) in enumerate(zip(values, after)) if isinstance(b, np.ndarray) and not _close(a, b)]
            reordered = [k for k in bad if _same_values(values[k], after[k], kr.pops)]
            kr.reordered += bool(reordered)
            bad = [k for k in bad if k not in reordered]
            self._record(kr, False, not bad, f"forward: argument(s) {bad} differ from Warp" if bad else "")
            return
        adj = [np.array(v, copy=True) if isinstance(v, np.ndarray) else (0 if v is not None else None)
               for v in adj_before]
        adj = adj + [None] * (len(values) - len(adj))
        adj = [None if hasattr(v, "__dict__") and not isinstance(v, np.ndarray) else a for v, a in zip(values, adj)]
        launch(dim=tuple(dims), inputs=values, adj_inputs=adj, adjoint=True, device="cpu")
        seeds = adj_before + [None] * len(adj)
        differ = [k for k, (a, b) in enumerate(zip(adj, adj_after)) if isinstance(b, np.ndarray) and not _close(a, b)]
        kept = [k for k in differ if _consumed_by_warp(adj[k], adj_after[k], seeds[k])]
        bad = [k for k in differ if k not in kept]
        kr.unconsumed += bool(kept)
        self._record(kr, True, not bad, f"adjoint: gradient(s) of argument(s) {bad} differ from Warp" if bad else "")

    @staticmethod
    def _record(kr, adjoint, ok, why):
        if not ok and (kr.file, kr.name) in EXCUSED:
            kr.excused += 1
            why = "excused: " + EXCUSED[(kr.file, kr.name)]
        if adjoint:
            kr.adjoints += 1
            kr.adjoints_matched += ok
        else:
            kr.launches += 1
            kr.matched += ok
        if not ok and not kr.mismatch:
            kr.mismatch = why


def run_phase(stem: str, report: FileReport, reports: dict, verbose: bool) -> None:
    module = importlib.import_module(f"warp.tests.{TEST_DIR}.{stem}")
    suite = unittest.TestSuite()
    for obj in vars(module).values():
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            for name in unittest.TestLoader().getTestCaseNames(obj):
                if name.endswith("_cpu"):
                    suite.addTest(obj(name))
    stream = io.StringIO()
    with Shadow(reports), WarpBuilds(reports) as builds:
        result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
        builds.build_unseen(stem)
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
    parser.add_argument("--dir", default="tile", help="the folder of warp/tests to read (default: tile; e.g. cuda "
                        "for test_texture.py, whose CPU cases run too)")
    args = parser.parse_args(argv)
    global TEST_DIR
    TEST_DIR = args.dir
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
            why = k.reason or k.mismatch or k.unsubstituted_why
            extra += f" not run {k.unsubstituted}" if k.unsubstituted else ""
            extra += f" instances {len(k.instances)}" if len(k.instances) > 1 else ""
            extra += f" [warp: {k.warp}]" if ran and k.status in ("rejected", "unseen") and k.warp else ""
            print(f"{k.file}:{k.line} {k.name}: {k.status}{extra}{'  -- ' + why if why else ''}")
    nested = [k for k in kernels if k.nested]
    instances = [i for k in kernels for i in k.instances.values()]
    print(f"Warp tile tests: {len(reports)} files, {len(kernels)} kernels found "
          f"({len(nested)} nested: {sum(1 for k in nested if k.instances)} compiled by tilec, "
          f"{sum(1 for k in nested if not k.instances and k.status == 'rejected')} named by a diagnostic, "
          f"{by_status['unseen']} unseen)")
    print(f"  accepted by tilec's checker: {accepted}/{len(kernels)}; built for the CPU: {by_status['built']} "
          f"(instances: {len(instances)}, accepted {sum(i.status in ('accepted', 'built') for i in instances)}, "
          f"built {sum(i.status == 'built' for i in instances)})")
    if ran:
        launched = [k for k in kernels if k.launches or k.adjoints]
        print(f"  launches matched: {sum(k.matched for k in kernels)}/{sum(k.launches for k in kernels)} "
              f"(kernels all matched: {sum(1 for k in launched if k.matched == k.launches and k.launches)}/"
              f"{len(launched)})")
        print(f"  gradients matched (adjoint launches): {sum(k.adjoints_matched for k in kernels)}/"
              f"{sum(k.adjoints for k in kernels)}; of these, launches where Warp zeroed an output's "
              f"adjoint and tilec left it: {sum(k.unconsumed for k in kernels)}")
        print(f"  of the matched launches, outputs equal only up to order (tile stack pops, whose "
              f"order is the lanes' schedule): {sum(k.reordered for k in kernels)}")
        print(f"  of the unmatched launches and gradients, excused (unspecified results or Warp wrong, "
              f"EXCUSED): {sum(k.excused for k in kernels)}")
        print(f"  launches of measured kernels tilec did not run (kernel rejected or binding not compiled): "
              f"{sum(k.unsubstituted for k in kernels)}")
        print(f"  Warp tests run on the CPU: {sum(r.tests_run for r in reports.values())}, "
              f"failed/errored under the shadow: {sum(r.tests_failed for r in reports.values())}")
        rejected = [k for k in kernels if k.status in ("rejected", "unseen")]
        gap = [k for k in rejected if k.warp == "compiled"]
        print(f"  rejected by tilec but compiled by Warp: {len(gap)} (of {len(rejected)} rejected: Warp "
              f"refuses {sum(k.warp == 'failed' for k in rejected)} too, "
              f"{sum(not k.warp for k in rejected)} never built by Warp on the CPU)")
        if verbose:
            for k in gap:
                print(f"    {k.file}:{k.line} {k.name}  -- {k.reason}")
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
