"""@wp.struct: the loader's struct classes and structured arrays (Warp's layout), struct arguments
checked with named errors, Warp's own struct instances accepted, the interpreter on struct
arguments, and gradients through struct fields against float64 finite differences.

(No `from __future__ import annotations`: Warp evaluates the annotations of the structs the tests
declare, and they name the `wp` imported inside each test.)"""

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build, compile_ir
from tilec.codegen.structs import numpy_layout
from tilec.interp import Interpreter
from tilec.ir.types import ArrayT, StructT

SOURCE = '''
import warp as wp


@wp.struct
class Inner:
    a: wp.int8
    b: wp.float64


@wp.struct
class Cell:
    x: float
    inner: Inner
    k: wp.int16
    flag: wp.uint8


@wp.struct
class Params:
    scale: float
    offset: wp.float64
    weights: wp.array(dtype=float)


@wp.kernel
def weigh(p: Params, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = p.scale * p.weights[i] * x[i] * x[i] + float(p.offset)


@wp.kernel
def cells(c: wp.array(dtype=Cell), y: wp.array(dtype=float)):
    i = wp.tid()
    e = c[i]
    y[i] = e.x * float(e.inner.b) + float(e.k) + float(e.inner.a) + float(e.flag)
    c[i].x = e.x * 2.0
    c[i].inner.a = wp.int8(7)
'''


def _struct_types():
    module = compile_ir(SOURCE, "structs_prog")
    kernels = {k.name: k for k in module.kernels}
    params = dict(kernels["weigh"].struct_params)
    cell = dict(kernels["cells"].struct_params)["c"]
    return params["p"], cell.dtype


def test_struct_params_flatten_into_leaves():
    module = compile_ir(SOURCE, "structs_prog")
    weigh = next(k for k in module.kernels if k.name == "weigh")
    assert [p.name for p in weigh.params] == ["p.scale", "p.offset", "p.weights", "x", "y"]
    cells = next(k for k in module.kernels if k.name == "cells")
    assert [str(p.type) for p in cells.params[:4]] == ["array1d(float32)", "array1d(int8)", "array1d(float64)",
                                                       "array1d(int16)"]


def test_layout_matches_warp():
    wp = pytest.importorskip("warp")
    _, cell = _struct_types()
    assert isinstance(cell, StructT)
    wp.config.quiet = True

    @wp.struct
    class Inner:
        a: wp.int8
        b: wp.float64

    @wp.struct
    class Cell:
        x: float
        inner: Inner
        k: wp.int16
        flag: wp.uint8

    warp_dtype = wp.zeros(1, dtype=Cell, device="cpu").numpy().dtype
    layout = numpy_layout(cell)
    ours = np.dtype({k: v for k, v in layout.items() if k != "align"})
    assert ours == warp_dtype
    assert ours.itemsize == 32 and ours.fields["inner"][1] == 8 and ours.fields["k"][1] == 24


@needs_cxx
@pytest.mark.build
def test_loader_struct_classes_and_arguments():
    mod = build(SOURCE, "structs_prog")
    w = np.arange(4, dtype=np.float32)
    x = np.linspace(-1, 1, 4).astype(np.float32)
    y = np.zeros(4, np.float32)
    p = mod.Params(scale=3.0, offset=0.5, weights=w)
    mod.weigh.launch(dim=4, inputs=[p, x, y])
    np.testing.assert_allclose(y, 3.0 * w * x * x + 0.5, rtol=1e-6)
    with pytest.raises(AttributeError, match="struct `Params` has no field `scal` .*scale, offset, weights"):
        p.scal = 1.0
    with pytest.raises(TypeError, match="field `Params.scale` is a float32 scalar"):
        mod.Params(scale="big")
    with pytest.raises(TypeError, match="field `Params.weights` is an array of float32, got dtype float64"):
        p.weights = np.zeros(4)
    with pytest.raises(ValueError, match="weigh: argument `p`: array field `weights` is not set"):
        mod.weigh.launch(dim=4, inputs=[mod.Params(scale=1.0), x, y])
    with pytest.raises(TypeError, match="weigh: argument `p` must be a `Params` struct"):
        mod.weigh.launch(dim=4, inputs=[3.0, x, y])

    c = mod.Cell.zeros(3)
    assert c.dtype == mod.Cell.numpy_dtype() and c.dtype.itemsize == 32
    c["x"] = [1, 2, 3]
    c["inner"]["b"] = 0.5
    c["k"] = 10
    c["flag"] = 1
    out = np.zeros(3, np.float32)
    mod.cells.launch(dim=3, inputs=[c, out])
    np.testing.assert_allclose(out, [11.5, 12.0, 12.5])
    np.testing.assert_array_equal(c["x"], [2, 4, 6])
    np.testing.assert_array_equal(c["inner"]["a"], 7)
    with pytest.raises(TypeError, match="cells: argument `c` must have dtype Cell.numpy_dtype"):
        mod.cells.launch(dim=3, inputs=[np.zeros(3, np.float32), out])


