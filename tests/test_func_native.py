"""@wp.func_native snippets (frontend/native_funcs.py, codegen/natives.py): scalar snippets compiled
as written and called where the source calls them; their values against Warp in the conformance
case wl_func_natives. Here: the build's refusals (at the call, naming why), the float result that
leaves a kernel without an adjoint (never a zero gradient), and the generated C++ itself."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, first_error

HEAD = "import warp as wp\n\n\n"
KERNEL = ("\n\n\n@wp.kernel\ndef k(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
          "    i = wp.tid()\n    y[i] = float(f(x[i]))\n")


@pytest.mark.parametrize("native, why", [
    ('@wp.func_native("#include <cstdio>\\nreturn a;")\ndef f(a: float) -> float: ...',
     "its snippet uses `#include`: tilec compiles a snippet as one function's body, reading no other file and "
     "setting no compiler option"),
    ('@wp.func_native("_Pragma(\\"once\\") return a;")\ndef f(a: float) -> float: ...', "its snippet uses `_Pragma`"),
    ('@wp.func_native(f"return {1};")\ndef f(a: float) -> float: ...',
     "its snippet must be a string literal or a module-level string constant"),
    ('@wp.func_native("return new;")\ndef f(new: float) -> float: ...',
     "parameter `new` cannot be a C++ name (the snippet reads it by its Python name)"),
    ('@wp.func_native("return a[0];")\ndef f(a: wp.vec3) -> float: ...',
     "parameter `a` is a vec3f; tilec passes snippets scalars only"),
    ('@wp.func_native("return a;")\ndef f(a) -> float: ...',
     "parameter `a` needs a type annotation (a scalar type, as the snippet declares it)"),
    ('@wp.func_native("return a;")\ndef f(a: float, *rest) -> float: ...', "its parameters must be plain positional ones"),
])
def test_a_snippet_tilec_cannot_compile_is_refused_at_the_call(native, why):
    error = first_error(HEAD + native + KERNEL)
    assert error.startswith("11:18: TC0401: unsupported syntax: `f` is a @wp.func_native (a C++/CUDA snippet) "
                            "tilec cannot compile: ")
    assert why in error


def test_arguments_are_matched_as_warp_matches_a_funcs():
    source = HEAD + '@wp.func_native("return a * 2;")\ndef f(a: int) -> int: ...' + KERNEL
    assert first_error(source) == "11:20: TC0201: `f` takes `a` as an int32 scalar, got a float32 scalar"
    source = HEAD + '@wp.func_native("return a * 2;")\ndef f(a: int) -> int: ...' + KERNEL.replace("f(x[i])", "f(a=1)")
    assert first_error(source) == "11:18: TC0408: `f`: a @wp.func_native takes its arguments by position"


SNIPPETS = HEAD + '''@wp.func_native("""
float s = a * a;  // the snippet's own locals and comments
return s + b;
""")
def square_plus(a: float, b: float) -> float: ...


@wp.func_native("return n < 0 ? -n : n;")
def magnitude(n: int) -> int: ...


@wp.kernel
def floats(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = square_plus(x[i], 1.0)


@wp.kernel
def ints(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i] * float(magnitude(i - 2))
'''


@pytest.mark.build
@needs_cxx
def test_a_float_snippet_leaves_its_kernel_without_an_adjoint(tmp_path):
    path = tmp_path / "snippets.py"
    path.write_text(SNIPPETS)
    proc = subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(tmp_path / "out"),
                           "--target", "cpu"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (f"{path}:18:12: warning[TC0501]: `square_plus` is a @wp.func_native snippet returning a float: tilec "
            "does not differentiate C++ snippets (nor read an adj_snippet)") in proc.stderr
    assert "kernel `ints`" not in proc.stderr  # an integer snippet needs no adjoint: the kernel has one
    cpp = (tmp_path / "out" / "snippets" / "snippets.cpp").read_text()
    assert "// snippets.py:8: @wp.func_native `square_plus`\n[[maybe_unused]] static float n_square_plus(float a, " \
           "float b) {\nfloat s = a * a;  // the snippet's own locals and comments\nreturn s + b;\n}" in cpp


@needs_cxx
def test_snippets_compute_and_the_integer_one_keeps_the_gradient():
    mod = build(SNIPPETS, "snippets")
    x = np.linspace(-1.5, 2.0, 5).astype(np.float32)
    y = np.zeros(5, np.float32)
    mod.floats.launch(dim=5, inputs=[x, y])
    np.testing.assert_allclose(y, x * x + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="square_plus` is a @wp.func_native snippet returning a float"):
        mod.floats.launch(dim=5, inputs=[x, y], adj_inputs=[np.zeros(5, np.float32), np.ones(5, np.float32)],
                          adjoint=True)
    scale = np.abs(np.arange(5) - 2).astype(np.float32)
    mod.ints.launch(dim=5, inputs=[x, y])
    np.testing.assert_allclose(y, x * x * scale, rtol=1e-6)
    adj_x = np.zeros(5, np.float32)
    mod.ints.launch(dim=5, inputs=[x, y], adj_inputs=[adj_x, np.ones(5, np.float32)], adjoint=True)
    np.testing.assert_allclose(adj_x, 2 * x * scale, rtol=1e-6)
