"""Names a file imports from the project's other files (frontend/imports.py): funcs, structs, constants and
type aliases of a sibling module (`from helpers import ...`), a parent package's (`from ..helpers import
...`), each module's funcs kept apart from a same-named one of the file; diagnostics in an imported func at
the kernel's call, a module that does not resolve at its import; import cycles; a rebuild after an
imported file changed. Checked by building with `tilec build` and running against numpy."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_cxx
from tilec.api import load

HELPERS = '''
import warp as wp

SCALE = 2.5
vec5 = wp.types.vector(5, dtype=float)


@wp.struct
class Particle:
    x: wp.vec3
    m: float


@wp.func
def inner(x: float):
    return x + 1.0


@wp.func
def twice(x: float):
    return x * SCALE * inner(x)
'''

PROGRAM = '''
import warp as wp

from ..helpers import SCALE, Particle, twice, vec5
from ..helpers import inner as plus_one
from consts import OFFSET


@wp.func
def inner(x: float):
    return x * 100.0


@wp.kernel
def k(p: wp.array(dtype=Particle), y: wp.array(dtype=float), v: wp.array(dtype=vec5)):
    i = wp.tid()
    y[i] = twice(p[i].m) + inner(1.0) + plus_one(p[i].x[0]) * SCALE + OFFSET
    v[i] = vec5(twice(1.0))
'''


def project(tmp_path: Path, program: str = PROGRAM, helpers: str = HELPERS) -> Path:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(helpers)
    (tmp_path / "pkg" / "sub" / "consts.py").write_text("OFFSET = 0.25\n")
    (tmp_path / "pkg" / "sub" / "prog.py").write_text(program)
    return tmp_path / "pkg" / "sub" / "prog.py"


def write_files(root: Path, files: dict[str, str]) -> None:
    """Each {relative path: text} under root, its folders made."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def tilec(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tilec", *args], capture_output=True, text=True, cwd=cwd)


def run(module, n=6, seed=0):
    rng = np.random.default_rng(seed)
    p = module.Particle.zeros(n)
    p["m"] = rng.standard_normal(n)
    p["x"] = rng.standard_normal((n, 3))
    y, v = np.zeros(n, np.float32), np.zeros((n, 5), np.float32)
    module.k.launch(dim=n, inputs=[p, y, v])
    return p["m"].astype(np.float64), p["x"][:, 0].astype(np.float64), y, v


@needs_cxx
def test_funcs_structs_and_constants_come_from_the_projects_files(tmp_path):
    source = project(tmp_path)
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    m, x0, y, v = run(load(tmp_path / "out" / "prog"))
    # helpers' `inner` (x + 1) inside `twice` and as `plus_one`; the file's own `inner` (x * 100) in the kernel
    np.testing.assert_allclose(y, m * 2.5 * (m + 1) + 100 + (x0 + 1) * 2.5 + 0.25, rtol=1e-5)
    np.testing.assert_array_equal(v, 5.0)


@needs_cxx
def test_a_changed_imported_file_is_rebuilt(tmp_path):
    source = project(tmp_path)
    assert tilec("build", str(source), "-o", "out", cwd=tmp_path).returncode == 0
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS.replace("SCALE = 2.5", "SCALE = 4.0"))
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    m, x0, y, _ = run(load(tmp_path / "out" / "prog"))
    np.testing.assert_allclose(y, m * 4.0 * (m + 1) + 100 + (x0 + 1) * 4.0 + 0.25, rtol=1e-5)


def test_an_error_in_an_imported_func_points_at_the_call(tmp_path):
    source = project(tmp_path, helpers=HELPERS.replace("return x + 1.0", "return x + wp.vec3(1.0)"))
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{source}:17:12: error[TC0201]: add: `+` of a float32 scalar and a vec3f" in proc.stderr, proc.stderr


def test_a_module_that_does_not_parse_is_reported_at_its_import(tmp_path):
    source = project(tmp_path, helpers=HELPERS + "\ndef broken(:\n")
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{source}:4:1: error[TC0433]: `..helpers` (helpers.py) cannot be used: helpers.py:" in proc.stderr, \
        proc.stderr


def test_an_import_cycle_brings_what_resolved(tmp_path):
    helpers = HELPERS + "\nfrom .sub.prog import k\n"
    source = project(tmp_path, helpers=helpers)
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("line", ["from ...outside import twice", "from .missing import twice"])
def test_an_import_tilec_cannot_find_leaves_its_names_unknown(tmp_path, line):
    source = project(tmp_path, program=PROGRAM.replace("from ..helpers import SCALE, Particle, twice, vec5", line +
                                                       "\nfrom ..helpers import SCALE, Particle, vec5"))
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    assert "error[TC0301]: unknown function `twice`" in proc.stderr, proc.stderr


