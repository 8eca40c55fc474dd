"""Statements Warp accepts: assert (checked in --debug builds only), bitwise and shift updates of
array elements and scalars, wp.static, print and the expect_* checks, built and run on the CPU and
in the CUDA emulation."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from conftest import needs_cxx
import harness
from harness import build, build_flags, compile_ir
from tilec import ir
from tilec.api import load
from tilec.driver import build_module

DEVICES = ["cpu", "cuda-emu"]

PROGRAM = '''import warp as wp

MASK = 0x0F
SHIFT = wp.constant(2)
N = 4


@wp.func
def limited(x: float) -> float:
    assert x < 100.0, "too big"
    return wp.min(x, 10.0)


@wp.kernel
def bits(a: wp.array[int], b: wp.array[wp.int16], c: wp.array[wp.uint64], d: wp.array[wp.uint8], k: wp.array[int]):
    i = wp.tid()
    a[i] &= MASK
    a[i] |= 0x100
    a[i] ^= wp.static(1 << 4)
    b[i] <<= wp.int16(SHIFT)
    b[i] >>= wp.int16(1)
    b[i] ^= wp.int16(5)
    c[i] |= wp.uint64(1) << wp.uint64(63)
    d[i] &= wp.uint8(0x3C)
    d[i] *= wp.uint8(3)
    s = i
    s &= 3
    s |= 8
    s ^= 1
    s <<= 2
    s >>= 1
    k[i] = s


@wp.kernel
def checked(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    assert x[i] >= 0.0
    y[i] = limited(x[i])


@wp.kernel
def talk(x: wp.array[float], n: wp.array[int]):
    i = wp.tid()
    print(x[i])
    print(n[i])
    wp.print(n[i] > 1)
    print(wp.float64(x[i]) * wp.float64(2.0))
    wp.expect_eq(n[i], 2)
    wp.expect_neq(n[i], 3)
    wp.expect_near(x[i], 0.5, 0.25)


@wp.kernel
def statics(x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    t = wp.tile_load(x, shape=wp.static(N * 2), offset=i * wp.static(N * 2))
    for j in range(wp.static(N)):
        t[j] = t[j] * wp.static(2.0 ** 2)
    wp.tile_store(y, t, offset=i * wp.static(N * 2))
'''


def _built(device: str, debug: bool):
    if not debug:
        return build(PROGRAM, "statements", block_dim=8, target=device)
    key = hashlib.sha256(f"debug\0{device}\0{PROGRAM}".encode()).hexdigest()[:16]
    flags = build_flags(8, target=device, debug=True)
    build_module(compile_ir(PROGRAM, "statements", 8), PROGRAM, str(harness.CACHE / key), flags, echo=lambda *a, **k: None)
    return load(harness.CACHE / key / "statements")


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
def test_bitwise_and_shift_updates(device):
    m = _built(device, False)
    a = np.array([0x1234, 0xFF, -1], np.int32)
    b = np.array([3, -4, 100], np.int16)
    c = np.array([0, 5, 2**63], np.uint64)
    d = np.array([0xFF, 0x11, 0x40], np.uint8)
    k = np.zeros(3, np.int32)
    args = [a.copy(), b.copy(), c.copy(), d.copy(), k]
    m.bits.launch(dim=3, inputs=args, device=device)
    np.testing.assert_array_equal(args[0], ((a & 0x0F) | 0x100) ^ 0x10)
    np.testing.assert_array_equal(args[1], (((b.astype(np.int32) << 2).astype(np.int16) >> 1) ^ 5).astype(np.int16))
    np.testing.assert_array_equal(args[2], c | np.uint64(2**63))
    np.testing.assert_array_equal(args[3], ((d & 0x3C).astype(np.int32) * 3).astype(np.uint8))
    i = np.arange(3)
    np.testing.assert_array_equal(args[4], ((((i & 3) | 8) ^ 1) << 2) >> 1)


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
def test_assert_is_checked_in_debug_builds_only(device, capfd):
    x = np.array([1.0, -2.0, 50.0], np.float32)
    y = np.zeros(3, np.float32)
    release = _built(device, False)
    release.checked.launch(dim=3, inputs=[x, y], device=device)  # dropped: no error
    np.testing.assert_array_equal(y, np.minimum(x, 10.0))
    debug = _built(device, True)
    with pytest.raises(AssertionError, match="checked: an assert failed"):
        debug.checked.launch(dim=3, inputs=[x, y], device=device)
    err = capfd.readouterr().err
    assert "statements.py:38: assertion failed: assert x[i] >= 0.0" in err
    assert err.count("assertion failed") == 1  # only the negative element fails
    with pytest.raises(AssertionError):
        debug.checked.launch(dim=1, inputs=[np.array([150.0], np.float32), y], device=device)
    assert 'statements.py:10: assertion failed: assert x < 100.0, "too big"' in capfd.readouterr().err
    debug.checked.launch(dim=2, inputs=[np.array([1.0, 2.0], np.float32), y], device=device)  # passes


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
def test_print_and_expect_write_like_warp(device, capfd):
    m = _built(device, False)
    m.talk.launch(dim=1, inputs=[np.array([0.5], np.float32), np.array([2], np.int32)], device=device)
    assert capfd.readouterr().out == "0.5\n2\nTrue\n1\n"
    m.talk.launch(dim=1, inputs=[np.array([1.5], np.float32), np.array([3], np.int32)], device=device)
    out = capfd.readouterr().out
    assert out.startswith("1.5\n3\nTrue\n3\n")
    assert "Error, expect_eq() failed:\n\t Expected: 2\n\t Actual: 3\n" in out
    assert "Error, expect_neq() failed:" in out
    assert "Error, expect_near() failed with tolerance 0.25\n    Expected: 0.5\n    Actual: 1.5\n" in out


@needs_cxx
@pytest.mark.build
def test_print_does_not_run_in_the_adjoint(capfd):
    m = _built("cpu", False)
    x, n = np.array([0.5], np.float32), np.array([2], np.int32)
    m.talk.launch(dim=1, inputs=[x, n], adj_inputs=[np.zeros(1, np.float32), None], adjoint=True)
    assert capfd.readouterr().out == ""


@needs_cxx
@pytest.mark.build
@pytest.mark.parametrize("device", DEVICES)
def test_static_expressions(device):
    m = _built(device, False)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    m.statics.launch_tiled(dim=(2,), inputs=[x, y], device=device)
    want = x.copy().reshape(2, 8)
    want[:, :4] *= 4.0
    np.testing.assert_array_equal(y, want.ravel())


VECTOR_BITS = '''
import warp as wp


@wp.kernel
def vector_bits(a: wp.array(dtype=wp.vec3ui), x: wp.array(dtype=wp.vec2ul)):
    i = wp.tid()
    bit = wp.vec3ui(wp.uint32(1)) << wp.vec3ui(wp.uint32(i % 32))
    a[0] ^= bit
    a[1] |= bit
    x[0] &= ~wp.vec2ul(wp.uint64(1) << wp.uint64(i % 64), wp.uint64(0))
'''


@needs_cxx
def test_bit_updates_of_integer_vector_elements_are_atomic_as_in_warp():
    """Warp lowers `a[i] &= v`, `|=`, `^=` on arrays of 32- and 64-bit integer vectors and matrices to
    its atomic and/or/xor, component by component, like on integer arrays: every thread here updates
    the same elements (a plain read and write back lost updates under two workers)."""
    kernel = compile_ir(VECTOR_BITS).kernels[0]
    ops = {e.op for s in ir.walk_stmts(kernel.body) for x in ir.stmt_exprs(s) for e in ir.walk_expr(x)
           if isinstance(e, ir.OpCall)}
    assert {"array_atomic_xor", "array_atomic_or", "array_atomic_and"} <= ops and "array_store" not in ops
    mod = build(VECTOR_BITS, "vector_bits")
    for _ in range(20):
        a = np.zeros((2, 3), np.uint32)
        x = np.full((1, 2), np.iinfo(np.uint64).max, np.uint64)
        mod.vector_bits.launch(dim=4096 + 32, inputs=[a, x], num_threads=2)
        # 4128 threads: bits 0..31 toggled 129 times each (odd: set), every bit or-ed in
        np.testing.assert_array_equal(a, np.full((2, 3), 0xFFFFFFFF, np.uint32))
        np.testing.assert_array_equal(x, [[0, np.iinfo(np.uint64).max]])


SHADOWING = '''import warp as wp


@wp.func
def is_neighbour(a: int, b: int, c: int) -> bool:
    is_neighbour = a == c or b == c
    return is_neighbour


@wp.kernel
def neighbours(a: wp.array(dtype=int), b: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = wp.where(is_neighbour(a[i], b[i], 3), 1, 0)
'''


@needs_cxx
@pytest.mark.build
def test_a_local_named_as_its_func_hides_the_func_there():
    """Newton's `tri_is_neighbor = (...)` inside `def tri_is_neighbor`: a local, as in Python and Warp."""
    module = build(SHADOWING, "shadowing")
    a, b = np.array([3, 0, 1, 3], np.int32), np.array([0, 3, 2, 3], np.int32)
    out = np.zeros(4, np.int32)
    module.neighbours.launch(dim=4, inputs=[a, b, out])
    np.testing.assert_array_equal(out, [1, 1, 0, 1])
    called = SHADOWING.replace("    return is_neighbour\n", "    return is_neighbour(a, b, c)\n")
    assert harness.first_error(called) == ("7:12: TC0405: `is_neighbour` is a local variable here, a bool scalar bound "
                                           "at line 6, which hides the function `is_neighbour`")
