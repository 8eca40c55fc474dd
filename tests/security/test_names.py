"""Names that must not break or subvert the build (issue #17, "Code execution" and "Names that break
the build"): every name reaching generated text goes through tilec/naming.py."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from common import generated_texts, tilec
from tilec import naming

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

HOSTILE = '''
import warp as wp
import tilec as tl


@wp.func
def f(a: float) -> float:
    return a * 2.0


@wp.func
def f_1(a: float) -> float:
    return a + 100.0


@wp.kernel
def np(x: wp.array(dtype=float), adj_x: wp.array(dtype=float), NULL: float):
    i = wp.tid()
    M_PI = x[i]
    errno = M_PI * NULL
    decltype = errno + 1.0
    wchar_t = decltype
    TL_HD = wchar_t
    größe = TL_HD * 1.0
    adj_x[i] = f(größe) + f_1(M_PI)


@tl.kernel(block_dim=64)
def Kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = f(x[i])


@wp.kernel
def _grid(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0
'''

USER_NAMES = ["NULL", "M_PI", "errno", "decltype", "wchar_t", "TL_HD", "größe", "adj_x", "f_1", "np", "Kernel",
              "_grid"]


def _code_tokens(text: str) -> set:
    """Identifiers of C/C++ text outside comments."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return set(re.findall(r"[^\W\d]\w*", text))


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory):
    work = tmp_path_factory.mktemp("names")
    (work / "hostile.py").write_text(HOSTILE, encoding="utf-8")
    proc = tilec("build", "hostile.py", "-o", "out", "--target", "cpu", cwd=work)
    assert proc.returncode == 0, proc.stderr
    return work / "out" / "hostile"


@pytest.mark.parametrize("stem", [
    "{__import__('os').system('touch PWNED')}",
    'quote"d', "back\\slash", "new\nline #define float int", "brace{x}", "caf\u00e9", "class", "1abc",
    "__init__",
])
def test_a_file_name_that_is_not_an_identifier_is_refused(tmp_path, stem):
    path = tmp_path / f"{stem}.py"
    path.write_text(HOSTILE, encoding="utf-8")
    proc = tilec("build", path.name, "-o", "out", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "error[TC0002]" in proc.stderr and "is not a Python identifier" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "PWNED").exists()


