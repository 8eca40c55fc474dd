"""Kernels defined below module level (issue #13 item 4): every `@wp.kernel` in a file is
compiled once per statically visible binding or named by a diagnostic; `tilec check -v` lists
both."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import needs_cxx
from harness import build

from tilec import naming
from tilec.diagnostics import Diagnostics
from tilec.frontend.check import Options
from tilec.frontend.module import ModuleChecker
from tilec.frontend.nested import discover
from tilec.frontend.parse import parse
from tilec.frontend.resolve import resolve
from tilec.pipeline import compile_source

ROOT = Path(__file__).resolve().parent
PROGRAM = '''\
import warp as wp

TILE = 8


def make(T: int):
    @wp.func
    def twice(x: float):
        return x * 2.0

    @wp.kernel
    def scale(a: wp.array(dtype=float), b: wp.array(dtype=float)):
        i = wp.tid()
        t = wp.tile_load(a, shape=T, offset=i * T)
        wp.tile_store(b, wp.tile_map(twice, t), offset=i * T)

    return scale


def test_something():
    N = 4

    @wp.kernel
    def fill(a: wp.array(dtype=float)):
        a[wp.tid()] = float(N)


class Holder:
    @wp.kernel
    def in_class(a: wp.array(dtype=float)):
        a[0] = 1.0


if __name__ == "__main__":
    @wp.kernel
    def fill(a: wp.array(dtype=float)):
        a[0] = 2.0

    for size in (16, 32):
        k = make(size)
'''


def kernel_defs(source: str) -> list:
    """(line of the name, last line) of the `def` of every @wp.kernel in the text, found without tilec."""
    lines = source.splitlines()
    out = []
    for i, line in enumerate(lines):
        if re.match(r"\s*@wp\.kernel\b", line):
            j = i + 1
            while not lines[j].lstrip().startswith("def "):
                j += 1
            indent = len(lines[j]) - len(lines[j].lstrip())
            end = j + 1
            while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
                end += 1
            out.append((j + 1, end))
    return out


def outcome(source: str, name: str = "prog.py"):
    """(kernels checked, diagnostics) of a file, whether or not it has errors: the pipeline's
    front end up to the module check, which goes on past a failing kernel."""
    diags = Diagnostics()
    parsed = parse(source, name, "prog")
    scope = resolve(parsed, diags)
    discover(scope, parsed, diags)
    module = ModuleChecker(parsed, scope, diags, Options()).run()
    return module.kernels, diags.items


def test_instances_are_named_by_their_bindings():
    compiled = compile_source(PROGRAM, "prog.py")
    names = sorted(k.name for k in compiled.module.kernels)
    assert names == ["fill", "in_class", "scale__T_16", "scale__T_32", "test_something_fill"]
    by_name = {k.name: k for k in compiled.module.kernels}
    assert by_name["scale__T_32"].source_name == "scale"
    assert [p.type for p in by_name["test_something_fill"].params] == [p.type for p in by_name["fill"].params]


def test_spelling_of_values():
    assert naming.kernel_instance("k", [("S", "-0.5"), ("dtype", "float64")]) == "k__S_m0p5__dtype_float64"


@pytest.mark.parametrize("path", [ROOT / "ui" / "nested.py", ROOT / "conformance" / "programs" / "kern_nested.py",
                                  None], ids=["ui", "conformance", "inline"])
def test_no_kernel_is_dropped_silently(path):
    source = PROGRAM if path is None else path.read_text()
    kernels, diags = outcome(source)
    compiled = {k.span.line for k in kernels}
    errors = [d.span.line for d in diags if d.severity == "error"]
    said = errors + [d.span.line for d in diags if "it is not compiled" in d.message]  # a warning that says so
    for line, end in kernel_defs(source):
        assert line in compiled or any(line <= e <= end for e in said), (
            f"the kernel at line {line} was dropped silently")
    if path is None:
        assert not errors and len(compiled) == len(kernel_defs(source))


def test_unknowable_binding_is_an_error_at_the_kernel():
    source = '''\
import warp as wp


def make(T: int):
    @wp.kernel
    def k(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=T)
        wp.tile_store(a, t)
    return k


def host(n):
    return make(n)
'''
    _, diags = outcome(source)
    [d] = [d for d in diags if d.severity == "error"]
    assert (d.code, d.span.line, d.span.col) == ("TC0433", 6, 9)
    assert "`T`" in d.message and "`n` is not a compile-time constant" in d.message
    assert d.labels[0].span.line == 13


def test_check_verbose_lists_every_kernel(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM + "\n\ndef unknown(T: int):\n    @wp.kernel\n    def lost(a: wp.array(dtype=float)):\n"
                    "        a[0] = float(T)\n    return lost\n\n\nlost_partly = unknown(3)\nagain = unknown(len(path))\n")
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", "-v", "prog.py"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "warning[TC0434]: kernel `lost` is not compiled for this binding of `T`" in proc.stderr
    assert proc.stdout.splitlines() == [
        "prog.py:12: compiled kernel scale__T_16 (from `scale`), block_dim 256",
        "prog.py:12: compiled kernel scale__T_32 (from `scale`), block_dim 256",
        "prog.py:24: compiled kernel test_something_fill (from `fill`), block_dim 256",
        "prog.py:30: compiled kernel in_class, block_dim 256",
        "prog.py:36: compiled kernel fill, block_dim 256",
        "prog.py:45: compiled kernel lost__T_3 (from `lost`), block_dim 256",
        "prog.py:51: not compiled: kernel lost: `T`: `len(path)` is not a compile-time constant",
        "6 kernels compiled, 1 not compiled",
    ]


def test_check_verbose_lists_every_kernel_of_a_failing_file():
    path = ROOT / "ui" / "nested.py"
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", "-v", path.name], cwd=path.parent,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    listed = {int(line.split(":")[1]) for line in proc.stdout.splitlines()[:-1]}
    assert listed == {line for line, _ in kernel_defs(path.read_text())} | {73}  # 73: the non-constant call
    assert "nested.py:52: not compiled: kernel partly__TILE_8: its check reported errors" in proc.stdout
    assert "nested.py:52: compiled kernel partly__TILE_16 (from `partly`), block_dim 256" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "2 kernels compiled, 6 not compiled"


FACTORY_CHAIN = '''\
import warp as wp


def make(T: int):
    @wp.kernel
    def k(a: wp.array(dtype=float)):
        t = wp.tile_load(a, shape=T)
        wp.tile_store(a, t)
    return k


def middle(n: int):
    return make(n * 2)


def outer(m):
    return middle(m + 1)


def host(n):
    return make(n)


def again(n: int):
    return again(n) if n else make(n + 3)


a = outer(3)
b = middle(5)
c = again(1)
'''


def test_a_factory_calling_a_factory_with_its_parameter_is_resolved_per_outer_call():
    kernels, diags = outcome(FACTORY_CHAIN)
    assert sorted(k.name for k in kernels) == ["k__T_10", "k__T_4", "k__T_8"]  # outer(3) -> 8; middle(5) -> 10; again(1) -> 4
    errors = [d for d in diags if d.severity == "error"]
    assert errors == []
    # host() is never called: its call of make is no binding (a warning at that call); the
    # recursive call again(n) binds n to nothing tilec knows (a warning, without looping forever)
    warnings = sorted((d.code, d.span.line, d.span.col) for d in diags if d.severity == "warning")
    assert warnings == [("TC0434", 21, 12), ("TC0434", 25, 31)]


RUNNER_BOUND = '''\
import warp as wp

TILE = 4


def make(tile_dim: int, module=None):
    @wp.kernel(module=module)
    def total(a: wp.array2d[float], out: wp.array[float]):
        i = wp.tid()
        t = wp.tile_load(a[i], shape=tile_dim)
        wp.tile_store(out, wp.tile_sum(t), offset=i)

    return total


def test_total(test, device, block_dim=TILE):
    N = block_dim * 2
    wp.launch_tiled(make(N), dim=[3], inputs=[], block_dim=block_dim)


def test_scaled(test, device):
    K = wp.constant(3 * TILE)
    kernel = make(K, module="unique")
'''


def test_calls_in_functions_a_test_runner_calls_use_defaults_and_constant_locals():
    """Warp's tile tests call factories from test functions that only a test runner calls: the call
    sees the function's parameter defaults and its constant locals (`N = block_dim * 2`,
    `K = wp.constant(3 * TILE)`); the decorator's `module=` is no binding (tilec ignores it)."""
    kernels, diags = outcome(RUNNER_BOUND)
    assert [d for d in diags if d.severity == "error"] == []
    assert sorted((k.name, k.block_dim) for k in kernels) == [("total__tile_dim_12", 4), ("total__tile_dim_8", 4)]