def test_a_name_a_module_does_not_resolve_is_unknown_with_its_error(tmp_path):
    helpers = HELPERS.replace("    m: float", "    m: float\n    t: wp.fabricarray(dtype=float)")  # a struct field tilec lacks
    source = project(tmp_path, helpers=helpers)
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{source}:15:25: error[TC0409]: parameter `p`: not a dtype" in proc.stderr, proc.stderr
    assert "is imported from `..helpers` (helpers.py), where tilec finds no @wp.func, @wp.struct, constant or type " \
           "alias of that name (tilec reports there: helpers.py:" in proc.stderr, proc.stderr


def test_a_module_past_the_limits_leaves_its_names_unknown_saying_so(tmp_path, monkeypatch):
    from tilec.diagnostics import CompileError
    from tilec.frontend import imports
    from tilec.pipeline import compile_source

    source = project(tmp_path)
    monkeypatch.setattr(imports, "MAX_MODULES", 0)
    with pytest.raises(CompileError) as info:
        compile_source(source.read_text(), str(source))
    helps = [d.help or "" for d in info.value.diagnostics]
    assert any("is imported from `..helpers` (helpers.py), which tilec did not read: more than 0 modules imported"
               in h for h in helps), helps


MODULES_PROGRAM = '''
import warp as wp
import pkg
import pkg.sub.consts
from .. import helpers
from ..helpers import Kind
from pkg import helpers as h


@wp.kernel
def k(p: wp.array(dtype=h.Particle), y: wp.array(dtype=float), v: wp.array(dtype=helpers.vec5)):
    i = wp.tid()
    y[i] = helpers.twice(p[i].m) + h.inner(p[i].x[0]) * pkg.helpers.SCALE + pkg.sub.consts.OFFSET
    if p[i].m > 0.0 and Kind.SOLID == pkg.helpers.Kind.SOLID:
        y[i] += float(h.Kind.FLUID) + Kind.weight(2) + h.Kind.weight(4)  # a class's @wp.func, imported with it
    v[i] = helpers.vec5(h.twice(1.0))


@wp.kernel
def shadowed(h: wp.array(dtype=float)):
    h[0] = float(len(h))
'''
KIND = ("\nimport enum\n\n\nclass Kind(enum.IntEnum):\n    SOLID = 1\n    FLUID = 7\n\n    @staticmethod\n"
        "    @wp.func\n    def weight(k: int) -> float:\n        return float(k) * 0.5\n")


@needs_cxx
def test_names_reached_through_imported_modules(tmp_path):
    """`import pkg`, `from .. import helpers`, `from pkg import helpers as h`, `import pkg.sub.consts`:
    funcs, structs, enums, constants and vector types by attribute (module_aliases.py), also through a
    submodule; a kernel parameter named like a module alias is the parameter."""
    source = project(tmp_path, program=MODULES_PROGRAM, helpers=HELPERS + KIND)
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    module = load(tmp_path / "out" / "prog")
    m, x0, y, v = run(module)
    np.testing.assert_allclose(y, m * 2.5 * (m + 1) + (x0 + 1) * 2.5 + 0.25 + np.where(m > 0, 7.0 + 1.0 + 2.0, 0.0), rtol=1e-5)
    np.testing.assert_array_equal(v, 1.0 * 2.5 * (1.0 + 1.0))
    h = np.zeros(3, np.float32)
    module.shadowed.launch(dim=1, inputs=[h])
    assert h[0] == 3.0


@pytest.mark.parametrize("line, expected", [
    # a position after a rewritten name on the same line is where the text has it
    ("    y[i] = h.twice(helpers.SCALE) + pkg.helpers.twice(wp.vec3(1.0))", "13:55: error[TC0201]"),
    ("    y[i] = helpers.missing(1.0)", "13:12: error[TC0301]: unknown function `helpers.missing`"),
    ("    y[i] = pkg.nothing.X", "13:12: error[TC0301]: unknown name `pkg.nothing`"),
])
def test_a_module_attribute_is_reported_where_it_is_written(tmp_path, line, expected):
    program = MODULES_PROGRAM.replace(
        "    y[i] = helpers.twice(p[i].m) + h.inner(p[i].x[0]) * pkg.helpers.SCALE + pkg.sub.consts.OFFSET", line)
    source = project(tmp_path, program=program, helpers=HELPERS + KIND)
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    assert f"{source}:{expected}" in proc.stderr, proc.stderr
    if "missing" in line:
        assert "`helpers.missing` is imported from `..helpers` (helpers.py), where tilec finds no @wp.func" \
               in proc.stderr, proc.stderr


