"""`if a:` on a kernel's array parameter: Warp's test of whether the launch passed an array (Warp
passes None as a null array). Warp's example_tile_mlp writes its loss and its image only `if loss:` /
`if out:`, and launches with None for the one it does not want.

tilec marks such a parameter nullable (manifest `"nullable": true`): the loader passes None as a
null array (every other array parameter still refuses None), and the checker lets the kernel use
the parameter only where a test has shown it passed (TC0411 elsewhere), so a None never reaches
memory."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, build_flags, compile_ir, first_error

SOURCE = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float), loss: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    v = x[i] * x[i]
    if loss:
        wp.atomic_add(loss, 0, v)
    if not out:
        return
    out[i] = v * 2.0
'''


@pytest.mark.build
@needs_cxx
@pytest.mark.parametrize("device", ["cpu", "cuda-emu"])
def test_a_tested_array_may_be_none_forward_and_adjoint(device):
    mod = build(SOURCE, "nullable", target="cpu" if device == "cpu" else "cuda-emu")
    x = np.arange(5, dtype=np.float32) - 2
    loss, out = np.zeros(1, np.float32), np.zeros(5, np.float32)
    mod.k.launch(dim=5, inputs=[x, None, out], device=device)
    np.testing.assert_array_equal(out, 2 * x * x)
    mod.k.launch(dim=5, inputs=[x, loss, None], device=device)
    assert loss[0] == np.sum(x * x)
    adj_x = np.zeros(5, np.float32)  # d(sum x^2)/dx = 2x, through the loss only (out is None)
    mod.k.launch(dim=5, inputs=[x, loss, None], adj_inputs=[adj_x, np.ones(1, np.float32), None], adjoint=True,
                 device=device)
    np.testing.assert_array_equal(adj_x, 2 * x)
    adj_x[:] = 0  # both passed: the out's adjoint (4x) adds to the loss's
    mod.k.launch(dim=5, inputs=[x, loss, out], adj_inputs=[adj_x, np.ones(1, np.float32), np.ones(5, np.float32)],
                 adjoint=True, device=device)
    np.testing.assert_array_equal(adj_x, 6 * x)
    with pytest.raises(TypeError, match="argument `x` must be a numpy array"):
        mod.k.launch(dim=5, inputs=[None, loss, out], device=device)  # x is never tested: never None
    if device == "cpu":  # the tape records and replays a launch with a None too
        loss[:] = 0
        with mod.Tape() as tape:
            mod.k.launch(dim=5, inputs=[x, loss, None])
        tape.backward(grads=[(loss, np.ones(1, np.float32))])
        np.testing.assert_array_equal(tape.gradient(x), 2 * x)


def test_the_manifest_marks_the_tested_arrays_nullable():
    import json

    from tilec.codegen import sources
    from tilec.driver import generate

    module = compile_ir(SOURCE, "nullable_meta")
    flags = build_flags(256, emit_only=True)
    manifest = json.loads(generate(module, SOURCE, flags)["manifest.json"])
    params = manifest["kernels"]["k"]["params"]
    assert [p.get("nullable", False) for p in params] == [False, True, True]
    assert sources  # (the module the manifest comes from)


@pytest.mark.parametrize("body, where", [
    ("    if loss:\n        loss[0] = 1.0\n    else:\n        loss[0] = 2.0\n", "10:9"),  # not shown in the else
    ("    loss[0] = 1.0\n    if loss:\n        loss[0] = 2.0\n", "7:5"),  # before the test
    ("    if not loss:\n        loss[0] = 2.0\n", "8:9"),  # shown absent
    ("    if loss:\n        pass\n    n = loss.shape[0]\n", "9:9"),  # after the test's block
])
def test_a_tested_array_is_used_only_where_a_test_showed_it_passed(body, where):
    source = ("import warp as wp\n\n\n@wp.kernel\ndef k(loss: wp.array(dtype=float)):\n    i = wp.tid()\n"
              + body)
    assert first_error(source) == (f"{where}: TC0411: `loss` may be None here: the kernel tests it (`if loss:`), "
                                   "so a launch may pass None for it")


def test_after_an_early_return_and_in_the_else_of_a_negated_test_it_was_passed():
    source = '''import warp as wp


@wp.kernel
def k(x: wp.array(dtype=float), a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    if not b:
        x[i] = 0.0
    else:
        b[i] = 1.0
    if not a:
        return
    a[i] = a[i] + 1.0
'''
    kernel = compile_ir(source, "early_return").kernels[0]
    from tilec import ir

    tests = [x for s in ir.walk_stmts(kernel.body) for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
             if isinstance(x, ir.OpCall) and x.op == "array_valid"]
    assert [t.args[0].sym.name for t in tests] == ["b", "a"]


FUNC_TEST = '''import warp as wp


@wp.func
def moved(x: float, prev: wp.array(dtype=float), i: int) -> float:
    d = float(0.0)
    if prev:
        d = x - prev[i]
    return d


@wp.kernel
def k(x: wp.array(dtype=float), prev: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = moved(x[i], prev, i) * 2.0
'''


@pytest.mark.build
@needs_cxx
def test_a_func_tests_its_array_parameter_and_the_kernel_passing_it_takes_none():
    """Newton's `if body_q_prev:` in a @wp.func: the kernel's parameter handed on to it is nullable."""
    mod = build(FUNC_TEST, "nullable_func")
    x, prev = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    y = np.zeros(4, np.float32)
    mod.k.launch(dim=4, inputs=[x, prev, y])
    np.testing.assert_array_equal(y, 2 * (x - 0.5))
    mod.k.launch(dim=4, inputs=[x, None, y])
    np.testing.assert_array_equal(y, 0.0)
    with pytest.raises(TypeError, match="x"):
        mod.k.launch(dim=4, inputs=[None, prev, y])  # an array no test guards still refuses None


def test_a_func_reads_a_tested_parameter_only_where_a_test_showed_it_passed():
    source = FUNC_TEST.replace("    return d\n", "    return d + prev[0]\n")
    assert first_error(source).startswith("9:16: TC0411: `prev` may be None here")


SHORT_CIRCUITS = '''import warp as wp


@wp.kernel
def both(arr: wp.array(dtype=int), result: wp.array(dtype=int)):
    tid = wp.tid()
    if arr and tid >= 0 and arr[tid] == 0:  # (Warp's test_conditional: arr[tid] only where arr was passed)
        result[tid] = -1
        return
    result[tid] = 1


@wp.kernel
def either(arr: wp.array(dtype=int), result: wp.array(dtype=int)):
    tid = wp.tid()
    if not arr or tid < 0 or arr[tid] == 0:
        result[tid] = -1
        return
    result[tid] = arr[tid] * 10
'''


@pytest.mark.build
@needs_cxx
def test_a_tested_array_in_and_or_chains():
    mod = build(SHORT_CIRCUITS, "nullable_chains")
    arr = np.array([0, 3, 0, 7], dtype=np.int32)
    result = np.zeros(4, np.int32)
    mod.both.launch(dim=4, inputs=[arr, result])
    np.testing.assert_array_equal(result, [-1, 1, -1, 1])
    mod.both.launch(dim=4, inputs=[None, result])
    np.testing.assert_array_equal(result, [1, 1, 1, 1])
    mod.either.launch(dim=4, inputs=[arr, result])
    np.testing.assert_array_equal(result, [-1, 30, -1, 70])
    mod.either.launch(dim=4, inputs=[None, result])
    np.testing.assert_array_equal(result, [-1, -1, -1, -1])


@pytest.mark.parametrize("test, where", [
    ("arr or arr[i] == 0", "7:15"),  # the right side runs where arr is None
    ("not arr and arr[i] == 0", "7:20"),
])
def test_a_chain_shows_an_array_passed_only_where_it_is(test, where):
    source = ("import warp as wp\n\n\n@wp.kernel\ndef k(arr: wp.array(dtype=int)):\n    i = wp.tid()\n"
              f"    if {test}:\n        pass\n")
    assert first_error(source) == (f"{where}: TC0411: `arr` may be None here: the kernel tests it (`if arr:`), "
                                   "so a launch may pass None for it")


CONDITIONAL_EXPRESSIONS = '''import warp as wp


@wp.kernel
def k(tau: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = b[i] * 2.0 + (tau[i] * tau[i] if tau else 0.5) - (1.0 if not tau else tau[i])
'''


@pytest.mark.build
@needs_cxx
def test_a_conditional_expression_tests_an_array():
    # `x[i] if x else 0.0` (Newton's kamino joints.py): x may be None, read in the arm that shows it passed
    from tilec.gradcheck import gradcheck

    mod = build(CONDITIONAL_EXPRESSIONS, "nullable_ifexp")
    assert mod.k.meta["params"][0].get("nullable") is True
    tau, b, out = np.array([1.0, 2.0, -1.0]), np.ones(3), np.zeros(3)
    mod.k.launch(dim=3, inputs=[tau, b, out])
    np.testing.assert_array_equal(out, 2.0 + tau * tau - tau)
    mod.k.launch(dim=3, inputs=[None, b, out])
    np.testing.assert_array_equal(out, [1.5, 1.5, 1.5])
    db = np.zeros(3)
    mod.k.launch(dim=3, inputs=[None, b, out], adj_inputs=[None, db, np.ones(3)], adjoint=True)
    np.testing.assert_array_equal(db, [2.0, 2.0, 2.0])
    report = gradcheck(mod.k, 3, [tau, b, np.zeros(3)])
    assert report.ok, str(report)


def test_a_conditional_expression_reads_the_array_only_in_the_arm_it_shows_passed():
    source = CONDITIONAL_EXPRESSIONS.replace("(tau[i] * tau[i] if tau else 0.5)", "(0.5 if tau else tau[i])")
    assert first_error(source) == ("7:44: TC0411: `tau` may be None here: the kernel tests it (`if tau:`), so a "
                                   "launch may pass None for it")