@needs_cxx
@pytest.mark.build
def test_a_kernel_bound_through_defaults_runs():

    mod = build(RUNNER_BOUND, "runner_bound", block_dim=4)
    a = np.arange(36, dtype=np.float32).reshape(3, 12) / 7
    out = np.zeros(3, np.float32)
    mod.total__tile_dim_8.launch_tiled(dim=3, inputs=[a, out], block_dim=4)
    np.testing.assert_allclose(out, a[:, :8].sum(axis=1), rtol=1e-6)


COMPREHENSION = '''\
import warp as wp


def make(length: int):
    @wp.kernel
    def ones(a: wp.array[float]):
        wp.tile_store(a, wp.tile_ones(shape=length, dtype=float))

    return ones


def test_lengths(test, device):
    kernels = {length: make(length) for length in (65, 2100)}
    more = [make(n * 2) for n in range(3) if n > 0]
'''


def test_calls_in_a_comprehension_see_its_loop_over_literals():
    """Each `for` of a comprehension over literal values binds like a loop; a filtered one (`if n > 0`)
    lists values tilec does not know: a warning at that call, no instance for it."""
    kernels, diags = outcome(COMPREHENSION)
    assert [d for d in diags if d.severity == "error"] == []
    assert sorted(k.name for k in kernels) == ["ones__length_2100", "ones__length_65"]
    [warning] = [d for d in diags if d.severity == "warning"]
    assert (warning.code, warning.span.line, warning.span.col) == ("TC0434", 14, 13)


