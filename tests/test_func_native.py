"""@wp.func_native snippets (frontend/native_funcs.py, codegen/natives.py): snippets over scalars and
arrays compiled as written and called where the source calls them; their values and adj_snippets'
gradients against Warp and finite differences in the conformance cases wl_func_natives and
wl_native_*. Here: the build's refusals (at the call, naming why), a float without an adj_snippet
leaving its kernel without an adjoint (never a zero gradient), the replay_snippet, the arrays a
snippet may write (const otherwise, so a write the reading misses does not compile), and the C++."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir, first_error

HEAD = "import warp as wp\n\n\n"
KERNEL = ("\n\n\n@wp.kernel\ndef k(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
          "    i = wp.tid()\n    y[i] = float(f(x[i]))\n")


@pytest.mark.parametrize("native, why", [
    ('@wp.func_native("#include <cstdio>\\nreturn a;")\ndef f(a: float) -> float: ...',
     "its snippet uses `#include`: tilec compiles a snippet as one function's body, reading no other file and "
     "setting no compiler option"),
    ('@wp.func_native("_Pragma(\\"once\\") return a;")\ndef f(a: float) -> float: ...', "its snippet uses `_Pragma`"),
    ('@wp.func_native(f"return {1};")\ndef f(a: float) -> float: ...',
     "its snippet must be a string literal or a string constant (module-level, or a local the function defining it assigns once)"),
    ('@wp.func_native("return new;")\ndef f(new: float) -> float: ...',
     "parameter `new` cannot be a C++ name (the snippet reads it by its Python name)"),
    ('@wp.func_native("return a.x;")\ndef f(a: wp.quat, b: wp.indexedarray(dtype=float)) -> float: ...',
     "parameter `b` is indexedarray1d(float32); tilec passes snippets scalars, vectors, matrices and arrays of them only"),
    ('@wp.func_native("return a;")\ndef f(a) -> float: ...',
     "parameter `a` needs a type annotation (a scalar, vector or matrix type or an array of them, as the snippet declares it)"),
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


def _cli_build(path, source):
    """`tilec build` of `source`, written to `path`, for the CPU into the folder beside it."""
    path.write_text(source)
    return subprocess.run([sys.executable, "-m", "tilec.cli", "build", str(path), "-o", str(path.parent / "out"),
                           "--target", "cpu"], capture_output=True, text=True)


@pytest.mark.build
@needs_cxx
def test_a_float_snippet_leaves_its_kernel_without_an_adjoint(tmp_path):
    path = tmp_path / "snippets.py"
    proc = _cli_build(path, SNIPPETS)
    assert proc.returncode == 0, proc.stderr
    assert (f"{path}:18:12: warning[TC0501]: `square_plus` is a @wp.func_native snippet that returns floats and "
            "has no adj_snippet: tilec does not differentiate C++ snippets") in proc.stderr
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
    with pytest.raises(ValueError, match="square_plus` is a @wp.func_native snippet that returns floats and has no adj_snippet"):
        mod.floats.launch(dim=5, inputs=[x, y], adj_inputs=[np.zeros(5, np.float32), np.ones(5, np.float32)],
                          adjoint=True)
    scale = np.abs(np.arange(5) - 2).astype(np.float32)
    mod.ints.launch(dim=5, inputs=[x, y])
    np.testing.assert_allclose(y, x * x * scale, rtol=1e-6)
    adj_x = np.zeros(5, np.float32)
    mod.ints.launch(dim=5, inputs=[x, y], adj_inputs=[adj_x, np.ones(5, np.float32)], adjoint=True)
    np.testing.assert_allclose(adj_x, 2 * x * scale, rtol=1e-6)


@pytest.mark.parametrize("native, why", [
    ('@wp.func_native("return a;", "adj_a += adj_ret;")\ndef f(a: float, b: wp.float64) -> float: ...',
     "its adj_snippet's float parameters must share one precision"),
    ('@wp.func_native("return a;")\ndef f(a: float, adj_a: float) -> float: ...',
     "parameter `adj_a` would hide the adjoint of `a` in the adj_snippet"),
    ('@wp.func_native("return a;", grad_snippet="")\ndef f(a: float) -> float: ...',
     "its decorator takes snippet, adj_snippet and replay_snippet only"),
    ('@wp.func_native("return a;", adj_snippet=f"{1}")\ndef f(a: float) -> float: ...',
     "its adj_snippet must be a string literal or a string constant (module-level, or a local the function defining it assigns once)"),
    ('@wp.func_native("return a;", "#pragma unroll\\nadj_a += adj_ret;")\ndef f(a: float) -> float: ...',
     "its adj_snippet uses `#pragma`"),
    ('@wp.func_native("return 1.0f;")\ndef f(a: float) -> wp.array(dtype=float): ...',
     "its result is a 1-d float32 array; tilec passes snippets scalars, vectors and matrices only"),
])
def test_adjoint_snippets_tilec_cannot_compile_are_refused_at_the_call(native, why):
    error = first_error(HEAD + native + KERNEL)
    assert error.startswith("11:18: TC0401: unsupported syntax: `f` is a @wp.func_native"), error
    assert why in error


ARRAYS = HEAD + '''@wp.func_native("counts[tid] += 1;\\nout[tid] = 2.0f * x[tid];", "adj_x[tid] += 2.0f * adj_out[tid];", "")
def count_and_double(x: wp.array(dtype=float), counts: wp.array(dtype=int), out: wp.array(dtype=float), tid: int): ...


@wp.func_native("counts[tid] += 1;")
def count(counts: wp.array(dtype=int), tid: int): ...


@wp.func_native("out[tid] = x[tid] * x[tid];\\nreturn tid % 2;", "adj_x[tid] += 2.0f * x[tid] * adj_out[tid];")
def square_parity(x: wp.array(dtype=float), out: wp.array(dtype=float), tid: int) -> int: ...


@wp.kernel
def replayed(x: wp.array(dtype=float), counts: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    count_and_double(x, counts, out, i)


@wp.kernel
def repeated(x: wp.array(dtype=float), counts: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    count(counts, i)
    out[i] = x[i] * 3.0


@wp.kernel
def integer_result(x: wp.array(dtype=float), squares: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    parity = square_parity(x, squares, i)
    y[i] = x[i] * float(parity + 1)
'''


@needs_cxx
def test_the_adjoint_launch_runs_the_replay_snippet_in_place_of_the_snippet():
    """As Warp: a snippet returning nothing is replayed by the adjoint launch, its replay_snippet
    instead where one is given (here empty: the counter is not counted twice)."""
    mod = build(ARRAYS, "native_arrays_replay")
    x = np.linspace(-1, 1, 6).astype(np.float32)
    for kernel, after_both in ((mod.replayed, 1), (mod.repeated, 2)):
        counts, out = np.zeros(6, np.int32), np.zeros(6, np.float32)
        kernel.launch(dim=6, inputs=[x, counts, out])
        assert counts.tolist() == [1] * 6
        adj_x = np.zeros(6, np.float32)
        kernel.launch(dim=6, inputs=[x, counts, out], adj_inputs=[adj_x, np.zeros(6, np.int32), np.ones(6, np.float32)],
                      adjoint=True)
        assert counts.tolist() == [after_both] * 6
        np.testing.assert_allclose(adj_x, 2.0 if kernel is mod.replayed else 3.0)


@needs_cxx
def test_an_integer_result_still_runs_the_adj_snippet_of_its_arrays():
    """The sweep reaches `parity` through no float, yet the snippet's float array has an adjoint:
    its adj_snippet runs all the same (checked against the derivative of y and squares)."""
    mod = build(ARRAYS, "native_arrays_replay")
    x = np.linspace(-1, 1, 6).astype(np.float32)
    squares, y = np.zeros(6, np.float32), np.zeros(6, np.float32)
    mod.integer_result.launch(dim=6, inputs=[x, squares, y])
    parity = np.arange(6) % 2
    np.testing.assert_allclose(squares, x * x, rtol=1e-6)
    np.testing.assert_allclose(y, x * (parity + 1), rtol=1e-6)
    adj_x, seed_sq, seed_y = np.zeros(6, np.float32), np.linspace(0.5, 1.5, 6).astype(np.float32), np.ones(6, np.float32)
    mod.integer_result.launch(dim=6, inputs=[x, squares, y], adj_inputs=[adj_x, seed_sq.copy(), seed_y], adjoint=True)
    np.testing.assert_allclose(adj_x, 2 * x * seed_sq + (parity + 1), rtol=1e-6)


@pytest.mark.build
@needs_cxx
def test_arrays_a_snippet_only_reads_are_const_and_not_written(tmp_path):
    path = tmp_path / "arrays.py"
    proc = _cli_build(path, ARRAYS)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "arrays" / "manifest.json").read_text())
    assert manifest["kernels"]["replayed"]["writes"] == ["counts", "out"]
    assert manifest["kernels"]["integer_result"]["writes"] == ["squares", "y"]
    cpp = (tmp_path / "out" / "arrays" / "arrays.cpp").read_text()
    assert ("static void n_count_and_double(array_t<const float> x, array_t<int32_t> counts, array_t<float> out, "
            "int32_t tid) {") in cpp
    # a write the reading cannot see (through a reference) meets the const and does not compile
    proc = _cli_build(path, ARRAYS.replace("out[tid] = x[tid] * x[tid];", "auto& r = x[tid]; r = 0.0f; out[tid] = 1.0f;"))
    assert proc.returncode == 1
    assert "read-only" in proc.stderr or "const" in proc.stderr, proc.stderr


CONTROL_FLOW = HEAD + '''@wp.func_native("out[tid] += 2.0f * x[tid];\\nreturn tid % 2;", "adj_x[tid] += 2.0f * adj_out[tid];")
def accumulate(x: wp.array(dtype=float), out: wp.array(dtype=float), tid: int) -> int: ...


@wp.func_native("return x[tid] > 0.0f ? 1 : 0;")
def positive(x: wp.array(dtype=float), tid: int) -> int: ...


@wp.kernel
def branches(x: wp.array(dtype=float), out: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    for k in range(3):
        accumulate(x, out, i)
    if accumulate(x, out, i) == 1:
        y[i] = x[i] * 2.0
    if positive(x, i) == 1:
        y[i] = y[i] + x[i]
'''


@needs_cxx
def test_adj_snippets_run_in_loops_and_conditions_and_a_read_only_float_array_needs_none():
    """Each of the four calls of `accumulate` (three in the loop, one in a condition) runs its
    adj_snippet; `positive` only reads x (const) for an integer: no adj_snippet is needed."""
    mod = build(CONTROL_FLOW, "native_control_flow")
    n = 6
    x = np.linspace(-1, 1, n).astype(np.float32)
    out, y = np.zeros(n, np.float32), np.zeros(n, np.float32)
    mod.branches.launch(dim=n, inputs=[x, out, y])
    parity, up = np.arange(n) % 2, (x > 0).astype(np.float32)
    np.testing.assert_allclose(out, 8 * x, rtol=1e-6)
    np.testing.assert_allclose(y, 2 * x * parity + x * up, rtol=1e-6)
    adj_x, seed = np.zeros(n, np.float32), np.linspace(1, 2, n).astype(np.float32)
    mod.branches.launch(dim=n, inputs=[x, out, y], adj_inputs=[adj_x, seed.copy(), np.ones(n, np.float32)],
                        adjoint=True)
    np.testing.assert_allclose(adj_x, 8 * seed + 2 * parity + up, rtol=1e-6)


LOCAL_SNIPPETS = HEAD + '''def make(scale: float):
    snippet = """
    out[tid] = x[tid] * 3.0f;
    """
    adj_snippet = "adj_x[tid] += 3.0f * adj_out[tid];"

    @wp.func_native(snippet, adj_snippet)
    def triple(x: wp.array(dtype=float), out: wp.array(dtype=float), tid: int): ...

    @wp.kernel
    def tripled(x: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        triple(x, out, i)

    return tripled


tripled = make(1.0)
'''


@needs_cxx
def test_a_snippet_held_in_a_local_beside_the_def_compiles():
    """Warp's own tests write `snippet = \"\"\"...\"\"\"` in the function that defines the func_native
    and its kernel: the local is a constant of that scope."""
    mod = build(LOCAL_SNIPPETS, "native_locals")
    x = np.linspace(-1, 1, 5).astype(np.float32)
    out, adj_x = np.zeros(5, np.float32), np.zeros(5, np.float32)
    mod.tripled.launch(dim=5, inputs=[x, out])
    np.testing.assert_allclose(out, 3 * x, rtol=1e-6)
    mod.tripled.launch(dim=5, inputs=[x, out], adj_inputs=[adj_x, np.ones(5, np.float32)], adjoint=True)
    np.testing.assert_allclose(adj_x, 3.0)


def test_a_snippet_local_tilec_cannot_know_is_refused_at_the_call():
    source = LOCAL_SNIPPETS.replace('adj_snippet = "adj_x[tid] += 3.0f * adj_out[tid];"', "adj_snippet = str(scale)")
    assert first_error(source) == ("16:9: TC0401: unsupported syntax: `triple` is a @wp.func_native (a C++/CUDA "
                                   "snippet) tilec cannot compile: its adj_snippet must be a string literal or a "
                                   "string constant (module-level, or a local the function defining it assigns once)")


VALUES = HEAD + """@wp.func_native("return wp::vec3(v[0] * s, v[1], v[2]);", "adj_s += v[0] * adj_ret[0];")
def scale_x(v: wp.vec3, s: float) -> wp.vec3: ...


