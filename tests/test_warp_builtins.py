"""Warp builtins a Warp user calls as written (tests/conformance/cases_warp_builtins.py compares them
with Warp): what Warp's references cannot show. erfinv/erfcinv against an independent bisection to
the last bit (Warp 1.19's CPU erfinv flushes |y| < ~1e-19 to 0), `%` folded with C's remainder as the
kernel computes it (Python's takes the divisor's sign), the diagnostics, and tilec's source of Warp's
Python-written builtins (tilec/library/warp_math.py) kept in step with its list."""
from __future__ import annotations

import ast
import math

import numpy as np
import pytest

from conftest import needs_cxx
from gradcheck import check_gradients
from harness import build, compile_ir, first_error

from tilec.frontend import warp_library
from tilec.ops import warp_names
from tilec.ops.reference import _erfcinv, _erfinv
from tilec.ops.values import NOT_YET

def inverses(dtype: str) -> str:
    return f'''import warp as wp


@wp.kernel
def k(y: wp.array(dtype={dtype}), z: wp.array(dtype={dtype}), inv: wp.array(dtype={dtype}),
      cinv: wp.array(dtype={dtype})):
    i = wp.tid()
    inv[i] = wp.erfinv(y[i])
    cinv[i] = wp.erfcinv(z[i])
'''


def _inverse_inputs(dtype):
    rng = np.random.default_rng(11)
    y = np.concatenate([rng.uniform(-1, 1, 300), 10.0 ** -rng.uniform(1, 37, 40), 1 - 2.0 ** -np.arange(2, 24),
                        [0.0, -0.0, 0.5, -0.5, 1e-45, 1.0, -1.0, 1.5, -2.0, np.nan]]).astype(dtype)
    z = np.concatenate([rng.uniform(0, 2, 300), 10.0 ** -rng.uniform(1, 37, 40), 2 - 2.0 ** -np.arange(2, 23),
                        [1.0, 0.5, 1.5, 0.0, 2.0, -0.5, 2.5, np.nan, 1e-45, 1 + 2.0 ** -23]]).astype(dtype)
    return y, z


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("dtype, bound", [(np.float32, 0.5), (np.float64, 4.0)])
def test_erfinv_and_erfcinv_to_the_last_bits(dtype, bound):
    """float32: correctly rounded (within half an ulp of the bisection in float64); float64 within 4 ulp
    (erf and erfc themselves are good to about 1 ulp); the edges: +-inf at the ends, NaN outside."""
    name = "float" if dtype == np.float32 else "wp.float64"
    mod = build(inverses(name), f"erf_inverses_{dtype.__name__}")
    y, z = _inverse_inputs(dtype)
    inv, cinv = np.zeros_like(y), np.zeros_like(z)
    mod.k.launch(dim=len(y), inputs=[y, z, inv, cinv])
    for got, inputs, exact_fn in ((inv, y, _erfinv), (cinv, z, _erfcinv)):
        exact = np.array([exact_fn(float(v)) for v in inputs])
        finite = np.isfinite(exact)
        np.testing.assert_array_equal(got[~finite], exact[~finite].astype(dtype))
        ulp = np.spacing(np.abs(exact[finite]).astype(dtype)).astype(np.float64)
        error = np.abs(got[finite].astype(np.float64) - exact[finite]) / ulp
        assert error.max() <= bound, (exact_fn.__name__, inputs[finite][np.argmax(error)], error.max())
    assert np.signbit(inv[np.flatnonzero((y == 0) & np.signbit(y))]).all()  # erfinv(-0.0) is -0.0


ERF_GRADS = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.erfc(x[i]) * 3.0 + wp.erfinv(x[i] * 0.9) + wp.erfcinv(x[i] + 1.0) * 0.5
'''


@pytest.mark.build
@needs_cxx
def test_erf_family_gradients_in_float64():
    mod = build(ERF_GRADS, "erf_family_grads")
    x = np.random.default_rng(3).uniform(-0.95, 0.95, 12)
    check_gradients(mod.k, 12, [x, np.zeros(12)], outputs=[1], wrt=[0], tiled=False)


FOLDS = '''import warp as wp