PATHS = '''\
import warp as wp


def per_device(device, wide=False):
    if device.is_cpu:
        THREADS = 1
    elif wide:
        THREADS = 64
    else:
        THREADS = 32
    with wp.ScopedDevice(device):
        ROWS = min(8, int(THREADS * 0.5) + 2)
    if device.is_cuda:
        ONLY_CUDA = 2

    @wp.kernel
    def spread(a: wp.array2d[float]):
        i = wp.tid()
        t = wp.tile_load(a, shape=(ROWS, THREADS), offset=(0, i * THREADS))
        wp.tile_store(a, t * float(ONLY_CUDA), offset=(0, i * THREADS))

    return spread
'''


def test_a_factory_local_has_one_instance_per_path():
    """A local assigned on both sides of an if/elif/else is compiled once per path's value, and the
    instances are named by it; a `with` body is followed; min/int of constants fold; a path on
    which a name the kernel reads is unbound (NameError in Python) gives no instance."""
    kernels, diags = outcome(PATHS)
    assert [d for d in diags if d.severity == "error"] == []
    assert sorted(k.name for k in kernels) == [
        "spread__ROWS_2__THREADS_1", "spread__ROWS_8__THREADS_32", "spread__ROWS_8__THREADS_64"]


FACTORY_LIBRARY = '''\
import warp as wp


def make_writer(scale: float):  # called only by the project's other files
    @wp.kernel
    def write(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * scale

    return write


@wp.kernel
def halve(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.5
'''