@needs_cxx
def test_a_changed_module_imported_whole_is_rebuilt(tmp_path):
    program = "import warp as wp\nimport pkg.helpers\n\n\n@wp.kernel\ndef k(y: wp.array(dtype=float)):\n" \
              "    y[wp.tid()] = pkg.helpers.SCALE\n"
    source = project(tmp_path, program=program)
    assert tilec("build", str(source), "-o", "out", cwd=tmp_path).returncode == 0
    (tmp_path / "pkg" / "helpers.py").write_text(HELPERS.replace("SCALE = 2.5", "SCALE = 4.0"))
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    y = np.zeros(2, np.float32)
    load(tmp_path / "out" / "prog").k.launch(dim=2, inputs=[y])
    np.testing.assert_array_equal(y, 4.0)


def test_the_files_own_package_by_its_absolute_name_through_a_namespace_folder(tmp_path):
    """`from top.inner.helpers import twice` in top/inner/sub/prog.py, where top/inner has no __init__.py
    (a namespace package, as Newton's newton/_src): the file's own package, found above it."""
    (tmp_path / "top" / "inner" / "sub").mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (tmp_path / "top" / "inner" / "sub" / "__init__.py").write_text("")
    (tmp_path / "top" / "inner" / "helpers.py").write_text(HELPERS + KIND)
    source = tmp_path / "top" / "inner" / "sub" / "prog.py"
    source.write_text("import warp as wp\nfrom top.inner.helpers import Kind, twice\n\n\n@wp.kernel\n"
                      "def k(y: wp.array(dtype=float)):\n    y[wp.tid()] = twice(1.0) + float(Kind.FLUID)\n")
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_selector_imported_from_another_file_picks_one_of_its_modules_funcs(tmp_path):
    """`wp.static(pick(Kind.FLUID))(x)` where helpers.py's `pick` returns one of helpers' funcs by an
    if/elif chain on its argument (Newton's kamino get_joint_coords_mapping_function)."""
    helpers = HELPERS + KIND + ("\n\ndef pick(kind: int):\n    if kind == Kind.SOLID:\n        return inner\n"
                                "    elif kind == Kind.FLUID:\n        return twice\n    return None\n")
    program = ("import warp as wp\nfrom ..helpers import Kind, pick\n\n\n@wp.kernel\n"
               "def k(y: wp.array(dtype=float)):\n    i = wp.tid()\n"
               "    y[i] = wp.static(pick(Kind.FLUID))(y[i]) + wp.static(pick(Kind.SOLID))(1.0)\n")
    source = project(tmp_path, program=program, helpers=helpers)
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    y = np.array([1.0, 2.0], np.float32)
    load(tmp_path / "out" / "prog").k.launch(dim=2, inputs=[y])
    np.testing.assert_allclose(y, np.array([1.0, 2.0]) * 2.5 * (np.array([1.0, 2.0]) + 1) + 2.0)


CYCLE_FILES = {
    # geometry/types.py re-exports `scale` and defines `Shape`, then imports model.py, which imports
    # kernels.py, which takes `scale` and `Shape` from types.py while types.py is still being read
    "geo/__init__.py": "",
    "geo/base.py": "import warp as wp\n\n\n@wp.func\ndef scale(x: float):\n    return x * 3.0\n",
    "geo/types.py": "import warp as wp\n\nfrom .base import scale\n\n\n@wp.struct\nclass Shape:\n    r: float\n\n\n"
                    "from .model import Model\n",
    "geo/model.py": "from .kernels import grow\nfrom .kernels import Shape as ModelShape\n\n\nclass Model:\n    pass\n",
    "geo/kernels.py": "import warp as wp\n\nfrom .types import Shape, scale\nfrom .types import missing\n\n\n@wp.func\n"
                      "def grow(s: Shape):\n    return scale(s.r) + 1.0\n",
    "geo/use.py": "import warp as wp\n\nfrom .types import Shape\nfrom .kernels import grow\nfrom .model import ModelShape\n"
                  "\n\n@wp.kernel\ndef k(s: wp.array(dtype=ModelShape), y: wp.array(dtype=float)):\n    i = wp.tid()\n    y[i] = grow(s[i])\n",
}


