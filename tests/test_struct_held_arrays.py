"""Arrays of structs that hold arrays (issue #13): `wp.tile_load(ps[i].data, ...)` (which Warp 1.19
rejects: its tile_load takes no array read from an array of structs, so numpy and finite
differences are the reference), the loader's forms of such an argument (a structured array with
object fields, a list of struct values, numpy or Warp arrays in the fields), and its refusals of
bad input, each a Python exception naming the argument and the element."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_cxx
from harness import build

pytestmark = [pytest.mark.build, needs_cxx]

SOURCE = '''
import warp as wp

TILE = 8


@wp.struct
class Row:
    data: wp.array[float]
    scale: float


@wp.kernel
def sines(rows: wp.array[Row], out: wp.array2d[float]):
    i = wp.tid()
    t = wp.tile_load(rows[i].data, shape=TILE)
    wp.tile_store(out[i], wp.tile_map(wp.sin, t) * rows[i].scale)


@wp.kernel
def first(rows: wp.array[Row], out: wp.array[float]):
    i = wp.tid()
    out[i] = rows[i].data[0] * rows[i].scale
'''

DEVICES = ["cpu", "cuda-emu"]


@pytest.fixture(scope="module", params=DEVICES)
def device_mod(request):
    return request.param, build(SOURCE, "held_arrays", block_dim=8, target=request.param)


def _rows(mod, lengths=(8, 5, 8), seed=0):
    rng = np.random.default_rng(seed)
    rows = mod.Row.zeros(len(lengths))
    for i, n in enumerate(lengths):
        rows["data"][i] = rng.standard_normal(n).astype(np.float32)
    rows["scale"] = rng.random(len(lengths)).astype(np.float32) + 0.5
    return rows


def test_tile_load_through_an_element_forward_and_adjoint(device_mod):
    device, mod = device_mod
    rows = _rows(mod)  # row 1 holds 5 values: the tile's last 3 elements read as zeros
    out = np.zeros((3, 8), np.float32)
    mod.sines.launch_tiled(dim=3, inputs=[rows, out], block_dim=8, device=device)
    want = np.zeros((3, 8), np.float32)
    for i in range(3):
        d = rows["data"][i]
        want[i, :d.size] = np.sin(d) * rows["scale"][i]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)

    seed = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    adj = mod.Row.zeros(3)
    for i in range(3):
        adj["data"][i] = np.zeros_like(rows["data"][i])
    mod.sines.launch_tiled(dim=3, inputs=[rows, out], adj_inputs=[adj, seed.copy()], adjoint=True, block_dim=8,
                           device=device)
    for i in range(3):  # d/d data of sum(seed * sin(data) * scale), by float64 central differences
        d = rows["data"][i].astype(np.float64)
        scale, s = float(rows["scale"][i]), seed[i, :d.size].astype(np.float64)
        h = 1e-6
        fd = np.array([(np.sum(s * np.sin(d + h * e) * scale) - np.sum(s * np.sin(d - h * e) * scale)) / (2 * h)
                       for e in np.eye(d.size)])
        np.testing.assert_allclose(adj["data"][i], fd, rtol=1e-4, atol=1e-5)
        # the scalar field's gradient, into the adjoint structured array's field
        np.testing.assert_allclose(adj["scale"][i], np.sum(s * np.sin(d)), rtol=1e-4, atol=1e-5)


def test_adjoint_without_adjoint_arrays_computes_nothing_else(device_mod):
    """An element whose adjoint struct holds no array (None) gets no gradient; the others do."""
    device, mod = device_mod
    rows = _rows(mod)
    adj = mod.Row.zeros(3)
    adj["data"][0] = np.zeros(8, np.float32)
    mod.first.launch(dim=3, inputs=[rows, np.zeros(3, np.float32)], adj_inputs=[adj, np.ones(3, np.float32)],
                     adjoint=True, device=device)
    np.testing.assert_allclose(adj["data"][0], np.eye(8)[0] * rows["scale"][0], rtol=1e-6)


def test_a_list_of_struct_values_with_numpy_and_warp_arrays():
    wp = pytest.importorskip("warp")
    wp.config.quiet = True
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    a = np.arange(1, 9, dtype=np.float32)
    b = wp.array(np.full(4, 3.0, np.float32), dtype=float, device="cpu")
    out = np.zeros(2, np.float32)
    mod.first.launch(dim=2, inputs=[[mod.Row(data=a, scale=2.0), mod.Row(data=b, scale=0.5)], out])
    np.testing.assert_allclose(out, [2.0, 1.5])

    fields = {"data": wp.array(dtype=float), "scale": float}  # not strings: this file's annotations are lazy
    warp_row = wp.struct(type("WRow", (), {"__annotations__": fields, "__module__": __name__}))()
    warp_row.data, warp_row.scale = b, 4.0  # Warp's own struct values are read by field name
    mod.first.launch(dim=1, inputs=[[warp_row], out])
    assert out[0] == 12.0


@pytest.mark.parametrize("field, error, words", [
    (np.zeros(8, np.float64), TypeError, "must have dtype float32, got float64"),
    (np.zeros((2, 4), np.float32), ValueError, "must have 1 dimension(s), got 2"),
    (None, ValueError, "is not set"),
])
def test_bad_held_array_names_the_argument_field_and_element(field, error, words):
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    rows = _rows(mod)
    rows["data"][1] = field
    with pytest.raises(error) as info:
        mod.first.launch(dim=3, inputs=[rows, np.zeros(3, np.float32)])
    assert "argument `rows.data`[1]" in str(info.value) and words in str(info.value)


def test_bad_array_of_structs_is_refused_before_the_launch():
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    with pytest.raises(TypeError, match="argument `rows` must have dtype Row.numpy_dtype()"):
        mod.first.launch(dim=3, inputs=[np.zeros(3, np.float32), np.zeros(3, np.float32)])
    with pytest.raises(TypeError, match="element 0 must be a `Row` struct"):
        mod.first.launch(dim=1, inputs=[[1.0], np.zeros(1, np.float32)])
    with pytest.raises(TypeError, match="field `Row.data` is an array of float32, got dtype int32"):
        mod.Row(data=np.zeros(3, np.int32))


def test_device_cuda_is_refused_with_a_message():
    mod = build(SOURCE, "held_arrays", block_dim=8, target="cpu")
    with pytest.raises(ValueError, match="device='cuda'"):
        mod.first._convert(next(p for p in mod.first._c_params if p["kind"] == "descriptors"),
                           _rows(mod)["data"], device="cuda")