@needs_cxx
def test_a_factory_this_file_never_calls_leaves_its_kernel_uncompiled_with_a_warning(tmp_path):
    """A library file whose kernel factory only other files call (Newton's sdf_contact.py) builds as
    a C++ file with an uninstantiated template does: a warning (TC0433) at the kernel says it is not
    compiled, `check -v` lists it, and the file's other kernels build and run. A factory the file calls
    with values tilec cannot know stays an error (tests/ui/nested.py)."""
    path = tmp_path / "lib.py"
    path.write_text(FACTORY_LIBRARY)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "check", "-v", "lib.py"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ("lib.py:6:9: warning[TC0433]: kernel `write` uses `scale`, a name bound in `make_writer`, whose value "
            "tilec cannot know: no call of `make_writer` in this file gives it a value; it is not compiled") \
        in proc.stderr
    assert proc.stdout.splitlines()[-2:] == [
        "lib.py:6: not compiled: kernel write: kernel `write` uses `scale`, a name bound in `make_writer`, whose value "
        "tilec cannot know: no call of `make_writer` in this file gives it a value; it is not compiled",
        "1 kernel compiled, 1 not compiled"]
    module = build(FACTORY_LIBRARY, "factlib")
    a = np.array([2.0, -4.0], np.float32)
    module.halve.launch(dim=2, inputs=[a])
    assert list(a) == [1.0, -2.0]


def test_an_uncalled_factory_with_defaults_is_a_template_whatever_it_defaults():
    """A factory only other files call, with defaults beside its required parameter (Newton's
    sdf_contact.py: `writer_func` and flags): its kernel is not compiled, with the warning naming the
    value no call here gives, not an error about a parameter that has a default."""
    source = '''import warp as wp


def make_writer(scale: float, offset: float = 0.0, twice: bool = False, c0: float = 0.0, c1: float = 1.0,
                c2: float = 2.0, c3: float = 3.0, c4: float = 4.0, c5: float = 5.0, c6: float = 6.0):
    @wp.kernel
    def write(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * scale + offset + float(twice) + c0 + c1 + c2 + c3 + c4 + c5 + c6

    return write
'''
    kernels, diags = outcome(source)
    assert list(kernels) == []
    assert [(d.severity, d.code, d.message) for d in diags] == [(
        "warning", "TC0433", "kernel `write` uses `scale`, a name bound in `make_writer`, whose value tilec cannot "
        "know: no call of `make_writer` in this file gives it a value; it is not compiled")]


LISTS = '''import warp as wp

SIZES = (4, 8, 16)


def test_lists(results: wp.array(dtype=int)):
    my_list = [1, 2, 3]
    changed = [1, 2]
    changed.append(3)

    @wp.kernel
    def read_list(results: wp.array(dtype=int)):
        if wp.static(len(my_list) == 2):
            results[0] = 2
        elif wp.static(len(my_list) == 3):
            results[0] = 30 + wp.static(my_list[2]) + wp.static(len(SIZES)) * 100

    @wp.kernel
    def read_changed(results: wp.array(dtype=int)):
        results[0] = wp.static(len(changed))

    wp.launch(read_list, dim=1, inputs=[results])
    wp.launch(read_changed, dim=1, inputs=[results])
'''


@needs_cxx
def test_a_list_only_its_kernels_read_is_a_constant():
    """A test function's `my_list = [1, 2, 3]` that only its kernels read (Warp's test_static.py) is a
    constant there, and `len()` of a constant tuple or list is Python's (in wp.static); a list the
    function changes after (`changed.append(3)`) is not: tilec cannot know what its kernel reads."""
    kernels, diags = outcome(LISTS)
    assert [k.name for k in kernels] == ["read_list"]
    assert [(d.code, d.span.line) for d in diags if d.severity == "error"] == [("TC0433", 19)]
    assert "`changed = [1, 2]` is not a compile-time constant" in diags[0].message
    head, rest = LISTS.split("    @wp.kernel\n    def read_changed")
    module = build(head + "    wp.launch" + rest.split("    wp.launch", 1)[1].split("    wp.launch")[0], "lists")
    out = np.zeros(1, np.int32)
    module.read_list.launch(dim=1, inputs=[out])
    assert out[0] == 333