@wp.kernel
def k(out: wp.array(dtype=int), fout: wp.array(dtype=float)):
    n = -7 % 3
    out[0] = n
    out[1] = 7 % -3
    out[2] = wp.mod(-8, 5)
    out[3] = -7 // 2
    fout[0] = -7.5 % 2.0
    fout[1] = wp.mod(7.5, -2.0)
'''


@pytest.mark.build
@needs_cxx
def test_constant_remainders_fold_as_the_kernel_computes_them():
    """Measured under Warp 1.19 (CPU): -1, 1, -3, -4, -1.5, 1.5 (C's fmod and Warp's floored `//`),
    where Python's `%` gives 2, -2, 2 and 0.5, 0.5 (tilec folded with it before)."""
    out, fout = np.zeros(4, np.int32), np.zeros(2, np.float32)
    build(FOLDS, "remainder_folds").k.launch(dim=1, inputs=[out, fout])
    np.testing.assert_array_equal(out, [np.fmod(-7, 3), np.fmod(7, -3), np.fmod(-8, 5), -4])
    np.testing.assert_array_equal(fout, [np.fmod(-7.5, 2.0), np.fmod(7.5, -2.0)])
    assert (out[:3] == [-1, 1, -3]).all()


MOD_GRAD = '''import warp as wp