@wp.kernel
def scaled(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = scale_x(wp.vec3(1.0, 2.0, 3.0), x[i])
"""


@needs_cxx
def test_an_adj_snippet_over_float_vectors_is_refused_not_dropped():
    """tilec hands on a snippet's float scalars' adjoints only: a vector's would be lost, so the kernel
    has no adjoint (its forward runs, spelled with Warp's C++ type names)."""
    mod = build(VALUES, "native_values")
    x, y = np.linspace(-1, 1, 4).astype(np.float32), np.zeros((4, 3), np.float32)
    mod.scaled.launch(dim=4, inputs=[x, y])
    np.testing.assert_allclose(y, np.stack([x, np.full(4, 2.0), np.full(4, 3.0)], axis=1))
    with pytest.raises(ValueError, match="`scale_x` has an adj_snippet over a vector or matrix of floats"):
        mod.scaled.launch(dim=4, inputs=[x, y], adj_inputs=[np.zeros(4, np.float32), np.ones((4, 3), np.float32)],
                          adjoint=True)


@pytest.mark.parametrize("code, name, written", [
    ("out[tid] = a * x[tid] + y[tid];", "out", True),
    ("out[tid] = a * x[tid] + y[tid];", "x", False),
    ("adj_s += x[tid][0] * adj_out[tid][1];  // x[0] = 1", "x", False),
    ('const char* s = "x[0] = 1"; return x[1];', "x", False),
    ("int n = x.shape[0]; out[tid] = x[(tid + 1) % n];", "x", False),
    ("if (x[i] == 2 && y[0] >= 1) z[x[i]] -= 1;", "x", False),
    ("if (x[i] == 2 && y[0] >= 1) z[x[i]] -= 1;", "z", True),
    ("x[i][0] = 1.0f;", "x", True),
    ("x[i] .y += 1.0f;", "x", True),
    ("x[i]++;", "x", True),
    ("++x[i];", "x", True),
    ("x[a[0]] <<= 2;", "x", True),
    ("float* p = &x[0];", "x", True),
    ("atomicAdd(counter, 1);", "counter", True),
    ("float l = x[i].norm();", "x", True),
])
def test_the_arrays_a_snippet_may_write_are_read_from_its_text(code, name, written):
    """Conservative: any use but an indexed read (or .shape, .ndim, .strides) counts as a write; the
    arrays it leaves out are passed const (test_arrays_a_snippet_only_reads_are_const_and_not_written)."""
    from tilec.frontend.native_funcs import _code_only, _may_write

    assert _may_write(_code_only(code), name) is written


PAIR = HEAD + '''@wp.func_native("""
#if defined(__CUDA_ARCH__)
return __frsqrt_rn(v);
#else
return 1.0f / sqrtf(v);
#endif
""")
def rsqrt(v: float) -> float: ...


@wp.func_native("printf(\\"%f\\\\n\\", v); return v;")
def shown(v: float) -> float: ...


@wp.func
def scaled_pair(v: wp.vec3) -> tuple[wp.vec3, float]:
    r = rsqrt(wp.dot(v, v))
    return v * r, r


@wp.func
def shown_pair(v: wp.vec3) -> tuple[wp.vec3, float]:
    r = shown(wp.dot(v, v))
    return v * r, r


@wp.kernel
def unit(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3), inv: wp.array(dtype=float)):
    i = wp.tid()
    d, r = scaled_pair(x[i])
    y[i] = d
    inv[i] = r
'''


@needs_cxx
@pytest.mark.build
def test_a_func_of_several_values_calls_a_snippet_of_values_in_each_values_instance():
    """Newton's support maps: a func returning two values that calls a snippet over scalars (a reciprocal
    square root) is evaluated once per value (frontend/values_only.py), the snippet in each; one that
    prints is an effect, which such a func may not have where a value depends on it."""
    module = build(PAIR, "native_pair")
    x = np.random.default_rng(3).standard_normal((9, 3)).astype(np.float32)
    y, inv = np.zeros_like(x), np.zeros(9, np.float32)
    module.unit.launch(dim=9, inputs=[x, y, inv])
    want = np.float32(1) / np.sqrt((x * x).sum(axis=1, dtype=np.float32))
    np.testing.assert_allclose(inv, want, rtol=1e-6)
    np.testing.assert_allclose(y, x * want[:, None], rtol=1e-6)
    error = first_error(PAIR.replace("d, r = scaled_pair(x[i])", "d, r = shown_pair(x[i])"))
    assert error.startswith("33:12: TC0401: unsupported syntax: `shown_pair` returns several values and has effects")


ADDRESSED = HEAD + """@wp.func_native(SNIPPET)
def write(v: float, p: POINTER) -> float: ...


@wp.func
def pair(v: wp.vec3, p: POINTER) -> tuple[wp.vec3, float]:
    r = write(wp.dot(v, v), p)
    return v * r, r


@wp.kernel
def k(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3), p: POINTER):
    i = wp.tid()
    d, r = pair(x[i], p)
    y[i] = d * r
"""


@pytest.mark.parametrize("snippet, pointer, effect", [
    ('"return v;"', "float", False),
    ('"return v + float(p);"', "wp.uint64", True),
    ('"((float *) &v)[0] = 2.0f; return v;"', "float", True),
])
def test_a_snippet_that_may_write_through_an_address_is_an_effect(snippet, pointer, effect):
    """A values-only snippet takes no 64-bit integer and casts no pointer: kamino passes addresses as
    wp.uint64 and a snippet could write through one, which a per-value instance would repeat."""
    source = ADDRESSED.replace("SNIPPET", snippet).replace("POINTER", pointer)
    if effect:
        assert "returns several values and has effects" in first_error(source)
    else:
        compile_ir(source, "addressed")  # (compiles: the snippet is called in each value's instance)