def _many_launches(launches: int) -> str:
    """A class whose run method binds optional arrays on paths (`if x is None: x = a`) and
    launches kernels made by a factory with constant block sizes: Newton's narrow_phase.py in
    small."""
    lines = ["import warp as wp", "", "", "def make(width: int):", "    @wp.kernel",
             "    def fill(a: wp.array(dtype=float)):", "        i = wp.tid()", "        a[i] = float(width)", "",
             "    return fill", "", "", "FILL = make(4)", "", "", "class Runner:",
             "    def run(self, a, " + ", ".join(f"x{k}=None" for k in range(6)) + "):"]
    lines += [f"        if x{k} is None:\n            x{k} = a" for k in range(6)]
    lines += [f"        wp.launch(FILL, dim=1, inputs=[x{k % 6}], block_dim={32 * (1 + k % 4)})"
              for k in range(launches)]
    lines += ["", "", "Runner().run(None)", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("launches", [2, 24])
def test_the_paths_of_a_def_are_followed_once_however_many_launches_it_holds(monkeypatch, launches):
    """Every launch inside a def sees the envs of the same enclosing def: its calls and its body's
    paths are worked out once per env, not once per launch (a Newton file with dozens of
    launches in a method of many `if` statements took minutes to check)."""
    from tilec.frontend import branch_values

    runs = []
    real = branch_values.local_envs

    def counted(fn, *args, **kwargs):
        runs.append(fn.name.value)
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(branch_values, "local_envs", counted)
    kernels, diags = outcome(_many_launches(launches))
    assert [d for d in diags if d.severity == "error"] == []
    dims = (32, 64) if launches == 2 else (32, 64, 96, 128)
    assert sorted(k.name for k in kernels) == sorted(f"fill__width_4__block_dim_{d}" for d in dims)
    assert runs.count("run") == 1


DERIVED_LOCALS = '''\
import warp as wp


def make_scale(space_dim: int, device, label="x"):
    sp_dim = wp.constant(space_dim)
    half = sp_dim * 2 + 1
    name = device.alias

    @wp.kernel
    def scale(dims: wp.array2d[wp.int32], x: wp.array2d[wp.float32]):
        m, e = wp.tid()
        if e >= dims[m, sp_dim]:
            return
        x[m, e] = x[m, e] * float(half)

    return scale


zero = make_scale(0, wp.get_device())
one = make_scale(1, wp.get_device("cpu"))
'''


@needs_cxx
def test_a_factory_local_computed_from_its_parameters_has_their_values():
    """`sp_dim = wp.constant(space_dim)` (Newton's kamino blas.py) and a local computed from it take the
    call's values; the parameter the kernel never reads (a device) does not make the kernel unknown."""
    kernels, diags = outcome(DERIVED_LOCALS)
    assert [d for d in diags if d.severity == "error"] == []
    assert sorted(k.name for k in kernels) == ["scale__half_1__sp_dim_0", "scale__half_3__sp_dim_1"]
    mod = build(DERIVED_LOCALS, "derived_locals")
    dims = np.array([[2, 3], [3, 1]], np.int32)
    for kernel, col, factor in ((mod.scale__half_1__sp_dim_0, 0, 1.0), (mod.scale__half_3__sp_dim_1, 1, 3.0)):
        x = np.ones((2, 3), np.float32)
        kernel.launch(dim=(2, 3), inputs=[dims, x])
        expected = np.where(np.arange(3)[None, :] < dims[:, col:col + 1], factor, 1.0)
        np.testing.assert_allclose(x, expected)