@needs_cxx
@pytest.mark.build
def test_gradient_through_struct_fields_matches_finite_differences():
    mod = build(SOURCE, "structs_prog")
    rng = np.random.default_rng(3)
    w = rng.standard_normal(5).astype(np.float32)
    x = rng.standard_normal(5).astype(np.float32)
    seed = rng.standard_normal(5).astype(np.float32)
    gw, gx = np.zeros(5, np.float32), np.zeros(5, np.float32)
    p = mod.Params(scale=1.5, offset=0.0, weights=w)
    mod.weigh.launch(dim=5, inputs=[p, x, np.zeros(5, np.float32)],
                     adj_inputs=[mod.Params(weights=gw), gx, seed.copy()], adjoint=True)

    def loss(w64, x64):
        return float(np.sum(seed * 1.5 * w64 * x64 * x64))

    h = 1e-6
    w64, x64 = w.astype(np.float64), x.astype(np.float64)
    for k in range(5):
        e = np.eye(5)[k] * h
        assert abs(gw[k] - (loss(w64 + e, x64) - loss(w64 - e, x64)) / (2 * h)) < 1e-4
        assert abs(gx[k] - (loss(w64, x64 + e) - loss(w64, x64 - e)) / (2 * h)) < 1e-4


@needs_cxx
@pytest.mark.build
def test_warp_struct_instances_are_accepted():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    mod = build(SOURCE, "structs_prog")

    @wp.struct
    class Params:
        scale: float
        offset: wp.float64
        weights: wp.array(dtype=float)

    p = Params()
    p.scale = 2.0
    p.offset = 1.0
    p.weights = wp.array(np.ones(3, np.float32), dtype=float, device="cpu")
    y = np.zeros(3, np.float32)
    mod.weigh.launch(dim=3, inputs=[p, np.full(3, 2.0, np.float32), y])
    np.testing.assert_allclose(y, 9.0)


@needs_cxx
@pytest.mark.build
def test_tape_records_struct_arguments():
    mod = build(SOURCE, "structs_prog")
    w = np.array([1.0, 2.0, 3.0], np.float32)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    y, z = np.zeros(3, np.float32), np.zeros(3, np.float32)
    p = mod.Params(scale=2.0, offset=0.0, weights=w)
    with mod.Tape() as tape:
        mod.weigh.launch(dim=3, inputs=[p, x, y])
        mod.weigh.launch(dim=3, inputs=[mod.Params(scale=1.0, offset=0.0, weights=y), x, z])  # z = 2 w x^4
    tape.backward(grads=[(z, np.ones(3, np.float32))])
    np.testing.assert_allclose(tape.gradient(w), 2.0 * x ** 4, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(x), 8.0 * w * x ** 3, rtol=1e-6)


CHAIN = '''
import warp as wp


@wp.struct
class Pt:
    x: float
    w: float


@wp.kernel
def square(src: wp.array(dtype=float), pts: wp.array(dtype=Pt)):
    i = wp.tid()
    pts[i].x = src[i] * src[i]
    pts[i].w = 3.0 * src[i]


@wp.kernel
def combine(pts: wp.array(dtype=Pt), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = pts[i].x * pts[i].w
'''


@needs_cxx
@pytest.mark.build
def test_tape_through_an_array_of_structs():
    mod = build(CHAIN, "structs_chain")
    src = np.array([1.0, -2.0, 0.5], np.float32)
    pts, out = mod.Pt.zeros(3), np.zeros(3, np.float32)
    with mod.Tape() as tape:
        mod.square.launch(dim=3, inputs=[src, pts])
        mod.combine.launch(dim=3, inputs=[pts, out])  # out = 3 src^3
    tape.backward(grads=[(out, np.ones(3, np.float32))])
    np.testing.assert_allclose(out, 3.0 * src ** 3, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(src), 9.0 * src ** 2, rtol=1e-6)
    assert tape.gradient(pts).dtype == mod.Pt.numpy_dtype()  # the adjoint of the pts is structured, like them


