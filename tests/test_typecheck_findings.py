"""Bugs the type checker found in the compiler (tests/test_typecheck.py runs it): each was a
traceback ("internal compiler error") where a diagnostic belongs."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, first_error


def test_bytes_shape_variable_is_a_diagnostic():
    # libcst evaluates b"M" to bytes, which has no isidentifier(): the annotation reader crashed
    source = '''import tilec as tl


@tl.func
def f(a: tl.Tile[tl.float32, b"M"]) -> tl.float32:
    return tl.tile_sum(a)[0]


@tl.kernel
def k(x: tl.array1d(dtype=float), y: tl.array1d(dtype=float)):
    y[0] = f(tl.tile_load(x, shape=(4,)))
'''
    assert first_error(source) == "5:30: TC0409: parameter `a`: a shape variable must be an identifier"


GENERIC = '''import tilec as tl


@tl.func
def first(a: tl.Tile[tl.float32, "M", "K"]) -> tl.float32:
    return {expr}


@tl.kernel
def k(x: tl.array2d(dtype=float), y: tl.array1d(dtype=float)):
    y[0] = first(tl.tile_load(x, shape=(4, 8)))
'''


def test_constant_index_into_a_shape_variable_is_a_diagnostic():
    # mypy: a tile extent is int | str; `0 <= value < "K"` raised TypeError in the subscript lowering
    assert first_error(GENERIC.format(expr="a[0, 1]")) == (
        "6:14: TC0111: index 0: cannot be checked with symbolic shapes; annotate concrete extents")
    assert first_error(GENERIC.format(expr="a[-1, 1]")).startswith("6:14: TC0111: index -1: ")


def test_slice_of_a_shape_variable_is_a_diagnostic():
    # slice(...).indices("M") raised TypeError
    assert first_error(GENERIC.format(expr="tl.tile_sum(a[0:2, :])[0]")) == (
        "6:26: TC0111: tile slice: cannot be checked with symbolic shapes; annotate concrete extents")


def test_bytes_key_of_an_overload_dict_is_a_diagnostic():
    # mypy: a string literal's evaluated_value is str | bytes; a b"a" key reached generics' name
    # matching (`k.startswith("#")` on bytes), a TypeError
    source = '''import tilec as tl
from typing import Any


@tl.kernel
def scale(a: tl.array(dtype=Any), s: float):
    i = tl.tid()
    a[i] = a[i] * s


tl.overload(scale, {b"a": tl.array(dtype=tl.float32)})
'''
    from harness import Options, compile_source
    from tilec.diagnostics import CompileError

    with pytest.raises(CompileError) as info:
        compile_source(source, "prog.py", Options(block_dim=32))
    assert [f"{d.span.line}:{d.span.col}: {d.code}: {d.message}" for d in info.value.diagnostics] == [
        "6:5: TC0436: generic kernel `scale` has no overload in this file: parameter `a` is `Any`; it is not "
        "compiled",
        '11:20: TC0436: wp.overload: tilec reads the types from a literal list or dict '
        '(`[wp.array(dtype=wp.float32), ...]` or `{"name": type}`)']


TRANSFORM_MAPS = '''import warp as wp


@wp.func
def translation(t: wp.transformd):
    return wp.transform_get_translation(t)


@wp.func
def rotation(t: wp.transformd):
    return wp.transform_get_rotation(t)


@wp.func
def moved(t: wp.transformd, v: wp.vec3d):
    return wp.transform_vector(t, v)


@wp.kernel
def parts(x: wp.array(dtype=wp.transformd), y: wp.array(dtype=wp.vec3d), z: wp.array(dtype=wp.quatd)):
    t = wp.tile_load(x, shape=(4,))
    wp.tile_store(y, wp.tile_map(translation, t))
    wp.tile_store(z, wp.tile_map(rotation, t))


@wp.kernel
def move(x: wp.array(dtype=wp.transformd), v: wp.array(dtype=wp.vec3d), y: wp.array(dtype=wp.vec3d)):
    wp.tile_store(y, wp.tile_map(moved, wp.tile_load(x, shape=(4,)), wp.tile_load(v, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_transform_part_adjoints_inside_tile_map():
    # mypy: the adjoints of transform_get_translation / _rotation built the zero part as
    # VecT(g.type.dtype, ...) and transform_vector's as const(0, g.type); inside tile_map's adjoint
    # g is a tile, so they made a vector of vectors / a constant tile (internal compiler errors)
    mod = build(TRANSFORM_MAPS, "transform_maps", block_dim=4)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 7))
    gy, gz = rng.normal(size=(4, 3)), rng.normal(size=(4, 4))
    adj_x = np.zeros_like(x)
    mod.parts.launch_tiled(dim=1, inputs=[x, np.zeros((4, 3)), np.zeros((4, 4))],
                           adj_inputs=[adj_x, gy.copy(), gz.copy()], adjoint=True, block_dim=4)
    np.testing.assert_allclose(adj_x, np.concatenate([gy, gz], axis=1), rtol=1e-12)

    v, g = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))

    def loss(x: np.ndarray, v: np.ndarray) -> float:
        y = np.zeros((4, 3))
        mod.move.launch_tiled(dim=1, inputs=[x, v, y], block_dim=4)
        return float((g * y).sum())

    adj_x, adj_v = np.zeros_like(x), np.zeros_like(v)
    mod.move.launch_tiled(dim=1, inputs=[x, v, np.zeros((4, 3))], adj_inputs=[adj_x, adj_v, g.copy()],
                          adjoint=True, block_dim=4)
    for a, adj in ((x, adj_x), (v, adj_v)):
        fd = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            a[i] += 1e-6
            up = loss(x, v)
            a[i] -= 2e-6
            fd[i] = (up - loss(x, v)) / 2e-6
            a[i] += 1e-6
        np.testing.assert_allclose(adj, fd, rtol=1e-6, atol=1e-7)
    assert not adj_x[:, :3].any()  # transform_vector ignores the translation


def test_func_grad_over_an_array_of_vectors_is_refused_with_a_warning():
    # mypy: a func_grad's array parameters were tested with `p.type.dtype.is_float`, which a vec3
    # array's dtype does not have (an internal compiler error); such a rule is now not applied, and
    # kernels reaching it get no adjoint, with the warning saying why
    from harness import Options, compile_source
    from tilec.codegen.sources import adjoint_warnings

    source = '''import warp as wp


@wp.func
def pick(a: wp.array(dtype=wp.vec3), i: int):
    return wp.length(a[i])


@wp.func_grad(pick)
def adj_pick(a: wp.array(dtype=wp.vec3), i: int, adj_ret: float):
    wp.atomic_add(a, i, wp.vec3(adj_ret, 0.0, 0.0))


@wp.kernel
def k(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = pick(a, i)
'''
    module = compile_source(source, "prog.py", Options(block_dim=32)).module
    assert [f"{d.span.line}:{d.span.col}: {d.code}: {d.message}" for d in adjoint_warnings(module)] == [
        "17:14: TC0501: `pick` has a custom adjoint (@wp.func_grad on tiles or arrays of vectors, matrices or "
        "structs) that tilec does not apply yet; no adjoint is built"]


def test_operator_update_of_a_struct_array_element_is_a_diagnostic():
    # mypy: component_dtype() is None for a struct; `a[i] *= 2.0` on an array of structs read
    # `.is_float` of it (an internal compiler error) before the operator's own check
    source = '''import warp as wp


@wp.struct
class P:
    x: float


@wp.kernel
def k(a: wp.array(dtype=P)):
    i = wp.tid()
    a[i] *= 2.0
'''
    assert first_error(source) == "12:5: TC0201: a `P` struct cannot be used here; read one of its fields (x)"


COMPONENT_WRITE_MAP = '''import warp as wp


@wp.func
def setx(v: wp.vec3d, s: wp.float64):
    w = v
    w[0] = s
    return w


@wp.kernel
def k(a: wp.array(dtype=wp.vec3d), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.vec3d)):
    wp.tile_store(out, wp.tile_map(setx, wp.tile_load(a, shape=(4,)), wp.tile_load(b, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_component_write_adjoint_inside_tile_map():
    # found beside the transform rules: value_insert's adjoint made its zero as const(0, x.type),
    # a constant tile when tile_map's adjoint runs it on tiles (an internal compiler error)
    mod = build(COMPONENT_WRITE_MAP, "component_write_map", block_dim=4)
    rng = np.random.default_rng(5)
    a, b, g = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(4, 3))
    out = np.zeros((4, 3))
    mod.k.launch_tiled(dim=1, inputs=[a, b, out], block_dim=4)
    np.testing.assert_array_equal(out, np.concatenate([b[:, None], a[:, 1:]], axis=1))
    adj_a, adj_b = np.zeros_like(a), np.zeros_like(b)
    mod.k.launch_tiled(dim=1, inputs=[a, b, out], adj_inputs=[adj_a, adj_b, g.copy()], adjoint=True, block_dim=4)
    np.testing.assert_array_equal(adj_a, np.concatenate([np.zeros((4, 1)), g[:, 1:]], axis=1))
    np.testing.assert_array_equal(adj_b, g[:, 0])


TRACE_MAP = '''import warp as wp


@wp.func
def tr(m: wp.mat33d):
    return wp.trace(m)


@wp.kernel
def k(a: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.float64)):
    wp.tile_store(out, wp.tile_map(tr, wp.tile_load(a, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_trace_adjoint_inside_tile_map():
    # found beside the transform rules: trace's adjoint read the matrix size off its operand's type,
    # a tile of matrices inside tile_map's adjoint (an internal compiler error)
    mod = build(TRACE_MAP, "trace_map", block_dim=4)
    rng = np.random.default_rng(7)
    a, g = rng.normal(size=(4, 3, 3)), rng.normal(size=4)
    out = np.zeros(4)
    mod.k.launch_tiled(dim=1, inputs=[a, out], block_dim=4)
    np.testing.assert_allclose(out, np.trace(a, axis1=1, axis2=2), rtol=1e-12)
    adj_a = np.zeros_like(a)
    mod.k.launch_tiled(dim=1, inputs=[a, out], adj_inputs=[adj_a, g.copy()], adjoint=True, block_dim=4)
    np.testing.assert_array_equal(adj_a, g[:, None, None] * np.eye(3))


MATRIX_OF_SCALARS_MAP = '''import warp as wp


@wp.func
def build(a: wp.float64, b: wp.float64):
    m = wp.mat22d(a, b, b, a)
    return m[0, 1] * m[1, 1]


@wp.func
def joined(p: wp.vec3d, q: wp.quatd):
    return wp.transform_get_translation(wp.transformd(p, q))[1] * wp.transform_get_rotation(wp.transformd(p, q))[3]


@wp.kernel
def k(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    wp.tile_store(out, wp.tile_map(build, wp.tile_load(x, shape=(4,)), wp.tile_load(y, shape=(4,))))


@wp.kernel
def t(p: wp.array(dtype=wp.vec3d), q: wp.array(dtype=wp.quatd), out: wp.array(dtype=wp.float64)):
    wp.tile_store(out, wp.tile_map(joined, wp.tile_load(p, shape=(4,)), wp.tile_load(q, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_value_constructor_adjoints_inside_tile_map():
    # found beside the transform rules: value_new's adjoint took the result type itself for the
    # value type, a tile inside tile_map's adjoint, so a matrix built from scalars was read back one
    # index per element (cast: a RuleError) and transform(p, q) was not seen as joined parts
    mod = build(MATRIX_OF_SCALARS_MAP, "matrix_of_scalars_map", block_dim=4)
    rng = np.random.default_rng(11)
    x, y, g = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    out = np.zeros(4)
    adj_x, adj_y = np.zeros_like(x), np.zeros_like(y)
    mod.k.launch_tiled(dim=1, inputs=[x, y, out], adj_inputs=[adj_x, adj_y, g.copy()], adjoint=True, block_dim=4)
    np.testing.assert_allclose(adj_x, g * y, rtol=1e-12)  # out = y * x
    np.testing.assert_allclose(adj_y, g * x, rtol=1e-12)
    p, q = rng.normal(size=(4, 3)), rng.normal(size=(4, 4))
    mod.t.launch_tiled(dim=1, inputs=[p, q, out], block_dim=4)
    np.testing.assert_allclose(out, p[:, 1] * q[:, 3], rtol=1e-12)
    adj_p, adj_q = np.zeros_like(p), np.zeros_like(q)
    mod.t.launch_tiled(dim=1, inputs=[p, q, out], adj_inputs=[adj_p, adj_q, g.copy()], adjoint=True, block_dim=4)
    want_p, want_q = np.zeros_like(p), np.zeros_like(q)
    want_p[:, 1], want_q[:, 3] = g * q[:, 3], g * p[:, 1]
    np.testing.assert_allclose(adj_p, want_p, rtol=1e-12)
    np.testing.assert_allclose(adj_q, want_q, rtol=1e-12)


CONVERSION_MAP = '''import warp as wp


@wp.func
def conv(v: wp.vec3d):
    return wp.length(wp.vec3f(v))


@wp.kernel
def k(a: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float32)):
    wp.tile_store(out, wp.tile_map(conv, wp.tile_load(a, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_value_conversion_adjoint_inside_tile_map():
    # the same family: a conversion's adjoint (`wp.vec3f(v)` of a vec3d) named the source's type as
    # the value type, a tile inside tile_map's adjoint (an internal compiler error)
    mod = build(CONVERSION_MAP, "conversion_map", block_dim=4)
    rng = np.random.default_rng(13)
    a, g = rng.normal(size=(4, 3)), rng.normal(size=4).astype(np.float32)
    out = np.zeros(4, np.float32)
    mod.k.launch_tiled(dim=1, inputs=[a, out], block_dim=4)
    np.testing.assert_allclose(out, np.linalg.norm(a, axis=1), rtol=1e-6)
    adj_a = np.zeros_like(a)
    mod.k.launch_tiled(dim=1, inputs=[a, out], adj_inputs=[adj_a, g.copy()], adjoint=True, block_dim=4)
    np.testing.assert_allclose(adj_a, g[:, None] * a / np.linalg.norm(a, axis=1)[:, None], rtol=1e-5)


SKEW_MAP = '''import warp as wp


@wp.func
def sk(v: wp.vec3d):
    return wp.skew(v)[0, 1]


@wp.kernel
def k(a: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.float64)):
    wp.tile_store(out, wp.tile_map(sk, wp.tile_load(a, shape=(4,))))
'''


@needs_cxx
@pytest.mark.build
def test_skew_adjoint_inside_tile_map():
    # the same family: skew's adjoint packed its result as the operand's type, a tile inside
    # tile_map's adjoint (an internal compiler error)
    mod = build(SKEW_MAP, "skew_map", block_dim=4)
    rng = np.random.default_rng(17)
    a, g = rng.normal(size=(4, 3)), rng.normal(size=4)
    out = np.zeros(4)
    mod.k.launch_tiled(dim=1, inputs=[a, out], block_dim=4)
    np.testing.assert_allclose(out, -a[:, 2], rtol=1e-12)  # skew(v)[0, 1] = -z
    adj_a = np.zeros_like(a)
    mod.k.launch_tiled(dim=1, inputs=[a, out], adj_inputs=[adj_a, g.copy()], adjoint=True, block_dim=4)
    np.testing.assert_allclose(adj_a, np.stack([0 * g, 0 * g, -g], axis=1), rtol=1e-12)


@pytest.mark.parametrize("call", ['wp.printf("i=%d\\n", i)', 'print("hello")'])
def test_assigning_a_print_is_a_diagnostic(call):
    # mypy (lower_expr strict): make_op gave an effect's call the type None, not NONE as lower_op does,
    # so `x = wp.printf(...)` passed the check and the C++ emitter crashed (TypeError in cxx.py)
    source = f'''import warp as wp


@wp.kernel
def k(a: wp.array(dtype=float)):
    i = wp.tid()
    x = {call}
    a[i] = 1.0
'''
    assert first_error(source) == "7:5: TC0303: this call returns no value"


def test_struct_tile_reduce_over_a_shape_variable_is_a_diagnostic():
    # mypy (lower_struct_tiles strict): a tile extent is int | str; the element count of a struct
    # tile's reduction multiplied a shape variable in ("M" * 1) and `n % 2` raised TypeError
    source = '''import tilec as tl


@tl.struct
class Particle:
    mass: float
    vel: tl.vec3


@tl.func
def merged(a: Particle, b: Particle) -> Particle:
    out = Particle()
    out.mass = a.mass + b.mass
    out.vel = a.vel + b.vel
    return out


@tl.func
def total(t: tl.Tile[Particle, "M"]) -> float:
    return tl.tile_reduce(merged, t)[0].mass


@tl.kernel
def k(src: tl.array1d(dtype=Particle), out: tl.array1d(dtype=float)):
    out[0] = total(tl.tile_load(src, shape=(4,)))
'''
    assert first_error(source) == (
        "20:35: TC0111: tile_reduce: cannot be checked with symbolic shapes; annotate concrete extents")