@needs_cxx
def test_names_taken_from_a_module_of_an_import_cycle_arrive_when_it_finishes(tmp_path):
    """Python's modules hold every name by the time a kernel is compiled, even where the imports form a
    cycle (Newton's geometry/types.py -> sim/model.py -> ... -> a module importing from geometry/types.py):
    a name taken from a module still being read is brought when that module finishes, passed on through
    the modules that import it in turn; a name the module never defines is unknown, saying so."""
    write_files(tmp_path, CYCLE_FILES)
    use = tmp_path / "geo" / "use.py"  # types.py first: kernels.py, further down, waits for it
    proc = tilec("build", str(use), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    module = load(tmp_path / "out" / "use")
    shapes = module.Shape.zeros(3)
    shapes["r"] = [1.0, 2.0, -0.5]
    y = np.zeros(3, np.float32)
    module.k.launch(dim=3, inputs=[shapes, y])
    np.testing.assert_allclose(y, [4.0, 7.0, -0.5])
    from tilec.frontend import imports
    from tilec.frontend.parse import parse
    from tilec.frontend.resolve import resolve
    from tilec.diagnostics import Diagnostics

    with imports.session():  # as use.py's check reads them
        resolve(parse(use.read_text(), str(use), "use"), Diagnostics())
        loaded = imports._SESSION[0].modules[(tmp_path / "geo" / "kernels.py").resolve()]
    assert isinstance(loaded, tuple)
    scope = loaded[1]
    assert "scale" in scope.funcs and "Shape" in scope.structs
    assert scope.unbrought["missing"] == ("`missing` is imported from `.types` (types.py), where tilec finds no "
                                          "@wp.func, @wp.struct, constant or type alias of that name")
    assert not imports._SESSION  # the session (and its waiting names) ended with the outermost resolve


def test_values_of_a_host_library_are_named_where_they_are_bound(tmp_path):
    """MuJoCo Warp's types.py binds its enums and limits to the mujoco module's values
    (`FREE = mujoco.mjtJoint.mjJNT_FREE`, `MJ_MINVAL = mujoco.mjMINVAL`): tilec cannot compute them
    without running that library, and says so at the kernel's read, naming the file and line of the
    binding (an imported one's too), instead of an unknown name."""
    write_files(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/types.py": "import enum\n\nimport mujoco\n\nMJ_MINVAL = mujoco.mjMINVAL\n\n\n"
                        "class JointType(enum.IntEnum):\n    FREE = mujoco.mjtJoint.mjJNT_FREE\n    BALL = 1\n",
        "pkg/kernels.py": "import warp as wp\n\nfrom .types import MJ_MINVAL, JointType\n\n\n@wp.kernel\n"
                          "def k(t: wp.array(dtype=int), x: wp.array(dtype=float)):\n    i = wp.tid()\n"
                          "    if t[i] == JointType.BALL:\n        x[i] = 1.0\n    if t[i] == JointType.FREE:\n"
                          "        x[i] = MJ_MINVAL\n",
    })
    source = tmp_path / "pkg" / "kernels.py"
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1
    errors = [line.split(": ", 1)[1] for line in proc.stderr.splitlines() if "error[" in line]
    assert errors == [
        "error[TC0433]: `JointType.FREE` is bound at types.py:9 to `mujoco.mjtJoint.mjJNT_FREE`, a value tilec cannot "
        "compute when it compiles (it evaluates literals, module constants and arithmetic on them)",
        "error[TC0433]: `MJ_MINVAL` is bound at types.py:5 to `mujoco.mjMINVAL`, a value tilec cannot compute when it "
        "compiles (it evaluates literals, module constants and arithmetic on them)"], proc.stderr
    assert f"{source}:11:16: error[TC0433]" in proc.stderr and f"{source}:12:16: error[TC0433]" in proc.stderr