@wp.kernel
def k(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = a[i] % b[i] + wp.mod(a[i] * 2.0, b[i] + 0.25) * 3.0
'''


@pytest.mark.build
@needs_cxx
def test_remainder_gradients_for_both_operands():
    """d(a mod b)/da = 1 and d/db = -trunc(a / b) (Warp 1.19 gives b none; tilec gave neither before)."""
    mod = build(MOD_GRAD, "mod_grads")
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-5, 5, 10), rng.uniform(0.6, 2.0, 10) * rng.choice([-1, 1], 10)
    check_gradients(mod.k, 10, [a, b, np.zeros(10)], outputs=[2], wrt=[0, 1], tiled=False)


def diagnosed(statement: str, default: str = "2.0") -> str:
    return f'''import warp as wp


@wp.func
def f(x: float, y: float = {default}):
    return x * y


@wp.kernel
def k(a: wp.array(dtype=float), b: wp.array2d(dtype=float), v: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    a[i] = {statement}
'''


@pytest.mark.parametrize("statement, expected", [
    ("wp.norm_l1(a[i])", "12:23: TC0201: norm_l1: takes a vector of floats, got a float32 scalar"),
    ("wp.atomic_sub(b, i, 1.0)", "12:12: TC0304: atomic_sub: needs 2 index(es) and a value for a 2-d array, got 2 "
     "argument(s) after the array"),
    ("wp.mod(a[i], 2.0, 3.0)", "12:12: TC0303: mod: takes 2 operand(s) by position"),
    ("wp._axis_rotation(0, 1.0)[0]", "12:12: TC0302: unknown tile API function `_axis_rotation`"),
    ("f(1.0, x=2.0)", "12:19: TC0303: f: parameter `x` is given twice"),
    ("f(y=1.0)", "12:12: TC0408: f: expects 2 argument(s), got 1 (no value for `x`)"),
    ("f(1.0, 2.0, 3.0)", "12:12: TC0408: f: expects 2 argument(s), got 3"),
    ("wp.spatial_dot(wp.spatial_vector(v[i], v[i]), wp.spatial_vector())",
     "12:45: TC0201: a spatial_vectorf takes two vec3f (its angular and its linear part), got a vec3d and a vec3d"),
    ("wp.quat_twist_angle(wp.vec3(1.0, 0.0, 0.0), wp.quatd())",
     "12:56: TC0201: wp.quat_twist_angle: parameter `q` expects a quatf, got a quatd"),
    ("len(a[i])", "12:16: TC0203: len() of a float32 scalar: it takes a vector, matrix, tile or array"),
    ("wp.vector(1.0, 2.0, size=2)[0]", "12:37: TC0303: vector: unknown keyword `size` (it takes `length` and `dtype`)"),
    ("wp.matrix(1.0, 2.0, 3.0, 4.0)[0, 0]", "12:12: TC0303: matrix: needs `shape=(rows, cols)` with its components"),
    ("wp.vector(1.0, 2.0, length=3)[0]", "12:22: TC0303: vec3f takes 3 components, got 2"),
    ("wp.matrix(1.0, 2.0, shape=(2, i))[0, 0]", "12:39: TC0303: matrix: `shape` must be a constant (rows, cols)"),
    ("wp.vector(v[i], 1.0)[0]", "12:22: TC0303: vector: takes scalar components"),
    ("wp.quat_from_matrix(wp.mat22d())[0]", "12:32: TC0201: quat_from_matrix: takes a mat33 or mat44 of floats, "
     "got a mat22d"),
    ("wp.transform_compose(wp.vec2(), wp.quat(), wp.vec3())[0, 0]",
     "12:33: TC0201: transform_compose: takes a vec3 of floats as its position, got a vec2f"),
    ("wp.transform_to_matrix(wp.quat())[0, 0]", "12:35: TC0201: transform_to_matrix: takes a transform, got a quatf"),
    ("wp.transform_from_matrix(wp.mat33())[0]", "12:37: TC0201: transform_from_matrix: takes a mat44 of floats, "
     "got a mat33f"),
])
def test_diagnostics_at_the_call(statement, expected):
    assert first_error(diagnosed(statement)) == expected


@pytest.mark.parametrize("default, expected", [
    ("(1.0, 2.0)", "12:12: TC0305: the default of parameter `y` of `f` must be a compile-time number, vector or "
                   "matrix for tilec (it is used by this call)"),
    ("wp.sin", "12:12: TC0201: f: parameter `y` expects a float32 scalar, got the function `wp.sin`"),  # (a
    # `wp.Function` parameter takes it: tests/conformance/cases_warp_language.py)
])
def test_a_default_must_be_a_compile_time_number(default, expected):
    assert first_error(diagnosed("f(1.0)", default=default)) == expected


def test_library_lists_what_its_file_defines():
    """BUILTINS (read without parsing the file) is exactly the file's public funcs; each is a Warp 1.19
    builtin, none is still listed as missing, and the file resolves without a diagnostic."""
    tree = ast.parse(warp_library.SOURCE.read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert warp_library.BUILTINS == {name for name in defined if not name.startswith("_")}
    assert all(warp_names.is_warp_builtin(name) for name in warp_library.BUILTINS)
    assert not warp_library.BUILTINS & NOT_YET
    assert set(warp_library.library_scope().funcs) == {warp_library.PREFIX + name for name in defined}
    assert warp_library.TAKE_FLOAT_VECTOR <= warp_library.BUILTINS


def test_a_library_func_never_meets_a_users_func_of_its_name():
    """A user's own `norm_l1` and Warp's `wp.norm_l1` in one module: two funcs, each called where named."""
    source = '''import warp as wp


@wp.func
def norm_l1(v: wp.vec3):
    return v[0] * 100.0


@wp.kernel
def k(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = norm_l1(v[i]) + wp.norm_l1(v[i])
'''
    module = compile_ir(source, "shadowed")
    names = {fn.name for fn in module.funcs}
    assert {"norm_l1", "wp.norm_l1"} <= names


@pytest.mark.build
@needs_cxx
def test_library_code_is_commented_with_the_calling_line(tmp_path):
    """The func's generated statements carry the line of the user's call (the library file is not the
    user's), and the built module computes Warp's documented value."""
    source = '''import warp as wp


@wp.kernel
def k(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.norm_huber(v[i], 0.5)
'''
    mod = build(source, "huber_line")
    v = np.array([[0.1, 0.2, -0.1], [1.0, -2.0, 0.5]], np.float32)
    out = np.zeros(2, np.float32)
    mod.k.launch(dim=2, inputs=[v, out])
    a = (v.astype(np.float64) ** 2).sum(axis=1)
    np.testing.assert_allclose(out, np.where(a <= 0.25, 0.5 * a, 0.5 * (np.sqrt(a) - 0.25)), rtol=1e-6)
    from harness import CACHE

    texts = [p.read_text() for p in CACHE.rglob("huber_line.cpp")]
    body = texts[0][texts[0].index("norm_huber"):]
    body = body[:body.index("\n}\n")]  # the library func's C++ function
    assert "// huber_line.py:7" in body and "warp_math.py" not in texts[0]


SEVERAL = '''import warp as wp


@wp.func
def split(x: float, scale: float = 3.0):
    return x * scale, x - scale


@wp.kernel
def k(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    p, q = split(a[i])
    r, s = split(a[i], scale=0.5)
    out[i] = p + q * 10.0 + r * 100.0 + s * 1000.0
'''


@pytest.mark.build
@needs_cxx
def test_defaults_of_a_func_returning_several_values():
    a = np.array([1.0, -2.0, 0.25], np.float32)
    out = np.zeros(3, np.float32)
    build(SEVERAL, "several_defaults").k.launch(dim=3, inputs=[a, out])
    np.testing.assert_allclose(out, a * 3 + (a - 3) * 10 + a * 0.5 * 100 + (a - 0.5) * 1000, rtol=1e-6)


def test_unpacking_a_library_builtin_into_too_many_names():
    source = diagnosed("0.0\n    x, y, z = wp.quat_to_axis_angle(wp.quat())")
    assert first_error(source) == ("13:5: TC0303: cannot unpack the 2 values `wp.quat_to_axis_angle` returns into "
                                   "3 names")


REVERSED = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=wp.float64), lo: int, hi: int, order: wp.array(dtype=int), out: wp.array(dtype=wp.float64)):
    n = int(0)
    acc = wp.float64(0.0)
    for i in reversed(range(4)):
        order[n] = i
        n += 1
    for i in reversed(range(lo, hi)):
        order[n] = i
        n += 1
        acc = acc * wp.float64(0.5) + x[i]  # Horner's rule from the last element: order matters
    for i in reversed(range(lo, hi, 3)):
        order[n] = i
        n += 1
    for i in reversed(range(hi, lo, -2)):
        order[n] = i
        n += 1
    for i in reversed(range(1, 10, 4)):
        order[n] = i
        n += 1
    order[n] = -99
    out[0] = acc
'''


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("lo, hi", [(0, 7), (2, 11), (5, 5), (7, 2), (-3, 4), (3, 4)])
def test_reversed_ranges_run_backwards(lo, hi):
    """`for i in reversed(range(...))` (Warp's idiom for back substitution) visits Python's values in
    Python's reversed order, with run-time bounds and constant steps of either sign; the adjoint of a
    loop-carried value follows it (float64 finite differences)."""
    mod = build(REVERSED, "reversed_ranges")
    expected = [*reversed(range(4)), *reversed(range(lo, hi)), *reversed(range(lo, hi, 3)),
                *reversed(range(hi, lo, -2)), *reversed(range(1, 10, 4)), -99]
    x = np.random.default_rng(5).standard_normal(12)
    order, out = np.zeros(64, np.int32), np.zeros(1)
    mod.k.launch(dim=1, inputs=[x, lo, hi, order, out])  # (x[-3] and the like read 0: bounds-checked)
    assert list(order[:len(expected)]) == expected
    check_gradients(mod.k, 1, [x, lo, hi, np.zeros(64, np.int32), np.zeros(1)], outputs=[4], wrt=[0], tiled=False)


RUN_TIME_STEPS = """
import warp as wp


@wp.kernel
def k(a: int, b: int, s: int, count: wp.array(dtype=int), values: wp.array(dtype=int)):
    n = int(0)
    for i in reversed(range(a, b, s)):
        values[n] = i
        n += 1
    count[0] = n


@wp.kernel
def strided(n: int, stride: int, x: wp.array(dtype=wp.float64), total: wp.array(dtype=wp.float64)):
    t = wp.tid()
    acc = wp.float64(0.0)
    for i in reversed(range(t, n, stride)):  # Warp's test_grad idiom
        acc = acc * wp.float64(0.5) + x[i] * x[i]
    wp.atomic_add(total, 0, acc)
"""


@pytest.mark.build
@needs_cxx
def test_reversed_range_of_a_run_time_step():
    """reversed(range(a, b, s)) with s known at run time: Python's values in Python's reversed order for
    every sign of s and every order of a and b (s = 0, where Python raises, gives none); the adjoint
    of a loop-carried value follows it (float64 finite differences)."""
    mod = build(RUN_TIME_STEPS, "reversed_run_time")
    for a in range(-5, 6):
        for b in range(-5, 6):
            for step in (-3, -2, -1, 0, 1, 2, 4):
                count, values = np.zeros(1, np.int32), np.zeros(16, np.int32)
                mod.k.launch(dim=1, inputs=[a, b, step, count, values])
                expected = list(reversed(range(a, b, step))) if step else []
                assert list(values[:count[0]]) == expected, (a, b, step)
    x = np.random.default_rng(6).standard_normal(11)
    check_gradients(mod.strided, 3, [11, 3, x, np.zeros(1)], outputs=[3], wrt=[2], tiled=False)


BITCASTS = '''import warp as wp


@wp.kernel
def k(f: wp.array(dtype=float), i: wp.array(dtype=int), d: wp.array(dtype=wp.float64), bits: wp.array(dtype=wp.uint32),
      floats: wp.array(dtype=float), longs: wp.array(dtype=wp.int64), halves: wp.array(dtype=wp.uint16)):
    t = wp.tid()
    bits[t] = wp.cast(f[t], wp.uint32)
    floats[t] = wp.cast(i[t], float)
    longs[t] = wp.cast(d[t], wp.int64)
    halves[t] = wp.cast(wp.float16(f[t]), wp.uint16)
'''


@pytest.mark.build
@needs_cxx
def test_cast_reinterprets_the_bits():
    """Warp's `wp.cast(x, dtype)` keeps the bit pattern (NaN payloads, signed zeros, subnormals
    included): numpy's view of the same bytes; measured identical under Warp 1.19 (CPU)."""
    f = np.array([1.5, -0.0, 3e-39, np.inf], np.float32)
    i = np.array([1065353216, -1, 0, 2139095041], np.int32)
    d = np.array([1.0, -2.5, 1e-310, np.nan])
    outs = [np.zeros(4, np.uint32), np.zeros(4, np.float32), np.zeros(4, np.int64), np.zeros(4, np.uint16)]
    build(BITCASTS, "bitcasts").k.launch(dim=4, inputs=[f, i, d, *outs])
    expected = [f.view(np.uint32), i.view(np.float32), d.view(np.int64), f.astype(np.float16).view(np.uint16)]
    for got, want in zip(outs, expected):
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_cast_keeps_the_size():
    assert first_error(diagnosed("wp.cast(wp.cast(a[i], wp.int64), float)")) == (
        "12:28: TC0201: bitcast: float32 has 32 bits and int64 64: a reinterpretation keeps the size")


# Warp 1.19's float constants (`[n for n in dir(wp) if isinstance(getattr(wp, n), float)]`), with their values.
WARP_CONSTANTS = {"E": math.e, "HALF_PI": math.pi / 2, "INF": math.inf, "LN10": math.log(10), "LN2": math.log(2),
                  "LOG10E": math.log10(math.e), "LOG2E": math.log2(math.e), "NAN": math.nan,
                  "PHI": (1 + math.sqrt(5)) / 2, "PI": math.pi, "TAU": 2 * math.pi}


@pytest.mark.build
@needs_cxx
def test_warp_constants_in_both_spellings():
    names = sorted(WARP_CONSTANTS) + sorted(n.lower() for n in WARP_CONSTANTS)
    body = "\n".join(f"    out[{k}] = wp.{name}" for k, name in enumerate(names))
    source = f"import warp as wp\n\n\n@wp.kernel\ndef k(out: wp.array(dtype=wp.float64)):\n{body}\n"
    out = np.zeros(len(names))
    build(source, "warp_constants").k.launch(dim=1, inputs=[out])
    expected = np.array([WARP_CONSTANTS[n.upper()] for n in names], np.float32)  # a float literal is float32
    np.testing.assert_array_equal(out, expected.astype(np.float64))  # (NaN equals NaN here)


SLERP = '''import warp as wp


@wp.kernel
def k(a: wp.array(dtype=wp.quat), b: wp.array(dtype=wp.quat), t: wp.array(dtype=float), out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    out[i] = wp.quat_slerp(a[i], b[i], t[i])
'''


@pytest.mark.build
@needs_cxx
def test_slerp_gradient_where_the_rotations_coincide():
    """At a == b (a body at rest) the relative rotation's axis is 0 / 0; tilec's slerp takes the vector
    part to first order below 1e-4 radians, so the adjoint there is the derivative: central differences
    of the float32 kernel (h = 1e-3) agree with it to 1e-2."""
    mod = build(SLERP, "slerp_at_rest")
    rng = np.random.default_rng(8)
    a = rng.standard_normal((6, 4)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b, t = a.copy(), rng.uniform(0.1, 0.9, 6).astype(np.float32)
    seed = rng.standard_normal((6, 4)).astype(np.float32)
    adj = [np.zeros_like(a), np.zeros_like(b), np.zeros_like(t), seed.copy()]
    mod.k.launch(dim=6, inputs=[a, b, t, np.zeros_like(a)], adj_inputs=adj, adjoint=True)
    for k in (0, 1):
        direction = rng.standard_normal(a.shape).astype(np.float32)
        losses = []
        for h in (1e-3, -1e-3):
            args = [a.copy(), b.copy(), t, np.zeros_like(a)]
            args[k] = args[k] + np.float32(h) * direction
            mod.k.launch(dim=6, inputs=args)
            losses.append(float(np.sum(seed.astype(np.float64) * args[3])))
        numeric = (losses[0] - losses[1]) / 2e-3
        analytic = float(np.sum(adj[k].astype(np.float64) * direction))
        assert abs(numeric - analytic) <= 1e-2 * max(1.0, abs(numeric)), (k, numeric, analytic)


SET_PARTS = '''import warp as wp


@wp.kernel
def k(t: wp.array(dtype=wp.transform), p: wp.array(dtype=wp.vec3), q: wp.array(dtype=wp.quat),
      copies: wp.array(dtype=wp.transform), in_place: wp.array(dtype=wp.transform)):
    i = wp.tid()
    copies[i] = wp.transform_set_rotation_copy(wp.transform_set_translation_copy(t[i], p[i]), q[i])
    x = t[i]
    wp.transform_set_translation(x, p[i])
    wp.transform_set_rotation(x, q[i])
    in_place[i] = x
'''


@pytest.mark.build
@needs_cxx
def test_transform_parts_set_in_place_and_copied():
    """The `_copy` variants (whose float32 form Warp 1.19 cannot store: its result type stays generic)
    give what the in-place ones leave in the variable: the new part and the other one kept."""
    rng = np.random.default_rng(6)
    t, p, q = (rng.standard_normal((5, n)).astype(np.float32) for n in (7, 3, 4))
    copies, in_place = np.zeros((5, 7), np.float32), np.zeros((5, 7), np.float32)
    build(SET_PARTS, "transform_parts").k.launch(dim=5, inputs=[t, p, q, copies, in_place])
    np.testing.assert_array_equal(copies, np.concatenate([p, q], axis=1))
    np.testing.assert_array_equal(in_place, copies)


def test_setting_a_part_in_place_takes_a_local_variable():
    source = diagnosed("0.0\n    wp.transform_set_translation(wp.transform_identity(), wp.vec3(1.0))")
    assert first_error(source) == ("13:34: TC0401: unsupported syntax: `transform_set_translation` updates its "
                                   "first argument in place, and tilec takes a local variable there")


ARGS = '''import warp as wp


@wp.kernel
def k(v: wp.array(dtype=wp.vec4), iv: wp.array(dtype=wp.vec3i), picks: wp.array2d(dtype=wp.uint32)):
    i = wp.tid()
    picks[i, 0] = wp.argmax(v[i])
    picks[i, 1] = wp.argmin(v[i])
    picks[i, 2] = wp.argmax(iv[i])
    picks[i, 3] = wp.argmin(iv[i])
'''


def _nan_arg(fn, row):
    return 0 if np.isnan(row).all() else int(fn(row))


@pytest.mark.build
@needs_cxx
def test_vector_argmax_and_argmin_skip_nans():
    """Warp's vector argmax/argmin (uint32): the first extreme component, NaN components skipped, 0
    when all are NaN (numpy's nanargmax/nanargmin; Warp 1.19 measured the same on these rows)."""
    v = np.array([[1, 3, 3, 0], [np.nan, 2, 1, 2], [5, np.nan, 7, -1], [0, 0, 0, 0], [np.nan] * 4,
                  [-np.inf, np.nan, np.inf, 2]], np.float32)
    iv = np.array([[1, 5, 5], [-2, -2, 0], [3, 1, 1], [0, 9, -9], [7, 7, 7], [-1, 0, 1]], np.int32)
    picks = np.zeros((6, 4), np.uint32)
    build(ARGS, "vector_args").k.launch(dim=6, inputs=[v, iv, picks])
    expected = [[_nan_arg(np.nanargmax, a), _nan_arg(np.nanargmin, a), np.argmax(b), np.argmin(b)]
                for a, b in zip(v, iv)]
    np.testing.assert_array_equal(picks, expected)


def test_setting_a_part_in_place_returns_nothing():
    source = diagnosed("0.0\n    t = wp.transform_set_rotation(wp.transform_identity(), wp.quat_identity())")
    assert first_error(source) == ("13:9: TC0401: unsupported syntax: `transform_set_rotation` updates its first "
                                   "argument in place and returns nothing: call it as a statement")


EXPECT_VALUES = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float)):
    v = wp.vec3(1.0, 2.0, x[0])
    wp.expect_eq(v, wp.vec3(1.0, 2.0, 3.0))
    wp.expect_neq(wp.vec2i(1, 2), wp.vec2i(1, 2))
    wp.expect_eq(wp.mat22(1.0, 2.0, 3.0, x[0]), wp.mat22(1.0, 2.0, 3.0, 5.0))
    wp.expect_near(wp.vec2(1.0, x[0] - 1.0), wp.vec2(1.0, 2.5), 0.1)
'''


@pytest.mark.build
@needs_cxx
def test_expect_checks_of_vectors_and_matrices_report_like_warp(capfd):
    """Warp 1.19's reports (measured, this text exactly): each component and a space, a matrix row per
    line, and the largest component difference for expect_near; a check that holds prints nothing."""
    mod = build(EXPECT_VALUES, "expect_values")
    mod.k.launch(dim=1, inputs=[np.array([3.5], np.float32)])
    assert capfd.readouterr().out == (
        "Error, expect_eq() failed:\n\t Expected: 1 2 3 \n\t Actual: 1 2 3.5 \n"
        "Error, expect_neq() failed:\n\t Expected: 1 2 \n\t Actual: 1 2 \n"
        "Error, expect_eq() failed:\n\t Expected: 1 2 \n3 5 \n\t Actual: 1 2 \n3 3.5 \n")
    mod.k.launch(dim=1, inputs=[np.array([3.0], np.float32)])
    assert capfd.readouterr().out == (
        "Error, expect_neq() failed:\n\t Expected: 1 2 \n\t Actual: 1 2 \n"
        "Error, expect_eq() failed:\n\t Expected: 1 2 \n3 5 \n\t Actual: 1 2 \n3 3 \n"
        "Error, expect_near() failed with tolerance 0.1\n    Expected: 1 2.5 \n    Actual: 1 2 \n"
        "    Max absolute difference: 0.5\n")


def test_expect_checks_take_one_type():
    assert first_error(diagnosed("0.0\n    wp.expect_eq(wp.vec3(1.0), wp.vec3d(1.0))")) == (
        "13:32: TC0201: expect_eq: compares a vec3f with a vec3d; they must be of one type")


EDGES = '''
import warp as wp


@wp.kernel
def edges(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
          q2: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = wp.closest_point_edge_edge(p1[i], q1[i], p2[i], q2[i], 1.0e-6)
'''


def closest_points(p1, q1, p2, q2, eps=1e-6):
    """(s, t, d) of the documented builtin, in float64, by brute force over both segments where neither
    is degenerate (a fine grid, then the exact point on the other segment)."""
    d1, d2 = q1 - p1, q2 - p2
    a, e = d1 @ d1, d2 @ d2
    if a <= eps and e <= eps:
        s = t = 0.0
    elif a <= eps:
        s, t = 0.0, float(np.clip(d2 @ (p1 - p2) / e, 0, 1))
    elif e <= eps:
        s, t = float(np.clip(-(d1 @ (p1 - p2)) / a, 0, 1)), 0.0
    else:
        grid = np.linspace(0, 1, 20001)
        ts = np.clip(((p1[None] + grid[:, None] * d1) - p2) @ d2 / e, 0, 1)
        gaps = np.linalg.norm(p2 + ts[:, None] * d2 - (p1 + grid[:, None] * d1), axis=1)
        k = int(np.argmin(gaps))
        s, t = float(grid[k]), float(ts[k])
    return np.array([s, t, np.linalg.norm(p2 + t * d2 - p1 - s * d1)])


@needs_cxx
def test_closest_point_edge_edge_in_every_regime():
    """Degenerate first, second and both edges, crossing, skew and clamped pairs (the library func:
    tilec/library/warp_math.py), against a float64 brute-force search; parallel pairs by distance
    only (their closest points are not unique)."""
    m = build(EDGES, "edge_edge")
    rng = np.random.default_rng(11)
    n = 64
    p1, q1, p2, q2 = (rng.standard_normal((n, 3)) for _ in range(4))
    q1[:4] = p1[:4]  # a point and a segment
    q2[4:8] = p2[4:8]  # a segment and a point
    q1[8:12], q2[8:12] = p1[8:12], p2[8:12]  # two points
    q2[12:16] = p2[12:16] + 2.0 * (q1[12:16] - p1[12:16])  # parallel
    args = [x.astype(np.float32) for x in (p1, q1, p2, q2)]
    out = np.zeros((n, 3), np.float32)
    m.edges.launch(dim=n, inputs=[*args, out])
    for i in range(n):
        want = closest_points(*(x[i].astype(np.float64) for x in args))
        if 12 <= i < 16:
            np.testing.assert_allclose(out[i, 2], want[2], rtol=1e-4, atol=1e-5, err_msg=f"pair {i}")
        else:
            np.testing.assert_allclose(out[i], want, rtol=1e-3, atol=2e-4, err_msg=f"pair {i}")