def test_interpreter_takes_struct_arguments():
    module = compile_ir(SOURCE, "structs_prog")
    interp = Interpreter(module)

    class P:
        scale = np.float32(2.0)
        offset = np.float64(1.0)
        weights = np.arange(3, dtype=np.float32)

    y = np.zeros(3, np.float32)
    interp.launch("weigh", 3, [P(), np.ones(3, np.float32), y], tiled=False)
    np.testing.assert_allclose(y, 2.0 * np.arange(3) + 1.0)
    with pytest.raises(TypeError, match="weigh: expects 3 arguments, got 2"):
        interp.launch("weigh", 3, [P(), y], tiled=False)


def test_struct_types_are_frontend_only():
    p, _ = _struct_types()
    assert isinstance(p, StructT) and str(p) == "Params"
    assert isinstance(ArrayT(p, 1).dtype, StructT)


VALUES = '''
import warp as wp


@wp.struct
class Body:
    pos: wp.vec3
    frame: wp.mat22
    mass: float


@wp.kernel
def move(bodies: wp.array(dtype=Body), out: wp.array(dtype=float)):
    i = wp.tid()
    b = bodies[i]
    b.pos.x = 5.0
    b.pos[1] += 2.0
    bodies[i].pos.z += b.mass
    bodies[i].pos[0] = b.pos[1]
    out[i] = b.pos.x + b.pos.y + b.frame[0, 1]
'''


@needs_cxx
@pytest.mark.build
def test_vector_and_matrix_fields():
    mod = build(VALUES, "structs_values_prog")
    assert mod.Body.numpy_dtype() == np.dtype({"names": ["pos", "frame", "mass"],
                                               "formats": [("<f4", (3,)), ("<f4", (2, 2)), "<f4"],
                                               "offsets": [0, 12, 28], "itemsize": 32})
    b = mod.Body.zeros(3)
    b["pos"] = np.arange(9).reshape(3, 3)
    b["mass"] = 1.5
    b["frame"][:, 0, 1] = 0.25
    out = np.zeros(3, np.float32)
    mod.move.launch(dim=3, inputs=[b, out])
    pos = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(out, 5.0 + pos[:, 1] + 2.0 + 0.25)
    np.testing.assert_allclose(b["pos"][:, 0], pos[:, 1] + 2.0)
    np.testing.assert_allclose(b["pos"][:, 2], pos[:, 2] + 1.5)
    with pytest.raises(TypeError, match=r"field `Body.pos` is a vec3f \(shape \(3,\)\)"):
        mod.Body(pos=[1.0, 2.0])


VEC_ARRAYS = '''
import warp as wp


@wp.struct
class Cloud:
    points: wp.array(dtype=wp.vec3)
    scale: float


@wp.kernel
def norms(c: Cloud, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(c.points[i]) * c.scale
'''


@needs_cxx
@pytest.mark.build
def test_struct_with_an_array_of_vectors():
    mod = build(VEC_ARRAYS, "structs_vec_arrays")
    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    mod.norms.launch(dim=4, inputs=[mod.Cloud(points=pts, scale=2.0), out])
    np.testing.assert_allclose(out, 2.0 * np.linalg.norm(pts, axis=1), rtol=1e-6)
    with pytest.raises(ValueError, match=r"field `Cloud.points` is a 1-d array of vec3f \(numpy: trailing axes \(3,\)\)"):
        mod.Cloud(points=np.zeros((4, 2), np.float32))


NESTED_ARRAYS = '''
import warp as wp


@wp.struct
class Cell:
    mass: float
    count: wp.int32


@wp.struct
class Grid:
    cells: wp.array(dtype=Cell)
    gain: float


@wp.kernel
def weigh(g: Grid, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = g.cells[i].mass * g.gain + float(g.cells[i].count)
    g.cells[i].count = i
'''


@needs_cxx
@pytest.mark.build
def test_struct_holding_an_array_of_structs():
    mod = build(NESTED_ARRAYS, "structs_nested_arrays")
    cells = mod.Cell.zeros(3)
    cells["mass"] = [1.0, 2.0, 3.0]
    cells["count"] = 5
    out = np.zeros(3, np.float32)
    grid = mod.Grid(cells=cells, gain=2.0)
    mod.weigh.launch(dim=3, inputs=[grid, out])
    np.testing.assert_allclose(out, [7.0, 9.0, 11.0])
    np.testing.assert_array_equal(cells["count"], [0, 1, 2])
    interp_out = np.zeros(3, np.float32)
    Interpreter(compile_ir(NESTED_ARRAYS, "structs_nested_arrays")).launch("weigh", 3, [grid, interp_out], tiled=False)
    np.testing.assert_allclose(interp_out, [2.0, 5.0, 8.0])  # mass * gain + the counts written: 0, 1, 2
    with pytest.raises(TypeError, match="field `Grid.cells` is a 1-d array of `Cell`"):
        grid.cells = np.zeros(3, np.float32)