@needs_cxx
def test_a_factory_default_is_read_in_the_factory_s_module(tmp_path):
    """`def make(mode: Mix = Mix.AVERAGE)` imported from another file and called without the argument
    (Newton's kamino materials.py): the default is read where the factory is defined, whose names the
    calling file need not import."""
    write_files(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/mix.py": "from enum import IntEnum\n\nimport warp as wp\n\n\nclass Mix(IntEnum):\n    AVERAGE = 0\n"
                      "    PRODUCT = 1\n\n\ndef make(mode: Mix = Mix.AVERAGE):\n    @wp.func\n"
                      "    def combine(a: float, b: float):\n        if wp.static(mode == Mix.AVERAGE):\n"
                      "            return 0.5 * (a + b)\n        return a * b\n\n    return combine\n",
        "pkg/use.py": "import warp as wp\n\nfrom .mix import make\n\n\n@wp.kernel\n"
                      "def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
                      "    i = wp.tid()\n    y[i] = wp.static(make())(x[i], 3.0)\n",
    })
    source = tmp_path / "pkg" / "use.py"
    proc = tilec("build", str(source), "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    x = np.array([1.0, -5.0], np.float32)
    y = np.zeros(2, np.float32)
    load(tmp_path / "out" / "use").k.launch(dim=2, inputs=[x, y])
    np.testing.assert_allclose(y, 0.5 * (x + 3.0))


def test_an_error_in_a_func_made_by_an_imported_factory_points_at_the_import(tmp_path):
    """A func made by another file's factory (its nodes made after that file was read) and an error in it:
    the diagnostic points at the import of the factory, never an internal error; `Any` imported from
    Warp's own modules (`from warp._src.types import Any`, Newton's kamino math.py) is typing's."""
    write_files(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/mathx.py": "import warp as wp\nfrom warp._src.types import Any\n\n\n@wp.func\n"
                        "def tril(row: Any, col: Any) -> Any:\n    return row * (row + 1) // 2 + col\n",
        "pkg/mat.py": "import warp as wp\n\nfrom .mathx import tril\n\n\ndef make(k: int = 1):\n    @wp.func\n"
                      "    def pair(a: int, b: int) -> int:\n        return tril(a, b) + undefined_helper(k)\n\n"
                      "    return pair\n",
        "pkg/use.py": "import warp as wp\n\nfrom .mat import make\n\n\n@wp.kernel\ndef kern(x: wp.array(dtype=int)):\n"
                      "    i = wp.tid()\n    x[i] = wp.static(make())(i, 3)\n",
    })
    source = tmp_path / "pkg" / "use.py"
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1 and "internal compiler error" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error[" in line]
    assert errors == [f"{source}:3:1: error[TC0301]: unknown function `undefined_helper`"], proc.stderr
    (tmp_path / "pkg" / "mat.py").write_text((tmp_path / "pkg" / "mat.py").read_text().replace(
        " + undefined_helper(k)", " + k"))
    assert tilec("check", str(source), cwd=tmp_path).returncode == 0
    # an error at a node of the module the factory's module imports (two files away): at the same import
    (tmp_path / "pkg" / "mathx.py").write_text((tmp_path / "pkg" / "mathx.py").read_text().replace(
        "col: Any", "col: NoSuchType"))
    proc = tilec("check", str(source), cwd=tmp_path)
    assert proc.returncode == 1 and "internal compiler error" not in proc.stderr, proc.stderr
    assert f"{source}:3:1: error[TC0409]: parameter `col`: unsupported type annotation" in proc.stderr, proc.stderr


SHAPES = '''
import enum

import warp as wp


class Gaussian:
    class SortingMode(enum.IntEnum):
        RAY = 0
        DEPTH = 2

    @wp.struct
    class Data:
        count: wp.int32
        scales: wp.array(dtype=wp.vec3f)
        gain: float
        mode: wp.int32
'''

NESTED_USER = '''
import warp as wp

from .geo import Gaussian as G


@wp.kernel
def gains(g: G.Data, out: wp.array(dtype=float)):
    i = wp.tid()
    local = G.Data()
    local.gain = g.gain * 2.0
    if i < g.count and g.mode == G.SortingMode.DEPTH:
        out[i] = g.scales[i][2] * local.gain
'''


@needs_cxx
def test_a_struct_and_an_enum_declared_in_an_imported_class(tmp_path):
    # `from .geo import Gaussian as G` (the package re-exporting its shapes module's class), then `G.Data` and
    # `G.SortingMode.DEPTH` (Newton's Gaussian.Data); the loader gives the struct under its own class's name,
    # `m.Gaussian.Data`
    write_files(tmp_path, {"pkg/__init__.py": "", "pkg/geo/__init__.py": "from .shapes import Gaussian\n",
                           "pkg/geo/shapes.py": SHAPES, "pkg/user.py": NESTED_USER})
    proc = tilec("build", "pkg/user.py", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    module = load(tmp_path / "out" / "user")
    scales = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    for mode, expected in ((2, np.r_[scales[:4, 2] * 1.5, 0.0]), (0, np.zeros(5))):
        out = np.zeros(5, np.float32)
        module.gains.launch(dim=5, inputs=[module.Gaussian.Data(count=4, scales=scales, gain=0.75, mode=mode), out])
        np.testing.assert_allclose(out, expected, rtol=1e-6)