@needs_gxx
def test_a_hostile_file_suffix_reaches_generated_text_only_escaped(tmp_path):
    """`prog.p\\n#define...{x}"` has the valid stem `prog`: its name is written %-escaped everywhere."""
    name = 'prog.p\n#define float int {__import__("os")}"\\'
    (tmp_path / name).write_text(HOSTILE, encoding="utf-8")
    proc = tilec("build", name, "-o", "out", "--target", "cpu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "out" / "prog"
    for rel, text in generated_texts(folder).items():
        if rel.startswith("tilec-rt/") or rel == "manifest.json":
            continue
        assert "#define float" not in text and "{__import__" not in text, rel
        if rel in ("prog.cpp", "prog.cu", "prog.h", "__init__.py"):  # the files that name their source
            assert naming.source_label(name) in text, rel
    # the loader imports, and reports the missing library through an f-string holding the label
    (folder / "libprog_cpu.so").unlink()
    code = ("import sys; sys.path.insert(0, 'out'); import prog, numpy\n"
            "try:\n    prog._grid.launch(dim=1, inputs=[numpy.zeros(1, numpy.float32)], device='cpu')\n"
            "except RuntimeError as e:\n    print('missing:', e)\n")
    run = subprocess.run(["python3", "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0 and "missing:" in run.stdout and "--target cpu" in run.stdout, run.stderr
    assert not (tmp_path / "PWNED").exists()


@needs_gxx
def test_every_generated_artefact_holds_user_names_only_mangled(hostile_build):
    for rel, text in generated_texts(hostile_build).items():
        if rel.startswith("tilec-rt/") or not rel.endswith((".cpp", ".cu", ".h")):
            continue
        tokens = _code_tokens(text)
        for name in USER_NAMES:
            assert name not in tokens, f"{rel}: bare user name {name!r}"
        assert all(t.isascii() for t in tokens), rel


def test_c_identifiers_are_injective_and_plain():
    names = ["x", "x_1", "adj_x", "größe", "gr_Uf6_", "_U", "a_Ub", "v_x", "_tmp", "café", "cafe_U"]
    idents = [naming.c_ident(n) for n in names]
    assert len(set(idents)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in idents)
    syms = [(n, i) for n in names for i in range(3)]
    assert len({naming._user(n, i) for n, i in syms}) == len(syms)
    assert naming.c_param(naming.adjoint_param("x")) != naming.c_param("adj_x")


@needs_gxx
def test_hostile_names_build_and_compute(hostile_build):
    import tilec

    mod = tilec.load(hostile_build)
    x = np.arange(1, 5, dtype=np.float32)
    out = np.zeros(4, np.float32)
    mod.np.launch(dim=4, inputs=[x, out, 3.0], device="cpu")
    np.testing.assert_allclose(out, 2 * (x * 3 + 1) + (x + 100))
    y = np.zeros(4, np.float32)
    mod.Kernel.launch(dim=4, inputs=[x, y], device="cpu")
    np.testing.assert_allclose(y, 2 * x)
    z = x.copy()
    mod._grid.launch(dim=4, inputs=[z], device="cpu")
    np.testing.assert_allclose(z, x + 1)
    # x and adj_x as parameters: the adjoint's gradient of adj_x's seed flows into x
    gx, gout = np.zeros(4, np.float32), np.ones(4, np.float32)
    mod.np.launch(dim=4, inputs=[x, out, 3.0], adj_inputs=[gx, gout, 0.0], adjoint=True, device="cpu")
    np.testing.assert_allclose(gx, 2 * 3 + 1)
    assert mod.np.__class__.__name__ == "Kernel"  # the loader's own globals are intact


@pytest.mark.cuda
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_hostile_names_compile_under_nvcc(hostile_build, tmp_path):
    proc = subprocess.run(["nvcc", "-std=c++17", "--expt-relaxed-constexpr", "-c", "-arch=sm_80",
                           str(hostile_build / "hostile.cu"), "-o", str(tmp_path / "h.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


TWO = '''
import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * {factor}
'''

MAIN = r'''
#include "one.h"
#include "two.h"
#include <cstdio>
int main() {
    float x[4] = {1, 2, 3, 4};
    tilec_array a = {x, {4, 0, 0, 0}, {4, 0, 0, 0}};
    tilec_launch launch = {{4, 0, 0, 0}, 1, 0, 1, 1};
    if (one_k_cpu_forward(&launch, a) || two_k_cpu_forward(&launch, a)) return 1;
    std::printf("%g %g\n", x[0], x[3]);
    return 0;
}
'''


@needs_gxx
def test_two_modules_with_the_same_kernel_link_into_one_program(tmp_path):
    for name, factor in (("one", "2.0"), ("two", "3.0")):
        (tmp_path / f"{name}.py").write_text(TWO.format(factor=factor))
        proc = tilec("build", f"{name}.py", "-o", "out", "--emit-only", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    (tmp_path / "main.cpp").write_text(MAIN)
    out = tmp_path / "out"
    cmd = ["g++", "-std=c++17", "-O1", "-I", str(out / "one"), "-I", str(out / "two"), str(tmp_path / "main.cpp"),
           str(out / "one" / "one.cpp"), str(out / "two" / "two.cpp"), "-pthread", "-o", str(tmp_path / "main")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.split() == ["6", "24"]


def test_a_kernel_name_with_double_underscore_is_refused(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef __class__(x: wp.array(dtype=float)):\n    x[0] = 1.0\n")
    proc = tilec("check", "prog.py", cwd=tmp_path)
    assert proc.returncode == 1 and "prog.py:5:5: error[TC0002]" in proc.stderr, proc.stderr
